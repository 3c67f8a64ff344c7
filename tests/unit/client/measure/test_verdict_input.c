/* Unit tests for client/measure/verdict_input.c: the adapter from a run and the server's
 * /transfers/ID record JSON to the rules' inputs (common/verdict.h), and verdict_apply. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "result.h"
#include "verdict_input.h"

/* The adapter reads the keys debitd's record has (hand-written, as S documents them);
 * null and absent keys stay unknown. */
/* A successful single-stream run of AVG Mb/s, BYTES in BODY_S s, with debitd's RECORD. */
static struct run_result *run_with_record(double avg, uint64_t bytes, double body_s, const char *record)
{
    struct run_result *r = result_new();
    assert_non_null(r);
    r->ok = 1;
    r->avg_mbps = avg;
    r->bytes = bytes;
    r->body_s = body_s;
    r->parallel = 1;
    json_error_t je;
    r->server_record = json_loads(record, 0, &je);
    assert_non_null(r->server_record);
    return r;
}

static void test_adapter(void **state)
{
    (void)state;
    struct run_result *r = run_with_record(231, 268435456, 9.3,
        "{\"id\":\"x\",\"state\":\"done\",\"duration_s\":9.31,"
        "\"tcp\":{\"busy_time_ms\":9300,\"rwnd_limited_ratio\":0.01,\"sndbuf_limited_ratio\":0.78,\"total_retrans\":0,"
        "\"bytes_retrans\":0,\"snd_ssthresh\":null,\"min_rtt_ms\":35.6,\"snd_mss\":1448},"
        "\"cpu\":{\"user_ms\":5,\"sys_ms\":90,\"wall_ms\":9310,\"share\":0.0102},"
        "\"sampled\":{\"count\":93,\"app_limited\":1},"
        "\"cgroup\":null,"
        "\"sndbuf\":{\"setting\":1048576,\"so_sndbuf\":2097152,\"tcp_wmem_max\":4194304},\"initial_cwnd\":10}");
    r->so_rcvbuf = 6291456;
    r->tcp_rmem_max = 6291456;
    r->bottleneck_mbps = 1000;
    struct verdict_in in;
    verdict_in_from_run(r, &in);
    assert_true(in.server_debitd);
    assert_float_equal(in.sndbuf_limited_ratio, 0.78, 1e-9);
    assert_float_equal(in.so_sndbuf, 2097152, 0);
    assert_float_equal(in.sndbuf_setting, 1048576, 0);
    assert_float_equal(in.srv_min_rtt_ms, 35.6, 1e-9);
    assert_float_equal(in.samples, 93, 0);
    assert_float_equal(in.initial_cwnd, 10, 0);
    assert_true(isnan(in.snd_ssthresh)); /* null */
    assert_true(isnan(in.quota_pct));    /* cgroup null */
    assert_true(isnan(in.throttled_ms));
    assert_true(isnan(in.rcvbuf_setting)); /* autotuning */
    verdict_apply(r, &(struct dl_options){.bottleneck_bps = 1e9});
    assert_string_equal(r->limited_by, "sender_buffer");
    assert_non_null(strstr(r->limited_by_evidence, "send buffer 1 MiB: 0.67 x SO_SNDBUF 2 MiB / 35.6 ms RTT predicts 316 Mb/s, measured 231"));
    /* 0.67 x 2 MiB / 35.6 ms = 315.8 Mb/s steady; slow start from iw 10 lowers the average. */
    assert_true(r->predicted_mbps > 280 && r->predicted_mbps < 315.8);

    /* An older debitd: no "sndbuf" in the record, its setting in X-Debit-Tcp instead. */
    json_object_del(r->server_record, "sndbuf");
    r->server_config = json_pack("{s:s}", "X-Debit-Tcp", "cc=bbr pacing=unlimited sndbuf=1048576");
    verdict_in_from_run(r, &in);
    assert_float_equal(in.sndbuf_setting, 1048576, 0);
    assert_float_equal(in.so_sndbuf, 2097152, 0); /* socket(7): Linux doubles it */
    json_object_set_new(r->server_config, "X-Debit-Tcp", json_string("cc=bbr pacing=unlimited sndbuf=auto"));
    verdict_in_from_run(r, &in);
    assert_true(isnan(in.sndbuf_setting) && isnan(in.so_sndbuf));

    /* No record (nginx, a public mirror): client side only. */
    json_decref(r->server_record);
    r->server_record = NULL;
    verdict_apply(r, &(struct dl_options){.bottleneck_bps = 0});
    assert_string_equal(r->limited_by, "unknown");
    assert_non_null(strstr(r->limited_by_evidence, "server side unknown (not debitd)"));

    /* An upload to debitd: no record, but debitd's own answer; never "(not debitd)". */
    r->upload = 1;
    r->server_upload = json_pack("{s:I, s:f, s:b}", "bytes", (json_int_t)r->bytes, "seconds", 9.3, "bytes_match", 1);
    verdict_apply(r, &(struct dl_options){.bottleneck_bps = 0});
    assert_null(strstr(r->limited_by_evidence, "not debitd"));
    assert_non_null(strstr(r->limited_by_evidence, "upload"));
    /* An upload elsewhere (no debitd answer): said so. */
    json_decref(r->server_upload);
    r->server_upload = NULL;
    verdict_apply(r, &(struct dl_options){.bottleneck_bps = 0});
    assert_non_null(strstr(r->limited_by_evidence, "not debitd"));
    r->upload = 0;

    /* A failed run. */
    r->ok = 0;
    verdict_apply(r, &(struct dl_options){.bottleneck_bps = 1e9});
    assert_string_equal(r->limited_by, "unknown");
    assert_true(isnan(r->predicted_mbps));
    result_free(r);
}

/* The hintless network verdict (rule 7): the path's rate inferred from the run's plateau
 * is the JSON's "path_mbps"; null under --bottleneck and for a failed run. The record is a
 * clean run of tests/e2e/lab_verdict_set.sh (200 Mbit/s tbf, 10 ms): slow start's losses
 * into the full queue, the window kept after them 2.7 x the plateau. */
static void test_path_inferred(void **state)
{
    (void)state;
    static const char record[] = "{\"duration_s\":2.85,\"sampled\":{\"count\":26,\"app_limited\":0},\"tcp\":{"
                                 "\"busy_time_ms\":2840,\"rwnd_limited_ratio\":0,\"sndbuf_limited_ratio\":0,"
                                 "\"total_retrans\":1331,\"bytes_retrans\":1927288,\"snd_ssthresh\":446,"
                                 "\"min_rtt_ms\":10.0,\"snd_mss\":1448}}";
    struct run_result *r = run_with_record(190, 67108864, 2.83, record);
    r->plateau_mbps = 191.4;
    r->plateau_share = 0.96;
    verdict_apply(r, &(struct dl_options){.bottleneck_bps = 0});
    assert_string_equal(r->limited_by, "network");
    assert_non_null(strstr(r->limited_by_evidence, "into a full queue"));
    assert_non_null(strstr(r->limited_by_evidence, "the path's rate, inferred (no --bottleneck)"));
    assert_float_equal(r->path_mbps, 191.4, 1e-9);
    json_t *o = result_to_json(r);
    assert_float_equal(json_real_value(json_object_get(o, "path_mbps")), 191.4, 1e-9);
    json_decref(o);
    /* --bottleneck given: the path's rate is not inferred */
    verdict_apply(r, &(struct dl_options){.bottleneck_bps = 200e6});
    assert_string_equal(r->limited_by, "network");
    assert_true(isnan(r->path_mbps));
    o = result_to_json(r);
    assert_true(json_is_null(json_object_get(o, "path_mbps")));
    json_decref(o);
    r->ok = 0;
    verdict_apply(r, &(struct dl_options){.bottleneck_bps = 0});
    assert_true(isnan(r->path_mbps));
    result_free(r);
}

/* debitd's record carries the window the client advertised (tcp.snd_wnd): debit reads it
 * as debitd does, so both judge a rate held at that window / RTT receiver_window (an rwnd
 * run of tests/e2e/lab_verdict_set.sh: 97 KiB at 10 ms is 79.5 Mb/s, the kernel counting
 * only 40 % of busy time rwnd-limited under bbr's pacing). Without the field: not so. */
static void test_peer_window(void **state)
{
    (void)state;
    static const char record[] = "{\"duration_s\":3.58,\"sampled\":{\"count\":35,\"app_limited\":0},\"tcp\":{"
                                 "\"busy_time_ms\":3570,\"rwnd_limited_ratio\":0.40,\"sndbuf_limited_ratio\":0,"
                                 "\"total_retrans\":0,\"bytes_retrans\":0,\"snd_ssthresh\":null,"
                                 "\"min_rtt_ms\":10.0,\"snd_mss\":1448,\"snd_wnd\":99328}}";
    struct run_result *r = run_with_record(75, 33554432, 3.58, record);
    struct verdict_in in;
    verdict_in_from_run(r, &in);
    assert_float_equal(in.snd_wnd, 99328, 0);
    verdict_apply(r, &(struct dl_options){.bottleneck_bps = 0});
    assert_string_equal(r->limited_by, "receiver_window");
    json_object_del(json_object_get(r->server_record, "tcp"), "snd_wnd");
    verdict_in_from_run(r, &in);
    assert_true(isnan(in.snd_wnd));
    verdict_apply(r, &(struct dl_options){.bottleneck_bps = 0});
    assert_string_not_equal(r->limited_by, "receiver_window");
    result_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_adapter),
        cmocka_unit_test(test_path_inferred),
        cmocka_unit_test(test_peer_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
