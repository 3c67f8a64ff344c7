/* quota: see quota.h. */
#include "quota.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

struct qentry {
    struct qentry *next; /* same bucket */
    unsigned char key[QUOTA_KEY_LEN];
    uint64_t newest;             /* absolute index of the newest slot; older ones follow in the ring */
    uint64_t slot[QUOTA_SLOTS]; /* bytes charged in slot i is slot[i % QUOTA_SLOTS] */
};

struct quota {
    pthread_mutex_t lock;
    uint64_t budget;     /* 0 = none */
    uint64_t slot_ms;    /* 0 until limits are set */
    uint32_t generation; /* bumped when slot indexes change meaning */
    uint64_t seed;       /* of the bucket hash: addresses are the clients' choice */
    struct qentry **bucket;
    size_t mask; /* buckets - 1 */
    size_t n, max;
    uint64_t last_sweep; /* slot index of the last full sweep + 1 */
    uint64_t overflow;   /* new addresses that took over an entry of a full table */
    uint64_t rng;        /* xorshift state for the eviction sample */
};

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

static size_t hash_key(const struct quota *q, const unsigned char *key)
{
    uint64_t a, b;
    memcpy(&a, key, 8);
    memcpy(&b, key + 8, 8);
    return (size_t)(mix64(mix64(q->seed ^ a) ^ b) & q->mask);
}

struct quota *quota_new(size_t max_addresses)
{
    struct quota *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->max = max_addresses ? max_addresses : QUOTA_MAX_ADDRESSES;
    size_t nb = 64;
    while (nb < q->max / 4)
        nb *= 2;
    q->mask = nb - 1;
    q->bucket = calloc(nb, sizeof *q->bucket);
    if (!q->bucket) {
        free(q);
        return NULL;
    }
    if (getrandom(&q->seed, sizeof q->seed, 0) != (ssize_t)sizeof q->seed)
        q->seed = mix64((uint64_t)(uintptr_t)q); /* a weaker seed, not a failure */
    q->rng = mix64(q->seed ^ 0x9e3779b97f4a7c15ULL) | 1;
    pthread_mutex_init(&q->lock, NULL);
    return q;
}

void quota_free(struct quota *q)
{
    if (!q)
        return;
    for (size_t i = 0; i <= q->mask; i++)
        for (struct qentry *e = q->bucket[i], *next; e; e = next) {
            next = e->next;
            free(e);
        }
    free(q->bucket);
    pthread_mutex_destroy(&q->lock);
    free(q);
}

/* Age E to slot index IDX: the slots that left the window are zeroed. */
static void advance(struct qentry *e, uint64_t idx)
{
    if (idx <= e->newest)
        return;
    if (idx - e->newest >= QUOTA_SLOTS)
        memset(e->slot, 0, sizeof e->slot);
    else
        for (uint64_t i = e->newest + 1; i <= idx; i++)
            e->slot[i % QUOTA_SLOTS] = 0;
    e->newest = idx;
}

static uint64_t total(const struct qentry *e)
{
    uint64_t t = 0;
    for (int i = 0; i < QUOTA_SLOTS; i++)
        t += e->slot[i];
    return t;
}

/* Caller holds the lock; limits are set. */
static uint64_t slot_index(const struct quota *q, uint64_t now_ms)
{
    return now_ms / q->slot_ms;
}

/* The entry for KEY, aged to IDX; entries met on the way that aged out entirely are
 * dropped. NULL if absent. */
static struct qentry *find(struct quota *q, const unsigned char *key, uint64_t idx)
{
    struct qentry **p = &q->bucket[hash_key(q, key)];
    while (*p) {
        struct qentry *e = *p;
        advance(e, idx);
        if (memcmp(e->key, key, QUOTA_KEY_LEN) == 0)
            return e;
        if (total(e) == 0) {
            *p = e->next;
            free(e);
            q->n--;
            continue;
        }
        p = &e->next;
    }
    return NULL;
}

/* Drop every entry that aged out (at most once per slot: a full table is swept, not
 * scanned on every new address). */
static void sweep(struct quota *q, uint64_t idx)
{
    if (q->last_sweep == idx + 1)
        return;
    q->last_sweep = idx + 1;
    for (size_t i = 0; i <= q->mask; i++) {
        struct qentry **p = &q->bucket[i];
        while (*p) {
            struct qentry *e = *p;
            advance(e, idx);
            if (total(e) == 0) {
                *p = e->next;
                free(e);
                q->n--;
            } else {
                p = &e->next;
            }
        }
    }
}

void quota_set_limits(struct quota *q, uint64_t bytes, uint64_t window_ms, uint64_t now_ms)
{
    pthread_mutex_lock(&q->lock);
    uint64_t slot_ms = window_ms < QUOTA_SLOTS ? 1 : (window_ms + QUOTA_SLOTS - 1) / QUOTA_SLOTS;
    if (q->slot_ms && slot_ms != q->slot_ms) {
        /* re-count what each address used as used now, under the new slot length */
        uint64_t old_idx = slot_index(q, now_ms), new_idx = now_ms / slot_ms;
        for (size_t i = 0; i <= q->mask; i++)
            for (struct qentry *e = q->bucket[i]; e; e = e->next) {
                advance(e, old_idx);
                uint64_t used = total(e);
                memset(e->slot, 0, sizeof e->slot);
                e->newest = new_idx;
                e->slot[new_idx % QUOTA_SLOTS] = used;
            }
        q->generation++;
    }
    q->slot_ms = slot_ms;
    q->budget = bytes;
    pthread_mutex_unlock(&q->lock);
}

/* How long (ms) from NOW_MS until E, aged to IDX, is below BUDGET: the oldest slots leave
 * the window one at a time, slot idx + k - QUOTA_SLOTS when slot idx + k begins. */
static uint64_t wait_ms(const struct quota *q, const struct qentry *e, uint64_t idx, uint64_t now_ms)
{
    uint64_t left = total(e);
    for (uint64_t k = 1; k <= QUOTA_SLOTS; k++) {
        left -= e->slot[(idx + k) % QUOTA_SLOTS];
        if (left < q->budget)
            return (idx + k) * q->slot_ms - now_ms;
    }
    return QUOTA_SLOTS * q->slot_ms; /* not reached: an empty window is below any budget */
}

/* The entry a new address takes over when the table is full: the least used of a sample
 * (the whole table when it holds at most QUOTA_SAMPLE entries, else QUOTA_SAMPLE entries
 * from buckets picked at random: a scan of 100,000 entries per new address would be a lever
 * for whoever sends them). Entries are aged to IDX on the way. NULL only when the table is
 * empty. *PREV is the link that points to it, for unlinking. */
static struct qentry *least_used(struct quota *q, uint64_t idx, struct qentry ***prev)
{
    struct qentry *best = NULL;
    uint64_t best_total = UINT64_MAX;
    int all = q->n <= QUOTA_SAMPLE;
    size_t seen = 0;
    for (size_t b = 0; all ? b <= q->mask : seen < QUOTA_SAMPLE && b < 8 * QUOTA_SAMPLE; b++) {
        size_t i = b;
        if (!all) {
            q->rng ^= q->rng << 13;
            q->rng ^= q->rng >> 7;
            q->rng ^= q->rng << 17;
            i = (size_t)(q->rng & q->mask);
        }
        for (struct qentry **p = &q->bucket[i]; *p; p = &(*p)->next) {
            advance(*p, idx);
            uint64_t t = total(*p);
            if (t < best_total) {
                best = *p;
                best_total = t;
                *prev = p;
            }
            seen++;
        }
    }
    return best;
}

/* A slot for KEY, new to the table: a new entry while there is room, else the least-used
 * entry of a sample, taken over with its use (so a full table counts too much, never too
 * little: no address goes unmetered). NULL when over budget with the use it would take over
 * (*OVER is that entry, for the wait), or when out of memory with an empty table. */
static struct qentry *add(struct quota *q, const unsigned char *key, uint64_t idx, struct qentry **over)
{
    struct qentry *e = NULL;
    *over = NULL;
    if (q->n >= q->max)
        sweep(q, idx);
    if (q->n < q->max && (e = calloc(1, sizeof *e)) != NULL) {
        e->newest = idx;
        q->n++;
    } else {
        struct qentry **prev = NULL;
        if (!(e = least_used(q, idx, &prev)))
            return NULL;
        if (total(e) >= q->budget) {
            *over = e;
            return NULL;
        }
        *prev = e->next; /* unlinked; re-linked under its new key below */
        q->overflow++;
    }
    memcpy(e->key, key, QUOTA_KEY_LEN);
    size_t h = hash_key(q, key);
    e->next = q->bucket[h];
    q->bucket[h] = e;
    return e;
}

enum quota_verdict quota_take(struct quota *q, const unsigned char key[QUOTA_KEY_LEN], uint64_t bytes,
                              uint64_t now_ms, struct quota_receipt *rc, uint64_t *retry_after_s)
{
    struct quota_receipt none;
    if (!rc)
        rc = &none;
    memset(rc, 0, sizeof *rc);
    pthread_mutex_lock(&q->lock);
    enum quota_verdict v = QUOTA_OK;
    if (!q->budget || !q->slot_ms)
        goto out;
    uint64_t idx = slot_index(q, now_ms);
    struct qentry *e = find(q, key, idx), *over = NULL;
    if (e && total(e) >= q->budget)
        over = e;
    else if (!e)
        e = add(q, key, idx, &over);
    if (over) {
        if (retry_after_s) {
            uint64_t ms = wait_ms(q, over, idx, now_ms);
            *retry_after_s = ms < 1000 ? 1 : (ms + 999) / 1000;
        }
        v = QUOTA_OVER;
        goto out;
    }
    if (!e) /* out of memory, nothing to take over: served, not counted */
        goto out;
    e->slot[idx % QUOTA_SLOTS] += bytes;
    memcpy(rc->key, key, QUOTA_KEY_LEN);
    rc->slot = idx;
    rc->bytes = bytes;
    rc->generation = q->generation;
out:
    pthread_mutex_unlock(&q->lock);
    return v;
}

void quota_refund(struct quota *q, const struct quota_receipt *rc, uint64_t unused, uint64_t now_ms)
{
    if (!rc->bytes || !unused)
        return;
    if (unused > rc->bytes)
        unused = rc->bytes;
    pthread_mutex_lock(&q->lock);
    if (q->slot_ms && rc->generation == q->generation) {
        uint64_t idx = slot_index(q, now_ms);
        struct qentry *e = find(q, rc->key, idx);
        if (e && rc->slot + QUOTA_SLOTS > idx) { /* still in the window */
            uint64_t *s = &e->slot[rc->slot % QUOTA_SLOTS];
            *s -= unused < *s ? unused : *s;
        }
    }
    pthread_mutex_unlock(&q->lock);
}

uint64_t quota_used(struct quota *q, const unsigned char key[QUOTA_KEY_LEN], uint64_t now_ms)
{
    uint64_t used = 0;
    pthread_mutex_lock(&q->lock);
    if (q->slot_ms) {
        struct qentry *e = find(q, key, slot_index(q, now_ms));
        used = e ? total(e) : 0;
    }
    pthread_mutex_unlock(&q->lock);
    return used;
}

size_t quota_addresses(struct quota *q)
{
    pthread_mutex_lock(&q->lock);
    size_t n = q->n;
    pthread_mutex_unlock(&q->lock);
    return n;
}

void quota_stats(struct quota *q, struct quota_stats *st)
{
    pthread_mutex_lock(&q->lock);
    st->entries = q->n;
    st->capacity = q->max;
    st->overflow = q->overflow;
    pthread_mutex_unlock(&q->lock);
}
