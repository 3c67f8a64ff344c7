/* http_log: the access log's side of a request (its fields copied on arrival, its line at
 * the end), and the request context's release. */
#ifndef DEBITD_HTTP_LOG_H
#define DEBITD_HTTP_LOG_H

#include <jansson.h>
#include <microhttpd.h>
#include <stdint.h>

#include "http_req.h"
#include "server.h"

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

#endif
