/* Unit tests for server/observe/ndt7_measure.c: the spec's field names and units (µs,
 * bytes), ConnectionInfo only when given, the TCP_INFO fields mapped from debitd's sample,
 * and debitd's extras. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ndt7_measure.h"

static json_int_t geti(json_t *o, const char *a, const char *b)
{
    json_t *v = json_object_get(json_object_get(o, a), b);
    if (!json_is_integer(v))
        fail_msg("%s.%s is not an integer", a, b);
    return json_integer_value(v);
}

static void test_full(void **state)
{
    (void)state;
    struct tcp_info_sample ti = {.have = 0x1ff, .state = 1, .rtt_us = 1500, .rttvar_us = 300, .min_rtt_us = 1000,
                                 .bytes_acked = 123456, .bytes_received = 77, .bytes_sent = 130000,
                                 .bytes_retrans = 10, .busy_time_us = 900000, .rwnd_limited_us = 5,
                                 .sndbuf_limited_us = 6, .snd_cwnd = 42, .snd_mss = 1448,
                                 .delivery_rate_bps = 8000000, .pacing_rate_bps = 16000000};
    struct ndt7_figures f = {"download", 250000, 8192, &ti, "127.0.0.1:5", "127.0.0.1:80", "abc",
                             "2026-12-06T00:00:00.000Z", "tso=on gso=on gro=on", "lo"};
    char *text = ndt7_measurement_text(&f);
    assert_non_null(text);
    json_t *m = json_loads(text, 0, NULL);
    free(text);
    assert_non_null(m);
    assert_int_equal(geti(m, "AppInfo", "ElapsedTime"), 250000);
    assert_int_equal(geti(m, "AppInfo", "NumBytes"), 8192);
    assert_string_equal(json_string_value(json_object_get(m, "Origin")), "server");
    assert_string_equal(json_string_value(json_object_get(m, "Test")), "download");
    json_t *ci = json_object_get(m, "ConnectionInfo");
    assert_string_equal(json_string_value(json_object_get(ci, "Client")), "127.0.0.1:5");
    assert_string_equal(json_string_value(json_object_get(ci, "Server")), "127.0.0.1:80");
    assert_string_equal(json_string_value(json_object_get(ci, "UUID")), "abc");
    assert_string_equal(json_string_value(json_object_get(ci, "StartTime")), "2026-12-06T00:00:00.000Z");
    static const struct {
        const char *k;
        json_int_t v;
    } want[] = {{"BusyTime", 900000}, {"BytesAcked", 123456}, {"BytesReceived", 77}, {"BytesSent", 130000},
                {"BytesRetrans", 10}, {"ElapsedTime", 250000}, {"MinRTT", 1000}, {"RTT", 1500},
                {"RTTVar", 300}, {"RWndLimited", 5}, {"SndBufLimited", 6}, {"SndCwnd", 42},
                {"DeliveryRate", 1000000}, {"PacingRate", 2000000}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (geti(m, "TCPInfo", want[i].k) != want[i].v)
            fail_msg("TCPInfo.%s = %lld, want %lld", want[i].k, (long long)geti(m, "TCPInfo", want[i].k),
                     (long long)want[i].v);
    assert_string_equal(json_string_value(json_object_get(json_object_get(m, "DebitTCP"), "state")), "ESTABLISHED");
    assert_string_equal(json_string_value(json_object_get(m, "DebitOffload")), "tso=on gso=on gro=on");
    assert_string_equal(json_string_value(json_object_get(m, "DebitInterface")), "lo");
    json_decref(m);
}

static void test_minimal(void **state)
{
    (void)state;
    struct ndt7_figures f = {.test = "upload", .elapsed_us = 1, .num_bytes = 2};
    json_t *m = ndt7_measurement(&f);
    assert_non_null(m);
    assert_null(json_object_get(m, "ConnectionInfo"));
    assert_null(json_object_get(m, "TCPInfo"));
    assert_null(json_object_get(m, "DebitOffload"));
    assert_null(json_object_get(m, "DebitInterface"));
    assert_string_equal(json_string_value(json_object_get(m, "Test")), "upload");
    json_decref(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full),
        cmocka_unit_test(test_minimal),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
