/* http_reply: the bottom of server/http: queue a response and count it, and the small
 * answers (text, buffer, JSON) every route sends. Calls nothing above it (the router,
 * the routes): tests/e2e/server_http_layers.sh checks the objects for a call circle. */
#ifndef DEBITD_HTTP_REPLY_H
#define DEBITD_HTTP_REPLY_H

#include <jansson.h>
#include <microhttpd.h>

#include "server.h"

/* Queue RESP with STATUS and release our reference; counts the status class. */
enum MHD_Result http_reply(struct listener *l, struct MHD_Connection *conn, unsigned status,
                           struct MHD_Response *resp);
/* http_reply for a response whose reference the caller keeps (http_conn_reuse_put). */
enum MHD_Result http_reply_kept(struct listener *l, struct MHD_Connection *conn, unsigned status,
                                struct MHD_Response *resp);
/* A short text/plain answer ("404 Not Found\n"), with Server and extra header NAME: VALUE
 * (NAME may be NULL). */
enum MHD_Result http_reply_text(struct listener *l, struct MHD_Connection *conn, unsigned status,
                                const char *name, const char *value);
/* BODY (LEN bytes, copied) as text/plain with Server, Cache-Control: CACHE_CONTROL and
 * extra header NAME: VALUE (NAME may be NULL). */
enum MHD_Result http_reply_plain(struct listener *l, struct MHD_Connection *conn, unsigned status, const char *body,
                                 size_t len, const char *cache_control, const char *name, const char *value);
/* BODY (LEN bytes, malloc'd: stolen, freed even on failure) as Content-Type TYPE, with
 * Server and Cache-Control: no-store. */
enum MHD_Result http_reply_buffer(struct listener *l, struct MHD_Connection *conn, unsigned status, char *body,
                                  size_t len, const char *type);
/* A JSON answer (J is stolen), Cache-Control: no-store. */
enum MHD_Result http_reply_json(struct listener *l, struct MHD_Connection *conn, unsigned status, json_t *j);
/* The same with one more header NAME: VALUE (none when either is NULL). */
enum MHD_Result http_reply_json_hdr(struct listener *l, struct MHD_Connection *conn, unsigned status, json_t *j,
                                    const char *name, const char *value);
/* Server header, on every response. */
void http_headers_common(struct MHD_Response *resp);

#endif
