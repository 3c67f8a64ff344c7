/* deadline: the per-connection deadlines that an idle timer cannot give. libmicrohttpd's
 * connection timeout restarts on every byte, so a client trickling one header line every
 * few seconds holds its slot for ever (slowloris). This table tracks every open connection
 * in one of three phases and says which ones are past their deadline:
 *   HEADERS   from the accept, and again from the end of each response on a keep-alive
 *             connection, until the request's headers are complete: at most header_timeout;
 *   BODY      from the end of the headers to the end of the request body: at least
 *             body_min_rate bytes/s, averaged over windows of window_ms;
 *   RESPONSE  from the end of the body to the end of the response: no deadline here (a
 *             slow reader is libmicrohttpd's idle timeout's business).
 * Pure bookkeeping with the caller's clock (milliseconds); thread-safe: libmicrohttpd's
 * workers report progress, a watchdog thread calls deadline_scan. */
#ifndef DEBITD_DEADLINE_H
#define DEBITD_DEADLINE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

enum deadline_phase {
    DEADLINE_PHASE_HEADERS = 0,
    DEADLINE_PHASE_BODY,
    DEADLINE_PHASE_RESPONSE,
    DEADLINE_PHASE_EXPIRED, /* reported once by deadline_scan; waits for deadline_close */
};

enum deadline_reason {
    DEADLINE_HEADER_TIMEOUT = 0, /* headers not complete within header_timeout */
    DEADLINE_BODY_RATE,          /* request body slower than body_min_rate */
};

/* One open connection. Owned by the table. The list links and the address are the table
 * lock's; phase, since_ms and window_bytes0 are the entry's own lock's (a worker moves its
 * connection's phase three times per request: under the table's lock the two workers slept
 * on each other, docs/performance.md); body_bytes the worker adds to without either. */
struct deadline_conn {
    pthread_mutex_t lock; /* the phase's; taken inside the table's lock, never around it */
    struct deadline_conn *prev, *next;
    int fd;
    struct sockaddr_storage addr; /* the peer, for the refusal log */
    socklen_t addrlen;
    enum deadline_phase phase;
    int64_t since_ms;          /* start of the phase (HEADERS) or of the rate window (BODY) */
    uint64_t window_bytes0;    /* body_bytes when the rate window started */
    _Atomic uint64_t body_bytes;
};

struct deadlines {
    pthread_mutex_t lock;
    struct deadline_conn *head; /* open connections */
    struct deadline_conn *free; /* unused entries of slots (singly linked by next) */
    struct deadline_conn *slots; /* every entry, allocated once */
    size_t capacity;
    size_t n;
    int64_t header_timeout_ms; /* 0 = no header deadline */
    uint64_t body_min_rate;    /* bytes/s; 0 = no body rate floor */
    int64_t window_ms;         /* rate window (> 0) */
};

/* The rate window of limits.body_min_rate: long enough that a pause (a TCP loss, a
 * scheduler hiccup) does not cut an honest upload, short enough to free a slot soon. */
#define DEADLINE_BODY_WINDOW_MS 10000

/* Prepare an empty table for up to CAPACITY connections. The entries are allocated once,
 * in one block whose pages are touched only as connections use them: a malloc per
 * connection, interleaved with libmicrohttpd's per-connection pools, fragments the heap
 * and made debitd's RSS grow with every wave of short-lived connections. An action: 0, or
 * -1 (memory, mutex) with err. */
int deadlines_init(struct deadlines *d, size_t capacity, int64_t header_timeout_ms, uint64_t body_min_rate,
                   int64_t window_ms, char *err, size_t errlen);
/* New limits (a reload): taken at the next scan, for the connections already open too. */
void deadlines_set_limits(struct deadlines *d, int64_t header_timeout_ms, uint64_t body_min_rate);
/* Free the entries and the lock. */
void deadlines_destroy(struct deadlines *d);

/* A connection was accepted at NOW on socket FD from ADDR: it enters HEADERS. Returns the
 * entry (the caller keeps it until deadline_close), or NULL when the table is full (the
 * connection is then simply not watched). */
struct deadline_conn *deadline_open(struct deadlines *d, int fd, const struct sockaddr *addr, socklen_t addrlen,
                                    int64_t now_ms);
/* The request's headers are complete: BODY, whose first rate window starts at NOW. */
void deadline_headers_done(struct deadlines *d, struct deadline_conn *c, int64_t now_ms);
/* N more body bytes arrived (no lock: called for every chunk of an upload). */
void deadline_body(struct deadline_conn *c, uint64_t n);
/* The body is complete (or there was none): RESPONSE. */
void deadline_body_done(struct deadlines *d, struct deadline_conn *c);
/* The response is sent; a keep-alive connection waits for its next request's headers,
 * with a fresh header deadline from NOW. */
void deadline_request_done(struct deadlines *d, struct deadline_conn *c, int64_t now_ms);
/* The connection is closed: C goes back to the unused entries. NULL is fine. */
void deadline_close(struct deadlines *d, struct deadline_conn *c);

/* Report each connection past its deadline at NOW to EXPIRE, once, with the table's lock
 * held: C's socket is still open until deadline_close (which takes the same lock), so
 * EXPIRE may shut it down without racing with its close and the reuse of its number.
 * EXPIRE must not call back into the table. Returns how many expired. */
size_t deadline_scan(struct deadlines *d, int64_t now_ms,
                     void (*expire)(void *arg, struct deadline_conn *c, enum deadline_reason why), void *arg);

/* Connections in the table (for tests and /status). */
size_t deadline_count(struct deadlines *d);

#endif
