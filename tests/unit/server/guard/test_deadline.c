/* Unit tests for server/guard/deadline.c: which connections deadline_scan reports, when, and
 * why, on a clock the test drives: the header deadline from the accept and again from the
 * end of each response (keep-alive), none while a response is sent, the body's rate over
 * windows, each expiry reported once, the table empty after every close, a full table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <netinet/in.h>

#include "deadline.h"

struct seen {
    int n;
    int fd[8];
    enum deadline_reason why[8];
};

static void note(void *arg, struct deadline_conn *c, enum deadline_reason why)
{
    struct seen *s = arg;
    if (s->n < 8) {
        s->fd[s->n] = c->fd;
        s->why[s->n] = why;
    }
    s->n++;
}

/* scan at NOW; the fds reported, as "fd:reason,..." (h = header, b = body) */
static const char *scan(struct deadlines *d, int64_t now, char *buf, size_t len)
{
    struct seen s = {0};
    size_t n = deadline_scan(d, now, note, &s);
    assert_int_equal(n, (size_t)s.n);
    buf[0] = 0;
    for (int i = 0; i < s.n && i < 8; i++)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%d:%c", i ? "," : "", s.fd[i],
                 s.why[i] == DEADLINE_HEADER_TIMEOUT ? 'h' : 'b');
    return buf;
}

static void test_header_deadline(void **state)
{
    (void)state;
    struct deadlines d;
    char err[128], b[128];
    assert_int_equal(deadlines_init(&d, 8, 5000, 0, 10000, err, sizeof err), 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    struct deadline_conn *slow = deadline_open(&d, 10, (struct sockaddr *)&sa, sizeof sa, 1000);
    struct deadline_conn *fast = deadline_open(&d, 11, NULL, 0, 1000);
    struct deadline_conn *late = deadline_open(&d, 12, NULL, 0, 3000);
    assert_int_equal(deadline_count(&d), 3);
    assert_int_equal(slow->addr.ss_family, AF_INET);
    static const struct {
        int64_t now;
        const char *want;
    } rows[] = {
        {5999, ""},     /* 4.999 s after the accept: not yet */
        {6000, "10:h"}, /* 5 s: the slow one (fast finished its headers at 2 s) */
        {6500, ""},     /* reported once */
        {7999, ""},
        {8000, "12:h"}, /* accepted 2 s later, expires 2 s later */
    };
    deadline_headers_done(&d, fast, 2000);
    deadline_body_done(&d, fast);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (strcmp(scan(&d, rows[i].now, b, sizeof b), rows[i].want) != 0)
            fail_msg("at %lld: got \"%s\", want \"%s\"", (long long)rows[i].now, b, rows[i].want);
    /* an expired connection stays expired whatever its worker reports before the close */
    deadline_headers_done(&d, slow, 6600);
    assert_int_equal(slow->phase, DEADLINE_PHASE_EXPIRED);
    /* a response that takes long is not a header deadline... */
    assert_string_equal(scan(&d, 100000, b, sizeof b), "");
    /* ...but after it, on a keep-alive connection, the next headers get 5 s again */
    deadline_request_done(&d, fast, 100000);
    assert_string_equal(scan(&d, 104999, b, sizeof b), "");
    assert_string_equal(scan(&d, 105000, b, sizeof b), "11:h");
    deadline_close(&d, slow);
    deadline_close(&d, fast);
    deadline_close(&d, late);
    deadline_close(&d, NULL);
    assert_int_equal(deadline_count(&d), 0);
    deadlines_destroy(&d);
}

static void test_body_rate(void **state)
{
    (void)state;
    struct deadlines d;
    char err[128], b[128];
    /* at least 1000 B/s over 10 s windows */
    assert_int_equal(deadlines_init(&d, 8, 5000, 1000, 10000, err, sizeof err), 0);
    struct deadline_conn *steady = deadline_open(&d, 20, NULL, 0, 0);
    struct deadline_conn *trickle = deadline_open(&d, 21, NULL, 0, 0);
    struct deadline_conn *burst = deadline_open(&d, 22, NULL, 0, 0);
    for (struct deadline_conn *c = steady; c; c = c == steady ? trickle : c == trickle ? burst : NULL)
        deadline_headers_done(&d, c, 1000);
    /* the first window: 10 s from the end of the headers */
    deadline_body(steady, 10000);  /* exactly the floor */
    deadline_body(trickle, 9999);  /* one byte short */
    deadline_body(burst, 1 << 20); /* far above */
    assert_string_equal(scan(&d, 10999, b, sizeof b), "");
    assert_string_equal(scan(&d, 11000, b, sizeof b), "21:b");
    /* a window that kept up starts the next one: bytes of the first do not carry over */
    deadline_body(steady, 5000);
    assert_string_equal(scan(&d, 21000, b, sizeof b), "22:b,20:b");
    /* a request without a body leaves BODY at once: no rate, no header deadline */
    struct deadline_conn *get = deadline_open(&d, 23, NULL, 0, 0);
    deadline_headers_done(&d, get, 100);
    deadline_body_done(&d, get);
    assert_string_equal(scan(&d, 50000, b, sizeof b), "");
    deadlines_destroy(&d); /* frees what is left */
}

static void test_off(void **state)
{
    (void)state;
    struct deadlines d;
    char err[128], b[128];
    /* 0 = no header deadline and no rate floor */
    assert_int_equal(deadlines_init(&d, 2, 0, 0, 10000, err, sizeof err), 0);
    struct deadline_conn *idle = deadline_open(&d, 30, NULL, 0, 0);
    struct deadline_conn *up = deadline_open(&d, 31, NULL, 0, 0);
    deadline_headers_done(&d, up, 0);
    assert_string_equal(scan(&d, 1000000000, b, sizeof b), "");
    /* a table of 2 is full: a third connection goes unwatched; a closed one frees its entry */
    assert_null(deadline_open(&d, 32, NULL, 0, 0));
    deadline_close(&d, idle);
    struct deadline_conn *again = deadline_open(&d, 33, NULL, 0, 5);
    assert_ptr_equal(again, idle);
    assert_int_equal(again->fd, 33);
    assert_int_equal(again->phase, DEADLINE_PHASE_HEADERS);
    assert_int_equal(deadline_count(&d), 2);
    deadlines_destroy(&d);
}

/* A reload's new limits apply at the next scan, to connections already open too. */
static void test_set_limits(void **state)
{
    (void)state;
    struct deadlines d;
    char err[128], b[128];
    assert_int_equal(deadlines_init(&d, 2, 0, 0, 10000, err, sizeof err), 0);
    struct deadline_conn *idle = deadline_open(&d, 40, NULL, 0, 0);
    assert_non_null(idle);
    assert_string_equal(scan(&d, 5000, b, sizeof b), ""); /* no header deadline */
    deadlines_set_limits(&d, 3000, 0);
    assert_string_equal(scan(&d, 2999, b, sizeof b), "");
    assert_string_not_equal(scan(&d, 3000, b, sizeof b), ""); /* opened at 0: past 3 s now */
    deadlines_set_limits(&d, 0, 0);
    deadlines_destroy(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_limits),
        cmocka_unit_test(test_header_deadline),
        cmocka_unit_test(test_body_rate),
        cmocka_unit_test(test_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
