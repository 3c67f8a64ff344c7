/* transfers: see transfers.h. */
#include "transfers.h"

#include "sys.h"

#include <errno.h>
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
    uint32_t next;   /* next entry (index + 1) in the same hash bucket, 0 = last */
    int have_owner;
    struct peer owner;
    char state[12];
    char *path, *remote, *listener;
    uint64_t first, length, bytes;
    int status;
    const char *send_path; /* static string (transfer_start) */
    double t0_mono, wall_start, duration;
    int sock;                   /* -1 once done: never read again */
    int have_tcp;               /* tcp holds at least one sample */
    struct tcp_info_sample tcp; /* tcp_info_track of every sample */
    struct transfer_evidence ev;     /* the server's side (evidence.h) */
    struct transfer_sampled sampled; /* the sampler's samples only */
};

/* IDs are random, so a record is found by hashing its ID: buckets of entry indexes (+ 1,
 * 0 = empty) chained through entry.next. The bucket is the ID's first 64 bits, already
 * uniform: requests choose which IDs to look up, never which IDs exist. */
struct transfers {
    pthread_mutex_t lock;
    unsigned keep;
    uint32_t *bucket;
    uint64_t mask; /* buckets - 1 (a power of two >= keep) */
    uint64_t next;
    unsigned sending; /* entries with a socket to sample: transfers_sample skips the scan at 0 */
    struct entry *ring;
};

struct transfers *transfers_new(unsigned keep)
{
    struct transfers *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->keep = keep ? keep : 1;
    uint64_t nb = 16;
    while (nb < t->keep)
        nb *= 2;
    t->mask = nb - 1;
    t->ring = calloc(t->keep, sizeof *t->ring);
    t->bucket = calloc((size_t)nb, sizeof *t->bucket);
    if (!t->ring || !t->bucket) {
        free(t->ring);
        free(t->bucket);
        free(t);
        return NULL;
    }
    t->next = 1;
    pthread_mutex_init(&t->lock, NULL);
    return t;
}

static uint32_t *bucket_of(struct transfers *t, const unsigned char key[TRANSFER_ID_HEX / 2])
{
    uint64_t h;
    memcpy(&h, key, sizeof h);
    return &t->bucket[h & t->mask];
}

/* Caller holds the lock; E is in use. */
static void unlink_entry(struct transfers *t, struct entry *e)
{
    uint32_t self = (uint32_t)(e - t->ring) + 1;
    for (uint32_t *p = bucket_of(t, e->key); *p; p = &t->ring[*p - 1].next)
        if (*p == self) {
            *p = e->next;
            return;
        }
}

static void entry_clear(struct transfers *t, struct entry *e)
{
    if (e->seq)
        unlink_entry(t, e);
    if (e->seq && e->sock >= 0)
        t->sending--;
    free(e->path);
    free(e->remote);
    free(e->listener);
    memset(e, 0, sizeof *e);
    e->sock = -1;
}

void transfers_free(struct transfers *t)
{
    if (!t)
        return;
    for (unsigned i = 0; i < t->keep; i++)
        entry_clear(t, &t->ring[i]);
    free(t->ring);
    free(t->bucket);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

/* NULL when out of memory: the entry then shows "" (a lost label, not a lost server). */
static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
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
    unsigned char key[TRANSFER_ID_HEX / 2];
    id[0] = 0;
    if (random_key(key) < 0)
        return 0;
    pthread_mutex_lock(&t->lock);
    uint64_t seq = t->next++;
    struct entry *e = &t->ring[seq % t->keep];
    entry_clear(t, e);
    e->seq = seq;
    memcpy(e->key, key, sizeof key);
    key_hex(key, e->id);
    uint32_t *b = bucket_of(t, key);
    e->next = *b;
    *b = (uint32_t)(e - t->ring) + 1;
    if (s->owner) {
        e->owner = *s->owner;
        e->have_owner = 1;
    }
    strcpy(e->state, "sending");
    e->path = dup_or_empty(s->path);
    e->remote = dup_or_empty(s->remote);
    e->listener = dup_or_empty(s->listener);
    e->first = s->first;
    e->length = s->length;
    e->status = s->status;
    e->send_path = s->send_path ? s->send_path : "";
    if (s->ev)
        e->ev = *s->ev;
    e->sock = s->sock;
    if (e->sock >= 0)
        t->sending++;
    e->t0_mono = sys_mono_s();
    e->wall_start = sys_wall_s();
    memcpy(id, e->id, TRANSFER_ID_LEN);
    pthread_mutex_unlock(&t->lock);
    return seq;
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
    json_t *j = json_pack("{s:s, s:s, s:s, s:i, s:I, s:I, s:I, s:s, s:f, s:s, s:s, s:s, s:b, s:o}",
                     "id", e->id, "state", e->state, "path", or_empty(e->path), "status", e->status,
                     "bytes", (json_int_t)e->bytes, "first", (json_int_t)e->first,
                     "length", (json_int_t)e->length, "started", started,
                     "duration_s", duration, "remote", or_empty(e->remote), "listener", or_empty(e->listener),
                     "send_path", or_empty(e->send_path), "zero_copy", strcmp(or_empty(e->send_path), "sendfile") == 0,
                     "tcp", tcp);
    if (j && evidence)
        evidence_to_json(j, &e->ev, &e->sampled);
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
    pthread_mutex_lock(&t->lock);
    for (unsigned i = 0; i < t->keep && t->sending; i++) {
        struct entry *e = &t->ring[i];
        struct tcp_info_sample ti;
        char err[128];
        if (!e->seq || e->sock < 0 || tcp_info_read(e->sock, &ti, err, sizeof err) < 0)
            continue;
        entry_track(e, &ti);
        evidence_sample(&e->sampled, &ti);
        n++;
    }
    pthread_mutex_unlock(&t->lock);
    return n;
}

/* transfers_end, with the JSON only when WANT. */
static json_t *end_entry(struct transfers *t, uint64_t seq, const char *state, uint64_t bytes,
                         const struct tcp_info_sample *last, const struct transfer_evidence *ev, int want)
{
    json_t *out = NULL;
    pthread_mutex_lock(&t->lock);
    struct entry *e = &t->ring[seq % t->keep];
    if (e->seq == seq) {
        if (last && strcmp(e->state, "sending") == 0)
            entry_track(e, last);
        if (e->sock >= 0)
            t->sending--;
        e->sock = -1; /* the connection closes after this: never sample it again */
        snprintf(e->state, sizeof e->state, "%s", state);
        e->bytes = bytes;
        e->duration = sys_mono_s() - e->t0_mono;
        if (ev) { /* the start's part stays */
            struct transfer_evidence start = e->ev;
            e->ev = *ev;
            e->ev.initial_cwnd = start.initial_cwnd;
            e->ev.sndbuf_setting = start.sndbuf_setting;
            e->ev.tcp_wmem_max = start.tcp_wmem_max;
        }
        if (want)
            out = entry_json(e, 0);
    }
    pthread_mutex_unlock(&t->lock);
    return out;
}

json_t *transfers_end(struct transfers *t, uint64_t seq, const char *state, uint64_t bytes,
                      const struct tcp_info_sample *last, const struct transfer_evidence *ev)
{
    return end_entry(t, seq, state, bytes, last, ev, 1);
}

void transfers_finish(struct transfers *t, uint64_t seq, const char *state, uint64_t bytes,
                      const struct tcp_info_sample *last, const struct transfer_evidence *ev)
{
    end_entry(t, seq, state, bytes, last, ev, 0);
}

json_t *transfers_get(struct transfers *t, const char *id, const struct peer *reader)
{
    unsigned char key[TRANSFER_ID_HEX / 2];
    if (strnlen(id, TRANSFER_ID_LEN) != TRANSFER_ID_HEX || hex_key(id, key) < 0)
        return NULL;
    json_t *out = NULL;
    pthread_mutex_lock(&t->lock);
    for (uint32_t i = *bucket_of(t, key); i; i = t->ring[i - 1].next) {
        const struct entry *e = &t->ring[i - 1];
        if (memcmp(e->key, key, sizeof key) != 0)
            continue;
        if (!reader || (e->have_owner && peer_same(&e->owner, reader)))
            out = entry_json(e, 1);
        break;
    }
    pthread_mutex_unlock(&t->lock);
    return out;
}

uint64_t transfers_count(struct transfers *t)
{
    pthread_mutex_lock(&t->lock);
    uint64_t n = t->next - 1;
    pthread_mutex_unlock(&t->lock);
    return n;
}
