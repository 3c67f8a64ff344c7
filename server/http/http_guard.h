/* http_guard: the request's first checks, before any route: strict HTTP, the pool's room,
 * Expect; and the URI-log callback that makes the request context. */
#ifndef DEBITD_HTTP_GUARD_H
#define DEBITD_HTTP_GUARD_H

#include <microhttpd.h>

#include "http_req.h"
#include "server.h"

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
 * target or headers fail http_strict.h's checks, queue a 400 with Connection: close,
 * store the MHD result in *OUT and return 1; return 0 for a request that passes. */
int http_guard(struct listener *l, struct MHD_Connection *conn, struct req *r, const char *version,
               enum MHD_Result *out);
/* On the first call of a request that passed those: an "Expect: 100-continue" on a request
 * without a body is dropped, so that libmicrohttpd 0.9.75 sends no 100 and a request
 * pipelined after it is answered (http_guard.c). */
void http_guard_expect(struct MHD_Connection *conn);
/* MHD_OPTION_URI_LOG_CALLBACK: the request target as sent, before libmicrohttpd decodes
 * it; returns the request's context (struct req) with the verdict of the strict target
 * check. CLS is the listener. */
void *http_uri_log(void *cls, const char *uri, struct MHD_Connection *conn);

#endif
