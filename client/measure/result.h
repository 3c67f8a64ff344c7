/* result: what one download recorded, and the growing set of a measurement's results.
 * A run_result owns every string, JSON object and array it points to. */
#ifndef DEBIT_RESULT_H
#define DEBIT_RESULT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "tcp_info.h"

/* The series' basis: the kernel's count on the socket (sock_bytes.h; rescaled to the
 * application's bytes) or, without it, the application's own reads/writes. */
#define RESULT_BASIS_RECEIVED "tcp_bytes_received"
#define RESULT_BASIS_ACKED "tcp_bytes_acked"
#define RESULT_BASIS_APP "app_bytes"

enum result_err {
    RESULT_OK = 0,
    RESULT_ERR_DNS,         /* name resolution failed */
    RESULT_ERR_CONNECT,     /* refused, unreachable, connect timeout */
    RESULT_ERR_HTTP,        /* 4xx/5xx status */
    RESULT_ERR_REDIRECT,    /* redirect loop / too many redirects */
    RESULT_ERR_SHORT_BODY,  /* body shorter than Content-Length (server closed or died) */
    RESULT_ERR_RECV,        /* connection reset or another receive error */
    RESULT_ERR_STALL,       /* nothing received for --stall seconds */
    RESULT_ERR_TIMEOUT,     /* --max-time reached */
    RESULT_ERR_INTERRUPTED, /* Ctrl-C during the download */
    RESULT_ERR_OTHER,
    RESULT_ERR_NOT_TEST_FILE, /* text/html or under --min-bytes: a wrong URL, not a result */
    RESULT_ERR_UPLOAD,      /* the server's own count of an upload differs from ours */
    RESULT_ERR_TLS,         /* TLS handshake or certificate verification failed */
};

/* Each kind's short stable name is the run's JSON "error_kind" ("dns", "connect", ...). */

struct run_result {
    /* Identity. */
    char *server;      /* label */
    char *url;
    char *effective_url; /* after redirects, when known */
    char *redirect_url;  /* a 3xx's Location not followed by libcurl (dl_perform's hops), or NULL */
    char *scenario;    /* scenario runner cell labels; NULL outside a scenario */
    char *variant;
    unsigned run;      /* 1-based run number for this server (within its cell) */
    unsigned seq;      /* 1-based position in the measurement's order */
    double started_at; /* wall clock, seconds since the epoch */

    /* Outcome. */
    int ok;
    enum result_err err;
    char *error;       /* human-readable reason, NULL when ok */
    long http_status;
    char *remote_ip;
    int max_bytes_reached; /* stopped on purpose after --max-bytes */
    int ranged;            /* answered a Range request with 206 */
    int upload;            /* "direction": "upload" (--upload), else "download" */
    unsigned parallel;     /* streams at once (1: one connection) */
    int split;             /* --split: each stream fetched 1/parallel by Range */
    int duration_reached;  /* stopped on purpose after --duration */
    int duration_short;    /* --duration given, but the file ended first: a shorter run */
    char *content_encoding; /* a Content-Encoding other than identity (the bytes counted are
                             * the encoded ones on the wire), else NULL */
    char *content_type;    /* of the final response (stream 1), or NULL */
    char tls_version[16];  /* of its connection ("TLS1.3"); "" over plain HTTP: JSON "tls": null */
    char tls_cipher[80];   /* cipher suite, IANA name ("TLS_AES_256_GCM_SHA384") */

    /* Sizes and times (seconds from the start of the download unless said otherwise). */
    uint64_t bytes;          /* body bytes received */
    int64_t content_length;  /* -1 when unknown */
    double connect_s, ttfb_s, total_s;
    double body_s;           /* end of response headers -> last byte (wget's window) */

    /* Throughput, Mb/s (10^6 bit/s). */
    double avg_mbps;         /* bytes * 8 / body_s: wget's, the default */
    double total_mbps;       /* bytes * 8 / total_s: curl's speed_download */
    double peak_mbps;
    double slow_start_s;     /* -1 when unknown */
    double series_interval_s;
    double *series;          /* Mb/s per interval (owned) */
    const char *series_basis; /* what the series counted (a RESULT_BASIS_*; NULL: no series) */
    size_t nseries;
    const char *figures_note; /* why peak/slow start are null (static string), or NULL */

    struct tcp_info_sample tcp; /* receiver TCP_INFO as the socket closed; tcp.have == 0: none */
    /* The receive buffer ("receiver" in JSON): SO_RCVBUF as the socket closed and
     * tcp_rmem[2] of the client's netns (-1: unknown), --rcvbuf (0: autotuning). */
    int64_t so_rcvbuf, tcp_rmem_max;
    uint64_t rcvbuf_setting;
    /* The verdict (verdict.h): --bottleneck in Mb/s (0: unknown), the kind's name
     * (static string; NULL until decided), its evidence (owned), the prediction (NAN: none). */
    double bottleneck_mbps;
    const char *limited_by;
    char *limited_by_evidence;
    double predicted_mbps;
    char *predicted_note;        /* why predicted_mbps is null (owned), or NULL */
    double path_mbps;            /* the path's rate inferred from the plateau (network without
                                  * --bottleneck), NAN otherwise */
    const char *limited_by_side; /* "server": debitd's own verdict stood; "client": the client's figures
                                  * decided (its CPU, its window, --bottleneck, or no record) */
    /* The transfer thread's CPU over the transfer loop (threadcpu.h), "receiver.cpu" in
     * JSON; have 0: not measured. */
    struct {
        int have;
        double user_ms, sys_ms, runq_ms, wall_ms; /* runq_ms < 0: unknown */
    } rcv_cpu;
    double plateau_mbps, plateau_share; /* the series' plateau (verdict_plateau); NAN: none */
    json_t *server_config;   /* X-Debit-* response headers: object name -> value (owned) */
    json_t *server_record;      /* the server's /transfers/ID record, or NULL (owned) */
    json_t *ndt7;               /* an ndt7 test (ndt7.h): the server's last measurement..., or NULL (owned) */
    char *server_record_error;  /* why it could not be fetched, or NULL */
    json_t *server_upload;      /* upload to debitd: its answer and the comparison, or NULL (owned) */
    json_t *streams;            /* parallel > 1: one object per stream, or NULL (owned) */
};

struct run_result *result_new(void);
void result_free(struct run_result *r);
/* Forget r's outcome, keep its identity (server, url, scenario, variant, run, seq): r is
 * as result_new made it, for another attempt at the same run. */
void result_reset(struct run_result *r);
/* Replace r->error with a formatted reason and mark the run failed with kind e. */
void result_fail(struct run_result *r, enum result_err e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* One run as a JSON object (new reference, caller owns). Its "tcp" member is
 * tcp_info_to_json(&r->tcp), the vocabulary of the server's record (docs/tcp_info.md). */
json_t *result_to_json(const struct run_result *r);
/* Into O, the members that name a run's cell, as a run and a summary row both write them
 * (so that a reader matches one to the other): server, url, kind (urlkind.h), and scenario
 * and variant when set. */
void result_cell_json(json_t *o, const char *server, const char *url, const char *scenario, const char *variant);

/* What the server said of r, into object o: "server_record", "server_record_error" and
 * "server_upload" when set (a run's and each of its streams' records share this). */
void result_server_json(const struct run_result *r, json_t *o);

struct result_set {
    struct run_result **runs; /* owned */
    size_t n, cap;
};

void result_set_init(struct result_set *rs);
void result_set_clear(struct result_set *rs); /* frees every run */
/* Takes ownership of r. Returns 0, or -1 on allocation failure (r freed). */
int result_set_add(struct result_set *rs, struct run_result *r);

#endif
