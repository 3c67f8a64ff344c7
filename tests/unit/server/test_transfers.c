/* Unit tests for server/transfers.c: the ring behind /transfers/ID (the contract with the
 * client): "sending" at begin, "done" with bytes and tcp at end, 404 (NULL) for unknown,
 * malformed or evicted IDs; TCP_INFO samples tracked so that max_snd_cwnd is the largest
 * cwnd seen. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <unistd.h>

#include "testlib.h"
#include "transfers.h"

static const char *str(json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static void test_life_cycle(void **state)
{
    (void)state;
    struct transfers *t = transfers_new(4);
    assert_non_null(t);
    char id[TRANSFER_ID_LEN];
    struct transfer_start s = {"/ram/1GiB.dat", "127.0.0.1:5000", "[::]:8080", 0, 1000, 200, -1, "sendfile"};
    uint64_t seq = transfers_begin(t, &s, id);
    json_t *j = transfers_get(t, id);
    assert_non_null(j);
    assert_string_equal(str(j, "id"), id);
    assert_string_equal(str(j, "state"), "sending");
    assert_string_equal(str(j, "path"), "/ram/1GiB.dat");
    assert_int_equal(json_integer_value(json_object_get(j, "bytes")), 0);
    assert_true(json_is_real(json_object_get(j, "duration_s")));
    assert_true(json_is_object(json_object_get(j, "tcp")));
    assert_string_equal(str(j, "send_path"), "sendfile");
    assert_true(json_is_true(json_object_get(j, "zero_copy")));
    json_decref(j);
    struct tcp_info_sample last = {.have = TCP_INFO_HAVE_BASE, .rtt_us = 500, .snd_cwnd = 10};
    json_t *done = transfers_end(t, seq, "done", 1000, &last);
    assert_non_null(done);
    assert_string_equal(str(done, "state"), "done");
    json_decref(done);
    j = transfers_get(t, id);
    assert_string_equal(str(j, "state"), "done");
    assert_int_equal(json_integer_value(json_object_get(j, "bytes")), 1000);
    assert_true(json_real_value(json_object_get(json_object_get(j, "tcp"), "rtt_ms")) == 0.5);
    json_decref(j);
    assert_int_equal(transfers_count(t), 1);
    transfers_free(t);
    transfers_free(NULL);
}

static void test_unknown_and_evicted(void **state)
{
    (void)state;
    struct transfers *t = transfers_new(2);
    char ids[3][TRANSFER_ID_LEN];
    struct transfer_start s = {"/f", "", "", 0, 1, 200, -1, "iovec"};
    uint64_t seq[3];
    for (int i = 0; i < 3; i++)
        seq[i] = transfers_begin(t, &s, ids[i]);
    /* a ring of 2: the first one is gone, and ending it is ignored */
    assert_null(transfers_get(t, ids[0]));
    assert_null(transfers_end(t, seq[0], "done", 1, NULL));
    json_t *j = transfers_get(t, ids[2]);
    assert_non_null(j);
    assert_string_equal(str(j, "send_path"), "iovec");
    assert_true(json_is_false(json_object_get(j, "zero_copy")));
    json_decref(j);
    char other[TRANSFER_ID_LEN];
    snprintf(other, sizeof other, "%s", ids[2]);
    other[0] = other[0] == 'f' ? '0' : 'f'; /* another boot */
    static const char *const bad[] = {"", "x", "12345678", "12345678-", "1234567-2", "zzzzzzzz-2",
                                      "00000000-0", "-1", "12345678-2-3", "12345678-99999999999999999999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (transfers_get(t, bad[i]))
            fail_msg("\"%s\" resolved", bad[i]);
    assert_null(transfers_get(t, other));
    transfers_free(t);
}

static json_int_t tcp_int(json_t *entry, const char *k)
{
    return json_integer_value(json_object_get(json_object_get(entry, "tcp"), k));
}

/* A sample while sending, then a final one with a smaller cwnd: the record keeps the
 * latest values and the largest cwnd. Disconnect tcp_info_track and max_snd_cwnd falls
 * back to the final 1. */
static void test_track_samples(void **state)
{
    (void)state;
    int cfd, sfd;
    testlib_loopback_pair(&cfd, &sfd);
    struct transfers *t = transfers_new(4);
    char id[TRANSFER_ID_LEN];
    struct transfer_start s = {"/f", "", "", 0, 100, 200, sfd, "sendfile"};
    uint64_t seq = transfers_begin(t, &s, id);
    assert_int_equal(transfers_sample(t), 1);
    json_t *j = transfers_get(t, id); /* a sending record shows the samples so far */
    assert_string_equal(str(j, "state"), "sending");
    long cwnd = tcp_int(j, "snd_cwnd");
    assert_true(cwnd > 1);
    assert_int_equal(tcp_int(j, "max_snd_cwnd"), cwnd);
    json_decref(j);
    struct tcp_info_sample last = {.have = TCP_INFO_HAVE_BASE, .snd_cwnd = 1, .rtt_us = 300};
    json_t *done = transfers_end(t, seq, "done", 100, &last);
    assert_int_equal(tcp_int(done, "snd_cwnd"), 1);
    assert_int_equal(tcp_int(done, "max_snd_cwnd"), cwnd);
    assert_true(json_real_value(json_object_get(json_object_get(done, "tcp"), "rtt_ms")) == 0.3);
    json_decref(done);
    /* once done, the socket is never sampled again and the record stays as it ended */
    assert_int_equal(transfers_sample(t), 0);
    j = transfers_get(t, id);
    assert_int_equal(tcp_int(j, "snd_cwnd"), 1);
    json_decref(j);
    transfers_free(t);
    close(sfd);
    close(cfd);
}

/* transfers_sample reads the socket of every sending transfer, and stops at its end. */
static void test_sample_sockets(void **state)
{
    (void)state;
    int cfd, sfd;
    testlib_loopback_pair(&cfd, &sfd);

    struct transfers *t = transfers_new(4);
    char id[TRANSFER_ID_LEN], id2[TRANSFER_ID_LEN];
    struct transfer_start s = {"/f", "", "", 0, 100, 200, sfd, "sendfile"};
    struct transfer_start none = {"/g", "", "", 0, 100, 200, -1, "sendfile"};
    assert_int_equal(transfers_sample(t), 0); /* nothing sending */
    uint64_t seq = transfers_begin(t, &s, id);
    transfers_begin(t, &none, id2);
    assert_int_equal(transfers_sample(t), 1); /* the one with a socket */
    json_t *j = transfers_get(t, id);
    assert_string_equal(str(json_object_get(j, "tcp"), "state"), "ESTABLISHED");
    assert_true(tcp_int(j, "snd_cwnd") > 0);
    json_decref(j);
    json_decref(transfers_end(t, seq, "done", 100, NULL));
    assert_int_equal(transfers_sample(t), 0); /* done: its socket is never read again */
    transfers_free(t);
    close(sfd);
    close(cfd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_life_cycle),
        cmocka_unit_test(test_unknown_and_evicted),
        cmocka_unit_test(test_track_samples),
        cmocka_unit_test(test_sample_sockets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
