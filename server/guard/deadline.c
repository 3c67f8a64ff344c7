/* deadline: see deadline.h. */
#include "deadline.h"

#include <stdlib.h>
#include <string.h>

#include "err.h"

int deadlines_init(struct deadlines *d, size_t capacity, int64_t header_timeout_ms, uint64_t body_min_rate,
                   int64_t window_ms, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    d->slots = calloc(capacity ? capacity : 1, sizeof *d->slots);
    if (!d->slots)
        return err_set(err, errlen, "deadlines: no memory for %zu connections", capacity);
    d->capacity = capacity;
    for (size_t i = capacity; i-- > 0;) {
        pthread_mutex_init(&d->slots[i].lock, NULL);
        d->slots[i].next = d->free;
        d->free = &d->slots[i];
    }
    d->header_timeout_ms = header_timeout_ms;
    d->body_min_rate = body_min_rate;
    d->window_ms = window_ms > 0 ? window_ms : DEADLINE_BODY_WINDOW_MS;
    int e = pthread_mutex_init(&d->lock, NULL);
    if (e) {
        free(d->slots);
        d->slots = NULL;
        return err_set(err, errlen, "deadlines: mutex: %s", strerror(e));
    }
    return 0;
}

void deadlines_destroy(struct deadlines *d)
{
    for (size_t i = 0; d->slots && i < d->capacity; i++)
        pthread_mutex_destroy(&d->slots[i].lock);
    free(d->slots);
    d->slots = d->head = d->free = NULL;
    d->n = 0;
    pthread_mutex_destroy(&d->lock);
}

struct deadline_conn *deadline_open(struct deadlines *d, int fd, const struct sockaddr *addr, socklen_t addrlen,
                                    int64_t now_ms)
{
    pthread_mutex_lock(&d->lock);
    struct deadline_conn *c = d->free;
    if (!c) {
        pthread_mutex_unlock(&d->lock);
        return NULL;
    }
    d->free = c->next;
    /* a free entry is nobody's: neither a worker nor the scan (which walks open ones only)
     * holds its lock, so it may be cleared and its lock made anew */
    memset(c, 0, sizeof *c);
    pthread_mutex_init(&c->lock, NULL);
    c->fd = fd;
    if (addr && addrlen <= sizeof c->addr) {
        memcpy(&c->addr, addr, addrlen);
        c->addrlen = addrlen;
    }
    c->phase = DEADLINE_PHASE_HEADERS;
    c->since_ms = now_ms;
    c->next = d->head;
    if (d->head)
        d->head->prev = c;
    d->head = c;
    d->n++;
    pthread_mutex_unlock(&d->lock);
    return c;
}

/* Move C to PHASE from NOW, unless the watchdog already gave up on it. */
static void set_phase(struct deadlines *d, struct deadline_conn *c, enum deadline_phase phase, int64_t now_ms)
{
    (void)d;
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    if (c->phase != DEADLINE_PHASE_EXPIRED) {
        c->phase = phase;
        c->since_ms = now_ms;
        c->window_bytes0 = atomic_load(&c->body_bytes);
    }
    pthread_mutex_unlock(&c->lock);
}

void deadline_headers_done(struct deadlines *d, struct deadline_conn *c, int64_t now_ms)
{
    set_phase(d, c, DEADLINE_PHASE_BODY, now_ms);
}

void deadline_body(struct deadline_conn *c, uint64_t n)
{
    if (c)
        atomic_fetch_add(&c->body_bytes, n);
}

void deadline_body_done(struct deadlines *d, struct deadline_conn *c)
{
    set_phase(d, c, DEADLINE_PHASE_RESPONSE, 0); /* no deadline: its start is unused */
}

void deadline_request_done(struct deadlines *d, struct deadline_conn *c, int64_t now_ms)
{
    set_phase(d, c, DEADLINE_PHASE_HEADERS, now_ms);
}

void deadline_close(struct deadlines *d, struct deadline_conn *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&d->lock);
    if (c->prev)
        c->prev->next = c->next;
    else
        d->head = c->next;
    if (c->next)
        c->next->prev = c->prev;
    d->n--;
    c->prev = NULL;
    c->next = d->free;
    d->free = c;
    pthread_mutex_unlock(&d->lock);
}

/* Is C past a deadline at NOW? Advances the rate window of a body that kept up. */
static int expired(struct deadlines *d, struct deadline_conn *c, int64_t now_ms, enum deadline_reason *why)
{
    int64_t age = now_ms - c->since_ms;
    if (c->phase == DEADLINE_PHASE_HEADERS) {
        *why = DEADLINE_HEADER_TIMEOUT;
        return d->header_timeout_ms > 0 && age >= d->header_timeout_ms;
    }
    if (c->phase != DEADLINE_PHASE_BODY || !d->body_min_rate || age < d->window_ms)
        return 0;
    uint64_t got = atomic_load(&c->body_bytes) - c->window_bytes0;
    *why = DEADLINE_BODY_RATE;
    /* got / (age / 1000) < rate, without dividing */
    if (got * 1000 < d->body_min_rate * (uint64_t)age)
        return 1;
    c->since_ms = now_ms;
    c->window_bytes0 += got;
    return 0;
}

void deadlines_set_limits(struct deadlines *d, int64_t header_timeout_ms, uint64_t body_min_rate)
{
    pthread_mutex_lock(&d->lock); /* deadline_scan reads them under it */
    d->header_timeout_ms = header_timeout_ms;
    d->body_min_rate = body_min_rate;
    pthread_mutex_unlock(&d->lock);
}

size_t deadline_scan(struct deadlines *d, int64_t now_ms,
                     void (*expire)(void *arg, struct deadline_conn *c, enum deadline_reason why), void *arg)
{
    size_t n = 0;
    pthread_mutex_lock(&d->lock);
    for (struct deadline_conn *c = d->head; c; c = c->next) {
        enum deadline_reason why;
        pthread_mutex_lock(&c->lock);
        int now_expired = c->phase != DEADLINE_PHASE_EXPIRED && expired(d, c, now_ms, &why);
        if (now_expired)
            c->phase = DEADLINE_PHASE_EXPIRED;
        pthread_mutex_unlock(&c->lock);
        if (!now_expired)
            continue;
        expire(arg, c, why); /* still under the table's lock: the socket stays open */
        n++;
    }
    pthread_mutex_unlock(&d->lock);
    return n;
}

size_t deadline_count(struct deadlines *d)
{
    pthread_mutex_lock(&d->lock);
    size_t n = d->n;
    pthread_mutex_unlock(&d->lock);
    return n;
}
