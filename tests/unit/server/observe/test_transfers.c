/* Unit tests for server/observe/transfers.c: the ring behind /transfers/ID (the contract with the
 * client): "sending" at begin, "done" with bytes and tcp at end, 404 (NULL) for unknown,
 * malformed or evicted IDs and for another address than the owner's; IDs of 128 random
 * bits in 32 hex digits, never sequential; TCP_INFO samples tracked so that max_snd_cwnd
 * is the largest cwnd seen. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "sys.h"
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
    struct transfer_start s = {"/ram/1GiB.dat", "127.0.0.1:5000", "[::]:8080", 0, 1000, 200, -1, NULL, "sendfile", NULL, 0, 0};
    uint64_t seq = transfers_begin(t, &s, id);
    json_t *j = transfers_get(t, id, NULL);
    assert_non_null(j);
    assert_string_equal(str(j, "id"), id);
    assert_string_equal(str(j, "state"), "sending");
    assert_string_equal(str(j, "path"), "/ram/1GiB.dat");
    assert_int_equal(json_integer_value(json_object_get(j, "bytes")), 0);
    assert_true(json_is_real(json_object_get(j, "duration_s")));
    assert_true(json_is_object(json_object_get(j, "tcp")));
    assert_string_equal(str(j, "send_path"), "sendfile");
    assert_true(json_is_true(json_object_get(j, "zero_copy")));
    assert_true(json_is_false(json_object_get(j, "tcp_nopush")));
    json_decref(j);
    char id2[TRANSFER_ID_LEN];
    s.nopush = 1; /* sent under tcp_nopush (nopush.h) */
    transfers_begin(t, &s, id2);
    j = transfers_get(t, id2, NULL);
    assert_true(json_is_true(json_object_get(j, "tcp_nopush")));
    json_decref(j);
    struct tcp_info_sample last = {.have = TCP_INFO_HAVE_BASE, .rtt_us = 500, .snd_cwnd = 10};
    json_t *done = transfers_end(t, seq, "done", 1000, &last, NULL);
    assert_non_null(done);
    assert_string_equal(str(done, "state"), "done");
    json_decref(done);
    j = transfers_get(t, id, NULL);
    assert_string_equal(str(j, "state"), "done");
    assert_int_equal(json_integer_value(json_object_get(j, "bytes")), 1000);
    assert_true(json_real_value(json_object_get(json_object_get(j, "tcp"), "rtt_ms")) == 0.5);
    json_decref(j);
    assert_int_equal(transfers_count(t), 2);
    transfers_free(t);
    transfers_free(NULL);
}

/* The three labels (path, remote, listener) are kept in one block per record: each comes
 * back as given, NULL as "", and a slot taken again frees the old block (ASan's leak check,
 * make check-asan, fails the run otherwise). */
static void test_labels(void **state)
{
    (void)state;
    static const struct {
        const char *path, *remote, *listener;
        const char *want_path, *want_remote, *want_listener;
    } cases[] = {
        {"/ram/4KiB.dat", "127.0.0.2:40000", "127.0.0.1:8080", "/ram/4KiB.dat", "127.0.0.2:40000", "127.0.0.1:8080"},
        {NULL, "[fd00::2]:1", "[::]:80", "", "[fd00::2]:1", "[::]:80"},
        {"/a", NULL, NULL, "/a", "", ""},
        {"", "", "", "", "", ""},
        {NULL, NULL, NULL, "", "", ""},
    };
    struct transfers *t = transfers_new(2); /* 2 slots: the later cases evict the earlier */
    assert_non_null(t);
    char first[TRANSFER_ID_LEN] = "";
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char id[TRANSFER_ID_LEN];
        struct transfer_start s = {cases[i].path, cases[i].remote, cases[i].listener, 0, 10, 200, -1, NULL, "iovec",
                                   NULL, 0, 0};
        assert_true(transfers_begin(t, &s, id) > 0);
        if (!i)
            memcpy(first, id, sizeof first);
        json_t *j = transfers_get(t, id, NULL);
        assert_non_null(j);
        assert_string_equal(str(j, "path"), cases[i].want_path);
        assert_string_equal(str(j, "remote"), cases[i].want_remote);
        assert_string_equal(str(j, "listener"), cases[i].want_listener);
        json_decref(j);
    }
    assert_int_equal(transfers_count(t), 5);
    assert_null(transfers_get(t, first, NULL)); /* evicted: its block freed */
    transfers_free(t);
}

/* transfers_finish: the same record as transfers_end (state, bytes, the last TCP_INFO),
 * without building its JSON; an evicted entry is ignored. */
static void test_complete_without_json(void **state)
{
    (void)state;
    struct transfers *t = transfers_new(2);
    char id[TRANSFER_ID_LEN], other[TRANSFER_ID_LEN];
    struct transfer_start s = {"/ram/4KiB.dat", "127.0.0.1:5000", "[::]:8080", 0, 4096, 200, -1, NULL, "iovec", NULL, 0, 0};
    uint64_t seq = transfers_begin(t, &s, id);
    struct tcp_info_sample last = {.have = TCP_INFO_HAVE_BASE, .rtt_us = 250, .snd_cwnd = 10};
    transfers_finish(t, seq, "aborted", 1234, &last, NULL);
    json_t *j = transfers_get(t, id, NULL);
    assert_non_null(j);
    assert_string_equal(str(j, "state"), "aborted");
    assert_int_equal(json_integer_value(json_object_get(j, "bytes")), 1234);
    assert_true(json_real_value(json_object_get(json_object_get(j, "tcp"), "rtt_ms")) == 0.25);
    json_decref(j);
    /* evict it (ring of 2), then complete it again: nothing changes, nothing crashes */
    transfers_begin(t, &s, other);
    transfers_begin(t, &s, other);
    transfers_finish(t, seq, "done", 1, NULL, NULL);
    assert_null(transfers_get(t, id, NULL));
    transfers_free(t);
}

/* acked_s, acked_mbps, acked_note (docs/server.md) through a record's life: "sending",
 * "not_watched" when nobody watched it, "watching", then the watcher's result; absent from
 * the access log's JSON (transfers_end's), which is written before any acknowledgement. */
static void test_acked(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int watched;            /* transfers_watching called */
        int result;             /* transfers_acked's, -1 none */
        const char *note;       /* NULL: acked_s and acked_mbps given */
    } rows[] = {
        {"not watched (small, aborted, not a file)", 0, -1, "not_watched"},
        {"watched, no result yet", 1, -1, "watching"},
        {"acknowledged", 1, ACK_OK, NULL},
        {"closed first", 1, ACK_CLOSED, "closed"},
        {"time limit", 1, ACK_TIMEOUT, "timeout"},
        {"table full", 1, ACK_FULL, "full"},
        {"TCP_INFO unreadable", 1, ACK_UNREAD, "unread"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct transfers *t = transfers_new(4);
        char id[TRANSFER_ID_LEN];
        struct transfer_start s = {"/ram/8MiB.dat", "127.0.0.1:5000", "[::]:8080", 0, 8u << 20, 200, -1, NULL, "sendfile", NULL, 0, 0};
        uint64_t seq = transfers_begin(t, &s, id);
        double t0 = sys_mono_s();
        json_t *j = transfers_get(t, id, NULL);
        if (strcmp(str(j, "acked_note"), "sending") != 0 || !json_is_null(json_object_get(j, "acked_s")))
            fail_msg("%s: while sending: %s", rows[i].name, str(j, "acked_note"));
        json_decref(j);
        json_t *logged = transfers_end(t, seq, "done", 8u << 20, NULL, NULL);
        if (json_object_get(logged, "acked_s") || json_object_get(logged, "acked_note"))
            fail_msg("%s: acked fields in the access log's JSON", rows[i].name);
        json_decref(logged);
        if (rows[i].watched)
            transfers_watching(t, seq);
        if (rows[i].result >= 0)
            transfers_acked(t, seq, (enum ack_result)rows[i].result, rows[i].result == ACK_OK ? t0 + 2.0 : 0);
        j = transfers_get(t, id, NULL);
        json_t *note = json_object_get(j, "acked_note");
        double as = json_real_value(json_object_get(j, "acked_s")), mbps = json_real_value(json_object_get(j, "acked_mbps"));
        if (rows[i].note ? (!json_is_string(note) || strcmp(json_string_value(note), rows[i].note) != 0 ||
                            !json_is_null(json_object_get(j, "acked_s")) || !json_is_null(json_object_get(j, "acked_mbps")))
                         : (!json_is_null(note) || as < 1.99 || as > 2.01 || mbps < 8 * 8.388608 / 2.01 ||
                            mbps > 8 * 8.388608 / 1.99))
            fail_msg("%s: note %s, acked_s %f, acked_mbps %f", rows[i].name, str(j, "acked_note"), as, mbps);
        json_decref(j);
        /* a result for an evicted entry is dropped */
        char other[TRANSFER_ID_LEN];
        for (int k = 0; k < 4; k++)
            transfers_begin(t, &s, other);
        transfers_acked(t, seq, ACK_OK, t0);
        assert_null(transfers_get(t, id, NULL));
        transfers_free(t);
    }
}

/* debitd's own verdict of a transfer from its record alone (common/verdict.h): the kind
 * transfers_finish returns is the record's "limited_by", with its evidence; a row per
 * figure the server reads (its TCP_INFO, its thread's CPU, its cgroup). */
static void test_verdict(void **state)
{
    (void)state;
    enum { LIM = TCP_INFO_HAVE_BASE | TCP_INFO_HAVE_LIMITED | TCP_INFO_HAVE_MIN_RTT | TCP_INFO_HAVE_SENT };
    static const struct {
        const char *name;
        struct tcp_info_sample last;
        struct transfer_evidence ev;
        enum verdict_kind want;
        const char *evidence;
    } rows[] = {
        {"the receiver's window held it 90% of the busy time",
         {.have = LIM, .busy_time_us = 1000000, .rwnd_limited_us = 900000, .min_rtt_us = 30, .snd_mss = 65483},
         {0}, VERDICT_RECEIVER_WINDOW, "rwnd-limited 90% of busy time"},
        {"a capped send buffer held it",
         {.have = LIM, .busy_time_us = 1000000, .sndbuf_limited_us = 700000, .min_rtt_us = 30000, .snd_mss = 1448},
         {.sndbuf_setting = 1048576, .have_cpu = 1, .so_sndbuf = 2097152, .wall_ms = 1000, .runq_ms = -1},
         VERDICT_SENDER_BUFFER, "sndbuf-limited 70% of busy time; send buffer 1 MiB"},
        {"the serving thread at a full core, the socket idle half the time (busy 1 ms of 2 or more)",
         {.have = LIM, .busy_time_us = 1000, .min_rtt_us = 30, .snd_mss = 65483},
         {.have_cpu = 1, .have_thread = 1, .user_ms = 10, .sys_ms = 960, .wall_ms = 1000, .runq_ms = 20,
          .so_sndbuf = -1},
         VERDICT_SENDER_CPU, "serving thread used 0.97 CPU of a 1.00 budget and waited to run 2% of the transfer"},
        {"nothing known held it", {.have = LIM, .busy_time_us = 1000000, .min_rtt_us = 30}, {0}, VERDICT_UNKNOWN,
         "no rule matched"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct transfers *t = transfers_new(4);
        char id[TRANSFER_ID_LEN];
        struct transfer_start s = {"/f", "127.0.0.1:5000", "l", 0, 1 << 30, 200, -1, NULL, "sendfile", &rows[i].ev, 0, 0};
        uint64_t seq = transfers_begin(t, &s, id);
        usleep(2000); /* a duration above zero: a rate */
        enum verdict_kind k = transfers_finish(t, seq, "done", 1u << 30, &rows[i].last, &rows[i].ev);
        json_t *j = transfers_get(t, id, NULL);
        const char *ev = str(j, "limited_by_evidence");
        if (k != rows[i].want || strcmp(str(j, "limited_by"), verdict_name(k)) != 0 || !strstr(ev, rows[i].evidence))
            fail_msg("%s: returned %s, record %s \"%s\"; want %s \"%s\"", rows[i].name, verdict_name(k),
                     str(j, "limited_by"), ev, verdict_name(rows[i].want), rows[i].evidence);
        /* the same fields in the access log's JSON */
        json_t *logged = transfers_end(t, seq, "done", 1u << 30, &rows[i].last, &rows[i].ev);
        assert_string_equal(str(logged, "limited_by"), verdict_name(k));
        json_decref(logged);
        json_decref(j);
        transfers_free(t);
    }
}

static void test_unknown_and_evicted(void **state)
{
    (void)state;
    struct transfers *t = transfers_new(2);
    char ids[3][TRANSFER_ID_LEN];
    struct transfer_start s = {"/f", "", "", 0, 1, 200, -1, NULL, "iovec", NULL, 0, 0};
    uint64_t seq[3];
    for (int i = 0; i < 3; i++)
        seq[i] = transfers_begin(t, &s, ids[i]);
    /* a ring of 2: the first one is gone, and ending it is ignored */
    assert_null(transfers_get(t, ids[0], NULL));
    assert_null(transfers_end(t, seq[0], "done", 1, NULL, NULL));
    json_t *j = transfers_get(t, ids[2], NULL);
    assert_non_null(j);
    assert_string_equal(str(j, "send_path"), "iovec");
    assert_true(json_is_false(json_object_get(j, "zero_copy")));
    json_decref(j);
    char other[TRANSFER_ID_LEN];
    snprintf(other, sizeof other, "%s", ids[2]);
    other[0] = other[0] == 'f' ? '0' : 'f'; /* one bit pattern away: unknown */
    /* the live ID spelled otherwise (upper case, longer, shorter) and the old "BOOT-SEQ" */
    char upper[TRANSFER_ID_LEN], longer[TRANSFER_ID_LEN + 1], shorter[TRANSFER_ID_LEN];
    for (int i = 0; i < TRANSFER_ID_LEN; i++)
        upper[i] = (char)(ids[2][i] >= 'a' && ids[2][i] <= 'f' ? ids[2][i] - 32 : ids[2][i]);
    if (strcmp(upper, ids[2]) == 0)
        upper[0] = 'G'; /* no letter in the ID: still not a valid spelling */
    snprintf(longer, sizeof longer, "%s0", ids[2]);
    snprintf(shorter, sizeof shorter, "%.31s", ids[2]);
    const char *const bad[] = {"", "x", "12345678-2", "00000000-1", upper, longer, shorter,
                               "0123456789abcdef0123456789abcdeg", "0123456789abcdef0123456789abcde "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (transfers_get(t, bad[i], NULL))
            fail_msg("\"%s\" resolved", bad[i]);
    assert_null(transfers_get(t, other, NULL));
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
    struct transfer_start s = {"/f", "", "", 0, 100, 200, sfd, NULL, "sendfile", NULL, 0, 0};
    uint64_t seq = transfers_begin(t, &s, id);
    assert_int_equal(transfers_sample(t), 1);
    json_t *j = transfers_get(t, id, NULL); /* a sending record shows the samples so far */
    assert_string_equal(str(j, "state"), "sending");
    long cwnd = tcp_int(j, "snd_cwnd");
    assert_true(cwnd > 1);
    assert_int_equal(tcp_int(j, "max_snd_cwnd"), cwnd);
    json_decref(j);
    struct tcp_info_sample last = {.have = TCP_INFO_HAVE_BASE, .snd_cwnd = 1, .rtt_us = 300};
    json_t *done = transfers_end(t, seq, "done", 100, &last, NULL);
    assert_int_equal(tcp_int(done, "snd_cwnd"), 1);
    assert_int_equal(tcp_int(done, "max_snd_cwnd"), cwnd);
    assert_true(json_real_value(json_object_get(json_object_get(done, "tcp"), "rtt_ms")) == 0.3);
    json_decref(done);
    /* once done, the socket is never sampled again and the record stays as it ended */
    assert_int_equal(transfers_sample(t), 0);
    j = transfers_get(t, id, NULL);
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
    struct transfer_start s = {"/f", "", "", 0, 100, 200, sfd, NULL, "sendfile", NULL, 0, 0};
    struct transfer_start none = {"/g", "", "", 0, 100, 200, -1, NULL, "sendfile", NULL, 0, 0};
    assert_int_equal(transfers_sample(t), 0); /* nothing sending */
    uint64_t seq = transfers_begin(t, &s, id);
    transfers_begin(t, &none, id2);
    assert_int_equal(transfers_sample(t), 1); /* the one with a socket */
    json_t *j = transfers_get(t, id, NULL);
    assert_string_equal(str(json_object_get(j, "tcp"), "state"), "ESTABLISHED");
    assert_true(tcp_int(j, "snd_cwnd") > 0);
    json_decref(j);
    json_decref(transfers_end(t, seq, "done", 100, NULL, NULL));
    assert_int_equal(transfers_sample(t), 0); /* done: its socket is never read again */
    transfers_free(t);
    close(sfd);
    close(cfd);
}

static struct peer peer4(const char *a)
{
    struct sockaddr_in s4 = {.sin_family = AF_INET};
    inet_pton(AF_INET, a, &s4.sin_addr);
    struct peer p;
    assert_int_equal(peer_from_sockaddr((struct sockaddr *)&s4, &p), 0);
    return p;
}

/* A record is its owner's: another address gets NULL (404), as for an unknown ID; any
 * reader (NULL: privacy.public_transfers) gets it; a record without an owner is nobody's. */
static void test_owner(void **state)
{
    (void)state;
    struct transfers *t = transfers_new(8);
    struct peer a = peer4("127.0.0.1"), b = peer4("127.0.0.2");
    /* the same client through a dual-stack listener */
    struct sockaddr_in6 s6 = {.sin6_family = AF_INET6};
    inet_pton(AF_INET6, "::ffff:127.0.0.1", &s6.sin6_addr);
    struct peer a6;
    assert_int_equal(peer_from_sockaddr((struct sockaddr *)&s6, &a6), 0);
    char id[TRANSFER_ID_LEN], id2[TRANSFER_ID_LEN];
    struct transfer_start s = {"/f", "127.0.0.1:5000", "", 0, 1, 200, -1, &a, NULL, NULL, 0, 0};
    transfers_begin(t, &s, id);
    struct transfer_start none = {"/f", "", "", 0, 1, 200, -1, NULL, NULL, NULL, 0, 0};
    transfers_begin(t, &none, id2);
    const struct {
        const char *what;
        int id2; /* the ownerless record */
        const struct peer *reader;
        int found;
    } rows[] = {
        {"owner", 0, &a, 1},
        {"owner via ::ffff:", 0, &a6, 1},
        {"another address", 0, &b, 0},
        {"any reader", 0, NULL, 1},
        {"ownerless, a reader", 1, &a, 0},
        {"ownerless, any reader", 1, NULL, 1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        json_t *j = transfers_get(t, rows[i].id2 ? id2 : id, rows[i].reader);
        if (!j != !rows[i].found)
            fail_msg("%s: %s", rows[i].what, j ? "served" : "refused");
        json_decref(j);
    }
    transfers_free(t);
}

/* 128 random bits: 32 lowercase hex digits, all different, no two consecutive IDs sharing
 * a prefix or differing by one (a counter would); every one still found in a full ring. */
static void test_ids_random(void **state)
{
    (void)state;
    enum { N = 2000 };
    struct transfers *t = transfers_new(N);
    static char ids[N][TRANSFER_ID_LEN];
    struct transfer_start s = {"/f", "", "", 0, 1, 200, -1, NULL, NULL, NULL, 0, 0};
    for (int i = 0; i < N; i++) {
        assert_int_not_equal(transfers_begin(t, &s, ids[i]), 0);
        assert_int_equal(strlen(ids[i]), 32);
        assert_int_equal(strspn(ids[i], "0123456789abcdef"), 32);
    }
    int same_prefix = 0;
    for (int i = 0; i < N; i++) {
        for (int j = i + 1; j < N; j++)
            if (strcmp(ids[i], ids[j]) == 0)
                fail_msg("IDs %d and %d are the same: %s", i, j, ids[i]);
        same_prefix += i > 0 && strncmp(ids[i], ids[i - 1], 8) == 0;
        json_t *j = transfers_get(t, ids[i], NULL);
        if (!j)
            fail_msg("ID %d not found", i);
        json_decref(j);
    }
    /* 8 equal leading hex digits by chance: 2^-32 per pair */
    assert_int_equal(same_prefix, 0);
    /* one more evicts the first only */
    char extra[TRANSFER_ID_LEN];
    transfers_begin(t, &s, extra);
    assert_null(transfers_get(t, ids[0], NULL));
    json_t *j = transfers_get(t, ids[1], NULL);
    assert_non_null(j);
    json_decref(j);
    transfers_free(t);
}

/* Workers begin and end transfers at once (the ring is locked per stripe, and a
 * transfer's number is drawn before its stripe's lock). In each round the threads start
 * together at a barrier and begin EACH transfers; when they have all stopped, the ring
 * must hold exactly the newest KEEP transfers by number, each "done" with its own bytes,
 * and none older: a slot that a newer transfer took before an older one got its lock must
 * stay the newer one's. Many short rounds give the last transfers of a round many chances
 * to race; ring sizes below, at and above the number of stripes; one long round at the
 * default size loads them. */
enum { RACE_THREADS = 4, RACE_MAX = 20000 };
struct race {
    struct transfers *t;
    pthread_barrier_t *start, *stop;
    int rounds, each;
    uint64_t seq[RACE_MAX];
    char id[RACE_MAX][TRANSFER_ID_LEN];
};

static void *race_run(void *arg)
{
    struct race *r = arg;
    struct transfer_start s = {"/ram/4KiB.dat", "127.0.0.1:5000", "", 0, 4096, 200, -1, NULL, "iovec", NULL, 0, 0};
    for (int k = 0; k < r->rounds; k++) {
        pthread_barrier_wait(r->start);
        for (int i = 0; i < r->each; i++) {
            r->seq[i] = transfers_begin(r->t, &s, r->id[i]);
            transfers_finish(r->t, r->seq[i], "done", r->seq[i], NULL, NULL);
            if (i % 1000 == 999)
                transfers_sample(r->t); /* as the sampler thread does meanwhile */
        }
        pthread_barrier_wait(r->stop);
        pthread_barrier_wait(r->start); /* the main thread has checked the round */
    }
    return NULL;
}

/* The round just ended: found iff among the newest KEEP; returns how many were found. */
static unsigned race_check(struct race *r, unsigned keep)
{
    uint64_t total = transfers_count(r[0].t);
    unsigned found = 0;
    for (int i = 0; i < RACE_THREADS; i++)
        for (int j = 0; j < r[i].each; j++) {
            uint64_t seq = r[i].seq[j];
            assert_true(seq >= 1 && seq <= total);
            json_t *e = transfers_get(r[i].t, r[i].id[j], NULL);
            if (!e != !(seq + keep > total))
                fail_msg("keep %u: transfer %llu of %llu %s", keep, (unsigned long long)seq,
                         (unsigned long long)total, e ? "kept though older" : "lost though among the newest");
            if (e) {
                assert_string_equal(str(e, "state"), "done");
                assert_int_equal(json_integer_value(json_object_get(e, "bytes")), (json_int_t)seq);
                found++;
            }
            json_decref(e);
        }
    return found;
}

/* A ring filled several times over: the most recent KEEP are found, every older one is
 * gone. With more slots than buckets per stripe, IDs share buckets, so evictions unhook
 * records from the middle and ends of chains (transfers.c, chain_of); ring sizes around the
 * stripe count and its multiples check the chain's layout by stripe. */
static void test_evict_full_ring(void **state)
{
    (void)state;
    static const unsigned keeps[] = {1, 2, 63, 64, 65, 129, 1000, 2048, 3000};
    enum { MAX = 3000, FILLS = 4 };
    static char ids[FILLS * MAX][TRANSFER_ID_LEN];
    for (size_t k = 0; k < sizeof keeps / sizeof keeps[0]; k++) {
        unsigned keep = keeps[k], n = FILLS * keep;
        struct transfers *t = transfers_new(keep);
        assert_non_null(t);
        struct transfer_start s = {"/f", "", "", 0, 1, 200, -1, NULL, "iovec", NULL, 0, 0};
        for (unsigned i = 0; i < n; i++)
            assert_int_equal(transfers_begin(t, &s, ids[i]), i + 1);
        unsigned found_old = 0, found_new = 0;
        for (unsigned i = 0; i < n; i++) {
            json_t *j = transfers_get(t, ids[i], NULL);
            if (j && i < n - keep)
                found_old++;
            else if (j)
                found_new++;
            json_decref(j);
        }
        if (found_old || found_new != keep)
            fail_msg("keep %u: %u evicted IDs found, %u of the last %u", keep, found_old, found_new, keep);
        transfers_free(t);
    }
}

static void test_concurrent(void **state)
{
    (void)state;
    const struct {
        unsigned keep;
        int rounds, each;
    } rows[] = {
        {1, 2000, 3}, {3, 2000, 3}, {16, 500, 8}, {64, 500, 16}, {100, 200, 32}, {1024, 1, RACE_MAX},
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        struct transfers *t = transfers_new(rows[k].keep);
        assert_non_null(t);
        struct race *r = calloc(RACE_THREADS, sizeof *r);
        assert_non_null(r);
        pthread_barrier_t start, stop;
        pthread_barrier_init(&start, NULL, RACE_THREADS + 1);
        pthread_barrier_init(&stop, NULL, RACE_THREADS + 1);
        pthread_t th[RACE_THREADS];
        for (int i = 0; i < RACE_THREADS; i++) {
            r[i] = (struct race){.t = t, .start = &start, .stop = &stop, .rounds = rows[k].rounds, .each = rows[k].each};
            assert_int_equal(pthread_create(&th[i], NULL, race_run, &r[i]), 0);
        }
        uint64_t total = 0;
        for (int round = 0; round < rows[k].rounds; round++) {
            pthread_barrier_wait(&start);
            pthread_barrier_wait(&stop);
            total += (uint64_t)RACE_THREADS * rows[k].each;
            assert_int_equal(transfers_count(t), total);
            unsigned per_round = (unsigned)(RACE_THREADS * rows[k].each); /* the newest KEEP of them */
            assert_int_equal(race_check(r, rows[k].keep), rows[k].keep < per_round ? rows[k].keep : per_round);
            pthread_barrier_wait(&start);
        }
        for (int i = 0; i < RACE_THREADS; i++)
            pthread_join(th[i], NULL);
        pthread_barrier_destroy(&start);
        pthread_barrier_destroy(&stop);
        free(r);
        transfers_free(t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_life_cycle),
        cmocka_unit_test(test_complete_without_json),
        cmocka_unit_test(test_acked),
        cmocka_unit_test(test_verdict),
        cmocka_unit_test(test_labels),
        cmocka_unit_test(test_unknown_and_evicted),
        cmocka_unit_test(test_track_samples),
        cmocka_unit_test(test_sample_sockets),
        cmocka_unit_test(test_owner),
        cmocka_unit_test(test_ids_random),
        cmocka_unit_test(test_evict_full_ring),
        cmocka_unit_test(test_concurrent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
