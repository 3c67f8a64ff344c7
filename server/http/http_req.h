/* http_req: the per-request context every route of server/http fills (MHD's req_cls).
 * Made by http_req_new (http_guard.h, when the request line arrives), freed by http_req_free
 * (http_log.h, from http_completed). A type only: no functions of its own. */
#ifndef DEBITD_HTTP_REQ_H
#define DEBITD_HTTP_REQ_H

#include <stdint.h>
#include <sys/socket.h>

#include "quota.h"
#include "server.h"

enum req_kind {
    REQ_OTHER = 0,
    REQ_FILE,   /* a file body (GET), with a transfer record */
    REQ_UPLOAD, /* a body being discarded */
    REQ_DIGEST, /* a .sha256 answer, suspended while the hashing thread works (digest.h) */
    REQ_SPEED_UP, /* a speed test's upload body being drained (http_speedtest.c) */
    REQ_NDT7,   /* an ndt7 test: upgraded to WebSocket, run on a thread of its own (http_ndt7.c) */
    REQ_TELEMETRY, /* a LibreSpeed result being POSTed (http_telemetry.c) */
};

struct ndt7_run;
struct telemetry_form;

/* Per-request context (MHD's req_cls), owned by the request: freed in http_completed. */
struct req {
    enum req_kind kind;
    /* REQ_FILE */
    uint64_t seq;       /* transfer record */
    uint64_t body_len;  /* bytes the response body carries */
    uint64_t acked0;    /* tcpi_bytes_acked when the response started */
    int sock;           /* the connection's socket */
    int nopush;         /* the socket is corked until the request completes (nopush.h) */
    int stepped;        /* a sendfile body counted in flight on this worker (sendstep.h) */
    struct quota_receipt quota; /* what the response was charged (refunded in part if it ends early) */
    int in_flight;              /* counted in server.in_flight (a download or upload under way) */
    size_t file;        /* index in snap's cfg->files, for the metrics */
    struct snapshot *snap; /* REQ_FILE, REQ_DIGEST, REQ_UPLOAD: held until the request ends (reload.h) */
    double t0;          /* sys_mono_s when the response was queued */
    struct evidence_mark mark;  /* the serving thread's CPU from the start (evidence.h) */
    /* REQ_UPLOAD */
    uint64_t up_bytes;
    double up_t0;
    int up_rejected;
    char up_id[TRANSFER_ID_LEN]; /* the upload sink's record ("" none), sent in X-Debit-Transfer */
    /* REQ_DIGEST: parked in the digest's list while the connection is suspended */
    struct digest_waiter dw;
    /* http_guard.c: set when the request line arrives, before the headers */
    int begun;              /* http_access has seen the request */
    unsigned target_status; /* 400 if the raw target failed http_strict_check_target; 414 if
                             * its query has more arguments than the pool can hold */
    char target_why[112];
    uintptr_t raw_target;   /* where the raw target lay in libmicrohttpd's read buffer, */
    size_t raw_target_len;  /* and its length up to the first NUL (http_guard.c) */
    /* http_log.c: the access-log line's fields, copied when the request arrives */
    double log_wall, log_t0;
    char *log_target, *log_path, *log_method, *log_version, *log_ua, *log_referer;
    uint64_t resp_bytes; /* body bytes of a small answer (http_log_body) */
    /* a speed test (http_speedtest.c): its endpoint (enum speedtest_endpoint, 0 = none), and
     * its client's address while it is counted in srv->speed_per_ip (held) */
    int speed;
    int speed_held;
    socklen_t speed_addr_len;
    struct sockaddr_storage speed_addr;
    /* REQ_TELEMETRY: the form being read, then the kept result for the access log (owned) */
    struct telemetry_form *form;
    json_t *telemetry;
    /* REQ_NDT7: the test, owned by its thread once upgraded, freed by http_ndt7_completed */
    struct ndt7_run *ndt7;
};

#endif
