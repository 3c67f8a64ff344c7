/* http_status: GET /status, built in sections, each adding its private fields only when
 * privacy.details is on; JSON, or HTML for a client that prefers it (a browser). */
#ifndef DEBITD_HTTP_STATUS_H
#define DEBITD_HTTP_STATUS_H

#include <jansson.h>

#include "server.h"

/* The whole /status object (new; NULL when out of memory). Under the read lock. */
json_t *http_status_json(struct server *s);
/* J (http_status_json's) as an HTML page (http_status_html.c): a table per section, every
 * key and value escaped, nothing loaded from elsewhere. Malloc'd, *LEN bytes; NULL when
 * out of memory. */
char *http_status_html(const json_t *j, size_t *len);

#endif
