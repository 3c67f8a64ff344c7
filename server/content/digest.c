/* digest: see digest.h. */
#include "digest.h"

#include <errno.h>
#include <openssl/evp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "content.h"
#include "err.h"
#include "sys.h"

/* One chunk per EVP_DigestUpdate: small enough that a stop is seen within a few ms (SHA-256
 * runs at about 1 GiB/s here), large enough that the checks between chunks cost nothing. */
#define CHUNK (8u << 20)
/* How often waiters' sockets are checked for a hang-up while a hash runs. */
#define HANGUP_CHECK_MS 100

enum entry_state { ENTRY_IDLE, ENTRY_QUEUED, ENTRY_COMPUTING, ENTRY_DONE };

struct entry {
    uint64_t size;
    enum entry_state state;
    char hex[65];
    struct digest_waiter *waiters; /* parked, waiting for this size */
};

struct digest {
    const struct content *content; /* NULL: an empty region */
    uint64_t region;
    unsigned char *scratch; /* CHUNK bytes, the thread's, while the region is being generated */
    struct entry *entries;
    size_t n;
    pthread_mutex_t lock;
    pthread_cond_t cond; /* work queued, or stop */
    pthread_t thread;
    int started;
    int stopped;        /* under lock: no new waiters */
    atomic_int cancel;  /* read by the hashing loop without the lock */
    unsigned computations;
    EVP_MD_CTX *ctx; /* the thread's, allocated up front */
};

static struct entry *find(struct digest *d, uint64_t size)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->entries[i].size == size)
            return &d->entries[i];
    return NULL;
}

/* Call wake() on every waiter of the detached list W (outside the lock: a wake may free it). */
static void wake_all(struct digest_waiter *w)
{
    while (w) {
        struct digest_waiter *next = w->next;
        w->wake(w);
        w = next;
    }
}

/* Give every waiter of LIST outcome O (and hex/err), prepending them to *OUT. */
static void settle(struct digest_waiter *list, enum digest_outcome o, const char *hex, const char *err,
                   struct digest_waiter **out)
{
    while (list) {
        struct digest_waiter *next = list->next;
        list->outcome = o;
        if (hex)
            memcpy(list->hex, hex, 65);
        if (err)
            snprintf(list->err, sizeof list->err, "%s", err);
        list->next = *out;
        *out = list;
        list = next;
    }
}

static int peer_gone(int fd)
{
    if (fd < 0)
        return 0;
    /* A FIN (RDHUP) counts as gone, as nginx does for HTTP/1: a client that half-closes
     * after its request and still waits for the answer is rare, and a slot held by one that
     * left is a slot taken from everyone for up to the length of the hash. */
    struct pollfd p = {.fd = fd, .events = POLLRDHUP};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL));
}

/* Wake the waiters (of any size) whose socket hung up. Hashing thread only: it is the only
 * one that removes waiters, so their fds stay valid while it looks. */
static void reap_gone(struct digest *d)
{
    struct digest_waiter *gone = NULL;
    pthread_mutex_lock(&d->lock);
    for (size_t i = 0; i < d->n; i++) {
        struct digest_waiter **pp = &d->entries[i].waiters;
        while (*pp) {
            struct digest_waiter *w = *pp;
            if (!peer_gone(w->fd)) {
                pp = &w->next;
                continue;
            }
            *pp = w->next;
            w->outcome = DIGEST_GONE;
            w->next = gone;
            gone = w;
        }
    }
    pthread_mutex_unlock(&d->lock);
    wake_all(gone);
}

/* Hash the first SIZE bytes of the repeated region. 1 done, 0 cancelled, -1 failed (err). */
static int hash_size(struct digest *d, uint64_t size, char hex[65], char *err, size_t errlen)
{
    if (EVP_DigestInit_ex(d->ctx, EVP_sha256(), NULL) != 1)
        return err_set(err, errlen, "SHA-256: EVP_DigestInit_ex failed (out of memory?)");
    if (size > 0 && d->region == 0)
        return err_set(err, errlen, "SHA-256 of %llu bytes of an empty region", (unsigned long long)size);
    int64_t next_check = sys_mono_ms() + HANGUP_CHECK_MS;
    for (uint64_t done = 0; done < size;) {
        if (atomic_load(&d->cancel))
            return 0;
        uint64_t off = done % d->region;
        uint64_t n = d->region - off;
        if (n > size - done)
            n = size - done;
        if (n > CHUNK)
            n = CHUNK;
        /* before the region is complete, the same bytes from the generator */
        const unsigned char *map = content_map(d->content);
        const unsigned char *p = map ? map + off : NULL;
        if (!p) {
            if (!d->scratch && !(d->scratch = malloc(CHUNK)))
                return err_set(err, errlen, "SHA-256: out of memory");
            content_copy(d->content, off, d->scratch, (size_t)n);
            p = d->scratch;
        }
        if (EVP_DigestUpdate(d->ctx, p, (size_t)n) != 1)
            return err_set(err, errlen, "SHA-256: EVP_DigestUpdate failed");
        done += n;
        if (sys_mono_ms() >= next_check) {
            reap_gone(d);
            next_check = sys_mono_ms() + HANGUP_CHECK_MS;
        }
    }
    unsigned char md[32];
    unsigned int mdlen = 0;
    if (EVP_DigestFinal_ex(d->ctx, md, &mdlen) != 1 || mdlen != 32)
        return err_set(err, errlen, "SHA-256: EVP_DigestFinal_ex failed");
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", md[i]);
    return 1;
}

/* The queued entry to hash next: the smallest. Each size is hashed once, so the big ones
 * cannot starve, and a small file's digest never waits behind a 10 GiB one. */
static struct entry *next_job(struct digest *d)
{
    struct entry *best = NULL;
    for (size_t i = 0; i < d->n; i++)
        if (d->entries[i].state == ENTRY_QUEUED && (!best || d->entries[i].size < best->size))
            best = &d->entries[i];
    return best;
}

static void *digest_main(void *arg)
{
    struct digest *d = arg;
    pthread_mutex_lock(&d->lock);
    for (;;) {
        struct entry *e = NULL;
        while (!d->stopped && !(e = next_job(d)))
            pthread_cond_wait(&d->cond, &d->lock);
        if (d->stopped)
            break;
        e->state = ENTRY_COMPUTING;
        uint64_t size = e->size;
        pthread_mutex_unlock(&d->lock);

        char hex[65], err[128] = "";
        int r = hash_size(d, size, hex, err, sizeof err);

        struct digest_waiter *woken = NULL;
        pthread_mutex_lock(&d->lock);
        if (r == 1) {
            e->state = ENTRY_DONE;
            memcpy(e->hex, hex, 65);
            d->computations++;
            settle(e->waiters, DIGEST_READY, hex, NULL, &woken);
            e->waiters = NULL;
        } else if (r < 0) {
            e->state = ENTRY_IDLE; /* the next request tries again */
            settle(e->waiters, DIGEST_FAILED, NULL, err, &woken);
            e->waiters = NULL;
        } else {
            e->state = ENTRY_IDLE; /* cancelled: digest_stop set stopped too */
        }
        pthread_mutex_unlock(&d->lock);
        wake_all(woken);
        pthread_mutex_lock(&d->lock);
    }
    struct digest_waiter *woken = NULL;
    for (size_t i = 0; i < d->n; i++) {
        settle(d->entries[i].waiters, DIGEST_STOPPED, NULL, "the server is stopping", &woken);
        d->entries[i].waiters = NULL;
    }
    pthread_mutex_unlock(&d->lock);
    wake_all(woken);
    return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

struct digest *digest_new(const struct content *content, const uint64_t *sizes, size_t n,
                          char *err, size_t errlen)
{
    struct digest *d = calloc(1, sizeof *d);
    if (!d || !(d->entries = calloc(n ? n : 1, sizeof *d->entries))) {
        free(d);
        err_set(err, errlen, "out of memory");
        return NULL;
    }
    d->content = content;
    d->region = content ? content_region_size(content) : 0;
    pthread_mutex_init(&d->lock, NULL);
    pthread_cond_init(&d->cond, NULL);
    uint64_t *sorted = malloc((n ? n : 1) * sizeof *sorted);
    d->ctx = EVP_MD_CTX_new();
    if (!sorted || !d->ctx) {
        free(sorted);
        err_set(err, errlen, "out of memory");
        goto fail;
    }
    if (n)
        memcpy(sorted, sizes, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, cmp_u64);
    for (size_t i = 0; i < n; i++)
        if (d->n == 0 || d->entries[d->n - 1].size != sorted[i])
            d->entries[d->n++] = (struct entry){.size = sorted[i], .state = ENTRY_IDLE};
    free(sorted);
    if (!EVP_sha256()) {
        err_set(err, errlen, "SHA-256 unavailable in libcrypto");
        goto fail;
    }
    int e = pthread_create(&d->thread, NULL, digest_main, d);
    if (e) {
        err_set(err, errlen, "starting the SHA-256 thread: %s", strerror(e));
        goto fail;
    }
    d->started = 1;
    return d;
fail:
    digest_free(d);
    return NULL;
}

enum digest_outcome digest_request(struct digest *d, uint64_t size, struct digest_waiter *w)
{
    enum digest_outcome o;
    pthread_mutex_lock(&d->lock);
    struct entry *e = find(d, size);
    if (!e) {
        o = DIGEST_UNKNOWN;
    } else if (e->state == ENTRY_DONE) {
        memcpy(w->hex, e->hex, 65);
        o = DIGEST_READY;
    } else if (d->stopped) {
        o = DIGEST_STOPPED;
    } else {
        if (e->state == ENTRY_IDLE) {
            e->state = ENTRY_QUEUED;
            pthread_cond_signal(&d->cond);
        }
        /* parked before it is visible: the hashing thread can only wake a parked waiter
         * (libmicrohttpd must not see a resume before its suspend) */
        w->park(w);
        w->next = e->waiters;
        e->waiters = w;
        o = DIGEST_PENDING;
    }
    w->outcome = o;
    pthread_mutex_unlock(&d->lock);
    return o;
}

int digest_cached(struct digest *d, uint64_t size, char hex[65])
{
    int found = 0;
    pthread_mutex_lock(&d->lock);
    struct entry *e = find(d, size);
    if (e && e->state == ENTRY_DONE) {
        memcpy(hex, e->hex, 65);
        found = 1;
    }
    pthread_mutex_unlock(&d->lock);
    return found;
}

unsigned digest_computations(struct digest *d)
{
    pthread_mutex_lock(&d->lock);
    unsigned n = d->computations;
    pthread_mutex_unlock(&d->lock);
    return n;
}

void digest_stop(struct digest *d)
{
    if (!d)
        return;
    pthread_mutex_lock(&d->lock);
    d->stopped = 1;
    atomic_store(&d->cancel, 1);
    pthread_cond_broadcast(&d->cond);
    pthread_mutex_unlock(&d->lock);
    if (d->started) {
        pthread_join(d->thread, NULL); /* it wakes every waiter before it ends */
        d->started = 0;
    }
}

void digest_free(struct digest *d)
{
    if (!d)
        return;
    digest_stop(d);
    pthread_mutex_destroy(&d->lock);
    pthread_cond_destroy(&d->cond);
    EVP_MD_CTX_free(d->ctx);
    free(d->scratch);
    free(d->entries);
    free(d);
}
