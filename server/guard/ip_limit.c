/* ip_limit: see ip_limit.h. */
#include "ip_limit.h"

#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "err.h"

#define IP_LIMIT_MIN_BUCKETS 64u
#define IP_LIMIT_MAX_BUCKETS (1u << 16)

struct entry {
    struct entry *next;
    unsigned char key[16]; /* IPv6 address; IPv4 as ::ffff:a.b.c.d */
    unsigned n;            /* open connections, > 0 */
};

struct ip_limit {
    pthread_mutex_t lock;
    _Atomic unsigned limit; /* read without the lock: 0 skips it */
    uint64_t seed;
    size_t mask; /* buckets - 1 (a power of two) */
    _Atomic size_t n_addrs; /* written under the lock */
    struct entry **buckets;
};

struct ip_limit *ip_limit_new(unsigned limit, size_t expected, char *err, size_t errlen)
{
    struct ip_limit *t = calloc(1, sizeof *t);
    if (!t) {
        err_set(err, errlen, "per_ip table: out of memory");
        return NULL;
    }
    t->limit = limit;
    size_t nb = IP_LIMIT_MIN_BUCKETS;
    while (nb < expected && nb < IP_LIMIT_MAX_BUCKETS)
        nb <<= 1;
    t->mask = nb - 1;
    /* the seed need not be secret for long, only unknown to peers: a short read or an
     * error leaves a fixed part, still a working table */
    if (getrandom(&t->seed, sizeof t->seed, GRND_NONBLOCK) != (ssize_t)sizeof t->seed)
        t->seed ^= (uint64_t)(uintptr_t)t * 0x9e3779b97f4a7c15ull;
    t->buckets = calloc(nb, sizeof *t->buckets);
    int e = t->buckets ? pthread_mutex_init(&t->lock, NULL) : ENOMEM;
    if (e) {
        free(t->buckets);
        free(t);
        err_set(err, errlen, "per_ip table: %s", strerror(e));
        return NULL;
    }
    return t;
}

void ip_limit_free(struct ip_limit *t)
{
    if (!t)
        return;
    for (size_t i = 0; i <= t->mask; i++)
        for (struct entry *e = t->buckets[i], *next; e; e = next) {
            next = e->next;
            free(e);
        }
    free(t->buckets);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

/* SA's address as 16 bytes, IPv4 (and IPv4-mapped) as ::ffff:a.b.c.d. 0 for another family. */
static int key_of(const struct sockaddr *sa, socklen_t len, unsigned char key[16])
{
    if (!sa)
        return 0;
    if (sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        memcpy(key, mapped, sizeof mapped);
        memcpy(key + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
        return 1;
    }
    if (sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
        memcpy(key, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
        return 1;
    }
    return 0;
}

/* A keyed mix (splitmix64's finaliser over both halves): cheap, and without the seed a peer
 * cannot predict the bucket of an address. */
static size_t bucket_of(const struct ip_limit *t, const unsigned char key[16])
{
    uint64_t a, b;
    memcpy(&a, key, 8);
    memcpy(&b, key + 8, 8);
    uint64_t h = t->seed ^ a;
    for (int round = 0; round < 2; round++) {
        h ^= h >> 30;
        h *= 0xbf58476d1ce4e5b9ull;
        h ^= h >> 27;
        h *= 0x94d049bb133111ebull;
        h ^= h >> 31;
        h ^= b;
    }
    h *= 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 32) & t->mask;
}

/* The entry of KEY in its bucket and the link that points to it (locked). */
static struct entry **find(struct ip_limit *t, const unsigned char key[16])
{
    struct entry **p = &t->buckets[bucket_of(t, key)];
    while (*p && memcmp((*p)->key, key, 16) != 0)
        p = &(*p)->next;
    return p;
}

int ip_limit_acquire(struct ip_limit *t, const struct sockaddr *sa, socklen_t len)
{
    unsigned char key[16];
    if (!t->limit || !key_of(sa, len, key))
        return 1;
    int r = 1;
    pthread_mutex_lock(&t->lock);
    struct entry **p = find(t, key);
    if (*p) {
        if ((*p)->n >= t->limit)
            r = 0;
        else
            (*p)->n++;
    } else {
        struct entry *e = malloc(sizeof *e);
        if (!e) {
            r = -1;
        } else {
            memcpy(e->key, key, 16);
            e->n = 1;
            e->next = NULL;
            *p = e;
            t->n_addrs++;
        }
    }
    pthread_mutex_unlock(&t->lock);
    return r;
}

void ip_limit_set_limit(struct ip_limit *t, unsigned limit)
{
    t->limit = limit;
}

void ip_limit_release(struct ip_limit *t, const struct sockaddr *sa, socklen_t len)
{
    unsigned char key[16];
    /* counted connections outlive a change of the limit to 0: release them all the same */
    if ((!t->limit && !t->n_addrs) || !key_of(sa, len, key))
        return;
    pthread_mutex_lock(&t->lock);
    struct entry **p = find(t, key);
    struct entry *e = *p;
    if (e && --e->n == 0) {
        *p = e->next;
        free(e);
        t->n_addrs--;
    }
    pthread_mutex_unlock(&t->lock);
}

unsigned ip_limit_count(struct ip_limit *t, const struct sockaddr *sa, socklen_t len)
{
    unsigned char key[16];
    if (!key_of(sa, len, key))
        return 0;
    pthread_mutex_lock(&t->lock);
    struct entry *e = *find(t, key);
    unsigned n = e ? e->n : 0;
    pthread_mutex_unlock(&t->lock);
    return n;
}

size_t ip_limit_addresses(struct ip_limit *t)
{
    pthread_mutex_lock(&t->lock);
    size_t n = t->n_addrs;
    pthread_mutex_unlock(&t->lock);
    return n;
}
