/* Unit tests for common/predict.c: the predicted average against hand-computed
 * cases, table-driven. The arithmetic of each row is in its comment. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <cmocka.h>

#include "predict.h"

struct predict_row {
    const char *name;
    struct predict_in in;
    int made;                /* predict_rate's return */
    enum predict_limit limit;
    double steady_bps, avg_bps, slow_start_s;
    unsigned rounds;
};

static void test_predict(void **state)
{
    (void)state;
    static const struct predict_row rows[] = {
        /* Nothing known: no prediction. */
        {"nothing known", {.bytes = 0}, 0, PREDICT_LIMIT_NONE, 0, 0, 0, 0},
        /* A bottleneck alone, no RTT: steady = average = 1e9. */
        {"bottleneck only", {.bottleneck_bps = 1e9, .bytes = 1 << 20}, 1, PREDICT_LIMIT_BOTTLENECK, 1e9, 1e9, 0, 0},
        /* 1 MiB of payload per 35.6 ms RTT: 1048576 * 8 / 0.0356 = 235635056.18 bit/s (no
         * size: the steady rate is the average). */
        {"send buffer / RTT", {.rtt_s = 0.0356, .sndbuf_bytes = 1048576}, 1, PREDICT_LIMIT_SNDBUF, 235635056.1797753,
         235635056.1797753, 0, 0},
        /* The smallest limit wins: bottleneck 1e9; window 1 MiB / 10 ms = 838860800;
         * send buffer 4 MiB / 10 ms = 3355443200. */
        {"smallest limit", {.bottleneck_bps = 1e9, .rtt_s = 0.01, .rwnd_bytes = 1048576, .sndbuf_bytes = 4194304},
         1, PREDICT_LIMIT_RWND, 838860800, 838860800, 0, 0},
        /* Slow start: mss 1000, iw 10, RTT 0.1 s: round k runs at 10*1000*8*2^k / 0.1 =
         * 0.8 Mb/s x 2^k. Rounds 0..3 (0.8, 1.6, 3.2, 6.4 Mb/s) are below the 8 Mb/s
         * bottleneck: 10000+20000+40000+80000 = 150000 B in 0.4 s; round 4 (12.8) is not.
         * The other 1000000 B at 8 Mb/s take 1.0 s: 1150000 * 8 / 1.4 = 6571428.57. */
        {"slow start then the bottleneck", {.bottleneck_bps = 8e6, .rtt_s = 0.1, .initial_cwnd = 10, .mss = 1000,
                                            .bytes = 1150000},
         1, PREDICT_LIMIT_BOTTLENECK, 8e6, 6571428.571428572, 0.4, 4},
        /* Ends inside slow start: round 0 sends 10000 B (0.1 s); the last 15000 B fit in
         * round 1's 20000-B window and leave at 8 Mb/s: 0.015 s. 25000*8 / 0.115 =
         * 1739130.43 bit/s; one whole round. */
        {"ends in slow start", {.bottleneck_bps = 8e6, .rtt_s = 0.1, .initial_cwnd = 10, .mss = 1000, .bytes = 25000},
         1, PREDICT_LIMIT_BOTTLENECK, 8e6, 1739130.4347826086, 0.1, 1},
        /* Defaults iw 10, mss 1448, RTT 10 ms, 1 Gb/s: round k at 11.584 Mb/s x 2^k, below
         * 1000 for k = 0..6 (x64 = 741), so 7 rounds = 0.07 s carrying 14480 * 127 =
         * 1838960 B; the other 8161040 B at 1e9 take 0.06528832 s. 8e7 / 0.13528832 =
         * 591329687.59 bit/s. */
        {"defaults iw 10, mss 1448", {.bottleneck_bps = 1e9, .rtt_s = 0.01, .bytes = 10000000}, 1,
         PREDICT_LIMIT_BOTTLENECK, 1e9, 591329687.5886993, 0.07, 7},
        /* A window without an RTT is no limit: the bottleneck alone remains. */
        {"window without RTT", {.bottleneck_bps = 5e8, .rwnd_bytes = 1000}, 1, PREDICT_LIMIT_BOTTLENECK, 5e8, 5e8, 0, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct predict_row *r = &rows[i];
        struct predict_out out;
        int made = predict_rate(&r->in, &out);
        if (made != r->made || out.limit != r->limit)
            fail_msg("%s: made %d limit %s, want %d %s", r->name, made, predict_limit_name(out.limit), r->made,
                     predict_limit_name(r->limit));
        if (fabs(out.steady_bps - r->steady_bps) > 1e-6 * r->steady_bps ||
            fabs(out.avg_bps - r->avg_bps) > 1e-6 * r->avg_bps || fabs(out.slow_start_s - r->slow_start_s) > 1e-9 ||
            out.rounds != r->rounds)
            fail_msg("%s: steady %.3f avg %.3f ss %.4f rounds %u, want %.3f %.3f %.4f %u", r->name, out.steady_bps,
                     out.avg_bps, out.slow_start_s, out.rounds, r->steady_bps, r->avg_bps, r->slow_start_s, r->rounds);
    }
}

static void test_limit_names(void **state)
{
    (void)state;
    assert_string_equal(predict_limit_name(PREDICT_LIMIT_BOTTLENECK), "bottleneck");
    assert_string_equal(predict_limit_name(PREDICT_LIMIT_SNDBUF), "sender buffer");
    assert_string_equal(predict_limit_name(PREDICT_LIMIT_RWND), "receive window");
    assert_string_equal(predict_limit_name(PREDICT_LIMIT_NONE), "none");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_predict),
        cmocka_unit_test(test_limit_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
