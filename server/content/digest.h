/* digest: the SHA-256 of every configured file size, computed off the request threads.
 *
 * One hashing thread per server works through the sizes asked for, smallest first, each
 * once: the result is cached for the life of the server. A request thread that asks for a
 * digest not known yet does not wait: it registers a waiter (a struct it owns, typically
 * inside its request context), whose park() runs before the waiter becomes visible to the
 * hashing thread (debitd suspends the libmicrohttpd connection there) and whose wake() runs
 * exactly once, from the hashing thread or digest_stop, when the outcome is known (debitd
 * resumes the connection there). Every waiter of one size shares one computation.
 *
 * While hashing, the thread looks at every waiter's socket about every 100 ms and wakes the
 * ones whose peer has gone (DIGEST_GONE), so that a client that left does not hold its
 * connection slot until the hash ends; the hash itself goes on (the next client wants it).
 * digest_stop cancels a running hash within one chunk (8 MiB, a few ms) and wakes every
 * waiter with DIGEST_STOPPED. All memory is allocated by digest_new: asking for a digest
 * never allocates. Knows nothing of HTTP: unit-tested with plain callbacks. */
#ifndef DEBITD_DIGEST_H
#define DEBITD_DIGEST_H

#include <stddef.h>
#include <stdint.h>

struct content;

struct digest;

enum digest_outcome {
    DIGEST_READY = 0, /* hex holds the digest */
    DIGEST_PENDING,   /* (digest_request only) parked: wake() will follow */
    DIGEST_FAILED,    /* (wake only) the computation failed: err says why; a new request retries */
    DIGEST_GONE,      /* (wake only) the waiter's socket hung up while it waited */
    DIGEST_STOPPED,   /* the server is stopping: no digest will come */
    DIGEST_UNKNOWN,   /* (digest_request only) not a size given to digest_new */
};

struct digest_waiter {
    /* set by the caller before digest_request */
    int fd;                                 /* socket watched for a hang-up; -1: none */
    void (*park)(struct digest_waiter *w);  /* under digest's lock; must not call digest_* */
    void (*wake)(struct digest_waiter *w);  /* outside the lock; the last use of w by digest */
    void *arg;                              /* the caller's */
    /* set by digest before wake (or before digest_request returns DIGEST_READY) */
    enum digest_outcome outcome;
    char hex[65];
    char err[128];
    /* digest's own */
    struct digest_waiter *next;
};

/* Start the hashing thread for CONTENT's region (NULL: an empty one; a size beyond it
 * repeats it, like content.h's files) and the N sizes in SIZES (duplicates are fine); a hash
 * asked while the region is still generated reads the generator's bytes (content_copy).
 * Returns NULL with err (out of memory, no thread, no SHA-256 in libcrypto). Owned by the
 * caller (digest_free); CONTENT must outlive it. */
struct digest *digest_new(const struct content *content, const uint64_t *sizes, size_t n,
                          char *err, size_t errlen);

/* The digest of SIZE for waiter W (fd, park, wake, arg set): DIGEST_READY with W->hex filled
 * at once when it is known (park not called); DIGEST_PENDING after park(W) when it is being
 * or will be computed; DIGEST_STOPPED after digest_stop; DIGEST_UNKNOWN for a size not given
 * to digest_new. W must stay valid until wake(W) has been called. */
enum digest_outcome digest_request(struct digest *d, uint64_t size, struct digest_waiter *w);

/* The cached digest of SIZE: 1 and hex filled, 0 when it is not computed (yet). */
int digest_cached(struct digest *d, uint64_t size, char hex[65]);

/* Hashes finished since digest_new (each size counts once unless it failed and was redone). */
unsigned digest_computations(struct digest *d);

/* Cancel the running hash, wake every waiter with DIGEST_STOPPED and join the thread; later
 * requests get DIGEST_STOPPED. Returns when no wake() is running or will run. Idempotent. */
void digest_stop(struct digest *d);

/* digest_stop, then release everything. NULL is fine. */
void digest_free(struct digest *d);

#endif
