/* refusal_log: what debitd refuses or cuts, logged as one summary line per interval, never
 * a line per connection: an attacker who opens thousands of connections must not be able
 * to flood the log (nor the disk behind it). Counts by reason, and by address the top few,
 * each with its reasons (refusals at limits.connections, which libmicrohttpd makes before
 * debitd sees the peer, are counted without an address):
 *   refused or closed in the last 10.0 s: header_timeout 1200, limit 800; top addresses:
 *   127.0.0.26 900 (header_timeout 100, limit 800), 127.0.0.2 100 (header_timeout 100),
 *   ... (+7 addresses, 700)
 * Other warning lines a client can cause once per connection (libmicrohttpd's "Application
 * reported internal error", a failed dup() at EMFILE) go through the same limit: the first
 * REFUSAL_LOG_LINES of an interval are written as they come, the rest only counted, and the
 * interval's summary line ends "; 19992 more warning lines not written (the last: ...)". */
#ifndef DEBITD_REFUSAL_LOG_H
#define DEBITD_REFUSAL_LOG_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/socket.h>

enum refusal_reason {
    REFUSAL_HEADER_TIMEOUT = 0, /* closed: headers not complete within limits.header_timeout */
    REFUSAL_BODY_RATE,          /* closed: request body below limits.body_min_rate */
    REFUSAL_LIMIT,              /* refused at accept: limits.per_ip (debitd, with the address)
                                   or limits.connections (libmicrohttpd, without) */
    REFUSAL_INCOMPLETE,         /* libmicrohttpd: the connection ended mid-request */
    REFUSAL_TLS,                /* libmicrohttpd: a TLS handshake failed (plain HTTP or a scanner
                                   on an HTTPS port, no common version or cipher) */
    REFUSAL_MALFORMED,          /* libmicrohttpd answered a malformed request itself (400, 413,
                                   414, 431, 505): any client can send one per connection */
    REFUSAL_N
};

#define REFUSAL_LOG_ADDRS 64 /* distinct addresses counted per interval; the rest are "others" */
#define REFUSAL_LOG_TOP 5    /* addresses named in a summary line */
#define REFUSAL_LOG_LINES 8  /* warning lines written as they come per interval */

struct refusal_log {
    pthread_mutex_t lock;
    int64_t interval_ms;
    int64_t start_ms; /* start of the current interval */
    uint64_t count[REFUSAL_N];
    struct {
        char addr[INET6_ADDRSTRLEN];
        uint64_t n;             /* all reasons */
        uint64_t by[REFUSAL_N]; /* by reason */
    } addrs[REFUSAL_LOG_ADDRS];
    unsigned n_addrs;
    uint64_t others;                  /* events from addresses beyond the table */
    int64_t lines_start_ms;           /* start of the warning lines' interval */
    unsigned lines;                   /* written in it */
    uint64_t lines_dropped;           /* not written since the last summary */
    char last_dropped[160];           /* the last of them */
    _Atomic uint64_t total[REFUSAL_N]; /* since start, never reset */
};

/* An empty log whose first interval starts at NOW. An action: 0, or -1 with err. */
int refusal_log_init(struct refusal_log *rl, int64_t interval_ms, int64_t now_ms, char *err, size_t errlen);
void refusal_log_destroy(struct refusal_log *rl);

/* Count one event of REASON from ADDR (text; NULL or "" = unknown). Thread-safe. */
void refusal_log_note(struct refusal_log *rl, enum refusal_reason reason, const char *addr);

/* Whether a warning line MSG, which a client can cause once per connection, may be written
 * at NOW: 1 for the first REFUSAL_LOG_LINES of each interval, else 0 and it is counted (MSG
 * kept as the last) for the next summary line. Thread-safe. */
int refusal_log_line(struct refusal_log *rl, int64_t now_ms, const char *msg);

/* When the interval that started at the last flush is over at NOW (or FORCE) and anything
 * was counted, write its summary line (no newline) into BUF and start a new interval.
 * A lookup: 1 with a line, 0 without (nothing to say yet). */
int refusal_log_flush(struct refusal_log *rl, int64_t now_ms, int force, char *buf, size_t len);

/* Events of REASON since init. */
uint64_t refusal_log_total(struct refusal_log *rl, enum refusal_reason reason);

/* "header_timeout", "body_min_rate", "limit", "incomplete_request", "tls_handshake",
 * "malformed_request". */
const char *refusal_reason_name(enum refusal_reason reason);

/* The peer's address as text, an IPv4-mapped IPv6 address as IPv4 ("?" if unknown). */
void refusal_addr_format(const struct sockaddr *sa, socklen_t len, char *buf, size_t buflen);

#endif
