/* Unit tests for common/tcp_info.c: a real loopback connection carries a known number of
 * bytes, and both ends' TCP_INFO must say so; JSON keys, units and nulls. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp_info.h"
#include "testlib.h"

#define PAYLOAD (4u << 20)

/* tcp_info_to_json's "state" (ca = 0) or "ca_state" (ca = 1) for a sample with that value
 * equals want. */
static void assert_state_json(unsigned value, int ca, const char *want)
{
    struct tcp_info_sample ti = {.have = TCP_INFO_HAVE_BASE};
    if (ca)
        ti.ca_state = (uint8_t)value;
    else
        ti.state = (uint8_t)value;
    json_t *j = tcp_info_to_json(&ti);
    assert_string_equal(json_string_value(json_object_get(j, ca ? "ca_state" : "state")), want);
    json_decref(j);
}

/* The server sends PAYLOAD bytes, the client reads them all (one thread: socket buffers
 * on loopback are large enough when we alternate in chunks). */
static void transfer(int srv, int cli)
{
    static char buf[65536];
    memset(buf, 'x', sizeof buf);
    size_t sent = 0, got = 0;
    for (int guard = 0; got < PAYLOAD && guard < 100000; guard++) {
        if (sent < PAYLOAD) {
            size_t n = PAYLOAD - sent < sizeof buf ? PAYLOAD - sent : sizeof buf;
            ssize_t w = send(srv, buf, n, MSG_DONTWAIT);
            if (w > 0)
                sent += (size_t)w;
            else
                assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
        }
        ssize_t r = recv(cli, buf, sizeof buf, sent == PAYLOAD ? 0 : MSG_DONTWAIT);
        if (r > 0)
            got += (size_t)r;
        else
            assert_true(r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
    }
    assert_int_equal(got, PAYLOAD);
    usleep(20000); /* let the last ACKs arrive */
}

static void test_loopback_both_ends(void **state)
{
    (void)state;
    int cli, srv;
    char err[128];
    testlib_loopback_pair(&cli, &srv);
    transfer(srv, cli);

    struct tcp_info_sample s, r;
    if (tcp_info_read(srv, &s, err, sizeof err) < 0)
        fail_msg("sender: %s", err);
    if (tcp_info_read(cli, &r, err, sizeof err) < 0)
        fail_msg("receiver: %s", err);

    /* this kernel fills everything we know */
    assert_true(s.have & TCP_INFO_HAVE_BASE);
    assert_true(s.have & TCP_INFO_HAVE_DELIVERY);
    assert_true(s.have & TCP_INFO_HAVE_LIMITED);
    assert_true(s.have & TCP_INFO_HAVE_SENT);
    assert_state_json(s.state, 0, "ESTABLISHED");
    assert_state_json(s.ca_state, 1, "open");

    /* sender side: what debitd records */
    assert_true(s.bytes_acked >= PAYLOAD && s.bytes_acked <= PAYLOAD + 1); /* +1: the SYN */
    assert_true(s.bytes_sent >= PAYLOAD);
    assert_true(s.data_segs_out > 0);
    assert_true(s.rtt_us > 0);
    assert_true(s.min_rtt_us > 0 && s.min_rtt_us <= s.rtt_us + s.rttvar_us);
    assert_true(s.snd_mss > 0 && s.snd_mss <= 65536);
    assert_true(s.snd_cwnd >= 1);
    assert_int_equal(s.max_snd_cwnd, s.snd_cwnd);
    assert_true(s.delivery_rate_bps > 0);
    /* busy_time counts jiffies: a loopback transfer may take less than one */
    assert_true(s.rwnd_limited_us <= s.busy_time_us);
    assert_true(s.sndbuf_limited_us <= s.busy_time_us);

    /* receiver side: what debit records */
    assert_true(r.bytes_received >= PAYLOAD && r.bytes_received <= PAYLOAD + 1);
    assert_true(r.rcv_mss > 0);
    assert_true(r.data_segs_in > 0);
    assert_int_equal(r.total_retrans, 0);

    json_t *j = tcp_info_to_json(&s);
    static const char *const num_keys[] = {
        "rtt_ms", "rttvar_ms", "min_rtt_ms", "rcv_rtt_ms", "rto_ms", "snd_mss", "rcv_mss", "pmtu", "snd_cwnd",
        "max_snd_cwnd", "unrecovered_rtos", "total_retrans", "lost", "delivery_rate_bps", "pacing_rate_bps",
        "bytes_acked", "bytes_received", "bytes_sent", "bytes_retrans", "segs_out", "segs_in", "busy_time_ms",
        "rwnd_limited_ms", "sndbuf_limited_ms", "snd_wnd",
    };
    for (size_t i = 0; i < sizeof num_keys / sizeof num_keys[0]; i++) {
        json_t *v = json_object_get(j, num_keys[i]);
        if (!v || !json_is_number(v))
            fail_msg("sender JSON: %s missing or not a number", num_keys[i]);
    }
    /* "retransmits" meant two things (issue 8): the total is total_retrans, the RTO count
     * unrecovered_rtos, and the old key is gone. */
    assert_null(json_object_get(j, "retransmits"));
    assert_int_equal(json_integer_value(json_object_get(j, "unrecovered_rtos")), s.unrecovered_rtos);
    assert_int_equal(json_integer_value(json_object_get(j, "total_retrans")), s.total_retrans);
    /* "retransmits" meant two things (issue 8): the total is total_retrans, the RTO count
     * unrecovered_rtos, and the old key is gone. */
    assert_null(json_object_get(j, "retransmits"));
    assert_int_equal(json_integer_value(json_object_get(j, "unrecovered_rtos")), s.unrecovered_rtos);
    assert_int_equal(json_integer_value(json_object_get(j, "total_retrans")), s.total_retrans);
    assert_string_equal(json_string_value(json_object_get(j, "state")), "ESTABLISHED");
    assert_string_equal(json_string_value(json_object_get(j, "ca_state")), "open");
    /* units: milliseconds and bit/s */
    assert_true(json_real_value(json_object_get(j, "rtt_ms")) == s.rtt_us / 1000.0);
    assert_true(json_real_value(json_object_get(j, "busy_time_ms")) == s.busy_time_us / 1000.0);
    assert_int_equal(json_integer_value(json_object_get(j, "delivery_rate_bps")), s.delivery_rate_bps);
    assert_int_equal(json_integer_value(json_object_get(j, "bytes_acked")), s.bytes_acked);
    assert_true(json_is_boolean(json_object_get(j, "delivery_rate_app_limited")));
    /* ratios of busy time: null when there was no measurable busy time (it counts jiffies) */
    static const char *const ratios[] = {"rwnd_limited_ratio", "sndbuf_limited_ratio"};
    for (size_t i = 0; i < 2; i++) {
        json_t *v = json_object_get(j, ratios[i]);
        assert_non_null(v);
        if (s.busy_time_us == 0) {
            assert_true(json_is_null(v));
        } else {
            assert_true(json_is_real(v));
            assert_true(json_real_value(v) >= 0.0 && json_real_value(v) <= 1.0);
        }
    }
    /* no SO_MAX_PACING_RATE set: unlimited is null, not 2^64-1 */
    assert_true(json_is_null(json_object_get(j, "max_pacing_rate_bps")));
    json_decref(j);

    j = tcp_info_to_json(&r);
    assert_int_equal(json_integer_value(json_object_get(j, "bytes_received")), r.bytes_received);
    assert_int_equal(json_integer_value(json_object_get(j, "total_retrans")), 0);
    json_decref(j);
    close(cli);
    close(srv);
}

static void test_track_max_cwnd(void **state)
{
    (void)state;
    struct tcp_info_sample acc, cur;
    memset(&acc, 0, sizeof acc);
    static const uint32_t cwnds[] = {10, 40, 25, 90, 3};
    for (size_t i = 0; i < sizeof cwnds / sizeof cwnds[0]; i++) {
        memset(&cur, 0, sizeof cur);
        cur.snd_cwnd = cwnds[i];
        cur.max_snd_cwnd = cwnds[i];
        cur.bytes_acked = i;
        tcp_info_track(&acc, &cur);
    }
    assert_int_equal(acc.snd_cwnd, 3);      /* latest */
    assert_int_equal(acc.bytes_acked, 4);   /* latest */
    assert_int_equal(acc.max_snd_cwnd, 90); /* largest seen */
}

static void test_errors_and_nulls(void **state)
{
    (void)state;
    struct tcp_info_sample ti;
    char err[128];
    assert_int_equal(tcp_info_read(-1, &ti, err, sizeof err), -1);
    assert_string_equal(err, "TCP_INFO: Bad file descriptor");
    int u = socket(AF_INET, SOCK_DGRAM, 0);
    assert_int_equal(tcp_info_read(u, &ti, err, sizeof err), -1);
    assert_int_equal(strncmp(err, "TCP_INFO: ", 10), 0);
    close(u);
    /* a listening socket is fine: state LISTEN */
    int l = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(l, 1), 0);
    assert_int_equal(tcp_info_read(l, &ti, err, sizeof err), 0);
    assert_state_json(ti.state, 0, "LISTEN");
    close(l);

    /* fields an old kernel did not fill are null, not 0 */
    memset(&ti, 0, sizeof ti);
    ti.have = TCP_INFO_HAVE_BASE;
    ti.rtt_us = 1500;
    ti.snd_ssthresh = 0x7fffffff; /* "infinite": null */
    json_t *j = tcp_info_to_json(&ti);
    assert_true(json_real_value(json_object_get(j, "rtt_ms")) == 1.5);
    static const char *const nulls[] = {"delivery_rate_bps", "min_rtt_ms", "busy_time_ms", "rwnd_limited_ratio",
                                        "bytes_acked", "bytes_sent", "snd_ssthresh", "total_rto"};
    for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++)
        if (!json_is_null(json_object_get(j, nulls[i])))
            fail_msg("%s should be null", nulls[i]);
    json_decref(j);

    assert_state_json(200, 0, "?");
    assert_state_json(4, 1, "loss");
    assert_state_json(9, 1, "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loopback_both_ends),
        cmocka_unit_test(test_track_max_cwnd),
        cmocka_unit_test(test_errors_and_nulls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
