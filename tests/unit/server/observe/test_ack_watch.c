/* Unit tests for server/observe/ack_watch.c: the end offset, the moment of the last ACK
 * (kept between the reads), the fast path, the fixed table (full), the time limit, a
 * descriptor reused by another socket, the close notification, and the thread. Sockets are
 * a fake: the test says what each "socket" answers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "ack_watch.h"
#include "sys.h"

#define NSOCK 8
struct fake_sock {
    int dead;          /* every read fails */
    uint64_t acked;    /* tcpi_bytes_acked */
    uint32_t last_ack_ms;
    uint64_t outq;     /* SIOCOUTQ */
    uint64_t cookie;
    int info_reads;
};
static struct fake_sock socks[NSOCK];

static int fake_info(void *ctx, int sock, struct tcp_info_sample *ti)
{
    (void)ctx;
    memset(ti, 0, sizeof *ti);
    if (sock < 0 || sock >= NSOCK || socks[sock].dead)
        return -1;
    socks[sock].info_reads++;
    ti->have = TCP_INFO_HAVE_BASE | TCP_INFO_HAVE_BYTES | TCP_INFO_HAVE_MIN_RTT;
    ti->bytes_acked = socks[sock].acked;
    ti->last_ack_recv_ms = socks[sock].last_ack_ms;
    return 0;
}

static int fake_cookie(void *ctx, int sock, uint64_t *cookie)
{
    (void)ctx;
    if (sock < 0 || sock >= NSOCK || socks[sock].dead)
        return -1;
    *cookie = socks[sock].cookie;
    return 0;
}

static int fake_outq(void *ctx, int sock, uint64_t *bytes)
{
    (void)ctx;
    if (sock < 0 || sock >= NSOCK || socks[sock].dead)
        return -1;
    *bytes = socks[sock].outq;
    return 0;
}

static const struct ack_watch_io IO = {fake_info, fake_cookie, fake_outq, NULL};

#define NREP 16
struct rep {
    uint64_t seq;
    enum ack_result result;
    double at;
};
static struct rep reps[NREP];
static volatile int nrep;

static void done(void *ctx, uint64_t seq, enum ack_result result, double at)
{
    (void)ctx;
    if (nrep < NREP)
        reps[nrep] = (struct rep){seq, result, at};
    __atomic_add_fetch(&nrep, 1, __ATOMIC_SEQ_CST);
}

static int setup(void **state)
{
    (void)state;
    memset(socks, 0, sizeof socks);
    for (int i = 0; i < NSOCK; i++)
        socks[i].cookie = 100 + (uint64_t)i;
    memset(reps, 0, sizeof reps);
    nrep = 0;
    return 0;
}

/* A completion's TCP_INFO: UNACKED segments in flight, NOTSENT bytes unsent. */
static struct tcp_info_sample last_of(uint32_t unacked, uint32_t notsent)
{
    struct tcp_info_sample ti;
    memset(&ti, 0, sizeof ti);
    ti.have = TCP_INFO_HAVE_BASE | TCP_INFO_HAVE_BYTES | TCP_INFO_HAVE_MIN_RTT;
    ti.unacked = unacked;
    ti.notsent_bytes = notsent;
    return ti;
}

static struct ack_watch *watch(unsigned slots)
{
    struct ack_watch_opts o = {.slots = slots, .limit_s = 10, .interval_s = 0.002};
    struct ack_watch *w = ack_watch_new(&o, &IO, done, NULL);
    assert_non_null(w);
    return w;
}

/* What happens at completion, before any poll. */
static void test_add(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int sock;
        int have_last;
        uint32_t unacked, notsent;
        int dead;
        int reported;           /* at once (1) or watched (0) */
        enum ack_result result; /* when reported */
    } rows[] = {
        {"drained at the end: acked at once", 1, 1, 0, 0, 0, 1, ACK_OK},
        {"segments in flight: watched", 1, 1, 5, 0, 0, 0, 0},
        {"only unsent bytes: watched", 1, 1, 0, 4096, 0, 0, 0},
        {"no TCP_INFO at the end", 1, 0, 0, 0, 0, 1, ACK_UNREAD},
        {"no socket", -1, 1, 5, 0, 0, 1, ACK_UNREAD},
        {"socket unreadable when its end is read", 1, 1, 5, 0, 1, 1, ACK_UNREAD},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        setup(NULL);
        struct ack_watch *w = watch(4);
        socks[1].dead = rows[i].dead;
        socks[1].outq = 100; /* never acknowledged here */
        struct tcp_info_sample last = last_of(rows[i].unacked, rows[i].notsent);
        ack_watch_add(w, rows[i].sock, 7, rows[i].have_last ? &last : NULL, 50.0);
        if (nrep != rows[i].reported || (nrep && (reps[0].seq != 7 || reps[0].result != rows[i].result)))
            fail_msg("%s: %d reports, result %d", rows[i].name, nrep, nrep ? (int)reps[0].result : -1);
        if (nrep && rows[i].result == ACK_OK && reps[0].at != 50.0)
            fail_msg("%s: at %f, not the completion", rows[i].name, reps[0].at);
        if (nrep && rows[i].result != ACK_OK && reps[0].at != 0)
            fail_msg("%s: a moment without an acknowledgement", rows[i].name);
        if (ack_watch_poll(w, 50.001) != (unsigned)!rows[i].reported)
            fail_msg("%s: table holds the wrong count", rows[i].name);
        nrep = 0;
        ack_watch_free(w); /* a body still watched is reported closed */
        if (nrep != !rows[i].reported || (nrep && reps[0].result != ACK_CLOSED))
            fail_msg("%s: at free, %d reports", rows[i].name, nrep);
    }
}

/* The end is acked + SIOCOUTQ at the completion; the moment is the last ACK's, between the
 * read that did not see it and the one that did. */
static void test_moment(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        uint64_t acked_at_poll2;
        uint32_t last_ack_ms; /* at poll 2 */
        int reported;
        double at;
    } rows[] = {
        {"one byte short: still watched", 1499, 0, 0, 0},
        {"the end acked 3 ms before the read", 1500, 3, 1, 10.007},
        {"past the end (the next response's bytes)", 9000, 1, 1, 10.009},
        {"last ACK older than the previous read: that read's time", 1500, 50, 1, 10.004},
        {"last ACK 'now'", 1500, 0, 1, 10.010},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        setup(NULL);
        struct ack_watch *w = watch(4);
        socks[2].acked = 1000;
        socks[2].outq = 500; /* the end: 1500 */
        struct tcp_info_sample last = last_of(3, 0);
        ack_watch_add(w, 2, 9, &last, 10.0);
        socks[2].acked = 1200; /* first read: not yet */
        assert_int_equal(ack_watch_poll(w, 10.004), 1);
        assert_int_equal(nrep, 0);
        socks[2].acked = rows[i].acked_at_poll2;
        socks[2].last_ack_ms = rows[i].last_ack_ms;
        unsigned left = ack_watch_poll(w, 10.010);
        if (left != (unsigned)!rows[i].reported || nrep != rows[i].reported)
            fail_msg("%s: %u left, %d reports", rows[i].name, left, nrep);
        if (rows[i].reported && (reps[0].result != ACK_OK || reps[0].seq != 9 || reps[0].at < rows[i].at - 1e-9 ||
                                 reps[0].at > rows[i].at + 1e-9))
            fail_msg("%s: result %d at %.6f, expected %.6f", rows[i].name, reps[0].result, reps[0].at, rows[i].at);
        ack_watch_free(w);
    }
}

/* The end's two TCP_INFO reads around SIOCOUTQ: an ACK between them (the reads disagree)
 * makes it read again, so that the end is never beyond the last byte. */
static int racing_reads;
static int racing_info(void *ctx, int sock, struct tcp_info_sample *ti)
{
    int rc = fake_info(ctx, sock, ti);
    if (racing_reads-- > 0)
        socks[sock].acked += 100; /* an ACK right after this read */
    return rc;
}

static void test_end_race(void **state)
{
    (void)state;
    setup(NULL);
    struct ack_watch_io io = IO;
    io.read_info = racing_info;
    struct ack_watch_opts o = {.slots = 2, .limit_s = 10, .interval_s = 0.002};
    struct ack_watch *w = ack_watch_new(&o, &io, done, NULL);
    assert_non_null(w);
    socks[3].acked = 1000;
    socks[3].outq = 500;
    racing_reads = 2; /* the completion's read (0) and the next (1000) disagree, so do the
                       * next pair (1100, 1200); the third agrees (1200) */
    struct tcp_info_sample last = last_of(3, 0);
    ack_watch_add(w, 3, 1, &last, 1.0);
    assert_int_equal(socks[3].info_reads, 5);
    /* the agreeing pair: end = 1200 + 500; 1699 is short, 1700 is it */
    socks[3].acked = 1699;
    assert_int_equal(ack_watch_poll(w, 1.1), 1);
    socks[3].acked = 1700;
    assert_int_equal(ack_watch_poll(w, 1.2), 0);
    assert_int_equal(nrep, 1);
    assert_int_equal(reps[0].result, ACK_OK);
    ack_watch_free(w);
}

/* Bounds: a fixed table, a time limit, a socket that went away or was replaced. */
static void test_bounds(void **state)
{
    (void)state;
    setup(NULL);
    struct ack_watch *w = watch(2);
    struct tcp_info_sample last = last_of(3, 0);
    socks[1].outq = socks[2].outq = socks[3].outq = 10;
    ack_watch_add(w, 1, 1, &last, 0.0);
    ack_watch_add(w, 2, 2, &last, 5.0);
    ack_watch_add(w, 3, 3, &last, 5.0); /* no room */
    assert_int_equal(nrep, 1);
    assert_int_equal(reps[0].seq, 3);
    assert_int_equal(reps[0].result, ACK_FULL);
    /* 10 s after its completion, body 1 is given up; body 2 (5 s later) is not */
    assert_int_equal(ack_watch_poll(w, 9.999), 2);
    assert_int_equal(ack_watch_poll(w, 10.0), 1);
    assert_int_equal(nrep, 2);
    assert_int_equal(reps[1].seq, 1);
    assert_int_equal(reps[1].result, ACK_TIMEOUT);
    assert_true(reps[1].at == 0);
    /* the freed slot takes a new body */
    ack_watch_add(w, 3, 4, &last, 10.0);
    assert_int_equal(nrep, 2);
    /* socket 2's descriptor now names another socket: never taken for body 2 */
    socks[2].cookie = 999;
    socks[2].acked = 1u << 30;
    /* socket 3 closed by someone else: its reads fail */
    socks[3].dead = 1;
    assert_int_equal(ack_watch_poll(w, 10.1), 0);
    assert_int_equal(nrep, 4);
    for (int i = 2; i < 4; i++)
        assert_int_equal(reps[i].result, ACK_CLOSED);
    ack_watch_free(w);
}

/* ack_watch_settle: at the connection's next request (a read, the body kept if not yet
 * acknowledged) and before its close (what is not acknowledged then never will be); a slot
 * that holds another body by now is left alone. */
static void test_settle(void **state)
{
    (void)state;
    setup(NULL);
    struct ack_watch *w = watch(4);
    struct tcp_info_sample last = last_of(3, 0);
    double t0 = sys_mono_s(); /* settle reads the clock itself */
    socks[1].outq = 100;
    int a = ack_watch_add(w, 1, 1, &last, t0); /* end 100 */
    socks[1].outq = 50;
    socks[1].acked = 150;
    int b = ack_watch_add(w, 1, 2, &last, t0); /* a second body on the kept-alive connection: end 200 */
    socks[2].outq = 100;
    int c = ack_watch_add(w, 2, 3, &last, t0);
    assert_true(a >= 0 && b >= 0 && c >= 0 && a != b && b != c && a != c);
    assert_int_equal(nrep, 0);
    assert_int_equal(ack_watch_settle(w, a, 99, 1), 0); /* not the body in that slot */
    assert_int_equal(ack_watch_settle(w, -1, 1, 1), 0);
    assert_int_equal(ack_watch_settle(NULL, a, 1, 1), 0);
    assert_int_equal(nrep, 0);
    assert_int_equal(ack_watch_settle(w, a, 1, 0), 0); /* the next request: body 1 is in */
    assert_int_equal(nrep, 1);
    assert_int_equal(reps[0].seq, 1);
    assert_int_equal(reps[0].result, ACK_OK);
    assert_int_equal(ack_watch_settle(w, b, 2, 0), 1); /* body 2 not yet: kept */
    assert_int_equal(nrep, 1);
    assert_int_equal(ack_watch_settle(w, b, 2, 1), 0); /* the close: never will be */
    assert_int_equal(nrep, 2);
    assert_int_equal(reps[1].seq, 2);
    assert_int_equal(reps[1].result, ACK_CLOSED);
    assert_int_equal(ack_watch_poll(w, t0 + 0.001), 1); /* socket 2's body stays */
    ack_watch_free(w);
    assert_int_equal(nrep, 3);
    assert_int_equal(reps[2].seq, 3);
    assert_int_equal(reps[2].result, ACK_CLOSED);
}

/* The reads' schedule: a body that makes no progress is read 2, 4, 8 ... ms apart up to
 * 500 ms (about 9 reads in a second, not 500); a moving one when its delivery rate (the
 * first read), then the growth of its acknowledgements, says the end arrives. */
static void test_schedule(void **state)
{
    (void)state;
    setup(NULL);
    struct ack_watch *w = watch(2);
    struct tcp_info_sample last = last_of(3, 0);
    socks[1].outq = 1000;
    ack_watch_add(w, 1, 1, &last, 0.0);
    int base = socks[1].info_reads; /* the end's reads */
    for (int ms = 1; ms <= 1000; ms++)
        ack_watch_poll(w, ms / 1e3);
    int stalled = socks[1].info_reads - base;
    if (stalled < 5 || stalled > 11)
        fail_msg("a stalled body read %d times in 1 s", stalled);
    ack_watch_free(w);

    /* 1 MB to go at 80 Mbit/s: the end in 100 ms; the first read then, not before */
    setup(NULL);
    w = watch(2);
    last.delivery_rate_bps = 80000000;
    socks[2].outq = 1000000;
    ack_watch_add(w, 2, 2, &last, 0.0);
    base = socks[2].info_reads;
    for (int ms = 1; ms < 100; ms++)
        ack_watch_poll(w, ms / 1e3);
    assert_int_equal(socks[2].info_reads - base, 0);
    socks[2].acked = 1000000;
    socks[2].last_ack_ms = 1;
    assert_int_equal(ack_watch_poll(w, 0.100), 0);
    assert_int_equal(socks[2].info_reads - base, 1);
    assert_int_equal(nrep, 1);
    assert_int_equal(reps[0].result, ACK_OK);
    assert_true(reps[0].at > 0.0989 && reps[0].at < 0.0991); /* the last ACK's moment */
    ack_watch_free(w);

    /* a slow reader: 100 KB of 1 MB acknowledged in the first 100 ms, the rest due in 900 */
    setup(NULL);
    w = watch(2);
    last.delivery_rate_bps = 8000000000; /* loopback's rate says 1 ms: the first read early */
    socks[3].outq = 1000000;
    ack_watch_add(w, 3, 3, &last, 0.0);
    base = socks[3].info_reads;
    socks[3].acked = 10000;
    ack_watch_poll(w, 0.010); /* 10 KB in 10 ms: the end in 990 ms, read at most 500 ms on */
    socks[3].acked = 50000;
    for (int ms = 11; ms < 510; ms++)
        ack_watch_poll(w, ms / 1e3);
    assert_int_equal(socks[3].info_reads - base, 1);
    ack_watch_poll(w, 0.510);
    assert_int_equal(socks[3].info_reads - base, 2);
    ack_watch_free(w);
}

/* The thread polls while something is watched and reports without a caller's poll. */
static void test_thread(void **state)
{
    (void)state;
    setup(NULL);
    struct ack_watch *w = watch(4);
    char err[128];
    assert_int_equal(ack_watch_start(w, err, sizeof err), 0);
    struct tcp_info_sample last = last_of(3, 0);
    socks[5].outq = 1000;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    ack_watch_add(w, 5, 11, &last, (double)t.tv_sec + t.tv_nsec / 1e9);
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < 20; i++)
        nanosleep(&ms, NULL);
    assert_int_equal(__atomic_load_n(&nrep, __ATOMIC_SEQ_CST), 0);
    assert_true(socks[5].info_reads > 2); /* it reads while waiting */
    __atomic_store_n(&socks[5].acked, 1000, __ATOMIC_SEQ_CST);
    for (int i = 0; i < 2000 && !__atomic_load_n(&nrep, __ATOMIC_SEQ_CST); i++)
        nanosleep(&ms, NULL);
    assert_int_equal(nrep, 1);
    assert_int_equal(reps[0].seq, 11);
    assert_int_equal(reps[0].result, ACK_OK);
    /* idle now: it sleeps, no more reads */
    int reads = socks[5].info_reads;
    for (int i = 0; i < 10; i++)
        nanosleep(&ms, NULL);
    assert_int_equal(socks[5].info_reads, reads);
    ack_watch_free(w);
    ack_watch_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add),     cmocka_unit_test(test_moment), cmocka_unit_test(test_end_race),
        cmocka_unit_test(test_bounds),  cmocka_unit_test(test_settle),  cmocka_unit_test(test_schedule),
        cmocka_unit_test(test_thread),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
