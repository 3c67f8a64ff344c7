/* Unit tests for server/guard/refusal_log.c: one summary line per interval with the counts by
 * reason and the top addresses (largest first, each with its reasons, the rest summed),
 * nothing on a quiet
 * interval, totals that survive the flushes; libmicrohttpd's once-per-connection messages
 * classified, any other message left to its own line; addresses as text. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <arpa/inet.h>

#include "refusal_log.h"

static void test_summary(void **state)
{
    (void)state;
    struct refusal_log rl;
    char err[128], line[1024];
    assert_int_equal(refusal_log_init(&rl, 10000, 0, err, sizeof err), 0);
    assert_int_equal(refusal_log_flush(&rl, 20000, 0, line, sizeof line), 0); /* nothing yet */
    /* 7 addresses: .2 x7, .3 x6, ... .8 x1; 3 per_ip refusals of .2 (with its address);
     * and 4 limit refusals without an address (limits.connections) */
    for (int a = 2; a <= 8; a++)
        for (int i = 0; i < 9 - a; i++) {
            char addr[32];
            snprintf(addr, sizeof addr, "127.0.0.%d", a);
            refusal_log_note(&rl, REFUSAL_HEADER_TIMEOUT, addr);
        }
    refusal_log_note(&rl, REFUSAL_BODY_RATE, "::1");
    for (int i = 0; i < 3; i++)
        refusal_log_note(&rl, REFUSAL_LIMIT, "127.0.0.2");
    for (int i = 0; i < 4; i++)
        refusal_log_note(&rl, REFUSAL_LIMIT, NULL);
    refusal_log_note(&rl, REFUSAL_N, "x"); /* not a reason: ignored */
    assert_int_equal(refusal_log_flush(&rl, 29999, 0, line, sizeof line), 0); /* interval not over */
    assert_int_equal(refusal_log_flush(&rl, 30000, 0, line, sizeof line), 1);
    assert_string_equal(line, "refused or closed in the last 10.0 s: header_timeout 28, body_min_rate 1, limit 7; "
                              "top addresses: 127.0.0.2 10 (header_timeout 7, limit 3), 127.0.0.3 6 (header_timeout 6), "
                              "127.0.0.4 5 (header_timeout 5), 127.0.0.5 4 (header_timeout 4), "
                              "127.0.0.6 3 (header_timeout 3) (+3 addresses, 4)");
    /* a new interval, from the flush */
    assert_int_equal(refusal_log_flush(&rl, 50000, 0, line, sizeof line), 0);
    refusal_log_note(&rl, REFUSAL_INCOMPLETE, NULL);
    refusal_log_note(&rl, REFUSAL_LIMIT, "127.0.0.2"); /* its counts by reason start again */
    assert_int_equal(refusal_log_flush(&rl, 55000, 1, line, sizeof line), 1); /* forced (at stop) */
    assert_string_equal(line, "refused or closed in the last 5.0 s: limit 1, incomplete_request 1; "
                              "top addresses: 127.0.0.2 1 (limit 1)");
    assert_int_equal(refusal_log_total(&rl, REFUSAL_HEADER_TIMEOUT), 28);
    assert_int_equal(refusal_log_total(&rl, REFUSAL_LIMIT), 8);
    assert_int_equal(refusal_log_total(&rl, REFUSAL_INCOMPLETE), 1);
    refusal_log_destroy(&rl);
}

/* Warning lines a client can cause once per connection: REFUSAL_LOG_LINES per interval are
 * written, the rest counted into the summary (20,000 lines in 4.5 s became 9 lines). */
static void test_lines(void **state)
{
    (void)state;
    struct refusal_log rl;
    char err[128], line[1024];
    assert_int_equal(refusal_log_init(&rl, 10000, 0, err, sizeof err), 0);
    static const struct {
        int64_t now_ms;
        int n;       /* lines offered at NOW_MS */
        int written; /* of which may be written */
    } rows[] = {
        {0, 1, 1},
        {100, REFUSAL_LOG_LINES - 1, REFUSAL_LOG_LINES - 1}, /* the interval's budget */
        {200, 20000, 0},                                     /* the flood: counted only */
        {9999, 1, 0},
        {10000, REFUSAL_LOG_LINES + 5, REFUSAL_LOG_LINES},   /* a new interval: a new budget */
    };
    int64_t dropped = 0;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int written = 0;
        for (int k = 0; k < rows[i].n; k++) {
            char msg[64];
            snprintf(msg, sizeof msg, "Application reported internal error %zu.%d", i, k);
            written += refusal_log_line(&rl, rows[i].now_ms, msg);
        }
        if (written != rows[i].written)
            fail_msg("row %zu: %d lines may be written, want %d", i, written, rows[i].written);
        dropped += rows[i].n - written;
    }
    assert_int_equal(dropped, 20006);
    assert_int_equal(refusal_log_flush(&rl, 10000, 0, line, sizeof line), 1);
    assert_string_equal(line, "warnings in the last 10.0 s: 20006 more warning lines not written "
                              "(the last: Application reported internal error 4.12)");
    assert_int_equal(refusal_log_flush(&rl, 30000, 0, line, sizeof line), 0); /* said once */
    /* with refusals in the same interval: one line for both */
    refusal_log_note(&rl, REFUSAL_TLS, "::1");
    for (int k = 0; k < REFUSAL_LOG_LINES + 1; k++)
        refusal_log_line(&rl, 30001, "x");
    assert_int_equal(refusal_log_flush(&rl, 40000, 0, line, sizeof line), 1);
    assert_string_equal(line, "refused or closed in the last 10.0 s: tls_handshake 1; top addresses: ::1 1 "
                              "(tls_handshake 1); 1 more warning line not written (the last: x)");
    refusal_log_destroy(&rl);
}

static void test_many_addresses(void **state)
{
    (void)state;
    struct refusal_log rl;
    char err[128], line[1024];
    assert_int_equal(refusal_log_init(&rl, 10000, 0, err, sizeof err), 0);
    /* more distinct addresses than the table holds: the rest are counted, the line bounded */
    for (int i = 0; i < REFUSAL_LOG_ADDRS + 36; i++) {
        char addr[32];
        snprintf(addr, sizeof addr, "198.18.%d.%d", i / 250, i % 250);
        refusal_log_note(&rl, REFUSAL_HEADER_TIMEOUT, addr);
        if (i == 5)
            for (int k = 0; k < 10; k++)
                refusal_log_note(&rl, REFUSAL_HEADER_TIMEOUT, addr);
    }
    assert_int_equal(refusal_log_flush(&rl, 10000, 0, line, sizeof line), 1);
    assert_non_null(strstr(line, "header_timeout 110; top addresses: 198.18.0.5 11 (header_timeout 11), "));
    assert_non_null(strstr(line, "(+59 or more addresses, 95)"));
    /* a short buffer truncates, terminated */
    refusal_log_note(&rl, REFUSAL_LIMIT, NULL);
    assert_int_equal(refusal_log_flush(&rl, 20000, 0, line, 12), 1);
    assert_string_equal(line, "refused or ");
    refusal_log_destroy(&rl);
}

/* libmicrohttpd's texts are mhd_compat's (tests/unit/server/http/test_mhd_compat.c) */
static void test_reason_names(void **state)
{
    (void)state;
    assert_string_equal(refusal_reason_name(REFUSAL_BODY_RATE), "body_min_rate");
    assert_string_equal(refusal_reason_name(REFUSAL_MALFORMED), "malformed_request");
    assert_string_equal(refusal_reason_name(REFUSAL_N), "?");
}

static void test_addr_format(void **state)
{
    (void)state;
    char buf[64];
    struct sockaddr_in s4 = {.sin_family = AF_INET};
    inet_pton(AF_INET, "127.0.0.13", &s4.sin_addr);
    refusal_addr_format((struct sockaddr *)&s4, sizeof s4, buf, sizeof buf);
    assert_string_equal(buf, "127.0.0.13");
    struct sockaddr_in6 s6 = {.sin6_family = AF_INET6};
    inet_pton(AF_INET6, "::ffff:198.18.0.2", &s6.sin6_addr); /* a dual-stack listener's IPv4 peer */
    refusal_addr_format((struct sockaddr *)&s6, sizeof s6, buf, sizeof buf);
    assert_string_equal(buf, "198.18.0.2");
    inet_pton(AF_INET6, "fd00::2", &s6.sin6_addr);
    refusal_addr_format((struct sockaddr *)&s6, sizeof s6, buf, sizeof buf);
    assert_string_equal(buf, "fd00::2");
    refusal_addr_format(NULL, 0, buf, sizeof buf);
    assert_string_equal(buf, "?");
    refusal_addr_format((struct sockaddr *)&s6, 4, buf, sizeof buf); /* too short */
    assert_string_equal(buf, "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_lines),
        cmocka_unit_test(test_many_addresses),
        cmocka_unit_test(test_reason_names),
        cmocka_unit_test(test_addr_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
