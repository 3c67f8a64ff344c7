/* http_telemetry: LibreSpeed's telemetry endpoints (telemetry.h, docs/server.md "LibreSpeed
 * telemetry"). */
#ifndef DEBITD_HTTP_TELEMETRY_H
#define DEBITD_HTTP_TELEMETRY_H

#include <microhttpd.h>
#include <stddef.h>

#include "http_req.h"
#include "server.h"

/* A POST to results/telemetry.php: called on its first call, then for each piece of its
 * form (REQ_TELEMETRY), answered "id N" at its end. */
enum MHD_Result http_telemetry_post(struct listener *l, struct MHD_Connection *conn, struct req *r,
                                    const char *upload_data, size_t *upload_data_size);
/* GET results/json.php?id=N. */
enum MHD_Result http_telemetry_results(struct listener *l, struct MHD_Connection *conn, struct req *r);
/* Free a request's form (from http_completed; NULL is fine). */
void http_telemetry_form_free(struct telemetry_form *f);

#endif
