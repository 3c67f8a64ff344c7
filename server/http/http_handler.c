/* http_handler: the libmicrohttpd entry points: routing, connection and completion
 * notifications, and the small reply helpers every route uses. */
#include "http.h"
#include "http_internal.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "nopush.h"
#include "sendstep.h"
#include "sys.h"
#include "tcp_info.h"
#include "tcp_profile.h"
#include "urlpath.h"
#include "wire.h"

void http_headers_common(struct MHD_Response *resp)
{
    MHD_add_response_header(resp, MHD_HTTP_HEADER_SERVER, "debitd/" DEBIT_VERSION);
}

enum MHD_Result http_reply_kept(struct listener *l, struct MHD_Connection *conn, unsigned status,
                                struct MHD_Response *resp)
{
    struct server *s = l->srv;
    if (s->draining) /* a graceful stop: no further request on this connection */
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    metrics_status(s->metrics, status);
    if (status < 300)
        s->status_2xx++;
    else if (status >= 400 && status < 500)
        s->status_4xx++;
    else if (status >= 500)
        s->status_5xx++;
    return MHD_queue_response(conn, status, resp);
}

enum MHD_Result http_reply(struct listener *l, struct MHD_Connection *conn, unsigned status,
                           struct MHD_Response *resp)
{
    if (!resp)
        return MHD_NO;
    enum MHD_Result r = http_reply_kept(l, conn, status, resp);
    MHD_destroy_response(resp);
    return r;
}

static const char *reason(unsigned status)
{
    const char *p = MHD_get_reason_phrase_for(status);
    return p && p[0] ? p : "Error";
}

enum MHD_Result http_reply_text(struct listener *l, struct MHD_Connection *conn, unsigned status,
                                const char *name, const char *value)
{
    char body[128];
    int n = snprintf(body, sizeof body, "%u %s\n", status, reason(status));
    struct MHD_Response *resp = MHD_create_response_from_buffer((size_t)n, body, MHD_RESPMEM_MUST_COPY);
    if (!resp)
        return MHD_NO;
    http_log_body((size_t)n);
    http_headers_common(resp);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (name)
        MHD_add_response_header(resp, name, value);
    return http_reply(l, conn, status, resp);
}

enum MHD_Result http_reply_buffer(struct listener *l, struct MHD_Connection *conn, unsigned status, char *body,
                                  size_t len, const char *type)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(body);
        return MHD_NO;
    }
    http_log_body(len);
    http_headers_common(resp);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    return http_reply(l, conn, status, resp);
}

enum MHD_Result http_reply_json(struct listener *l, struct MHD_Connection *conn, unsigned status, json_t *j)
{
    char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(9)) : NULL;
    json_decref(j);
    if (!text)
        return http_reply_text(l, conn, 500, NULL, NULL);
    size_t n = strlen(text);
    char *body = realloc(text, n + 2); /* a trailing newline, as curl users expect */
    if (!body) {
        free(text);
        return MHD_NO;
    }
    body[n] = '\n';
    struct MHD_Response *resp = MHD_create_response_from_buffer(n + 1, body, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(body);
        return MHD_NO;
    }
    http_log_body(n + 1);
    http_headers_common(resp);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    return http_reply(l, conn, status, resp);
}

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

static int is_get_or_head(const char *method)
{
    return strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
}

static enum MHD_Result route(struct listener *l, struct MHD_Connection *conn, const char *url,
                             const char *method, struct req *r, const char *upload_data,
                             size_t *upload_data_size)
{
    const struct config *c = l->srv->cfg;
    if (c->upload_path && strcmp(url, c->upload_path) == 0) {
        if (strcmp(method, MHD_HTTP_METHOD_POST) != 0 && strcmp(method, MHD_HTTP_METHOD_PUT) != 0)
            return http_reply_text(l, conn, 405, MHD_HTTP_HEADER_ALLOW, "POST, PUT");
        return http_upload(l, conn, r, upload_data, upload_data_size);
    }
    const struct file_cfg *f = find_file(c, url, strlen(url));
    size_t ulen = strlen(url);
    const struct file_cfg *sha = NULL;
    if (!f && ulen > 7 && strcmp(url + ulen - 7, ".sha256") == 0)
        sha = find_file(c, url, ulen - 7);
    int status_page = strcmp(url, WIRE_STATUS_PATH) == 0;
    if (strcmp(url, WIRE_METRICS_PATH) == 0)
        return is_get_or_head(method) ? http_metrics(l, conn) : http_reply_text(l, conn, 405, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    int transfer = strncmp(url, WIRE_TRANSFERS_PATH, strlen(WIRE_TRANSFERS_PATH)) == 0;
    int folder = url[ulen - 1] == '/' && is_folder(c, url);
    char slash[1100];
    int folder_noslash = 0;
    if (!f && !sha && !status_page && !transfer && !folder && ulen + 2 < sizeof slash) {
        memcpy(slash, url, ulen); /* "URL/": the length is checked above, where GCC -O1 cannot see it */
        slash[ulen] = '/';
        slash[ulen + 1] = 0;
        folder_noslash = is_folder(c, slash);
    }
    if (!f && !sha && !status_page && !transfer && !folder && !folder_noslash)
        return http_reply_text(l, conn, 404, NULL, NULL);
    if (!is_get_or_head(method))
        return http_reply_text(l, conn, 405, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    int head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    if (f)
        return http_file(l, conn, r, f, head);
    if (sha)
        return http_file_sha256(l, conn, r, sha);
    if (status_page)
        return http_status(l, conn);
    if (transfer)
        return http_transfer(l, conn, url + strlen(WIRE_TRANSFERS_PATH));
    if (folder)
        return http_index(l, conn, url);
    /* like a web server's directory: /files -> /files/, the query kept as sent (as nginx
     * does), when it is printable ASCII: a Location header carries nothing else */
    const char *q = r && r->log_target ? strchr(r->log_target, '?') : NULL;
    for (const char *p = q; p && *p; p++)
        if (*p <= ' ' || *p > '~')
            q = NULL;
    char loc[2200];
    if (q && (size_t)snprintf(loc, sizeof loc, "%s%s", slash, q) < sizeof loc)
        return http_reply_text(l, conn, 301, MHD_HTTP_HEADER_LOCATION, loc);
    return http_reply_text(l, conn, 301, MHD_HTTP_HEADER_LOCATION, slash);
}

/* A download or an upload now under way is what a graceful stop waits for (until
 * http_completed); the other answers are short, or (a .sha256 being hashed) not worth
 * holding a stop for. Returns RES. */
static enum MHD_Result in_flight(struct listener *l, struct req *r, enum MHD_Result res)
{
    if (!r->in_flight && (r->kind == REQ_FILE || r->kind == REQ_UPLOAD)) {
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
    const struct config *c = l->srv->cfg;
    struct req *r = *req_cls; /* from http_uri_log, on its first call here too */
    int first = !r || !r->begun;
    /* the header deadline ends with the first call, the body's rate is watched until the last */
    watchdog_request(l->srv->watchdog, conn, first, first ? 0 : *upload_data_size);
    if (first) {
        if (!r && !(r = http_req_new()))
            return MHD_NO;
        *req_cls = r;
        r->begun = 1;
        l->srv->requests++;
        http_log_begin(r, conn, url, method, version);
        enum MHD_Result refused;
        if (http_guard_room(l, conn, r, &refused) || http_guard(l, conn, r, version, &refused))
            return refused;
        /* Answer on the next call: MHD closes the connection after a response queued in the
         * first one (it cannot know whether a body follows). Only the upload sink answers at
         * once, to refuse an announced body that is too large before it is sent. */
        char up[512]; /* the sink's path as route() will see it (an upload_path is shorter) */
        if (c->upload_path && url && urlpath_normalize(url, up, sizeof up) == URLPATH_OK &&
            strcmp(up, c->upload_path) == 0 &&
            (strcmp(method, MHD_HTTP_METHOD_POST) == 0 || strcmp(method, MHD_HTTP_METHOD_PUT) == 0))
            return in_flight(l, r, http_upload(l, conn, r, upload_data, upload_data_size));
        return MHD_YES;
    }
    if (r->kind == REQ_UPLOAD)
        return in_flight(l, r, http_upload(l, conn, r, upload_data, upload_data_size));
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
    return in_flight(l, r, route(l, conn, path, method, r, upload_data, upload_data_size));
}

enum MHD_Result http_access(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                            const char *version, const char *upload_data, size_t *upload_data_size,
                            void **req_cls)
{
    struct listener *l = cls;
    server_read_lock(l->srv); /* one configuration for the whole call (reload.h) */
    http_log_current(req_cls); /* replies note their body size for the access log */
    enum MHD_Result res = access_request(cls, conn, url, method, version, upload_data, upload_data_size, req_cls);
    http_log_current(NULL);
    server_read_unlock(l->srv);
    return res;
}

static void completed(struct listener *l, struct MHD_Connection *conn, void **req_cls,
                      enum MHD_RequestTerminationCode toe)
{
    struct req *r = *req_cls;
    watchdog_request_done(l->srv->watchdog, conn); /* keep-alive: the next headers' deadline */
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    int noted = 0; /* a response without an end read of TCP_INFO leaves the next one's start unknown */
    if (!r) {
        http_conn_note_end(conn, ci ? ci->connect_fd : -1, NULL);
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
        sendstep_end();
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
        l->srv->bytes_sent += bytes;
        http_quota_settle(l, r, bytes);
        metrics_transfer(l->srv->metrics, (size_t)(l - l->srv->listeners), reload_file_row(l->srv, r->snap, r->file),
                         bytes, sys_mono_s() - r->t0);
        if (r->seq) { /* the record (none when no ID could be drawn) */
            struct tcp_info_sample last;
            char err[128];
            int have = r->sock >= 0 && tcp_info_read(r->sock, &last, err, sizeof err) == 0;
            if (ok && have) { /* where the next response on this connection starts */
                http_conn_note_end(conn, r->sock, &last);
                noted = 1;
            }
            struct transfer_evidence ev;
            evidence_end(&r->mark, l->srv->cpu, r->sock, &ev);
            if (!l->srv->cfg->details) /* as X-Debit-Cpu: no cgroup path (privacy.details) */
                ev.cg_path[0] = 0;
            /* the record is the body of a JSON access log line, and of nothing else logged */
            if (l->srv->access && l->srv->cfg->access_format == ACCESS_FORMAT_JSON)
                entry = transfers_end(l->srv->transfers, r->seq, ok ? "done" : "aborted", bytes,
                                      have ? &last : NULL, &ev);
            else
                transfers_finish(l->srv->transfers, r->seq, ok ? "done" : "aborted", bytes, have ? &last : NULL,
                                 &ev);
        }
        sent = bytes;
    }
    if (!noted)
        http_conn_note_end(conn, ci ? ci->connect_fd : -1, NULL);
    http_log_end(l, conn, r, entry, sent);
    json_decref(entry);
    http_req_free(r);
}

void http_completed(void *cls, struct MHD_Connection *conn, void **req_cls, enum MHD_RequestTerminationCode toe)
{
    struct listener *l = cls;
    server_read_lock(l->srv);
    completed(l, conn, req_cls, toe);
    server_read_unlock(l->srv);
}

static void connection(struct listener *l, struct MHD_Connection *conn, void **socket_context,
                       enum MHD_ConnectionNotificationCode toe)
{
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
        watchdog_conn_started(l->srv->watchdog, conn, socket_context);
        if (l->tls) /* before the handshake: the credentials it will use */
            tls_conn_started(l->tls, conn);
        l->srv->active++;
        l->srv->connections++;
        if (!tcp_profile_is_default(&l->cfg->tcp)) {
            const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
            char err[512];
            /* probed at start, so a failure here is rare: say it once, keep serving */
            if (ci && tcp_profile_apply(ci->connect_fd, &l->cfg->tcp, err, sizeof err) < 0 && !l->tcp_warned++)
                log_warn("%s: TCP profile not applied on an accepted socket: %s", l->name, err);
        }
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        const union MHD_ConnectionInfo *fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (fd) {
            http_conn_closed(fd->connect_fd);
            nopush_forget(fd->connect_fd); /* the descriptor's number will be reused */
        }
        watchdog_conn_closed(l->srv->watchdog, socket_context);
        if (l->tls)
            tls_conn_closed(conn);
        const union MHD_ConnectionInfo *ad = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        const struct sockaddr *sa = ad ? ad->client_addr : NULL;
        socklen_t len = !sa ? 0 : sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
        ip_limit_release(l->per_ip, sa, len); /* admitted by server.c's accept_policy */
        acceptor_closed(l->acceptor);         /* every connection of l->mhd came from it */
        l->srv->active--;
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
    if (watchdog_mhd_message(l->srv->watchdog, msg))
        return; /* once per connection: summarised by the refusal log, never a line each */
    log_warn("%s: libmicrohttpd: %s", l->name, msg);
}
