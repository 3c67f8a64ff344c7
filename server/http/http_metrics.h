/* http_metrics: the /metrics route (Prometheus text, observe/metrics.h renders it). */
#ifndef DEBITD_HTTP_METRICS_H
#define DEBITD_HTTP_METRICS_H

#include <microhttpd.h>

#include "server.h"

/* GET /metrics (http_metrics.c): 404 when metrics.enabled is off, 403 outside metrics.allow. */
enum MHD_Result http_metrics(struct listener *l, struct MHD_Connection *conn);

#endif
