/* http_status: GET /status, built in sections, each adding its private fields only when
 * privacy.details is on. */
#ifndef DEBITD_HTTP_STATUS_H
#define DEBITD_HTTP_STATUS_H

#include <jansson.h>

#include "server.h"

/* The whole /status object (new; NULL when out of memory). Under the read lock. */
json_t *http_status_json(struct server *s);

#endif
