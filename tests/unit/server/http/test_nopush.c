/* Unit tests for server/http/nopush.c (tcp_nopush): nopush_begin corks the socket and sets
 * TCP_NODELAY; while it is held, TCP_CORK/TCP_NODELAY calls through setsockopt() (the ones
 * libmicrohttpd makes) are answered 0 without reaching the kernel, and data stays queued
 * even after the "push" that would release it; every other option passes through;
 * nopush_end uncorks and the data leaves. Descriptors outside the table and non-sockets
 * are refused with a message, and nothing is held. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "conn.h"
#include "mhd_compat.h"
#include "nopush.h"
#include "testlib.h"

static int get_int(int fd, int level, int name)
{
    int v = -1;
    socklen_t len = sizeof v;
    assert_int_equal(getsockopt(fd, level, name, &v, &len), 0);
    return v;
}

static int set_int(int fd, int level, int name, int v)
{
    return setsockopt(fd, level, name, &v, sizeof v);
}

/* bytes queued on FD that the kernel has not sent yet */
static int unsent(int fd)
{
    int n = -1;
    assert_int_equal(ioctl(fd, SIOCOUTQNSD, &n), 0);
    return n;
}

static int readable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    return poll(&p, 1, 0);
}

static void test_hold_and_release(void **state)
{
    (void)state;
    int cli, srv;
    char err[160] = "";
    assert_true(nopush_interposed()); /* the Makefile exports setsockopt from test binaries too */
    testlib_loopback_pair(&cli, &srv);
    struct conn *c = conn_new(srv); /* what NOTIFY_STARTED makes */
    assert_non_null(c);
    assert_int_equal(get_int(srv, IPPROTO_TCP, TCP_CORK), 0);
    assert_int_equal(get_int(srv, IPPROTO_TCP, TCP_NODELAY), 0);
    assert_false(nopush_held(srv));

    assert_int_equal(nopush_begin(srv, err, sizeof err), 0);
    assert_true(nopush_held(srv));
    assert_int_not_equal(get_int(srv, IPPROTO_TCP, TCP_CORK), 0);
    assert_int_not_equal(get_int(srv, IPPROTO_TCP, TCP_NODELAY), 0);

    /* what libmicrohttpd does after pushing headers alone: uncork, or set TCP_NODELAY */
    uint64_t before = nopush_calls_held();
    assert_int_equal(send(srv, "HTTP/1.1 200 OK\r\n\r\n", 19, MSG_NOSIGNAL), 19);
    assert_int_equal(set_int(srv, IPPROTO_TCP, TCP_CORK, 0), 0);
    assert_int_equal(set_int(srv, IPPROTO_TCP, TCP_NODELAY, 1), 0);
    assert_int_equal(set_int(srv, IPPROTO_TCP, TCP_NODELAY, 0), 0);
    assert_int_equal(nopush_calls_held() - before, 3);
    assert_int_not_equal(get_int(srv, IPPROTO_TCP, TCP_CORK), 0);     /* the kernel never saw them */
    assert_int_not_equal(get_int(srv, IPPROTO_TCP, TCP_NODELAY), 0);
    assert_int_equal(unsent(srv), 19); /* the headers wait for the body */
    assert_int_equal(readable(cli), 0);

    assert_int_equal(nopush_end(srv, err, sizeof err), 1);
    assert_false(nopush_held(srv));
    assert_int_equal(get_int(srv, IPPROTO_TCP, TCP_CORK), 0);
    assert_int_not_equal(get_int(srv, IPPROTO_TCP, TCP_NODELAY), 0); /* any later send pushes */
    struct pollfd p = {.fd = cli, .events = POLLIN};
    assert_int_equal(poll(&p, 1, 2000), 1);
    char buf[64];
    assert_int_equal(recv(cli, buf, sizeof buf, 0), 19);
    assert_memory_equal(buf, "HTTP/1.1 200 OK\r\n\r\n", 19);
    assert_int_equal(nopush_end(srv, err, sizeof err), 0); /* not held any more */

    /* released: the calls reach the kernel again */
    before = nopush_calls_held();
    assert_int_equal(set_int(srv, IPPROTO_TCP, TCP_CORK, 1), 0);
    assert_int_not_equal(get_int(srv, IPPROTO_TCP, TCP_CORK), 0);
    assert_int_equal(set_int(srv, IPPROTO_TCP, TCP_CORK, 0), 0);
    assert_int_equal(get_int(srv, IPPROTO_TCP, TCP_CORK), 0);
    assert_int_equal(nopush_calls_held(), before);
    conn_free(c);
    close(cli);
    close(srv);
}

/* While held, only TCP_CORK and TCP_NODELAY are answered in place. */
static void test_other_options_pass(void **state)
{
    (void)state;
    static const struct {
        const char *what;
        int level, name, value;
        int held; /* 1: answered without the kernel */
    } rows[] = {
        {"TCP_CORK off", IPPROTO_TCP, TCP_CORK, 0, 1},
        {"TCP_NODELAY off", IPPROTO_TCP, TCP_NODELAY, 0, 1},
        {"TCP_NOTSENT_LOWAT", IPPROTO_TCP, TCP_NOTSENT_LOWAT, 131072, 0},
        {"TCP_USER_TIMEOUT", IPPROTO_TCP, TCP_USER_TIMEOUT, 7000, 0},
        {"SO_KEEPALIVE", SOL_SOCKET, SO_KEEPALIVE, 1, 0},
        {"SO_PRIORITY", SOL_SOCKET, SO_PRIORITY, 3, 0},
    };
    int cli, srv;
    char err[160];
    testlib_loopback_pair(&cli, &srv);
    struct conn *c = conn_new(srv);
    assert_int_equal(nopush_begin(srv, err, sizeof err), 0);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        uint64_t before = nopush_calls_held();
        int was = get_int(srv, rows[i].level, rows[i].name);
        assert_int_equal(set_int(srv, rows[i].level, rows[i].name, rows[i].value), 0);
        int now = get_int(srv, rows[i].level, rows[i].name);
        if (rows[i].held) {
            assert_int_equal(nopush_calls_held() - before, 1);
            assert_int_equal(now, was);
        } else {
            assert_int_equal(nopush_calls_held(), before);
            assert_int_equal(now, rows[i].value);
        }
    }
    /* a refused call still reports the kernel's error */
    assert_int_equal(set_int(srv, IPPROTO_TCP, TCP_MAXSEG, -5), -1);
    assert_int_equal(errno, EINVAL);
    assert_int_equal(nopush_end(srv, err, sizeof err), 1);
    conn_free(c);
    close(cli);
    close(srv);
}

/* A descriptor beyond the table, with no connection, or not a TCP socket: -1 with a
 * message, nothing held. */
static void test_refused(void **state)
{
    (void)state;
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    struct conn *c = conn_new(pfd[0]);
    static const struct {
        int fd;
        const char *msg;
    } rows[] = {
        {-1, "descriptor -1 is no connection's"},
        {MHD_COMPAT_MAX_FD, "is no connection's"},
        {0 /* pfd[0], below */, "setsockopt TCP_NODELAY 1 on descriptor"},
        {1 /* pfd[1], below: no struct conn */, "is no connection's"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int fd = i == 2 ? pfd[0] : i == 3 ? pfd[1] : rows[i].fd;
        char err[160] = "";
        assert_int_equal(nopush_begin(fd, err, sizeof err), -1);
        assert_non_null(strstr(err, rows[i].msg));
        assert_false(nopush_held(fd));
        assert_int_equal(nopush_end(fd, err, sizeof err), 0);
    }
    conn_free(c);
    close(pfd[0]);
    close(pfd[1]);
}

/* The connection closed (conn_free): not held, and the next connection on the same number
 * (a new struct conn) gets its TCP_NODELAY again. */
static void test_forget(void **state)
{
    (void)state;
    int cli, srv;
    char err[160];
    testlib_loopback_pair(&cli, &srv);
    struct conn *c = conn_new(srv);
    assert_int_equal(nopush_begin(srv, err, sizeof err), 0);
    assert_int_equal(nopush_end(srv, err, sizeof err), 1);
    /* kept alive: a second response does not set TCP_NODELAY again */
    assert_int_equal(set_int(srv, IPPROTO_TCP, TCP_NODELAY, 0), 0);
    assert_int_equal(nopush_begin(srv, err, sizeof err), 0);
    assert_int_equal(get_int(srv, IPPROTO_TCP, TCP_NODELAY), 0);
    conn_free(c);
    assert_false(nopush_held(srv));
    assert_int_equal(set_int(srv, IPPROTO_TCP, TCP_CORK, 0), 0); /* reaches the kernel */
    assert_int_equal(get_int(srv, IPPROTO_TCP, TCP_CORK), 0);
    /* a new connection on the same number (dup2), TCP_NODELAY off as a fresh socket */
    int fd = srv, cli2, srv2;
    close(cli);
    testlib_loopback_pair(&cli2, &srv2);
    assert_int_equal(dup2(srv2, fd), fd);
    close(srv2);
    c = conn_new(fd);
    assert_int_equal(get_int(fd, IPPROTO_TCP, TCP_NODELAY), 0);
    assert_int_equal(nopush_begin(fd, err, sizeof err), 0);
    assert_int_not_equal(get_int(fd, IPPROTO_TCP, TCP_NODELAY), 0);
    assert_int_equal(nopush_end(fd, err, sizeof err), 1);
    conn_free(c);
    close(cli2);
    close(fd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hold_and_release),
        cmocka_unit_test(test_other_options_pass),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_forget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
