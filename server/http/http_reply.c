/* http_reply: queue a response (Connection: close while draining, the status class
 * counted) and the small answers the routes send. The bottom of server/http: it calls
 * only the access log's body-size note (http_log_body). */
#include "http_reply.h"
#include "http_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    counters_response(&s->counters, status);
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

enum MHD_Result http_reply_plain(struct listener *l, struct MHD_Connection *conn, unsigned status, const char *body,
                                 size_t len, const char *cache_control, const char *name, const char *value)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!resp)
        return MHD_NO;
    http_log_body(conn, len);
    http_headers_common(resp);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, cache_control);
    if (name)
        MHD_add_response_header(resp, name, value);
    return http_reply(l, conn, status, resp);
}

enum MHD_Result http_reply_text(struct listener *l, struct MHD_Connection *conn, unsigned status,
                                const char *name, const char *value)
{
    char body[128];
    int n = snprintf(body, sizeof body, "%u %s\n", status, reason(status));
    return http_reply_plain(l, conn, status, body, (size_t)n, "no-store", name, value);
}

enum MHD_Result http_reply_buffer(struct listener *l, struct MHD_Connection *conn, unsigned status, char *body,
                                  size_t len, const char *type)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(body);
        return MHD_NO;
    }
    http_log_body(conn, len);
    http_headers_common(resp);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    return http_reply(l, conn, status, resp);
}

enum MHD_Result http_reply_json(struct listener *l, struct MHD_Connection *conn, unsigned status, json_t *j)
{
    return http_reply_json_hdr(l, conn, status, j, NULL, NULL);
}

enum MHD_Result http_reply_json_hdr(struct listener *l, struct MHD_Connection *conn, unsigned status, json_t *j,
                                    const char *name, const char *value)
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
    http_log_body(conn, n + 1);
    http_headers_common(resp);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (name && value)
        MHD_add_response_header(resp, name, value);
    return http_reply(l, conn, status, resp);
}
