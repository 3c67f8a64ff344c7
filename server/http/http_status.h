/* http_status: GET /status, built in sections, each adding its private fields only when
 * privacy.details is on; JSON, or HTML for a client that prefers it (a browser). */
#ifndef DEBITD_HTTP_STATUS_H
#define DEBITD_HTTP_STATUS_H

#include <jansson.h>
#include <microhttpd.h>

#include "server.h"
#include "tcp_profile.h"

/* The whole /status object (new; NULL when out of memory). Under the read lock. */
json_t *http_status_json(struct server *s);
/* GET /status: http_status_json as JSON, or as HTML (http_status_html.h) for a client
 * that prefers it. */
enum MHD_Result http_status(struct listener *l, struct MHD_Connection *conn);
/* The listener as /status shows it (new object; http_status.c): its live configuration and
 * what it did, the private fields (interface names, limits) only with DETAILS: /status
 * passes privacy.details, /metrics (behind its allow list) 1 for its interface labels. */
json_t *http_listener_json(struct listener *l, int details);
/* The TCP profile L's connections get, as X-Debit-Tcp names it: the configured one, its
 * congestion control resolved to the netns default when it sets none (then 1, else 0).
 * What /status and /metrics report for a listener (from the configuration, where the
 * header reads the socket: docs/server.md, "TCP profiles"). */
int http_listener_tcp(const struct listener *l, struct tcp_profile *shown);

#endif
