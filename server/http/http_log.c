/* http_log: the access-log line of every request (access_log.h formats it). What the request
 * said is copied on the handler's first call, the body size of a small answer is noted when
 * it is queued, and the line is written from the completion callback, when the status and
 * the bytes are final. */
#include "http_log.h"
#include "http_conn.h"
#include "http_req.h"

#include <stdlib.h>
#include <string.h>

#include "access_log.h"
#include "conn.h"
#include "sys.h"

/* The request the access handler is running on the connection (its req_cls slot, in its
 * struct conn): replies are queued only from inside the handler, so this is where their
 * body size is noted. */
void http_log_current(struct MHD_Connection *conn, void **req_cls)
{
    struct conn *c = conn_of(conn);
    if (c)
        c->req_cls = req_cls;
}

void http_log_body(struct MHD_Connection *conn, uint64_t n)
{
    struct conn *c = conn_of(conn);
    struct req *r = c && c->req_cls ? *c->req_cls : NULL;
    if (r)
        r->resp_bytes = n;
}

static char *dup_header(struct MHD_Connection *conn, const char *name)
{
    const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
    return v ? strdup(v) : NULL;
}

void http_log_begin(struct req *r, struct MHD_Connection *conn, const char *url, const char *method,
                    const char *version)
{
    r->log_wall = sys_wall_s();
    if (!r->log_t0)
        r->log_t0 = sys_mono_s();
    r->log_path = url ? strdup(url) : NULL;
    r->log_method = method ? strdup(method) : NULL;
    r->log_version = version ? strdup(version) : NULL;
    r->log_ua = dup_header(conn, MHD_HTTP_HEADER_USER_AGENT);
    r->log_referer = dup_header(conn, MHD_HTTP_HEADER_REFERER);
}

void http_log_end(struct listener *l, struct MHD_Connection *conn, struct req *r, json_t *transfer, uint64_t bytes)
{
    struct server *s = l->srv;
    if (!s->access || !r->begun)
        return;
    /* the connection's client, read once per connection (http_conn.c) */
    struct http_client scratch;
    const struct http_client *who = http_conn_client(conn, &scratch);
    const union MHD_ConnectionInfo *st = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_HTTP_STATUS);
    int head = r->log_method && strcmp(r->log_method, MHD_HTTP_METHOD_HEAD) == 0;
    struct access_entry e = {
        .time = r->log_wall,
        .addr = who->addr,
        .port = who->port,
        .listener = l->name,
        .method = r->log_method,
        .target = r->log_target ? r->log_target : r->log_path,
        .path = r->log_path,
        .version = r->log_version,
        .status = st ? st->http_status : 0,
        .bytes = head ? 0 : bytes, /* no body goes with a HEAD answer */
        .received = r->up_bytes,
        .duration_s = sys_mono_s() - r->log_t0,
        .user_agent = r->log_ua,
        .referer = r->log_referer,
        .transfer = transfer,
        .telemetry = r->telemetry,
    };
    char *line = access_log_line(s->snap->cfg->access_format, &e);
    server_access_log(s, line);
    free(line);
}

void http_req_free(struct req *r)
{
    if (!r)
        return;
    free(r->log_target);
    free(r->log_path);
    free(r->log_method);
    free(r->log_version);
    free(r->log_ua);
    free(r->log_referer);
    json_decref(r->telemetry); /* the form: freed by http_completed (http_telemetry.c's) */
    snapshot_put(r->snap); /* the response over its region has ended */
    evidence_drop(&r->mark); /* normally done by evidence_end */
    free(r);
}
