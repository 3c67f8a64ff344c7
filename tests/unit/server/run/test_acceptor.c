/* Unit tests for server/run/acceptor.c, with a real libmicrohttpd thread pool on a loopback
 * listening socket: a table of cases (workers, limit, connections opened, how many of them
 * closed again) checks what is open, accepted and paused, and that the connections spread
 * evenly over the workers (MHD_CONNECTION_INFO_DAEMON of each; the split is
 * tests/e2e/server_accept.sh's too, in debitd itself); connections refused by the
 * accept policy counted as refused; after acceptor_stop nothing more is accepted; NULL is
 * fine everywhere. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "acceptor.h"
#include "array.h"

#define MAX_CONNS 64
#define MAX_WORKERS 4

/* what the daemon's callbacks saw; the workers write it */
static struct {
    struct acceptor *a;
    pthread_mutex_t lock;
    const struct MHD_Daemon *workers[MAX_WORKERS];
    unsigned per_worker[MAX_WORKERS];
    unsigned refuse_all; /* the accept policy answers no */
} seen = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void on_connection(void *cls, struct MHD_Connection *c, void **sock_ctx, enum MHD_ConnectionNotificationCode toe)
{
    (void)cls;
    (void)sock_ctx;
    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        acceptor_closed(seen.a);
        return;
    }
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_DAEMON);
    pthread_mutex_lock(&seen.lock);
    for (size_t i = 0; ci && i < MAX_WORKERS; i++) {
        if (!seen.workers[i])
            seen.workers[i] = ci->daemon;
        if (seen.workers[i] == ci->daemon) {
            seen.per_worker[i]++;
            break;
        }
    }
    pthread_mutex_unlock(&seen.lock);
}

static enum MHD_Result policy(void *cls, const struct sockaddr *sa, socklen_t len)
{
    (void)cls;
    (void)sa;
    (void)len;
    return seen.refuse_all ? MHD_NO : MHD_YES;
}

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *data, size_t *size, void **req)
{
    (void)cls, (void)c, (void)url, (void)method, (void)version, (void)data, (void)size, (void)req;
    return MHD_NO;
}

/* a listening loopback socket (non-blocking) and its port */
static int listener(unsigned short *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&sin, sizeof sin), 0);
    assert_int_equal(listen(fd, 128), 0);
    socklen_t sl = sizeof sin;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sin, &sl), 0);
    *port = ntohs(sin.sin_port);
    return fd;
}

static int dial(unsigned short port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(fd, (struct sockaddr *)&sin, sizeof sin), 0); /* the backlog completes it */
    return fd;
}

/* wait (at most 5 s) until a's counters give want_open open and want_accepted accepted */
static void settle(struct acceptor *a, unsigned want_open, uint64_t want_accepted, struct acceptor_stats *st)
{
    for (int i = 0; i < 500; i++) {
        acceptor_stats(a, st);
        if (st->open == want_open && st->accepted == want_accepted)
            return;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

static struct MHD_Daemon *daemon_start(unsigned workers)
{
    memset(seen.workers, 0, sizeof seen.workers);
    memset(seen.per_worker, 0, sizeof seen.per_worker);
    seen.refuse_all = 0;
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC | MHD_USE_NO_LISTEN_SOCKET, 0, policy, NULL,
        handler, NULL, MHD_OPTION_THREAD_POOL_SIZE, workers, MHD_OPTION_NOTIFY_CONNECTION, on_connection, NULL,
        MHD_OPTION_END);
    assert_non_null(d);
    return d;
}

struct acase {
    unsigned workers, limit;
    unsigned open;   /* connections opened, in order */
    unsigned closed; /* then the first `closed` of them closed by the client */
    unsigned want_open, want_accepted;
    int want_paused; /* accepting paused at the limit at least once */
};

static const struct acase cases[] = {
    {2, 0, 40, 0, 40, 40, 0},   /* no limit */
    {2, 10, 40, 0, 10, 10, 1},  /* at the limit: 30 wait in the backlog */
    {2, 10, 40, 25, 10, 35, 1}, /* 25 closed: 25 of the waiting ones taken */
    {3, 0, 30, 0, 30, 30, 0},
    {3, 4, 6, 6, 0, 6, 1},      /* every one closed: the two waiting were served too */
};

static void test_table(void **state)
{
    (void)state;
    for (size_t k = 0; k < ARRAY_SIZE(cases); k++) {
        const struct acase *c = &cases[k];
        unsigned short port;
        int lfd = listener(&port);
        struct MHD_Daemon *d = daemon_start(c->workers);
        /* all connected first (they wait in the backlog), so that the acceptor's descriptors
         * are numbered in order, as in debitd, where it alone makes them; here the
         * clients' own would interleave */
        int fds[MAX_CONNS];
        for (unsigned i = 0; i < c->open; i++)
            fds[i] = dial(port);
        char err[160];
        seen.a = acceptor_new(lfd, d, c->limit, "test", err, sizeof err);
        assert_non_null(seen.a);
        struct acceptor_stats st;
        unsigned first_open = c->limit && c->open > c->limit ? c->limit : c->open;
        settle(seen.a, first_open, first_open, &st);
        assert_int_equal(st.open, first_open);
        if (!c->limit || c->open <= c->limit) {
            /* every one accepted, spread over the workers: at most one apart. A worker
             * notifies a connection when it takes it from its queue, after the hand-over
             * that `open` counts: wait (at most 5 s) for all of them */
            unsigned lo = MAX_CONNS, hi = 0, n = 0;
            for (int tries = 0; tries < 500 && n != c->open; tries++) {
                if (tries) {
                    struct timespec ts = {0, 10 * 1000 * 1000};
                    nanosleep(&ts, NULL);
                }
                lo = MAX_CONNS, hi = 0, n = 0;
                pthread_mutex_lock(&seen.lock);
                for (unsigned w = 0; w < c->workers; w++) {
                    unsigned v = seen.per_worker[w];
                    lo = v < lo ? v : lo;
                    hi = v > hi ? v : hi;
                    n += v;
                }
                pthread_mutex_unlock(&seen.lock);
            }
            print_message("case %zu: %u connections over %u workers: %u..%u each\n", k, n, c->workers, lo, hi);
            assert_int_equal(n, c->open);
            assert_true(hi - lo <= 1);
        }
        for (unsigned i = 0; i < c->closed; i++)
            close(fds[i]);
        /* each client close is seen by its worker (a read of 0), which closes and notifies */
        settle(seen.a, c->want_open, c->want_accepted, &st);
        print_message("case %zu: open %u accepted %llu paused %llu\n", k, st.open, (unsigned long long)st.accepted,
                      (unsigned long long)st.at_limit);
        assert_int_equal(st.open, c->want_open);
        assert_int_equal(st.accepted, c->want_accepted);
        assert_int_equal(st.at_limit > 0, c->want_paused);
        assert_int_equal(st.refused, 0);
        assert_int_equal(st.errors, 0);
        /* stopped: the next connection waits in the backlog, never handed over */
        acceptor_stop(seen.a);
        acceptor_stop(seen.a); /* idempotent */
        int late = dial(port);
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        acceptor_stats(seen.a, &st);
        assert_int_equal(st.accepted, c->want_accepted);
        close(late);
        for (unsigned i = c->closed; i < c->open; i++)
            close(fds[i]);
        MHD_stop_daemon(d); /* its closes still reach the (stopped) acceptor */
        acceptor_free(seen.a);
        seen.a = NULL;
        close(lfd);
    }
}

/* the accept policy says no: closed by libmicrohttpd, counted as refused, never open */
static void test_refused(void **state)
{
    (void)state;
    unsigned short port;
    int lfd = listener(&port);
    struct MHD_Daemon *d = daemon_start(2);
    seen.refuse_all = 1;
    char err[160];
    seen.a = acceptor_new(lfd, d, 5, "test", err, sizeof err);
    assert_non_null(seen.a);
    int fds[8];
    for (int i = 0; i < 8; i++)
        fds[i] = dial(port);
    struct acceptor_stats st;
    for (int i = 0; i < 500; i++) {
        acceptor_stats(seen.a, &st);
        if (st.refused == 8)
            break;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    assert_int_equal(st.refused, 8); /* more than the limit: a refusal frees its slot */
    assert_int_equal(st.accepted, 0);
    assert_int_equal(st.open, 0);
    assert_int_equal(st.at_limit, 0);
    char b;
    assert_int_equal(read(fds[0], &b, 1), 0); /* closed without an answer */
    for (int i = 0; i < 8; i++)
        close(fds[i]);
    acceptor_free(seen.a); /* stops it first */
    seen.a = NULL;
    MHD_stop_daemon(d);
    close(lfd);
}

static void test_null(void **state)
{
    (void)state;
    struct acceptor_stats st;
    memset(&st, 0xff, sizeof st);
    acceptor_stats(NULL, &st);
    assert_int_equal(st.accepted, 0);
    assert_int_equal(st.open, 0);
    acceptor_closed(NULL);
    acceptor_stop(NULL);
    acceptor_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
