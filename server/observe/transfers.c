/* transfers: see transfers.h. */
#include "transfers.h"

#include "sys.h"
#include "verdict.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

struct entry {
    uint64_t seq; /* 0 = empty slot */
    unsigned char key[TRANSFER_ID_HEX / 2]; /* the ID's 128 bits */
    char id[TRANSFER_ID_LEN];
    int have_owner;
    struct peer owner;
    char state[12];
    /* one block (labels_new): path, then remote and listener in it; freed by path */
    char *path, *remote, *listener;
    uint64_t first, length, bytes;
    int status;
    const char *send_path; /* static string (transfer_start) */
    int nopush;            /* sent under tcp_nopush (transfer_start) */
    double t0_mono, wall_start, duration;
    int sock;                   /* -1 once done: never read again */
    int have_tcp;               /* tcp holds at least one sample */
    struct tcp_info_sample tcp; /* tcp_info_track of every sample */
    struct transfer_evidence ev;     /* the server's side (evidence.h) */
    struct transfer_sampled sampled; /* the sampler's samples only */
    int8_t verdict;                  /* enum verdict_kind once ended, -1 while sending */
    uint8_t active;                  /* counted in transfers.active (until ended or evicted) */
    uint8_t overlap0;                /* another transfer was under way when this one began */
    uint8_t upload;                  /* debitd received (transfer_start.upload) */
    int8_t ack;                      /* enum ack_result, or ACK_NOT_WATCHED / ACK_WATCHING */
    double acked_mono;               /* the last byte's acknowledgement (ACK_OK) */
};

/* An entry's ack before a result (transfers_watching, transfers_acked). */
#define ACK_NOT_WATCHED (-2)
#define ACK_WATCHING (-1)

/* IDs are random, so a record is found by hashing its ID: buckets of entry indexes (+ 1,
 * 0 = empty) chained through transfers.chain, an array of its own: a record is about
 * 900 bytes, and a chain walked through the records (to unhook the slot's old one at
 * every begin) took a cache miss per record passed, half of transfers_begin's own samples
 * (docs/performance.md); 4 bytes per slot stay in cache. Each stripe's part of the array
 * is its own cache lines (chain_of), as the stripes are: workers beginning consecutive
 * transfers write different stripes, never one line. The bucket is the ID's first 64 bits, already
 * uniform: requests choose which IDs to look up, never which IDs exist.
 *
 * Every response takes the ring twice (begin, end) from whichever worker serves it. One
 * lock for the whole ring made the workers queue on each other: perf saw about 700 futex
 * sleeps a second at 50,000 small requests a second, and a worker sleeping there stalls
 * every connection it serves until the holder, often preempted by the clients sharing its
 * CPU, runs again (docs/performance.md, the 4 KiB p99). So the ring is cut in stripes:
 * slot i belongs to stripe i % TRANSFERS_STRIPES, with its own lock, buckets and count of
 * sending entries; consecutive transfers fall in different stripes. The ring's order is
 * unchanged (slot = seq % keep), so "the most recent KEEP" holds exactly as before. */
#define TRANSFERS_STRIPES 64

struct stripe {
    pthread_mutex_t lock;
    uint32_t *bucket;
    uint64_t mask;    /* buckets - 1 (a power of two) */
    unsigned sending; /* entries with a socket to sample: transfers_sample skips the stripe at 0 */
} __attribute__((aligned(64))); /* one cache line each: no false sharing between workers */

struct transfers {
    unsigned keep;
    uint64_t next; /* the next sequence number; atomic */
    uint64_t active; /* transfers begun and not yet ended or evicted; atomic (beside next: one line) */
    struct entry *ring;
    uint32_t *chain; /* per slot: the next slot (index + 1) in its bucket, 0 = last (chain_of) */
    size_t per_stripe; /* chain entries per stripe, a whole number of cache lines */
    struct stripe stripe[TRANSFERS_STRIPES];
};

static struct stripe *stripe_of_slot(struct transfers *t, uint64_t slot)
{
    return &t->stripe[slot % TRANSFERS_STRIPES];
}

/* Slot SLOT's link in its bucket's chain: the stripe's slots side by side. */
static uint32_t *chain_of(struct transfers *t, uint64_t slot)
{
    return &t->chain[(slot % TRANSFERS_STRIPES) * t->per_stripe + slot / TRANSFERS_STRIPES];
}

struct transfers *transfers_new(unsigned keep)
{
    struct transfers *t = aligned_alloc(64, (sizeof *t + 63) / 64 * 64);
    if (!t)
        return NULL;
    memset(t, 0, sizeof *t);
    t->keep = keep ? keep : 1;
    /* each stripe holds about keep / STRIPES entries; buckets a power of two >= that */
    uint64_t nb = 16;
    while (nb * TRANSFERS_STRIPES < t->keep)
        nb *= 2;
    t->ring = calloc(t->keep, sizeof *t->ring);
    /* slots per stripe, rounded up to whole 64-byte lines of uint32_t */
    t->per_stripe = ((t->keep + TRANSFERS_STRIPES - 1) / TRANSFERS_STRIPES + 15) / 16 * 16;
    size_t chain_bytes = TRANSFERS_STRIPES * t->per_stripe * sizeof *t->chain;
    t->chain = aligned_alloc(64, chain_bytes);
    if (t->chain)
        memset(t->chain, 0, chain_bytes);
    int ok = t->ring != NULL && t->chain != NULL;
    for (unsigned i = 0; i < TRANSFERS_STRIPES; i++) {
        t->stripe[i].mask = nb - 1;
        t->stripe[i].bucket = ok ? calloc((size_t)nb, sizeof *t->stripe[i].bucket) : NULL;
        ok = ok && t->stripe[i].bucket;
        pthread_mutex_init(&t->stripe[i].lock, NULL);
    }
    if (!ok) {
        transfers_free(t);
        return NULL;
    }
    t->next = 1;
    return t;
}

static uint32_t *bucket_of(struct stripe *st, const unsigned char key[TRANSFER_ID_HEX / 2])
{
    uint64_t h;
    memcpy(&h, key, sizeof h);
    return &st->bucket[h & st->mask];
}

/* Caller holds ST's lock; E is in use and in ST. */
static void unlink_entry(struct transfers *t, struct stripe *st, struct entry *e)
{
    uint32_t self = (uint32_t)(e - t->ring) + 1;
    for (uint32_t *p = bucket_of(st, e->key); *p; p = chain_of(t, *p - 1))
        if (*p == self) {
            *p = *chain_of(t, self - 1);
            return;
        }
}

/* The labels an entry owns, freed outside the lock: one allocation for the three, PATH
 * its start (three strdup per request, and three frees that alone were 1.4 % of a 4 KiB
 * request's samples: docs/performance.md, "The transfer ID written in place"). */
struct labels {
    char *path, *remote, *listener;
};

/* The three strings copied into one block owned by L->path (NULL ones as ""); all three
 * NULL when out of memory: the entry then shows "" (a lost label, not a lost server). */
static void labels_new(struct labels *l, const char *path, const char *remote, const char *listener)
{
    const char *src[3] = {path ? path : "", remote ? remote : "", listener ? listener : ""};
    size_t len[3], total = 0;
    for (int i = 0; i < 3; i++)
        total += (len[i] = strlen(src[i])) + 1;
    char *block = malloc(total);
    char *dst[3] = {NULL, NULL, NULL};
    for (size_t i = 0, off = 0; block && i < 3; off += len[i] + 1, i++)
        dst[i] = memcpy(block + off, src[i], len[i] + 1);
    *l = (struct labels){dst[0], dst[1], dst[2]};
}

static void labels_free(struct labels *l)
{
    free(l->path); /* the block: remote and listener are in it */
}

void transfers_free(struct transfers *t)
{
    if (!t)
        return;
    for (unsigned i = 0; t->ring && i < t->keep; i++) {
        struct labels l = {t->ring[i].path, t->ring[i].remote, t->ring[i].listener};
        labels_free(&l);
    }
    for (unsigned i = 0; i < TRANSFERS_STRIPES; i++) {
        free(t->stripe[i].bucket);
        pthread_mutex_destroy(&t->stripe[i].lock);
    }
    free(t->ring);
    free(t->chain);
    free(t);
}

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

/* 16 random bytes; -1 if the kernel gave none (it does not fail once the pool is
 * initialised, which it is long before debitd runs). Outside the lock. The kernel's bytes
 * are fetched 16 keys at a time per thread: one getrandom per request was about 3 % of a
 * small request's CPU (docs/performance.md); each byte is still used once only. */
static int random_key(unsigned char key[TRANSFER_ID_HEX / 2])
{
    static __thread unsigned char pool[16 * (TRANSFER_ID_HEX / 2)]; /* 256 B: never a short read */
    static __thread size_t left;
    if (left < TRANSFER_ID_HEX / 2) {
        for (int tries = 0;; tries++) {
            ssize_t n = getrandom(pool, sizeof pool, 0);
            if (n == (ssize_t)sizeof pool)
                break;
            if (tries == 2 || n >= 0 || errno != EINTR)
                return -1;
        }
        left = sizeof pool;
    }
    left -= TRANSFER_ID_HEX / 2;
    memcpy(key, pool + left, TRANSFER_ID_HEX / 2);
    memset(pool + left, 0, TRANSFER_ID_HEX / 2); /* handed out: not kept in memory */
    return 0;
}

static void key_hex(const unsigned char *key, char *hex)
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < TRANSFER_ID_HEX / 2; i++) {
        hex[2 * i] = digits[key[i] >> 4];
        hex[2 * i + 1] = digits[key[i] & 15];
    }
    hex[TRANSFER_ID_HEX] = 0;
}

/* ID as written by key_hex (32 lowercase hex digits, nothing else): 0, else -1. */
static int hex_key(const char *id, unsigned char *key)
{
    for (int i = 0; i < TRANSFER_ID_HEX; i++) {
        char c = id[i];
        int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (v < 0)
            return -1;
        key[i / 2] = (unsigned char)(i % 2 ? (key[i / 2] << 4) | v : v);
    }
    return id[TRANSFER_ID_HEX] == 0 ? 0 : -1;
}

uint64_t transfers_begin(struct transfers *t, const struct transfer_start *s, char id[TRANSFER_ID_LEN])
{
    id[0] = 0;
    /* the record is made outside the lock (allocations, clocks, the ID's digits); under it
     * only the slot's old record is unhooked and the new one copied in */
    struct entry fresh;
    memset(&fresh, 0, sizeof fresh);
    if (random_key(fresh.key) < 0)
        return 0;
    key_hex(fresh.key, fresh.id);
    if (s->owner) {
        fresh.owner = *s->owner;
        fresh.have_owner = 1;
    }
    strcpy(fresh.state, "sending");
    fresh.verdict = -1;
    fresh.ack = ACK_NOT_WATCHED;
    struct labels mine;
    labels_new(&mine, s->path, s->remote, s->listener);
    fresh.path = mine.path;
    fresh.remote = mine.remote;
    fresh.listener = mine.listener;
    fresh.first = s->first;
    fresh.length = s->length;
    fresh.status = s->status;
    fresh.send_path = s->send_path ? s->send_path : "";
    fresh.nopush = s->nopush;
    fresh.upload = s->upload != 0;
    if (s->ev)
        fresh.ev = *s->ev;
    fresh.sock = s->sock;
    fresh.t0_mono = sys_mono_s();
    fresh.wall_start = sys_wall_s();
    memcpy(id, fresh.id, TRANSFER_ID_LEN);

    uint64_t seq = __atomic_fetch_add(&t->next, 1, __ATOMIC_RELAXED);
    fresh.seq = seq;
    fresh.active = 1;
    fresh.overlap0 = __atomic_fetch_add(&t->active, 1, __ATOMIC_RELAXED) > 0;
    int evicted = 0;
    uint64_t slot = seq % t->keep;
    struct stripe *st = stripe_of_slot(t, slot);
    struct entry *e = &t->ring[slot];
    struct labels old = mine; /* freed if not stored */
    pthread_mutex_lock(&st->lock);
    /* A transfer KEEP or more later may have taken the slot first (the number is drawn
     * before the lock): this one is then already evicted, as it would have been a moment
     * later; its ID is simply unknown. */
    if (e->seq < seq) {
        if (e->seq) {
            unlink_entry(t, st, e);
            if (e->sock >= 0)
                st->sending--;
            evicted = e->active; /* never ended (a request freed without it): no longer counted */
        }
        old = (struct labels){e->path, e->remote, e->listener};
        *e = fresh;
        uint32_t *b = bucket_of(st, e->key);
        *chain_of(t, slot) = *b;
        *b = (uint32_t)slot + 1;
        if (e->sock >= 0)
            st->sending++;
    } else {
        evicted = 1; /* this one, never stored */
    }
    pthread_mutex_unlock(&st->lock);
    if (evicted)
        __atomic_fetch_sub(&t->active, 1, __ATOMIC_RELAXED);
    labels_free(&old);
    return seq;
}

/* The verdict's inputs from the server's own record of E (common/verdict.h): its rate
 * (bytes written / duration: what left debitd, the last socket buffer's worth included),
 * its TCP_INFO, the serving thread's CPU, the cgroup's throttling, the samples. No client
 * figures: those are the client's to add (debit merges them). Caller holds the lock. */
/* The plateau of E's sampled rates into IN (verdict_plateau). */
static void entry_plateau(const struct entry *e, struct verdict_in *in)
{
    const struct transfer_sampled *s = &e->sampled;
    double r[EVIDENCE_RATES];
    for (unsigned i = 0; i < s->nrate && i < EVIDENCE_RATES; i++)
        r[i] = s->rate_mbps[i];
    verdict_plateau(r, s->nrate < EVIDENCE_RATES ? s->nrate : EVIDENCE_RATES, &in->plateau_mbps, &in->plateau_share);
}

/* An upload's inputs: debitd is the receiver (verdict.h receiver_side): its socket's
 * receive side, its receiving thread's CPU, the plateau of what arrived. The sender's
 * figures are the client's, which debitd does not see. */
static void entry_upload_in(const struct entry *e, struct verdict_in *in)
{
    in->upload = in->receiver_side = 1;
    const struct tcp_info_sample *t = &e->tcp;
    if (e->have_tcp) {
        in->rtt_ms = t->rtt_us ? t->rtt_us / 1000.0 : NAN;
        in->rcv_rtt_ms = t->rcv_rtt_us ? t->rcv_rtt_us / 1000.0 : NAN;
        in->rcv_space = t->rcv_space;
        in->rcv_ssthresh = t->rcv_ssthresh;
        in->rcv_wnd = (t->have & TCP_INFO_HAVE_RCV_WND) && t->rcv_wnd ? t->rcv_wnd : NAN;
        in->rcv_mss = t->rcv_mss ? t->rcv_mss : NAN;
    }
    const struct transfer_evidence *ev = &e->ev;
    if (ev->have_cpu && ev->have_thread) {
        in->rcv_cpu_ms = ev->user_ms + ev->sys_ms;
        in->rcv_runq_ms = ev->runq_ms >= 0 ? ev->runq_ms : NAN;
        in->rcv_wall_ms = ev->wall_ms;
    }
    in->so_rcvbuf = ev->so_rcvbuf > 0 ? (double)ev->so_rcvbuf : NAN;
    in->tcp_rmem_max = ev->tcp_rmem_max ? (double)ev->tcp_rmem_max : NAN;
    entry_plateau(e, in);
}

static void entry_verdict_in(const struct entry *e, struct verdict_in *in)
{
    verdict_in_init(in);
    in->server_debitd = 1;
    in->parallel = 1;
    in->bytes = e->bytes;
    in->duration_s = in->srv_duration_s = e->duration > 0 ? e->duration : NAN;
    in->measured_mbps = e->duration > 0 ? (double)e->bytes * 8 / e->duration / 1e6 : NAN;
    if (e->upload) {
        entry_upload_in(e, in);
        return;
    }
    const struct tcp_info_sample *t = &e->tcp;
    if (e->have_tcp) {
        if (t->have & TCP_INFO_HAVE_LIMITED) {
            in->busy_ms = (double)t->busy_time_us / 1e3;
            if (t->busy_time_us) {
                in->rwnd_limited_ratio = (double)t->rwnd_limited_us / (double)t->busy_time_us;
                in->sndbuf_limited_ratio = (double)t->sndbuf_limited_us / (double)t->busy_time_us;
            }
        }
        in->total_retrans = t->total_retrans;
        if (t->have & TCP_INFO_HAVE_SENT) {
            in->bytes_retrans = (double)t->bytes_retrans;
            in->bytes_sent = (double)t->bytes_sent;
        }
        if (t->snd_ssthresh < 0x7fffffffu)
            in->snd_ssthresh = t->snd_ssthresh;
        in->max_snd_cwnd = t->max_snd_cwnd;
        if ((t->have & TCP_INFO_HAVE_MIN_RTT) && t->min_rtt_us) {
            in->srv_min_rtt_ms = t->min_rtt_us / 1e3;
            in->data_segs_out = t->data_segs_out;
        }
        if (t->have & TCP_INFO_HAVE_DELIVERY)
            in->delivery_rate_bps = (double)t->delivery_rate_bps;
        in->snd_mss = t->snd_mss ? t->snd_mss : NAN;
        /* 0 before 6.2 (the kernel did not fill it) or on a closed window: no figure */
        if ((t->have & TCP_INFO_HAVE_SND_WND) && t->snd_wnd)
            in->snd_wnd = t->snd_wnd;
    }
    const struct transfer_evidence *ev = &e->ev;
    if (ev->have_cpu) {
        in->cpu_wall_ms = ev->wall_ms;
        if (ev->have_thread) {
            in->cpu_user_ms = ev->user_ms;
            in->cpu_sys_ms = ev->sys_ms;
            in->cpu_share = ev->wall_ms > 0 ? (ev->user_ms + ev->sys_ms) / ev->wall_ms : NAN;
            in->cpu_runq_ms = ev->runq_ms >= 0 ? ev->runq_ms : NAN;
        }
        if (ev->so_sndbuf >= 0)
            in->so_sndbuf = (double)ev->so_sndbuf;
        if (ev->have_cgroup) {
            in->quota_pct = ev->quota_pct >= 0 ? ev->quota_pct : NAN;
            if (ev->have_deltas) {
                in->throttled_ms = ev->throttled_ms;
                in->nr_throttled = (double)ev->nr_throttled;
                in->nr_periods = (double)ev->nr_periods;
            }
        }
    }
    in->sndbuf_setting = ev->sndbuf_setting ? (double)ev->sndbuf_setting : NAN;
    in->tcp_wmem_max = ev->tcp_wmem_max ? (double)ev->tcp_wmem_max : NAN;
    in->initial_cwnd = ev->initial_cwnd ? ev->initial_cwnd : NAN;
    if (ev->have_iface && ev->tx_packets) {
        in->iface_bytes_per_packet = (double)ev->tx_bytes / (double)ev->tx_packets;
        in->iface_shared = ev->iface_shared;
        snprintf(in->iface, sizeof in->iface, "%s", ev->iface);
    }
    in->samples = (double)e->sampled.count;
    in->app_limited = (double)e->sampled.app_limited;
    entry_plateau(e, in);
}

/* The record's verdict fields (docs/server.md): null while sending. */
static void verdict_to_json(json_t *j, const struct entry *e)
{
    if (e->verdict < 0) {
        json_object_set_new(j, "limited_by", json_null());
        json_object_set_new(j, "limited_by_evidence", json_null());
        json_object_set_new(j, "predicted_mbps", json_null());
        json_object_set_new(j, "predicted_note", json_null());
        return;
    }
    struct verdict_in in;
    struct verdict v;
    entry_verdict_in(e, &in);
    verdict_decide(&in, &v);
    int pred = v.pred.limit != PREDICT_LIMIT_NONE;
    json_object_set_new(j, "limited_by", json_string(verdict_name(v.kind)));
    json_object_set_new(j, "limited_by_evidence", json_string(v.evidence));
    json_object_set_new(j, "predicted_mbps", pred ? json_real(v.pred.avg_bps / 1e6) : json_null());
    json_object_set_new(j, "predicted_note", pred ? json_null() : json_string(v.no_prediction));
}

/* "acked_s", "acked_mbps", "acked_note" (docs/server.md): the time from the start to the
 * client's acknowledgement of the last byte, what a client's own clock sees, rather than
 * duration_s's handing over to the kernel. Caller holds the lock. */
static void acked_to_json(json_t *j, const struct entry *e)
{
    static const char *const note[] = {[ACK_OK] = NULL, [ACK_CLOSED] = "closed", [ACK_TIMEOUT] = "timeout",
                                       [ACK_FULL] = "full", [ACK_UNREAD] = "unread"};
    int ok = e->ack == ACK_OK && e->acked_mono >= e->t0_mono;
    double s = ok ? e->acked_mono - e->t0_mono : 0;
    const char *why = ok                                     ? NULL
                      : strcmp(e->state, "sending") == 0     ? "sending"
                      : e->ack == ACK_NOT_WATCHED            ? "not_watched"
                      : e->ack == ACK_WATCHING               ? "watching"
                      : e->ack > ACK_OK && e->ack <= ACK_UNREAD ? note[e->ack]
                                                             : "unread";
    json_object_set_new(j, "acked_s", ok ? json_real(s) : json_null());
    json_object_set_new(j, "acked_mbps", ok && s > 0 ? json_real((double)e->bytes * 8 / s / 1e6) : json_null());
    json_object_set_new(j, "acked_note", why ? json_string(why) : json_null());
}

/* Caller holds the lock. EVIDENCE: with the server's side (evidence.h), which /transfers/ID
 * shows and the access log line leaves out (it doubled the line's cost per request). */
static json_t *entry_json(const struct entry *e, int evidence)
{
    char started[48];
    sys_iso_time(e->wall_start, started, sizeof started);
    int sending = strcmp(e->state, "sending") == 0;
    double duration = sending ? sys_mono_s() - e->t0_mono : e->duration;
    json_t *tcp = e->have_tcp ? tcp_info_to_json(&e->tcp) : json_object();
    /* zero_copy: whether the body went out by sendfile from the memfd, so that a user
     * comparing servers knows which path a figure measured */
    json_t *j = json_pack("{s:s, s:s, s:s, s:i, s:I, s:I, s:I, s:s, s:f, s:s, s:s, s:s, s:b, s:b, s:o}",
                     "id", e->id, "state", e->state, "path", or_empty(e->path), "status", e->status,
                     "bytes", (json_int_t)e->bytes, "first", (json_int_t)e->first,
                     "length", (json_int_t)e->length, "started", started,
                     "duration_s", duration, "remote", or_empty(e->remote), "listener", or_empty(e->listener),
                     "send_path", or_empty(e->send_path), "zero_copy", strcmp(or_empty(e->send_path), "sendfile") == 0,
                     "tcp_nopush", e->nopush, "tcp", tcp);
    if (j) {
        json_object_set_new(j, "direction", json_string(e->upload ? "upload" : "download"));
        evidence_iface_to_json(j, &e->ev);
    }
    if (j && evidence && e->upload) /* the receive buffer an upload's window came from */
        json_object_set_new(j, "rcvbuf",
                            json_pack("{s:o, s:o}", "so_rcvbuf",
                                      e->ev.so_rcvbuf > 0 ? json_integer((json_int_t)e->ev.so_rcvbuf) : json_null(),
                                      "tcp_rmem_max",
                                      e->ev.tcp_rmem_max ? json_integer((json_int_t)e->ev.tcp_rmem_max) : json_null()));
    if (j && evidence)
        evidence_to_json(j, &e->ev, &e->sampled);
    if (j && evidence) { /* the plateau the verdict read (verdict_plateau) */
        struct verdict_in in;
        verdict_in_init(&in);
        entry_plateau(e, &in);
        json_t *smp = json_object_get(j, "sampled");
        json_object_set_new(smp, "plateau_mbps", isfinite(in.plateau_mbps) ? json_real(in.plateau_mbps) : json_null());
        json_object_set_new(smp, "plateau_share", isfinite(in.plateau_share) ? json_real(in.plateau_share) : json_null());
    }
    if (j && evidence) /* at the access log's line the watch has barely begun */
        acked_to_json(j, e);
    if (j)
        verdict_to_json(j, e);
    return j;
}

static void entry_track(struct entry *e, const struct tcp_info_sample *ti)
{
    tcp_info_track(&e->tcp, ti);
    e->have_tcp = 1;
}

unsigned transfers_sample(struct transfers *t)
{
    unsigned n = 0;
    for (unsigned k = 0; k < TRANSFERS_STRIPES; k++) {
        struct stripe *st = &t->stripe[k];
        pthread_mutex_lock(&st->lock);
        for (unsigned i = k; i < t->keep && st->sending; i += TRANSFERS_STRIPES) {
            struct entry *e = &t->ring[i];
            struct tcp_info_sample ti;
            char err[128];
            if (!e->seq || e->sock < 0 || tcp_info_read(e->sock, &ti, err, sizeof err) < 0)
                continue;
            entry_track(e, &ti);
            /* the time of this reading, not of the sweep's start: a sampler preempted
             * mid-sweep (a busy machine) would otherwise give the next entries' intervals
             * bytes without their time, a spike that hides a plateau (verdict_plateau) */
            evidence_sample(&e->sampled, &ti, sys_mono_s(), e->upload);
            n++;
        }
        pthread_mutex_unlock(&st->lock);
    }
    return n;
}

/* transfers_end, with the JSON only when WANT; the verdict's kind into *KIND. */
static json_t *end_entry(struct transfers *t, uint64_t seq, const char *state, uint64_t bytes,
                         const struct tcp_info_sample *last, const struct transfer_evidence *ev, int want,
                         enum verdict_kind *kind)
{
    json_t *out = NULL;
    *kind = VERDICT_UNKNOWN;
    double now = sys_mono_s();
    struct stripe *st = stripe_of_slot(t, seq % t->keep);
    pthread_mutex_lock(&st->lock);
    struct entry *e = &t->ring[seq % t->keep];
    if (e->seq == seq) {
        if (last && strcmp(e->state, "sending") == 0)
            entry_track(e, last);
        if (e->sock >= 0)
            st->sending--;
        e->sock = -1; /* the connection closes after this: never sample it again */
        snprintf(e->state, sizeof e->state, "%s", state);
        e->bytes = bytes;
        e->duration = now - e->t0_mono;
        if (ev) { /* the start's part stays */
            struct transfer_evidence start = e->ev;
            e->ev = *ev;
            e->ev.initial_cwnd = start.initial_cwnd;
            e->ev.sndbuf_setting = start.sndbuf_setting;
            e->ev.tcp_wmem_max = start.tcp_wmem_max;
            e->ev.tcp_rmem_max = start.tcp_rmem_max;
        }
        /* the interface's counters hold every transfer's packets: say when others ran too
         * (under way at the start, or begun since) */
        e->ev.iface_shared = e->overlap0 || __atomic_load_n(&t->next, __ATOMIC_RELAXED) - 1 > seq;
        if (e->active) {
            e->active = 0;
            __atomic_fetch_sub(&t->active, 1, __ATOMIC_RELAXED);
        }
        struct verdict_in in;
        entry_verdict_in(e, &in);
        e->verdict = (int8_t)verdict_kind_of(&in); /* the sentences only when shown */
        *kind = (enum verdict_kind)e->verdict;
        if (want)
            out = entry_json(e, 0);
    }
    pthread_mutex_unlock(&st->lock);
    return out;
}

json_t *transfers_end(struct transfers *t, uint64_t seq, const char *state, uint64_t bytes,
                      const struct tcp_info_sample *last, const struct transfer_evidence *ev)
{
    enum verdict_kind kind;
    return end_entry(t, seq, state, bytes, last, ev, 1, &kind);
}

enum verdict_kind transfers_finish(struct transfers *t, uint64_t seq, const char *state, uint64_t bytes,
                                   const struct tcp_info_sample *last, const struct transfer_evidence *ev)
{
    enum verdict_kind kind;
    end_entry(t, seq, state, bytes, last, ev, 0, &kind);
    return kind;
}

json_t *transfers_get(struct transfers *t, const char *id, const struct peer *reader)
{
    unsigned char key[TRANSFER_ID_HEX / 2];
    if (strnlen(id, TRANSFER_ID_LEN) != TRANSFER_ID_HEX || hex_key(id, key) < 0)
        return NULL;
    /* the ID does not say its slot: every stripe is asked (a rare request, one lookup per stripe) */
    for (unsigned k = 0; k < TRANSFERS_STRIPES; k++) {
        struct stripe *st = &t->stripe[k];
        json_t *out = NULL;
        int found = 0;
        pthread_mutex_lock(&st->lock);
        for (uint32_t i = *bucket_of(st, key); i; i = *chain_of(t, i - 1)) {
            const struct entry *e = &t->ring[i - 1];
            if (memcmp(e->key, key, sizeof key) != 0)
                continue;
            found = 1;
            if (!reader || (e->have_owner && peer_same(&e->owner, reader)))
                out = entry_json(e, 1);
            break;
        }
        pthread_mutex_unlock(&st->lock);
        if (found)
            return out;
    }
    return NULL;
}

/* Set entry SEQ's ack to RESULT (and AT) unless it was evicted meanwhile. */
static void set_ack(struct transfers *t, uint64_t seq, int result, double at)
{
    struct stripe *st = stripe_of_slot(t, seq % t->keep);
    pthread_mutex_lock(&st->lock);
    struct entry *e = &t->ring[seq % t->keep];
    if (e->seq == seq) {
        e->ack = (int8_t)result;
        e->acked_mono = at;
    }
    pthread_mutex_unlock(&st->lock);
}

void transfers_watching(struct transfers *t, uint64_t seq)
{
    set_ack(t, seq, ACK_WATCHING, 0);
}

void transfers_acked(void *ctx, uint64_t seq, enum ack_result result, double acked_mono)
{
    set_ack(ctx, seq, (int)result, acked_mono);
}

uint64_t transfers_count(struct transfers *t)
{
    return __atomic_load_n(&t->next, __ATOMIC_RELAXED) - 1;
}
