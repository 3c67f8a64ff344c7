/* download: one measured HTTP download with libcurl — a fresh TCP connection, HTTP/1.1,
 * the largest receive buffer libcurl allows, and a write callback that only counts bytes,
 * so the client is never the bottleneck. Everything is recorded in a run_result; a
 * failure (DNS, refused, 4xx/5xx, redirect loop, short body, server death, stall,
 * timeout) is data, never an error return. curl_global_init() is the caller's job. */
#ifndef DEBIT_DOWNLOAD_H
#define DEBIT_DOWNLOAD_H

#include <curl/curl.h>
#include <signal.h>
#include <stdint.h>

#include "result.h"

struct dl_options {
    int ip_version;              /* 0 any, 4, 6 */
    struct curl_slist *resolve;  /* --resolve HOST:PORT:ADDR entries (owned by the caller) */
    struct curl_slist *connect_to;
    const char *interface;       /* --interface DEV */
    const char *local_address;   /* --local-address ADDR */
    double connect_timeout_s;    /* 0: libcurl's default */
    double max_time_s;           /* 0: none; DL_DEFAULT_MAX_TIME_S by default */
    double stall_s;              /* 0: none */
    double stall_rate_Bps;       /* with stall_s: fail below this many bytes/s over stall_s; 0: only a full stop */
    uint64_t max_bytes;          /* 0: the whole file */
    const char *user_agent;
    long max_redirects;
    uint64_t rcvbuf;             /* 0: kernel autotuning (up to tcp_rmem[2]); else SO_RCVBUF(FORCE) */
};

/* Live figures handed to a progress hook, about every 200 ms during a download. */
struct dl_progress {
    uint64_t bytes;       /* body bytes so far */
    int64_t expected;     /* body size when known (Content-Length or --max-bytes), else -1 */
    double elapsed_s;     /* since the start of the download */
    double rate_mbps;     /* over the last ~second */
};

typedef void (*dl_progress_fn)(const struct dl_progress *p, void *ud);

struct dl_hooks {
    dl_progress_fn progress;        /* may be NULL */
    void *ud;
    volatile sig_atomic_t *stop;    /* when it becomes non-zero the download is aborted */
};

/* Download url once into r (identity fields are the caller's). Never fails: the outcome
 * is in r->ok / r->err / r->error. After a successful download from debitd (the response
 * carried X-Debit-Transfer) the server's record of it is fetched into r->server_record, or
 * the reason it could not be into r->server_record_error (server_record.h). */
void dl_perform(const char *url, const struct dl_options *o, const struct dl_hooks *h,
                struct run_result *r);

/* An unattended run never hangs on one download for ever: a hostile or broken server
 * can send an endless body, or trickle one just above any stall threshold. 10 min is
 * above what the usual test files take down to ~15 Mb/s (1 GiB); --max-time 0 lifts it. */
#define DL_DEFAULT_MAX_TIME_S 600.0
/* --stall's minimum rate by default (bytes/s): a server sending less than 1 kB/s over the
 * --stall window is as good as stalled for a throughput measurement. */
#define DL_DEFAULT_STALL_RATE_BPS 1000.0

/* Default options (max_time DL_DEFAULT_MAX_TIME_S, stall off with a minimum rate of
 * DL_DEFAULT_STALL_RATE_BPS once --stall is given, 20 redirects as wget). */
void dl_options_defaults(struct dl_options *o);

/* Set the user's network choices of o on handle h: User-Agent, -4/-6, --resolve,
 * --connect-to, --interface/--local-address, so that every request of a run (the download
 * and its /transfers/ lookup) takes the same route. iface is scratch space for the
 * interface option's text. Returns NULL, or the name of the first option this libcurl
 * refused. */
const char *dl_setopt_network(CURL *h, const struct dl_options *o, char *iface, size_t ifacelen);

#endif
