/* Unit tests for client/measure/result.c's JSON: a run's "tcp" object and the server's
 * record of a transfer (server/http/http_headers.c) speak one vocabulary, because
 * tcp_info_to_json is the only producer of both (docs/tcp_info.md). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>
#include <unistd.h>

#include "transfers.h"
#include "result.h"
#include "tcp_info.h"
#include "testlib.h"

/* Keys of object a missing from b, into a message (empty when none). */
static void missing_keys(json_t *a, json_t *b, char *msg, size_t len)
{
    const char *k;
    json_t *v;
    size_t off = 0;
    msg[0] = 0;
    json_object_foreach(a, k, v) {
        if (!json_object_get(b, k) && off < len)
            off += (size_t)snprintf(msg + off, len - off, " %s", k);
    }
}

static void send_some(int from, int to)
{
    char buf[65536];
    memset(buf, 'x', sizeof buf);
    assert_int_equal(send(from, buf, sizeof buf, 0), (ssize_t)sizeof buf);
    size_t got = 0;
    while (got < sizeof buf) {
        ssize_t r = recv(to, buf, sizeof buf, 0);
        assert_true(r > 0);
        got += (size_t)r;
    }
}

static void test_one_vocabulary(void **state)
{
    (void)state;
    int cli, srv;
    char err[128];
    testlib_loopback_pair(&cli, &srv);
    send_some(srv, cli);

    struct run_result *r = result_new();
    assert_non_null(r);
    r->ok = 1;
    if (tcp_info_read(cli, &r->tcp, err, sizeof err) != 0)
        fail_msg("receiver: %s", err);
    json_t *run = result_to_json(r);
    /* What debitd puts in its /transfers record: a transfer on the sending socket, sampled
     * and ended as the server does it. */
    struct transfers *ring = transfers_new(4);
    assert_non_null(ring);
    char id[TRANSFER_ID_LEN];
    struct transfer_start ts = {.path = "/x", .remote = "127.0.0.1:1", .listener = "l", .length = 1,
                                .status = 200, .sock = srv};
    uint64_t seq = transfers_begin(ring, &ts, id);
    assert_int_equal(transfers_sample(ring), 1);
    struct tcp_info_sample last;
    if (tcp_info_read(srv, &last, err, sizeof err) != 0)
        fail_msg("sender: %s", err);
    json_t *record = transfers_end(ring, seq, "done", 1, &last, NULL);
    assert_non_null(record);
    json_t *server = json_incref(json_object_get(record, "tcp"));
    json_decref(record);
    transfers_free(ring);
    assert_true(json_is_object(server));
    json_t *tcp = json_object_get(run, "tcp");
    assert_true(json_is_object(tcp));

    char msg[1024];
    missing_keys(tcp, server, msg, sizeof msg);
    if (msg[0])
        fail_msg("client keys not in the server's record:%s", msg);
    missing_keys(server, tcp, msg, sizeof msg);
    if (msg[0])
        fail_msg("server keys not in the client's record:%s", msg);

    /* One name per meaning: the ambiguous key and the client's private copies are gone. */
    static const char *const gone[] = {"retransmits", "mss", "tcp_info"};
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++) {
        if (json_object_get(run, gone[i]) || json_object_get(tcp, gone[i]) || json_object_get(server, gone[i]))
            fail_msg("key \"%s\" still present", gone[i]);
    }
    /* The figures the client printed before, under the shared names and units. */
    static const char *const numbers[] = {
        "rtt_ms", "min_rtt_ms", "rcv_rtt_ms", "total_retrans", "unrecovered_rtos", "rcv_mss", "snd_mss",
        "rcv_space", "rcv_ssthresh", "bytes_received", "data_segs_in", "lost", "reordering", "pmtu", "advmss",
    };
    for (size_t i = 0; i < sizeof numbers / sizeof numbers[0]; i++)
        if (!json_is_number(json_object_get(tcp, numbers[i])))
            fail_msg("tcp.%s is not a number", numbers[i]);
    assert_true(json_is_integer(json_object_get(tcp, "total_retrans")));
    assert_int_equal(json_integer_value(json_object_get(tcp, "bytes_received")), r->tcp.bytes_received);
    assert_true(json_real_value(json_object_get(tcp, "rtt_ms")) == r->tcp.rtt_us / 1000.0);
    /* The headline RTTs at the top level are the same values as in "tcp". */
    static const char *const headline[] = {"rtt_ms", "min_rtt_ms", "rcv_rtt_ms"};
    for (size_t i = 0; i < sizeof headline / sizeof headline[0]; i++)
        assert_true(json_equal(json_object_get(run, headline[i]), json_object_get(tcp, headline[i])));

    json_decref(server);
    json_decref(run);
    result_free(r);
    close(cli);
    close(srv);
}

static void test_no_sample(void **state)
{
    (void)state;
    struct run_result *r = result_new();
    assert_non_null(r);
    json_t *run = result_to_json(r); /* never connected: nothing kept, everything null */
    static const char *const nulls[] = {"tcp", "rtt_ms", "min_rtt_ms", "rcv_rtt_ms"};
    for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++) {
        json_t *v = json_object_get(run, nulls[i]);
        if (!v || !json_is_null(v))
            fail_msg("%s: not null without a TCP_INFO sample", nulls[i]);
    }
    json_decref(run);
    result_free(r);
}

/* Issue 12's keys: direction and parallel always, streams and server_upload when set,
 * the not_test_file kind, and a peak left null with the reason. */
static void test_streams_and_direction(void **state)
{
    (void)state;
    struct run_result *r = result_new();
    json_t *o = result_to_json(r);
    assert_string_equal(json_string_value(json_object_get(o, "direction")), "download");
    assert_int_equal(json_integer_value(json_object_get(o, "parallel")), 1);
    assert_null(json_object_get(o, "streams"));
    assert_null(json_object_get(o, "server_upload"));
    assert_false(json_is_true(json_object_get(o, "duration_reached")));
    json_decref(o);
    r->upload = 1;
    r->parallel = 2;
    r->streams = json_pack("[{s:i}, {s:i}]", "stream", 1, "stream", 2);
    r->server_upload = json_pack("{s:i, s:b}", "bytes", 5, "bytes_match", 1);
    r->peak_mbps = NAN;
    r->figures_note = "fewer than 10 intervals";
    result_fail(r, RESULT_ERR_NOT_TEST_FILE, "not a test file: x");
    o = result_to_json(r);
    assert_string_equal(json_string_value(json_object_get(o, "direction")), "upload");
    assert_int_equal(json_array_size(json_object_get(o, "streams")), 2);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "server_upload"), "bytes")), 5);
    assert_string_equal(json_string_value(json_object_get(o, "error_kind")), "not_test_file");
    assert_true(json_is_null(json_object_get(o, "peak_mbps")));
    assert_string_equal(json_string_value(json_object_get(o, "figures_note")), "fewer than 10 intervals");
    json_decref(o);
    result_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_vocabulary),
        cmocka_unit_test(test_no_sample),
        cmocka_unit_test(test_streams_and_direction),
    };
    return cmocka_run_group_tests_name("result", tests, NULL, NULL);
}
