/* Unit tests for client/series.c and the plan's run order: throughput series, peak and
 * slow-start derivation from synthetic arrival times, table-driven. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "plan.h"
#include "series.h"

struct arrival {
    double t;       /* seconds after t0 */
    uint64_t bytes;
};

struct series_row {
    const char *name;
    struct arrival in[16];
    size_t nin;
    double t_end;             /* last byte, seconds after t0 */
    size_t n;                 /* expected samples */
    double mbps[8];           /* expected samples */
    double peak, slow_start;
};

/* 12500 bytes in 100 ms = 1 Mb/s. */
#define MB 12500

static void test_series(void **state)
{
    (void)state;
    static const struct series_row rows[] = {
        {"steady 1 Mb/s", {{0.05, MB}, {0.15, MB}, {0.25, MB}, {0.35, MB}}, 4, 0.4, 4, {1, 1, 1, 1}, 1, 0.1},
        {"slow start then 4 Mb/s", {{0.05, MB}, {0.15, 2 * MB}, {0.25, 4 * MB}, {0.35, 4 * MB}, {0.45, 4 * MB}}, 5, 0.5, 5,
         {1, 2, 4, 4, 4}, 4, 0.3},
        {"90% threshold reached", {{0.05, MB}, {0.15, 9 * MB}, {0.25, 10 * MB}}, 3, 0.3, 3, {1, 9, 10}, 10, 0.2},
        {"stall gives zero intervals", {{0.05, 2 * MB}, {0.35, 2 * MB}}, 2, 0.4, 4, {2, 0, 0, 2}, 2, 0.1},
        {"partial last interval not in the peak", {{0.05, MB}, {0.12, MB}}, 2, 0.12, 2, {1, 5}, 1, 0.1},
        {"only a partial interval", {{0.01, MB}, {0.05, MB}}, 2, 0.05, 1, {4}, 4, 0.05},
        {"bytes in the interval they arrived in", {{0.099, MB}, {0.1, MB}, {0.2, MB}}, 3, 0.2, 3, {1, 1, 1e-6}, 1, 0.1},
        {"exact edges", {{0.0, MB}, {0.1, MB}}, 2, 0.2, 2, {1, 1}, 1, 0.1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct series_row *r = &rows[i];
        struct series s;
        series_init(&s, 0.1);
        double t0 = 1000.0;
        series_start(&s, t0);
        for (size_t k = 0; k < r->nin; k++)
            series_add(&s, t0 + r->in[k].t, r->in[k].bytes);
        series_finish(&s, t0 + r->t_end);
        if (s.n != r->n)
            fail_msg("%s: %zu samples, want %zu", r->name, s.n, r->n);
        for (size_t k = 0; k < r->n; k++) {
            /* The last expected value 1e-6 means "1 MB over a 1 us token tail". */
            double want = r->mbps[k] == 1e-6 ? MB * 8 / 1e-6 / 1e6 : r->mbps[k];
            if (fabs(s.mbps[k] - want) > 1e-6 * (want > 1 ? want : 1))
                fail_msg("%s: sample %zu = %g, want %g", r->name, k, s.mbps[k], want);
        }
        if (fabs(series_peak(&s) - r->peak) > 1e-9)
            fail_msg("%s: peak %g, want %g", r->name, series_peak(&s), r->peak);
        if (fabs(series_slow_start(&s, 0.9) - r->slow_start) > 1e-9)
            fail_msg("%s: slow start %g, want %g", r->name, series_slow_start(&s, 0.9), r->slow_start);
        series_free(&s);
    }
}

static void test_series_empty(void **state)
{
    (void)state;
    struct series s;
    series_init(&s, 0.1);
    assert_int_equal(s.n, 0);
    assert_float_equal(series_peak(&s), 0, 0);
    assert_float_equal(series_slow_start(&s, 0.9), -1, 0);
    series_free(&s);
    series_free(NULL);
}

/* Bytes are conserved: the series integrates to the bytes added, over a long run with
 * irregular arrivals. */
static void test_series_conserves_bytes(void **state)
{
    (void)state;
    struct series s;
    series_init(&s, 0.1);
    series_start(&s, 5.0);
    uint64_t total = 0;
    double t = 5.0;
    for (int i = 0; i < 5000; i++) {
        t += 0.0003 * (1 + i % 7);
        uint64_t b = 1000 + (uint64_t)(i % 13) * 500;
        series_add(&s, t, b);
        total += b;
    }
    series_finish(&s, t);
    double bits = 0;
    for (size_t k = 0; k + 1 < s.n; k++)
        bits += s.mbps[k] * 1e6 * 0.1;
    bits += s.mbps[s.n - 1] * 1e6 * s.last_dt;
    assert_float_equal(bits, (double)total * 8, 1e-3 * (double)total);
    series_free(&s);
}

struct order_row {
    enum plan_order order;
    size_t nservers;
    unsigned runs;
    const char *want; /* server letters, then run numbers */
};

static void test_plan_steps(void **state)
{
    (void)state;
    static const struct order_row rows[] = {
        {PLAN_ORDER_ALTERNATE, 2, 3, "ABABAB 112233"},
        {PLAN_ORDER_ALTERNATE, 3, 2, "ABCABC 111222"},
        {PLAN_ORDER_SEQUENTIAL, 2, 3, "AAABBB 123123"},
        {PLAN_ORDER_ALTERNATE, 1, 4, "AAAA 1234"},
    };
    struct plan_server sv[3] = {{"A", "u", 0, 0}, {"B", "u", 0, 0}, {"C", "u", 0, 0}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct plan p = {.servers = sv, .nservers = rows[i].nservers, .runs = rows[i].runs, .order = rows[i].order};
        size_t n;
        struct plan_step *st = plan_steps(&p, &n);
        assert_non_null(st);
        char got[64] = "", *g = got;
        for (size_t k = 0; k < n; k++)
            *g++ = (char)('A' + st[k].server);
        *g++ = ' ';
        for (size_t k = 0; k < n; k++)
            *g++ = (char)('0' + st[k].run);
        *g = 0;
        assert_string_equal(got, rows[i].want);
        free(st);
    }
    /* Random: a permutation (each server runs times, numbered 1..runs in time order),
     * the same for the same seed, different for another. */
    struct plan p = {.servers = sv, .nservers = 3, .runs = 5, .order = PLAN_ORDER_RANDOM, .seed = 7};
    size_t n;
    struct plan_step *a = plan_steps(&p, &n), *b = plan_steps(&p, &n);
    p.seed = 8;
    struct plan_step *c = plan_steps(&p, &n);
    assert_int_equal(n, 15);
    assert_memory_equal(a, b, n * sizeof *a);
    assert_memory_not_equal(a, c, n * sizeof *a);
    unsigned next[3] = {0, 0, 0};
    for (size_t k = 0; k < n; k++)
        assert_int_equal(a[k].run, ++next[a[k].server]);
    for (int k = 0; k < 3; k++)
        assert_int_equal(next[k], 5);
    free(a);
    free(b);
    free(c);
}

static void test_order_names(void **state)
{
    (void)state;
    enum plan_order o;
    assert_int_equal(plan_order_parse("sequential", &o), 0);
    assert_int_equal(o, PLAN_ORDER_SEQUENTIAL);
    assert_int_equal(plan_order_parse("Alternate", &o), -1);
    assert_string_equal(plan_order_name(PLAN_ORDER_RANDOM), "random");
}

/* A counter read at times t (seconds after t0): the bytes since the previous read are
 * spread over the time between them (series_add_span, as sock_bytes.c feeds it). */
struct read_at {
    double t;
    double bytes;
};

struct span_row {
    const char *name;
    struct read_at in[12];
    size_t nin;
    double t_end;
    size_t n;
    double mbps[8];
    double scale;       /* series_scale after finish (0: none) */
};

/* 2 Mb/s = 250000 B/s: bytes received by the kernel between reads d seconds apart. */
#define R2(d) (250000.0 * (d))

static void test_series_span(void **state)
{
    (void)state;
    static const struct span_row rows[] = {
        {"reads on the grid", {{0.1, R2(0.1)}, {0.2, R2(0.1)}, {0.3, R2(0.1)}}, 3, 0.3, 3, {2, 2, 2}, 0},
        {"irregular reads, a steady rate",
         {{0.013, R2(0.013)}, {0.15, R2(0.137)}, {0.151, R2(0.001)}, {0.37, R2(0.219)}, {0.4, R2(0.03)}},
         5, 0.4, 4, {2, 2, 2, 2}, 0},
        /* The reader waited 300 ms for a CPU; the kernel kept receiving at 2 Mb/s. Counted
         * as the application read (series_add), this is 2, 0, 0, 8: a collapse, a burst. */
        {"a stall: one late read", {{0.05, R2(0.05)}, {0.35, R2(0.3)}, {0.4, R2(0.05)}}, 3, 0.4, 4, {2, 2, 2, 2}, 0},
        {"a late read across a real gap",
         {{0.1, R2(0.1)}, {0.3, R2(0.1)}, {0.4, R2(0.1)}}, 3, 0.4, 4, {2, 1, 1, 2}, 0},
        {"a last read after the end moves the end", {{0.1, R2(0.1)}, {0.2, R2(0.1)}, {0.25, R2(0.05)}}, 3, 0.2, 3,
         {2, 2, 2}, 0},
        {"rescaled to the application's bytes", {{0.1, R2(0.1)}, {0.2, R2(0.1)}}, 2, 0.2, 2, {1.5, 1.5}, 0.75},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct span_row *r = &rows[i];
        struct series s;
        series_init(&s, 0.1);
        double t0 = 1000.0, prev = t0;
        series_start(&s, t0);
        for (size_t k = 0; k < r->nin; k++) {
            series_add_span(&s, prev, t0 + r->in[k].t, r->in[k].bytes);
            prev = t0 + r->in[k].t;
        }
        series_finish(&s, t0 + r->t_end);
        if (r->scale > 0)
            series_scale(&s, r->scale);
        if (s.n != r->n)
            fail_msg("%s: %zu samples, want %zu", r->name, s.n, r->n);
        for (size_t k = 0; k < r->n; k++)
            if (fabs(s.mbps[k] - r->mbps[k]) > 1e-6)
                fail_msg("%s: sample %zu = %g, want %g", r->name, k, s.mbps[k], r->mbps[k]);
        series_free(&s);
    }
}

/* Two streams' reads interleave out of order: a span reaching back into an interval
 * already closed by the other stream updates that interval's rate. */
static void test_series_span_two_streams(void **state)
{
    (void)state;
    struct series s;
    series_init(&s, 0.1);
    double t0 = 50.0;
    series_start(&s, t0);
    series_add_span(&s, t0, t0 + 0.25, R2(0.25));        /* stream A, 2 Mb/s */
    assert_int_equal(s.n, 2);
    series_add_span(&s, t0, t0 + 0.3, R2(0.3));          /* stream B, 2 Mb/s, read late */
    series_finish(&s, t0 + 0.3);
    assert_int_equal(s.n, 3);
    assert_float_equal(s.mbps[0], 4, 1e-9);
    assert_float_equal(s.mbps[1], 4, 1e-9);
    assert_float_equal(s.mbps[2], 3, 1e-9); /* A stopped at 0.25 */
    assert_float_equal(s.total, R2(0.55), 1e-6);
    series_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_series),
        cmocka_unit_test(test_series_empty),
        cmocka_unit_test(test_series_span),
        cmocka_unit_test(test_series_span_two_streams),
        cmocka_unit_test(test_series_conserves_bytes),
        cmocka_unit_test(test_plan_steps),
        cmocka_unit_test(test_order_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
