/* server: debitd's runtime state (content, listeners, counters, transfers) and its life
 * cycle: server_new generates the content, server_start binds every listener and starts one
 * libmicrohttpd daemon (thread pool + epoll; poll for TLS) per listener, server_stop stops
 * them. */
#ifndef DEBITD_SERVER_H
#define DEBITD_SERVER_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "content.h"
#include "counters.h"
#include "cpu_budget.h"
#include "quota.h"
#include "digest.h"
#include "reload.h"
#include "snapshot.h"
#include "acceptor.h"
#include "ip_limit.h"
#include "metrics.h"
#include "tls.h"
#include "telemetry.h"
#include "transfers.h"
#include "watchdog.h"

struct listener {
    struct server *srv;
    const struct listen_cfg *cfg;
    char name[64]; /* "[::]:8080", "127.0.0.1:8080" */
    int fd;        /* listening socket (owned; closed by server_stop) */
    struct MHD_Daemon *mhd;
    struct acceptor *acceptor; /* accepts on fd and hands each connection to mhd */
    struct ip_limit *per_ip; /* limits.per_ip: open connections per peer address */
    struct tls_listener *tls; /* listen[].tls: HTTPS (tls.h); NULL = plain HTTP */
    _Atomic unsigned tcp_warned;
    _Atomic unsigned nopush_warned; /* tcp_nopush could not cork a socket: said once */
    _Atomic uint64_t zero_copy_transfers, copy_transfers; /* file bodies by send path (/status) */
    _Atomic uint64_t nopush_responses; /* file bodies sent under tcp_nopush (/status) */
    /* small file responses built where a later request may send them again, and sent
     * again with a new transfer ID (/status response_reuse) */
    _Atomic uint64_t responses_built, responses_reused;
    uint64_t tcp_wmem_max; /* net.ipv4.tcp_wmem's max when the listener started; 0 unknown */
    uint64_t tcp_rmem_max; /* net.ipv4.tcp_rmem's max, the same */
};

/* A reload (reload.h) swaps snap (the configuration, content and digest in force), metrics,
 * access and every listener's cfg under swap_lock's write lock. libmicrohttpd's callbacks hold its read lock while they run
 * (server_read_lock), so that they see one configuration throughout; what outlives a
 * callback (a response over the region) holds a reference on snap. Other threads must not
 * read these fields: they get what they need at start or through a setter. */
struct server {
    pthread_rwlock_t swap_lock;
    /* the configuration in force (snap->cfg; the first is main's, not owned), its content
     * region and hashing thread (NULL until server_start makes them): read only through
     * snap, so that one pointer says which generation a callback sees */
    struct snapshot *snap;
    struct snapshot *retired; /* replaced snapshots not yet freed (main's: snapshot_reap) */
    struct reload_state reload;
    int backing_fd;        /* content_backing_open's file, opened by server_bind; -1 = memfd */
    uint64_t start_seed;   /* the start's seed and file count, for the content's own log line */
    size_t start_files;
    char backing_why[96];  /* why there is none */
    struct transfers *transfers;
    struct telemetry *telemetry; /* LibreSpeed's reported results (speedtest.telemetry) */
    /* when each file body's last byte was acknowledged (ack_watch.h), into transfers */
    struct ack_watch *acks;
    /* Per-address byte counters (limits.per_ip_bytes): the server's, not the
     * configuration's, so that a reload keeps them (it calls quota_set_limits). */
    struct quota *quota;
    /* speedtest.per_ip: speed tests under way per address (http_speedtest.c); the server's,
     * so that a reload keeps the counts (it calls ip_limit_set_limit) */
    struct ip_limit *speed_per_ip;
    struct listener *listeners;
    size_t n_listeners;
    unsigned threads; /* worker threads per listener, as started (set by server_start) */
    int bound;        /* server_bind has bound every listener */
    FILE *access; /* NULL = off */
    pthread_t sampler;     /* TCP_INFO of every sending transfer, every 100 ms */
    int sampler_wake;      /* eventfd that stops it; -1 when it is not running */
    struct watchdog *watchdog; /* header and body deadlines, refusal log */
    struct metrics *metrics;   /* GET /metrics: bytes per file and listener (a configuration's rows) */
    struct cpu_budget *cpu;    /* debitd's cgroup CPU budget (X-Debit-Cpu), refreshed by the sampler */
    char kernel[128];
    char last_modified[40]; /* HTTP-date of the start, used as every file's Last-Modified */
    double start_mono;
    double start_wall;
    struct counters counters; /* /status and /metrics: not a configuration's, a reload keeps them */
    _Atomic uint64_t in_flight;     /* downloads and uploads under way (what a graceful stop waits for) */
    _Atomic int draining;           /* server_quiesce was called: answers say Connection: close */
    /* ndt7 tests (server/http/http_ndt7*.c) run on threads of their own after the upgrade:
     * server_stop sets ndt7_stop and waits until ndt7_running is 0, before the daemons stop */
    struct ip_limit *ndt7_per_ip; /* ndt7.per_ip: tests under way per address */
    _Atomic unsigned ndt7_running;
    _Atomic int ndt7_stop;
};

/* Prepare (not start) the server. Returns NULL with err. The caller owns the result
 * (server_free); cfg must outlive it. */
struct server *server_new(struct config *cfg, char *err, size_t errlen);
/* How server_start ended: main maps CONFIG to exit 2 and RUNTIME to exit 1. */
enum server_start_err {
    SERVER_START_OK = 0,
    SERVER_START_CONFIG,  /* an address cannot be bound or served (libmicrohttpd refused
                             it), a TCP profile cannot be applied */
    SERVER_START_RUNTIME, /* the content cannot be generated */
};

/* Bind every listener (and probe its TCP profile) without starting any thread: what needs
 * privilege is done once this returns, so main drops it before server_start. Idempotent.
 * Returns SERVER_START_OK or SERVER_START_CONFIG with err. */
enum server_start_err server_bind(struct server *s, char *err, size_t errlen);
/* Starts one listener's HTTP daemon (the http layer's http_daemon_start: passed in, so that
 * this layer does not include the one above it). Returns 0, or -1 with err; l->mhd is NULL
 * when the daemon refused the listener's settings (a configuration error). */
typedef int server_listen_fn(struct listener *l, unsigned threads, char *err, size_t errlen);
/* Bind every listener (server_bind, unless done), generate the content, start serving
 * through LISTEN_FN. Returns SERVER_START_OK, or another value with err filled (the message
 * names the listener where there is one). */
enum server_start_err server_start(struct server *s, server_listen_fn *listen_fn, char *err, size_t errlen);
/* Stop accepting and close every connection (idempotent). */
void server_stop(struct server *s);
/* Stop, then release the content, transfers and access log. NULL is fine. */
void server_free(struct server *s);

/* Hold the configuration still for a libmicrohttpd callback (the read side of swap_lock). */
void server_read_lock(struct server *s);
void server_read_unlock(struct server *s);
/* The hashing thread for CFG's file sizes over CONTENT's region. NULL with err. */
struct digest *server_digest_new(const struct content *content, const struct config *cfg, char *err,
                                 size_t errlen);

/* Last-Modified of every file: now (at start, and when a reload makes a new region). */
void server_set_last_modified(struct server *s);

/* Seconds since start (monotonic). */
double server_uptime(const struct server *s);
/* Write one access-log line (newline-terminated, access_log_line's) with a single write;
 * NULL is ignored. */
void server_access_log(struct server *s, const char *line);
/* Reopen the access log file by name (SIGUSR1, after logrotate renamed it): the lines
 * that follow go to a new file of that name. A no-op when it is "-" or "off". Returns 0,
 * or -1 with err (the old file stays in use). */
int server_reopen_logs(struct server *s, char *err, size_t errlen);

#endif
