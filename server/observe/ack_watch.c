/* ack_watch: see ack_watch.h. */
#include "ack_watch.h"

#include "err.h"
#include "sys.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#ifndef SO_COOKIE
#define SO_COOKIE 57 /* Linux 4.13 */
#endif

struct slot {
    int used;
    int sock;
    uint64_t seq;
    uint64_t end;    /* stream offset of the body's last byte + 1 */
    uint64_t cookie; /* SO_COOKIE when added: the same socket, not a reused descriptor */
    double t_end;    /* when the body completed */
    double t_prev;   /* the last read that found it not yet acknowledged */
    double next;     /* when to read it again */
    double gap;      /* the wait after a read that saw no progress (doubles up to GAP_MAX) */
    uint64_t acked_prev; /* tcpi_bytes_acked at t_prev */
};

/* The longest wait between two reads of a body. A moving body is read when the rate its
 * acknowledgements grew at since the last read says its end arrives (the first time, the
 * delivery rate says); one that made no progress (a client that does not read) 2, 4, 8 ...
 * ms apart up to this. On loopback under wrk -c1000 a 1 MiB body waits a second for its
 * client: read every 2 ms (by the delivery rate, gigabits on loopback) that was a third
 * more CPU per request (docs/performance.md, "Acknowledgement watcher"). What precision a
 * late read loses is mostly won back by the moment of the last ACK (tcpi_last_ack_recv)
 * and by ack_watch_settle at the connection's next request. */
#define GAP_MAX 0.5
/* The thread's wakes are this far apart at least, and a new body wakes it only when due
 * this much before its next wake: a read comes up to LATE_MAX late, across which the last
 * ACK's moment (tcpi_last_ack_recv) stays exact unless more ACKs came. */
#define LATE_MAX 0.01

/* A pass's read of one slot, made with the lock released. */
struct due {
    unsigned idx;
    int sock;
    uint64_t seq;
    int ok;
    struct tcp_info_sample ti;
};

struct ack_watch {
    struct ack_watch_opts o;
    struct ack_watch_io io;
    ack_watch_done_fn done;
    void *ctx;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    unsigned active; /* used slots */
    unsigned hint;   /* where to look for a free slot first (after the last one taken) */
    double wake_at;  /* when the thread wakes next (0: it waits for a body) */
    struct due *due; /* o.slots of them: one pass's reads (one pass at a time) */
    int stop, started;
    pthread_t thread;
    struct slot slot[];
};

static int real_info(void *io_ctx, int sock, struct tcp_info_sample *ti)
{
    (void)io_ctx;
    char err[128];
    return tcp_info_read(sock, ti, err, sizeof err);
}

static int real_cookie(void *io_ctx, int sock, uint64_t *cookie)
{
    (void)io_ctx;
    socklen_t len = sizeof *cookie;
    return getsockopt(sock, SOL_SOCKET, SO_COOKIE, cookie, &len) == 0 && len == sizeof *cookie ? 0 : -1;
}

static int real_outq(void *io_ctx, int sock, uint64_t *bytes)
{
    (void)io_ctx;
    int n;
    if (ioctl(sock, SIOCOUTQ, &n) < 0 || n < 0)
        return -1;
    *bytes = (uint64_t)n;
    return 0;
}

/* Everything written to SOCK so far, as an offset in tcpi_bytes_acked's terms: the bytes
 * acknowledged plus those not yet (SIOCOUTQ: sent and unacknowledged, and unsent). Not
 * tcpi_bytes_sent - tcpi_bytes_retrans + tcpi_notsent_bytes: a segment the local qdisc
 * drops (a full tbf) counts in bytes_sent and its resending never in bytes_retrans, which
 * put that end MB beyond the last byte on a 200 Mbit/s tbf path (tests/e2e/server_acked.sh).
 * SIOCOUTQ is read between two TCP_INFO reads that agree, so that no ACK came in between;
 * after three tries that did not agree, the last one's first read: an end short by what
 * ACKs covered within a microsecond, never beyond the last byte. */
static int end_offset(const struct ack_watch_io *io, int sock, const struct tcp_info_sample *last, uint64_t *end)
{
    struct tcp_info_sample a = *last, b; /* the completion's read is the first of the pair */
    uint64_t outq;
    for (int tries = 0; tries < 3; tries++) {
        if ((tries && io->read_info(io->io_ctx, sock, &a) < 0) || !(a.have & TCP_INFO_HAVE_BYTES) ||
            io->read_outq(io->io_ctx, sock, &outq) < 0 || io->read_info(io->io_ctx, sock, &b) < 0)
            return -1;
        *end = a.bytes_acked + outq;
        if (b.bytes_acked == a.bytes_acked)
            break;
    }
    return 0;
}

struct ack_watch *ack_watch_new(const struct ack_watch_opts *opts, const struct ack_watch_io *io,
                                ack_watch_done_fn done, void *ctx)
{
    unsigned n = opts->slots ? opts->slots : 1;
    struct ack_watch *w = calloc(1, sizeof *w + n * sizeof w->slot[0]);
    if (w && !(w->due = calloc(n, sizeof *w->due))) {
        free(w);
        w = NULL;
    }
    if (!w)
        return NULL;
    w->o = *opts;
    w->o.slots = n;
    w->io = io ? *io : (struct ack_watch_io){real_info, real_cookie, real_outq, NULL};
    w->done = done;
    w->ctx = ctx;
    pthread_mutex_init(&w->lock, NULL);
    pthread_condattr_t ca; /* timed waits on the monotonic clock, as the slots' times */
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&w->wake, &ca);
    pthread_condattr_destroy(&ca);
    return w;
}

/* Report slot S with RESULT and free it. Caller holds the lock: the report is made under
 * it (the callback takes a transfer stripe's lock, never this one), so that a pass and a
 * closing connection never report one slot twice. */
static void drop(struct ack_watch *w, struct slot *s, enum ack_result result, double at)
{
    w->done(w->ctx, s->seq, result, result == ACK_OK ? at : 0);
    s->used = 0;
    __atomic_sub_fetch(&w->active, 1, __ATOMIC_RELAXED);
}

/* Slot S's socket read at NOW (OK: TI is its TCP_INFO, else unreadable): reported and
 * freed when done with, kept otherwise. CLOSING: the socket closes after this read, so
 * what is not acknowledged now never will be (as seen from here). Caller holds the lock. */
static void apply(struct ack_watch *w, struct slot *s, int ok, const struct tcp_info_sample *tip, double now,
                  int closing)
{
    struct tcp_info_sample ti = *tip;
    uint64_t cookie;
    /* the cookie after the read: a descriptor reused before or during it shows another.
     * Read only when the read would decide (a reused descriptor's counts are otherwise
     * harmless, and the next deciding read finds it out) */
    ok = ok && (ti.have & TCP_INFO_HAVE_BYTES);
    int decides = !ok || ti.bytes_acked >= s->end || closing || now - s->t_end >= w->o.limit_s;
    if (!ok || (decides && (w->io.read_cookie(w->io.io_ctx, s->sock, &cookie) < 0 || cookie != s->cookie))) {
        drop(w, s, ACK_CLOSED, 0);
        return;
    }
    if (ti.bytes_acked >= s->end) {
        /* the last ACK's moment, kept between the read that did not see it and this one:
         * tcpi_last_ack_recv counts jiffies, and a later ACK (of the next response) may
         * have come since */
        double at = now - ti.last_ack_recv_ms / 1e3;
        at = at < s->t_prev ? s->t_prev : at > now ? now : at;
        drop(w, s, ACK_OK, at);
        return;
    }
    if (closing) {
        drop(w, s, ACK_CLOSED, 0);
        return;
    }
    if (now - s->t_end >= w->o.limit_s) {
        drop(w, s, ACK_TIMEOUT, 0);
        return;
    }
    /* moving: read again when the delivery rate says the end arrives (the last ACK's moment
     * is then still the end's); stalled: back off */
    double wait = s->gap;
    if (ti.bytes_acked > s->acked_prev && now > s->t_prev) {
        wait = (double)(s->end - ti.bytes_acked) * (now - s->t_prev) / (double)(ti.bytes_acked - s->acked_prev);
        s->gap = w->o.interval_s;
    } else
        s->gap = s->gap * 2 < GAP_MAX ? s->gap * 2 : GAP_MAX;
    wait = wait < w->o.interval_s ? w->o.interval_s : wait > GAP_MAX ? GAP_MAX : wait;
    s->t_prev = now;
    s->acked_prev = ti.bytes_acked;
    s->next = now + wait < s->t_end + w->o.limit_s ? now + wait : s->t_end + w->o.limit_s;
}

/* Read slot S's socket now and apply it. Caller holds the lock. */
static void check(struct ack_watch *w, struct slot *s, double now, int closing)
{
    struct tcp_info_sample ti;
    int ok = w->io.read_info(w->io.io_ctx, s->sock, &ti) == 0;
    apply(w, s, ok, &ti, now, closing);
}

/* ack_watch_poll, entered and left with the lock held: the reads due by NOW + EARLY; *NEXT
 * the earliest next read of what is left. The sockets are read with the lock released, so that the workers adding
 * and settling bodies never wait for a pass (with it held, their futex sleeps were 4-8
 * times main's per 1 MiB request under wrk -c1000): a read whose slot was settled or
 * taken meanwhile is dropped, and a descriptor closed or reused meanwhile is found out
 * by the cookie before anything is decided. */
static unsigned poll_locked(struct ack_watch *w, double now, double early, double *next)
{
    unsigned n = 0;
    for (unsigned i = 0; i < w->o.slots && n < w->active; i++) {
        struct slot *s = &w->slot[i];
        if (s->used && (s->next <= now + early || now - s->t_end >= w->o.limit_s))
            w->due[n++] = (struct due){i, s->sock, s->seq, 0, {0}};
    }
    if (n) {
        pthread_mutex_unlock(&w->lock);
        for (unsigned k = 0; k < n; k++)
            w->due[k].ok = w->io.read_info(w->io.io_ctx, w->due[k].sock, &w->due[k].ti) == 0;
        pthread_mutex_lock(&w->lock);
        for (unsigned k = 0; k < n; k++) {
            struct slot *s = &w->slot[w->due[k].idx];
            if (s->used && s->seq == w->due[k].seq)
                apply(w, s, w->due[k].ok, &w->due[k].ti, now, 0);
        }
    }
    *next = now + GAP_MAX;
    for (unsigned i = 0; i < w->o.slots; i++)
        if (w->slot[i].used && w->slot[i].next < *next)
            *next = w->slot[i].next;
    return w->active;
}

unsigned ack_watch_poll(struct ack_watch *w, double now)
{
    double next;
    pthread_mutex_lock(&w->lock);
    unsigned left = poll_locked(w, now, 0, &next);
    pthread_mutex_unlock(&w->lock);
    return left;
}

int ack_watch_settle(struct ack_watch *w, int slot, uint64_t seq, int closing)
{
    if (!w || slot < 0 || (unsigned)slot >= w->o.slots)
        return 0;
    pthread_mutex_lock(&w->lock);
    struct slot *s = &w->slot[slot];
    if (s->used && s->seq == seq)
        check(w, s, sys_mono_s(), closing);
    int left = s->used && s->seq == seq;
    pthread_mutex_unlock(&w->lock);
    return left;
}

int ack_watch_add(struct ack_watch *w, int sock, uint64_t seq, const struct tcp_info_sample *last, double now)
{
    uint64_t end, cookie;
    if (sock < 0 || !last) {
        w->done(w->ctx, seq, ACK_UNREAD, 0);
        return -1;
    }
    /* nothing in flight, nothing unsent: every byte written is acknowledged already */
    if ((last->have & TCP_INFO_HAVE_MIN_RTT) && last->unacked == 0 && last->notsent_bytes == 0) {
        w->done(w->ctx, seq, ACK_OK, now);
        return -1;
    }
    if (end_offset(&w->io, sock, last, &end) < 0 || w->io.read_cookie(w->io.io_ctx, sock, &cookie) < 0) {
        w->done(w->ctx, seq, ACK_UNREAD, 0);
        return -1;
    }
    /* the first read when the delivery rate says the end arrives */
    double wait = last->delivery_rate_bps && end > last->bytes_acked
                      ? (double)(end - last->bytes_acked) * 8 / (double)last->delivery_rate_bps
                      : w->o.interval_s;
    wait = wait < w->o.interval_s ? w->o.interval_s : wait > GAP_MAX ? GAP_MAX : wait;
    int placed = -1;
    pthread_mutex_lock(&w->lock);
    for (unsigned i = w->hint; i < w->hint + w->o.slots && placed < 0; i++) {
        struct slot *s = &w->slot[i % w->o.slots];
        if (!s->used) {
            *s = (struct slot){1, sock, seq, end, cookie, now, now, now + wait, w->o.interval_s, last->bytes_acked};
            placed = (int)(i % w->o.slots);
            w->hint = (unsigned)placed + 1;
            /* the thread sleeps until its next read: woken only when this one is due more
             * than LATE_MAX sooner (a wake per body was most of the cost on loopback) */
            if (__atomic_add_fetch(&w->active, 1, __ATOMIC_RELAXED) == 1 || s->next + LATE_MAX < w->wake_at)
                pthread_cond_signal(&w->wake);
        }
    }
    pthread_mutex_unlock(&w->lock);
    if (placed < 0)
        w->done(w->ctx, seq, ACK_FULL, 0);
    return placed;
}

static void *run(void *arg)
{
    struct ack_watch *w = arg;
    pthread_mutex_lock(&w->lock);
    while (!w->stop) {
        double now = sys_mono_s(), next = 0;
        if (w->active) /* what is due within half a wake's spacing is read now */
            poll_locked(w, now, LATE_MAX / 2, &next);
        if (!w->active) { /* asleep while nothing is watched */
            w->wake_at = 0;
            pthread_cond_wait(&w->wake, &w->lock);
            continue;
        }
        /* wakes LATE_MAX apart at least: a wake per due body, hundreds a second under wrk
         * -c1000, was 2-3 times main's voluntary switches per 1 MiB request */
        if (next < now + LATE_MAX)
            next = now + LATE_MAX;
        w->wake_at = next;
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        double d = next - now;
        until.tv_sec += (time_t)d;
        until.tv_nsec += (long)((d - (double)(time_t)d) * 1e9);
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&w->wake, &w->lock, &until); /* the first read due, or a sooner body */
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

int ack_watch_start(struct ack_watch *w, char *err, size_t errlen)
{
    int rc = pthread_create(&w->thread, NULL, run, w);
    if (rc)
        return err_set(err, errlen, "ack watcher thread: %s", strerror(rc));
    w->started = 1;
    return 0;
}

void ack_watch_free(struct ack_watch *w)
{
    if (!w)
        return;
    if (w->started) {
        pthread_mutex_lock(&w->lock);
        w->stop = 1;
        pthread_cond_signal(&w->wake);
        pthread_mutex_unlock(&w->lock);
        pthread_join(w->thread, NULL);
    }
    for (unsigned i = 0; i < w->o.slots; i++)
        if (w->slot[i].used)
            drop(w, &w->slot[i], ACK_CLOSED, 0);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    free(w->due);
    free(w);
}
