/* http_handler: the libmicrohttpd entry points: routing (a table of paths, methods and
 * handlers), connection and completion notifications. The top of server/http: the routes
 * (http_files.c, http_pages.c, http_www.c, http_status.c, http_metrics.c, http_upload.c) are called from here and
 * answer through http_reply.c, never back up. */
#include "http_handler.h"
#include "http_conn.h"
#include "http_files.h"
#include "http_guard.h"
#include "http_log.h"
#include "http_metrics.h"
#include "http_ndt7.h"
#include "http_pages.h"
#include "http_peer.h"
#include "http_reply.h"
#include "http_req.h"
#include "http_speedtest.h"
#include "http_status.h"
#include "http_telemetry.h"
#include "http_upload.h"
#include "http_www.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "log.h"
#include "mhd_compat.h"
#include "nopush.h"
#include "sendstep.h"
#include "speedtest.h"
#include "sys.h"
#include "tcp_info.h"
#include "tcp_profile.h"
#include "urlpath.h"
#include "wire.h"

static const struct file_cfg *find_file(const struct config *c, const char *path, size_t len)
{
    for (size_t i = 0; i < c->n_files; i++)
        if (strlen(c->files[i].path) == len && memcmp(c->files[i].path, path, len) == 0)
            return &c->files[i];
    return NULL;
}

/* FOLDER (ending with '/') holds at least one file, or is the root. */
static int is_folder(const struct config *c, const char *folder)
{
    if (strcmp(folder, "/") == 0)
        return 1;
    size_t n = strlen(folder);
    for (size_t i = 0; i < c->n_files; i++)
        if (strncmp(c->files[i].path, folder, n) == 0)
            return 1;
    return 0;
}

enum { M_GET = 1, M_HEAD = 2, M_POST = 4, M_PUT = 8, M_OPTIONS = 16 };

static const struct {
    unsigned bit;
    const char *name;
} method_names[] = {
    {M_GET, MHD_HTTP_METHOD_GET}, {M_HEAD, MHD_HTTP_METHOD_HEAD},
    {M_POST, MHD_HTTP_METHOD_POST}, {M_PUT, MHD_HTTP_METHOD_PUT}, {M_OPTIONS, MHD_HTTP_METHOD_OPTIONS},
};

static unsigned method_bit(const char *method)
{
    for (size_t i = 0; i < sizeof method_names / sizeof method_names[0]; i++)
        if (strcmp(method, method_names[i].name) == 0)
            return method_names[i].bit;
    return 0;
}

/* What a route's handler gets: the request, and what its match found. */
struct route_call {
    struct listener *l;
    struct MHD_Connection *conn;
    struct req *r;
    const char *url;    /* the normalized path */
    const char *method;
    const char *upload_data;
    size_t *upload_data_size;
    const char *rest;            /* ROUTE_PREFIX: what follows the prefix */
    const struct file_cfg *file; /* route_file, route_sha256: the file */
    int speed;                   /* route_speedtest: the endpoint (enum speedtest_endpoint) */
    char slash[1100];            /* route_folder_slash: URL with a '/' added */
};

enum route_match {
    ROUTE_EXACT,  /* the path is PATH */
    ROUTE_PREFIX, /* the path starts with PATH */
    ROUTE_CONFIG, /* the configuration decides (match) */
};

struct route {
    const char *path; /* ROUTE_EXACT, ROUTE_PREFIX */
    enum route_match kind;
    int (*match)(const struct config *c, struct route_call *x); /* ROUTE_CONFIG: 1 = it is this route */
    unsigned methods; /* M_*: any other method gets 405 with Allow */
    enum MHD_Result (*handler)(struct route_call *x);
};

static int match_upload(const struct config *c, struct route_call *x)
{
    return c->upload_path && strcmp(x->url, c->upload_path) == 0;
}

static int match_ndt7_download(const struct config *c, struct route_call *x)
{
    return c->ndt7.enabled && strcmp(x->url, WIRE_NDT7_DOWNLOAD_PATH) == 0;
}

static int match_ndt7_upload(const struct config *c, struct route_call *x)
{
    return c->ndt7.enabled && strcmp(x->url, WIRE_NDT7_UPLOAD_PATH) == 0;
}

static int match_file(const struct config *c, struct route_call *x)
{
    return (x->file = find_file(c, x->url, strlen(x->url))) != NULL;
}

static int match_sha256(const struct config *c, struct route_call *x)
{
    size_t n = strlen(x->url);
    return n > 7 && strcmp(x->url + n - 7, ".sha256") == 0 && (x->file = find_file(c, x->url, n - 7)) != NULL;
}

static int match_folder(const struct config *c, struct route_call *x)
{
    return x->url[strlen(x->url) - 1] == '/' && is_folder(c, x->url);
}

/* A folder named without its '/' (answered with a redirect to it). */
static int match_folder_slash(const struct config *c, struct route_call *x)
{
    size_t n = strlen(x->url);
    if (n + 2 > sizeof x->slash)
        return 0;
    memcpy(x->slash, x->url, n); /* "URL/": the length is checked above, where GCC -O1 cannot see it */
    x->slash[n] = '/';
    x->slash[n + 1] = 0;
    return is_folder(c, x->slash);
}

/* A speed-test endpoint among A and B whose protocol is on (speedtest.h; off: not found). */
static int match_speedtest(const struct config *c, struct route_call *x, int a, int b)
{
    x->speed = speedtest_endpoint(x->url);
    if (x->speed == SPEEDTEST_NONE || (x->speed != a && x->speed != b))
        return 0;
    return speedtest_protocol_of((enum speedtest_endpoint)x->speed) == SPEEDTEST_CLOUDFLARE ? c->speedtest.cloudflare
                                                                                             : c->speedtest.librespeed;
}

static int match_speed_down(const struct config *c, struct route_call *x)
{
    return match_speedtest(c, x, SPEEDTEST_GARBAGE, SPEEDTEST_DOWN);
}

static int match_speed_page(const struct config *c, struct route_call *x)
{
    return match_speedtest(c, x, SPEEDTEST_EMPTY, SPEEDTEST_GETIP);
}

static int match_speed_up(const struct config *c, struct route_call *x)
{
    return match_speedtest(c, x, SPEEDTEST_UP, SPEEDTEST_UP);
}

static int match_speed_telemetry(const struct config *c, struct route_call *x)
{
    return match_speedtest(c, x, SPEEDTEST_TELEMETRY, SPEEDTEST_TELEMETRY);
}

static int match_speed_results(const struct config *c, struct route_call *x)
{
    return match_speedtest(c, x, SPEEDTEST_RESULTS, SPEEDTEST_RESULTS);
}

static enum MHD_Result route_speedtest(struct route_call *x)
{
    return http_speedtest(x->l, x->conn, x->r, x->speed, x->method, x->upload_data, x->upload_data_size);
}

/* LibreSpeed's telemetry (http_telemetry.c); a preflight is the speed tests' own */
static enum MHD_Result route_telemetry(struct route_call *x)
{
    if (method_bit(x->method) == M_OPTIONS)
        return route_speedtest(x);
    if (x->speed == SPEEDTEST_TELEMETRY)
        return http_telemetry_post(x->l, x->conn, x->r, x->upload_data, x->upload_data_size);
    return http_telemetry_results(x->l, x->conn, x->r);
}

static enum MHD_Result route_upload(struct route_call *x)
{
    return http_upload(x->l, x->conn, x->r, x->upload_data, x->upload_data_size);
}

static enum MHD_Result route_ndt7_download(struct route_call *x)
{
    return http_ndt7(x->l, x->conn, x->r, 0);
}

static enum MHD_Result route_ndt7_upload(struct route_call *x)
{
    return http_ndt7(x->l, x->conn, x->r, 1);
}

static enum MHD_Result route_metrics(struct route_call *x)
{
    return http_metrics(x->l, x->conn);
}

static enum MHD_Result route_file(struct route_call *x)
{
    return http_file(x->l, x->conn, x->r, x->file, method_bit(x->method) == M_HEAD);
}

static enum MHD_Result route_sha256(struct route_call *x)
{
    return http_file_sha256(x->l, x->conn, x->r, x->file);
}

static enum MHD_Result route_status(struct route_call *x)
{
    return http_status(x->l, x->conn);
}

static enum MHD_Result route_transfer(struct route_call *x)
{
    return http_transfer(x->l, x->conn, x->rest);
}

static enum MHD_Result route_front(struct route_call *x)
{
    return http_front_page(x->l, x->conn);
}

static enum MHD_Result route_www(struct route_call *x)
{
    return http_www_asset(x->l, x->conn, x->rest);
}

static enum MHD_Result route_index(struct route_call *x)
{
    return http_index(x->l, x->conn, x->url);
}

/* like a web server's directory: /files -> /files/, the query kept as sent (as nginx
 * does), when it is printable ASCII: a Location header carries nothing else */
static enum MHD_Result route_folder_slash(struct route_call *x)
{
    const char *q = x->r && x->r->log_target ? strchr(x->r->log_target, '?') : NULL;
    for (const char *p = q; p && *p; p++)
        if (*p <= ' ' || *p > '~')
            q = NULL;
    char loc[2200];
    if (q && (size_t)snprintf(loc, sizeof loc, "%s%s", x->slash, q) < sizeof loc)
        return http_reply_text(x->l, x->conn, 301, MHD_HTTP_HEADER_LOCATION, loc);
    return http_reply_text(x->l, x->conn, 301, MHD_HTTP_HEADER_LOCATION, x->slash);
}

/* The first entry that matches answers (a file named like a page is the file, but the
 * upload sink and /metrics come before the files); no match is a 404. */
static const struct route routes[] = {
    {NULL, ROUTE_CONFIG, match_upload, M_POST | M_PUT, route_upload},
    {WIRE_METRICS_PATH, ROUTE_EXACT, NULL, M_GET | M_HEAD, route_metrics},
    {NULL, ROUTE_CONFIG, match_ndt7_download, M_GET, route_ndt7_download},
    {NULL, ROUTE_CONFIG, match_ndt7_upload, M_GET, route_ndt7_upload},
    {NULL, ROUTE_CONFIG, match_file, M_GET | M_HEAD, route_file},
    {NULL, ROUTE_CONFIG, match_sha256, M_GET | M_HEAD, route_sha256},
    /* the speed tests' downloads, pages (ping, upload sink, address) and Cloudflare's upload */
    {NULL, ROUTE_CONFIG, match_speed_down, M_GET | M_HEAD | M_OPTIONS, route_speedtest},
    {NULL, ROUTE_CONFIG, match_speed_page, M_GET | M_HEAD | M_POST | M_OPTIONS, route_speedtest},
    {NULL, ROUTE_CONFIG, match_speed_up, M_POST | M_OPTIONS, route_speedtest},
    /* LibreSpeed's telemetry: a result reported, a result read back */
    {NULL, ROUTE_CONFIG, match_speed_telemetry, M_POST | M_OPTIONS, route_telemetry},
    {NULL, ROUTE_CONFIG, match_speed_results, M_GET | M_HEAD | M_OPTIONS, route_telemetry},
    {WIRE_STATUS_PATH, ROUTE_EXACT, NULL, M_GET | M_HEAD, route_status},
    {WIRE_TRANSFERS_PATH, ROUTE_PREFIX, NULL, M_GET | M_HEAD, route_transfer},
    {"/", ROUTE_EXACT, NULL, M_GET | M_HEAD, route_front},
    {NULL, ROUTE_CONFIG, match_folder, M_GET | M_HEAD, route_index},
    {WWW_PREFIX, ROUTE_PREFIX, NULL, M_GET | M_HEAD, route_www},
    {NULL, ROUTE_CONFIG, match_folder_slash, M_GET | M_HEAD, route_folder_slash},
};

/* The route of X->url (filling X's match fields), or NULL. */
static const struct route *route_find(const struct config *c, struct route_call *x)
{
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        const struct route *rt = &routes[i];
        size_t n = rt->path ? strlen(rt->path) : 0;
        if ((rt->kind == ROUTE_EXACT && strcmp(x->url, rt->path) == 0) ||
            (rt->kind == ROUTE_PREFIX && strncmp(x->url, rt->path, n) == 0) ||
            (rt->kind == ROUTE_CONFIG && rt->match(c, x))) {
            x->rest = x->url + n;
            return rt;
        }
    }
    return NULL;
}

/* "GET, HEAD": the Allow header of a route's methods. */
static void allow_header(unsigned methods, char *buf, size_t len)
{
    buf[0] = 0;
    for (size_t i = 0; i < sizeof method_names / sizeof method_names[0]; i++)
        if (methods & method_names[i].bit)
            snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? ", " : "", method_names[i].name);
}

static enum MHD_Result route(struct route_call *x)
{
    const struct route *rt = route_find(x->l->srv->snap->cfg, x);
    if (!rt)
        return http_reply_text(x->l, x->conn, 404, NULL, NULL);
    if (!(rt->methods & method_bit(x->method))) {
        char allow[64];
        allow_header(rt->methods, allow, sizeof allow);
        return http_reply_text(x->l, x->conn, 405, MHD_HTTP_HEADER_ALLOW, allow);
    }
    return rt->handler(x);
}

/* X's route when it is answered from the request's first call (before any body): the
 * upload sink with a method it takes, a speed test's upload (http_speedtest_early), a LibreSpeed
 * telemetry POST (refused before its body when too large). */
static const struct route *early_route(const struct config *c, struct route_call *x)
{
    const struct route *rt = route_find(c, x);
    if (!rt || !(rt->methods & method_bit(x->method)))
        return NULL;
    if (rt->handler == route_upload || (rt->handler == route_speedtest && http_speedtest_early(x->speed, x->method)) ||
        (rt->handler == route_telemetry && method_bit(x->method) == M_POST))
        return rt;
    return NULL;
}

/* A download or an upload now under way is what a graceful stop waits for (until
 * http_completed); the other answers are short, or (a .sha256 being hashed) not worth
 * holding a stop for. Returns RES. */
static enum MHD_Result in_flight(struct listener *l, struct req *r, enum MHD_Result res)
{
    if (!r->in_flight && (r->kind == REQ_FILE || r->kind == REQ_UPLOAD || r->kind == REQ_SPEED_UP)) {
        r->in_flight = 1;
        l->srv->in_flight++;
    }
    return res;
}

static enum MHD_Result access_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                      const char *version, const char *upload_data, size_t *upload_data_size,
                                      void **req_cls)
{
    struct listener *l = cls;
    const struct config *c = l->srv->snap->cfg;
    struct req *r = *req_cls; /* from http_uri_log, on its first call here too */
    int first = !r || !r->begun;
    /* the header deadline ends with the first call, the body's rate is watched until the last */
    struct conn *cn = conn_of(conn);
    watchdog_request(l->srv->watchdog, cn ? cn->deadline : NULL, first, first ? 0 : *upload_data_size);
    if (first && cn && cn->ack_slot && !ack_watch_settle(l->srv->acks, cn->ack_slot - 1, cn->ack_seq, 0))
        cn->ack_slot = 0; /* the client asks again: its last body is in (ack_watch.h) */
    if (first) {
        if (!r && !(r = http_req_new()))
            return MHD_NO;
        *req_cls = r;
        r->begun = 1;
        l->srv->counters.requests++;
        http_log_begin(r, conn, url, method, version);
        enum MHD_Result refused;
        if (http_guard_room(l, conn, r, &refused) || http_guard(l, conn, r, version, &refused))
            return refused;
        http_guard_expect(conn); /* no 100 Continue without a body: a pipelined request is lost */
        /* Answer on the next call: MHD closes the connection after a response queued in the
         * first one (it cannot know whether a body follows). Only the upload sink answers at
         * once, to refuse an announced body that is too large before it is sent; so do a
         * speed test's uploads. Only POST and PUT have such routes. */
        char up[512]; /* the path as route() will see it (an upload_path, an endpoint are shorter) */
        struct route_call x = {.l = l, .conn = conn, .r = r, .url = up, .method = method, .upload_data = upload_data,
                               .upload_data_size = upload_data_size};
        const struct route *rt;
        if ((method_bit(method) & (M_POST | M_PUT)) && url && urlpath_normalize(url, up, sizeof up) == URLPATH_OK &&
            (rt = early_route(c, &x)))
            return in_flight(l, r, rt->handler(&x));
        return MHD_YES;
    }
    if (r->kind == REQ_UPLOAD)
        return in_flight(l, r, http_upload(l, conn, r, upload_data, upload_data_size));
    if (r->kind == REQ_SPEED_UP)
        return in_flight(l, r, http_speedtest(l, conn, r, r->speed, method, upload_data, upload_data_size));
    if (r->kind == REQ_TELEMETRY)
        return http_telemetry_post(l, conn, r, upload_data, upload_data_size);
    if (*upload_data_size) { /* a body sent where none is expected: drop it, answer at the end */
        *upload_data_size = 0;
        return MHD_YES;
    }
    /* the path as nginx maps it: absolute-form accepted, "//", "." and ".." resolved */
    char path[8192];
    enum urlpath_result ur = url ? urlpath_normalize(url, path, sizeof path) : URLPATH_NOT_PATH;
    if (ur == URLPATH_TOO_LONG)
        return http_reply_text(l, conn, 414, NULL, NULL);
    if (ur != URLPATH_OK)
        return http_reply_text(l, conn, 400, NULL, NULL);
    struct route_call x = {.l = l, .conn = conn, .r = r, .url = path, .method = method, .upload_data = upload_data,
                           .upload_data_size = upload_data_size};
    return in_flight(l, r, route(&x));
}

enum MHD_Result http_access(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                            const char *version, const char *upload_data, size_t *upload_data_size,
                            void **req_cls)
{
    struct listener *l = cls;
    server_read_lock(l->srv); /* one configuration for the whole call (reload.h) */
    http_log_current(conn, req_cls); /* replies note their body size for the access log */
    enum MHD_Result res = access_request(cls, conn, url, method, version, upload_data, upload_data_size, req_cls);
    http_log_current(conn, NULL);
    server_read_unlock(l->srv);
    return res;
}

/* The end of R's transfer record (a file download or an upload to the sink): its final
 * TCP_INFO, the server's side (evidence_end), the verdict counted in /metrics; the record's
 * JSON into *ENTRY for a JSON access log. Returns 1 when the connection's end was noted
 * (http_conn_note_end: where its next response starts). */
static int record_end(struct listener *l, struct MHD_Connection *conn, struct req *r, int ok, uint64_t bytes,
                      json_t **entry)
{
    struct tcp_info_sample last;
    char err[128];
    int have = r->sock >= 0 && tcp_info_read(r->sock, &last, err, sizeof err) == 0;
    int noted = 0;
    if (ok && have) { /* where the next response on this connection starts */
        http_conn_note_end(conn, &last);
        noted = 1;
    }
    struct transfer_evidence ev;
    evidence_end(&r->mark, l->srv->cpu, r->sock, &ev);
    if (!l->srv->snap->cfg->details) /* as X-Debit-Cpu: no cgroup path (privacy.details) */
        ev.cg_path[0] = 0;
    if (r->kind == REQ_UPLOAD) { /* the receive buffer its window came from */
        int v = 0;
        socklen_t len = sizeof v;
        ev.so_rcvbuf = r->sock >= 0 && getsockopt(r->sock, SOL_SOCKET, SO_RCVBUF, &v, &len) == 0 ? v : -1;
    }
    /* the record is the body of a JSON access log line, and of nothing else logged */
    enum verdict_kind kind;
    const char *state = ok ? "done" : "aborted";
    if (l->srv->access && l->srv->snap->cfg->access_format == ACCESS_FORMAT_JSON) {
        *entry = transfers_end(l->srv->transfers, r->seq, state, bytes, have ? &last : NULL, &ev);
        kind = verdict_from_name(json_string_value(json_object_get(*entry, "limited_by")));
    } else {
        kind = transfers_finish(l->srv->transfers, r->seq, state, bytes, have ? &last : NULL, &ev);
    }
    metrics_verdict(l->srv->metrics, (size_t)(l - l->srv->listeners), kind);
    if (ok && r->kind != REQ_UPLOAD && bytes >= EVIDENCE_MIN_BYTES && l->srv->snap->cfg->transfers_acked) {
        /* watched until the client acknowledged it (transfers_acked = false: not at all) */
        transfers_watching(l->srv->transfers, r->seq);
        struct conn *c = conn_of(conn);
        int slot = ack_watch_add(l->srv->acks, r->sock, r->seq, have ? &last : NULL, sys_mono_s());
        if (c && slot >= 0) { /* read again at the next request or the close */
            c->ack_slot = slot + 1;
            c->ack_seq = r->seq;
        }
    }
    return noted;
}

static void completed(struct listener *l, struct MHD_Connection *conn, void **req_cls,
                      enum MHD_RequestTerminationCode toe)
{
    struct req *r = *req_cls;
    struct conn *c = conn_of(conn);
    watchdog_request_done(l->srv->watchdog, c ? c->deadline : NULL); /* keep-alive: the next headers' deadline */
    int noted = 0; /* a response without an end read of TCP_INFO leaves the next one's start unknown */
    if (!r) {
        http_conn_note_end(conn, NULL);
        return;
    }
    *req_cls = NULL;
    json_t *entry = NULL;
    uint64_t sent = r->resp_bytes;
    if (r->nopush) { /* first: this pushes the body's last segment (nopush.h) */
        char nerr[160];
        if (nopush_end(r->sock, nerr, sizeof nerr) < 0)
            log_debug("%s: tcp_nopush: %s", l->name, nerr);
        r->nopush = 0;
    }
    if (r->stepped) { /* on the worker that began it (sendstep.h) */
        sendstep_end(r->sock);
        r->stepped = 0;
    }
    if (r->in_flight)
        l->srv->in_flight--;
    if (r->kind == REQ_FILE) {
        int ok = toe == MHD_REQUEST_TERMINATED_COMPLETED_OK;
        uint64_t bytes = r->body_len;
        if (!ok) { /* what the peer acknowledged, headers included: an upper bound */
            uint64_t now = http_tcp_bytes_acked(r->sock);
            /* TCP_INFO unreadable (0): nothing is known to have arrived, never "all of it" */
            uint64_t acked = now > r->acked0 ? now - r->acked0 : 0;
            bytes = acked < bytes ? acked : bytes;
        }
        http_quota_settle(l, r, bytes);
        counters_transfer(&l->srv->counters, bytes, sys_mono_s() - r->t0);
        metrics_file_bytes(l->srv->metrics, (size_t)(l - l->srv->listeners),
                           reload_file_row(l->srv, r->snap, r->file), bytes);
        if (r->seq) /* the record (none when no ID could be drawn) */
            noted = record_end(l, conn, r, ok, bytes, &entry);
        sent = bytes;
    } else if (r->kind == REQ_UPLOAD) {
        http_quota_settle(l, r, r->up_bytes); /* a chunked body was charged max_size */
        if (r->seq)
            noted = record_end(l, conn, r, toe == MHD_REQUEST_TERMINATED_COMPLETED_OK && !r->up_rejected,
                               r->up_bytes, &entry);
    } else if (r->kind == REQ_NDT7) {
        entry = http_ndt7_completed(l, r, &sent);
    }
    http_speedtest_end(l, r, r->kind == REQ_SPEED_UP || r->kind == REQ_TELEMETRY ? r->up_bytes : sent);
    if (!noted)
        http_conn_note_end(conn, NULL);
    http_log_end(l, conn, r, entry, sent);
    json_decref(entry);
    http_telemetry_form_free(r->form); /* here, not in http_req_free: http_log sits below it */
    r->form = NULL;
    http_req_free(r);
}

void http_completed(void *cls, struct MHD_Connection *conn, void **req_cls, enum MHD_RequestTerminationCode toe)
{
    struct listener *l = cls;
    server_read_lock(l->srv);
    completed(l, conn, req_cls, toe);
    server_read_unlock(l->srv);
}

/* One struct conn per connection (conn.h), on its socket context: the deadline entry, the
 * TLS credentials, the interposers' state, the facts its responses repeat. */
static void connection(struct listener *l, struct MHD_Connection *conn, void **socket_context,
                       enum MHD_ConnectionNotificationCode toe)
{
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        int sock = fd ? fd->connect_fd : -1;
        struct conn *c = conn_new(sock);
        *socket_context = c;
        if (c) {
            c->deadline = watchdog_conn_started(l->srv->watchdog, conn);
            if (l->tls) /* before the handshake: the credentials it will use */
                c->creds = tls_creds_take(l->tls);
        }
        if (l->tls) /* tickets and the Finished hook, where libmicrohttpd is known to allow it */
            mhd_compat_tls_started(conn, l->tls);
        l->srv->counters.active++;
        l->srv->counters.connections++;
        if (!tcp_profile_is_default(&l->cfg->tcp)) {
            char err[512];
            /* probed at start, so a failure here is rare: say it once, keep serving */
            if (sock >= 0 && tcp_profile_apply(sock, &l->cfg->tcp, err, sizeof err) < 0 && !l->tcp_warned++)
                log_warn("%s: TCP profile not applied on an accepted socket: %s", l->name, err);
        }
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        struct conn *c = *socket_context;
        *socket_context = NULL;
        if (c && c->ack_slot) /* its last body's last read, before the close */
            ack_watch_settle(l->srv->acks, c->ack_slot - 1, c->ack_seq, 1);
        if (c)
            watchdog_conn_closed(l->srv->watchdog, c->deadline);
        conn_free(c);
        const union MHD_ConnectionInfo *ad = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        const struct sockaddr *sa = ad ? ad->client_addr : NULL;
        socklen_t len = !sa ? 0 : sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
        ip_limit_release(l->per_ip, sa, len); /* admitted by server.c's accept_policy */
        acceptor_closed(l->acceptor);         /* every connection of l->mhd came from it */
        l->srv->counters.active--;
    }
}

void http_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                     enum MHD_ConnectionNotificationCode toe)
{
    struct listener *l = cls;
    server_read_lock(l->srv); /* l->cfg: the TCP profile a reload may change */
    connection(l, conn, socket_context, toe);
    server_read_unlock(l->srv);
}

void http_mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct listener *l = cls;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
        msg[--n] = 0;
    /* once per connection: summarised by the refusal log, never a line each */
    if (watchdog_mhd_message(l->srv->watchdog, mhd_compat_log_reason(msg), msg))
        return;
    log_warn("%s: libmicrohttpd: %s", l->name, msg);
}
