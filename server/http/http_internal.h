/* http_internal: what the http_*.c callback files share (request context, reply helpers).
 * Not used outside server/http_*.c. */
#ifndef DEBITD_HTTP_INTERNAL_H
#define DEBITD_HTTP_INTERNAL_H

#include <jansson.h>
#include <microhttpd.h>
#include <net/if.h>
#include <stdint.h>
#include <sys/socket.h>

#include "peer.h"
#include "quota.h"
#include "http_reply.h"
#include "server.h"

enum req_kind {
    REQ_OTHER = 0,
    REQ_FILE,   /* a file body (GET), with a transfer record */
    REQ_UPLOAD, /* a body being discarded */
    REQ_DIGEST, /* a .sha256 answer, suspended while the hashing thread works (digest.h) */
    REQ_SPEED_UP, /* a speed test's upload body being drained (http_speedtest.c) */
    REQ_NDT7,   /* an ndt7 test: upgraded to WebSocket, run on a thread of its own (http_ndt7.c) */
};

struct ndt7_run;

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
    /* REQ_NDT7: the test, owned by its thread once upgraded, freed by http_ndt7_completed */
    struct ndt7_run *ndt7;
};

/* What a file response's headers say but for its X-Debit-Transfer and Content-Range: type,
 * cache, ranges, validators, and the X-Debit-* headers that describe the serving
 * configuration, read for every request (http_file_head) and added in one place
 * (http_file_head_add). Pointers are borrowed from the request's call. */
struct file_head {
    const char *etag, *last_modified, *kernel;
    int details; /* server.details: X-Debit-Interface and X-Debit-Kernel are sent */
    char tcp[160], offload[256], ifname[IF_NAMESIZE + 1], cpu[256], tls[256];
};
/* Fill H for a response of L to CONN with ETAG (borrowed: it must outlive H's use). */
void http_file_head(struct listener *l, struct MHD_Connection *conn, const char *etag, struct file_head *h);
/* Add H's headers to RESP; NOT_MODIFIED (a 304): without Content-Type and Accept-Ranges. */
void http_file_head_add(const struct file_head *h, struct MHD_Response *resp, int not_modified);
/* H's values and EXTRA (what else decides the response) as one byte string in BUF: two
 * responses with equal strings carry the same headers. Returns its length, 0 if LEN is too
 * short. */
size_t http_file_head_sig(const struct file_head *h, const char *extra, char *buf, size_t len);

/* Routes (http_files.c, http_pages.c, http_www.c, http_status.c, http_metrics.c, http_upload.c). */
enum MHD_Result http_file(struct listener *l, struct MHD_Connection *conn, struct req *r,
                          const struct file_cfg *f, int head);
/* FILE.sha256: answered at once when the digest is known; otherwise the connection is
 * suspended and handed to the hashing thread, and answered when libmicrohttpd calls the
 * handler again after the resume (r->kind is then REQ_DIGEST). */
enum MHD_Result http_file_sha256(struct listener *l, struct MHD_Connection *conn, struct req *r,
                                 const struct file_cfg *f);
enum MHD_Result http_index(struct listener *l, struct MHD_Connection *conn, const char *folder);
struct html_buf;
/* The listing of FOLDER (its subfolders, then its files with sizes and .sha256 links) as a
 * <pre> block appended to B (http_pages.c). */
void http_index_list(struct html_buf *b, const struct config *c, const char *folder);
/* GET /: the front page, the speed test and the root's listing (http_www.c). */
enum MHD_Result http_front_page(struct listener *l, struct MHD_Connection *conn);
/* GET /speedtest/NAME: a file of the front page (http_www.c); 404 for an unknown NAME. */
enum MHD_Result http_www_asset(struct listener *l, struct MHD_Connection *conn, const char *name);
enum MHD_Result http_status(struct listener *l, struct MHD_Connection *conn);
/* GET /metrics (http_metrics.c): 404 when metrics.enabled is off, 403 outside metrics.allow. */
enum MHD_Result http_metrics(struct listener *l, struct MHD_Connection *conn);
enum MHD_Result http_transfer(struct listener *l, struct MHD_Connection *conn, const char *id);
enum MHD_Result http_upload(struct listener *l, struct MHD_Connection *conn, struct req *r,
                            const char *upload_data, size_t *upload_data_size);
/* GET /ndt/v7/download or /ndt/v7/upload (UPLOAD) (http_ndt7.c): the WebSocket handshake
 * checked (400 as ndt-server when it is not one, or lacks the ndt7 subprotocol), the
 * per-address cap (429) and quota (429) applied, a transfer record begun, and a 101 queued
 * whose upgrade starts the test's thread (http_ndt7_run.c). */
enum MHD_Result http_ndt7(struct listener *l, struct MHD_Connection *conn, struct req *r, int upload);
/* The request of an ndt7 test completes (from http_completed, after the thread let go of
 * the connection, or when the upgrade never happened): the record's JSON for the access log
 * (a new reference, or NULL) and the payload bytes in *BYTES; R's test is freed. */
json_t *http_ndt7_completed(struct listener *l, struct req *r, uint64_t *bytes);

/* The speed-test protocols (http_speedtest.c, speedtest.h). ENDPOINT is the route's
 * (enum speedtest_endpoint): 404 when its protocol is switched off. A POST to empty or __up
 * is called on the request's first call (http_speedtest_early), to refuse before the body,
 * then for each piece of it, and answered after its end (REQ_SPEED_UP). */
enum MHD_Result http_speedtest(struct listener *l, struct MHD_Connection *conn, struct req *r, int endpoint,
                               const char *method, const char *upload_data, size_t *upload_data_size);
/* ENDPOINT (enum speedtest_endpoint) with METHOD is answered from the request's first call. */
int http_speedtest_early(int endpoint, const char *method);
/* From http_completed: a speed test of R ended with BYTES of body sent or received: its
 * counters, and its place in speedtest.per_ip given back. Nothing for another request. */
void http_speedtest_end(struct listener *l, struct req *r, uint64_t bytes);
/* The X-Debit-* headers of H alone (http_file_head_add adds them with the file's others). */
void http_file_head_add_debit(const struct file_head *h, struct MHD_Response *resp);

/* What a request's client address decides (http_peer.c). */
/* The client of CONN as a peer: 0, or -1 when MHD gives no IP address. */
int http_peer(struct MHD_Connection *conn, struct peer *p);
/* Charge a response of LEN bytes to its client's quota (r->quota keeps the receipt).
 * Returns 0 to serve it, or 1 (nothing charged) when the address has used its budget:
 * then RETRY (LEN bytes) holds the Retry-After value in seconds. */
int http_quota_refused(struct listener *l, struct MHD_Connection *conn, struct req *r, uint64_t len,
                       char *retry, size_t retrylen);
/* Give back what a response charged but did not send (from http_completed). */
void http_quota_settle(struct listener *l, struct req *r, uint64_t sent);
/* A new request context (zeroed, no socket), or NULL. */
struct req *http_req_new(void);
/* On the first call of a request: when its query had more arguments than the connection's
 * pool (listen[].connection_memory) could hold (found by http_uri_log: 414), or its header
 * block, with a record per field, leaves less room in the pool than an answer needs (431),
 * queue that refusal with Connection: close, store the MHD result in *OUT and return 1;
 * else return 0. Whatever http.strict says: libmicrohttpd would otherwise close the
 * connection, or leave it hanging, without an answer. */
int http_guard_room(struct listener *l, struct MHD_Connection *conn, struct req *r, enum MHD_Result *out);
/* Strict HTTP (http_guard.c, docs/http-strictness.md): on the first call of a request whose
 * target or headers fail http_strict.h's checks, queue a 400/501 with Connection: close,
 * store the MHD result in *OUT and return 1; return 0 for a request that passes. */
int http_guard(struct listener *l, struct MHD_Connection *conn, struct req *r, const char *version,
               enum MHD_Result *out);
/* On the first call of a request that passed those: an "Expect: 100-continue" on a request
 * without a body is dropped, so that libmicrohttpd 0.9.75 sends no 100 and a request
 * pipelined after it is answered (http_guard.c). */
void http_guard_expect(struct MHD_Connection *conn);

/* Access log (http_log.c). The handler's slot for CONN's request (NULL after it returns),
 * kept in its struct conn so that replies can note their body size with http_log_body. */
void http_log_current(struct MHD_Connection *conn, void **req_cls);
void http_log_body(struct MHD_Connection *conn, uint64_t n);
/* Copy what the request said (method, path, version, User-Agent, Referer), on the first call. */
void http_log_begin(struct req *r, struct MHD_Connection *conn, const char *url, const char *method,
                    const char *version);
/* Write R's access-log line: TRANSFER is the download's record (borrowed) or NULL, BYTES the
 * body bytes sent. Nothing when the log is off or the handler never saw the request. */
void http_log_end(struct listener *l, struct MHD_Connection *conn, struct req *r, json_t *transfer, uint64_t bytes);
/* Free R and what it owns. NULL is fine. */
void http_req_free(struct req *r);

/* Sender-side tcpi_bytes_acked of SOCK (http_conn.c); 0 if unreadable. */
uint64_t http_tcp_bytes_acked(int sock);
/* What a connection's responses repeat (http_conn.c): filled by its first file response */
/* A connection's client as a transfer record and the access log name it. */
struct http_client {
    char addr[46];   /* numeric address (INET6_ADDRSTRLEN); "" when unknown */
    unsigned port;
    char remote[64]; /* "ADDR:PORT" or "[ADDR]:PORT"; "" when unknown */
    int have_peer;   /* peer is read (the record's owner) */
    struct peer peer;
};

struct http_conn_facts {
    int filled;                    /* have_local, local and tcp are read */
    int have_local;
    struct sockaddr_storage local; /* port 0 */
    char tcp[160];                 /* the X-Debit-Tcp value */
    int client_read;               /* client is read */
    struct http_client client;     /* a transfer record's remote and owner */
    int written_known;             /* written is true of the connection's stream so far */
    uint64_t written;              /* bytes handed to the kernel by the responses so far */
};
struct conn;
/* The facts of CONN (in its struct conn, conn.h: zeroed when it started), or NULL when it
 * has none (out of memory at its start). Valid until the connection closes. Called on the
 * connection's worker thread, as every function below. */
struct http_conn_facts *http_conn_facts(struct MHD_Connection *conn);
/* CONN's client, read on the connection's first call and kept in its facts (for every
 * request, inet_ntop and snprintf were 2.3 % of a small request's CPU): a pointer into
 * them, or to SCRATCH, filled, when there are none. */
const struct http_client *http_conn_client(struct MHD_Connection *conn, struct http_client *scratch);
/* Bytes CONN's earlier responses handed to the kernel, as the last response's own end read
 * of TCP_INFO left them (http_conn_note_end): 0 and *WRITTEN set when known, -1 when not
 * (the connection's first response, a response in between that had no such read, or no
 * struct conn). A response's acknowledged bytes are then tcpi_bytes_acked at its end minus
 * this, with no TCP_INFO read at its start. */
int http_conn_written(struct MHD_Connection *conn, uint64_t *written);
/* Note the end of one of CONN's responses: TI its TCP_INFO read at the end (bytes handed to
 * the kernel = tcpi_bytes_sent - tcpi_bytes_retrans + tcpi_notsent_bytes), or NULL when
 * the response had none (what follows is then unknown). */
void http_conn_note_end(struct MHD_Connection *conn, const struct tcp_info_sample *ti);
/* Reuse of a connection's small file responses (http_conn.c): building one (13 headers,
 * three allocations each, and as many frees) was about 10 % of a 4 KiB request's CPU, and a
 * kept-alive connection asks for the same file again (docs/performance.md). */
/* The response CONN's previous file request kept (http_conn_reuse_put) when its signature
 * equals SIG (LEN bytes): it carries exactly the headers and body this request's would,
 * but for X-Debit-Transfer, whose value libmicrohttpd keeps at *ID_AT (NULL when the
 * response has none), and nobody else holds it (its request is over). Owned by the
 * connection: not to be destroyed. NULL when there is none or it differs (then it is
 * dropped). */
struct MHD_Response *http_conn_reuse_get(struct MHD_Connection *conn, const char *sig, size_t len, char **id_at);
/* Keep RESP, with signature SIG and its X-Debit-Transfer value at ID_AT (libmicrohttpd's
 * copy, mhd_compat_header_at; NULL: none), for CONN's next request: 0 when the connection
 * took over the caller's reference (or already had RESP, from http_conn_reuse_get), -1
 * when it has no struct conn or no memory (the caller keeps it). */
int http_conn_reuse_put(struct MHD_Connection *conn, struct MHD_Response *resp, const char *sig, size_t len,
                        char *id_at);
/* The listener as /status shows it (new object; http_status.c): its live configuration and
 * what it did, the private fields (interface names, limits) only with DETAILS: /status
 * passes privacy.details, /metrics (behind its allow list) 1 for its interface labels. */
json_t *http_listener_json(struct listener *l, int details);
/* The TCP profile L's connections get, as X-Debit-Tcp names it: the configured one, its
 * congestion control resolved to the netns default when it sets none (then 1, else 0).
 * What /status and /metrics report for a listener (from the configuration, where the
 * header reads the socket: docs/server.md, "TCP profiles"). */
int http_listener_tcp(const struct listener *l, struct tcp_profile *shown);
/* Name of the interface that holds address SS ("lo", "veth0") in IFNAME (LEN bytes); ""
 * if none, or SS is unspecified (http_headers.c). */
void http_address_interface(const struct sockaddr_storage *ss, char *ifname, size_t len);

/* The strong ETag of a file (quoted), from seed, region and size: stable across restarts. */
void http_etag(const struct server *s, const struct file_cfg *f, char *buf, size_t len);
#endif
