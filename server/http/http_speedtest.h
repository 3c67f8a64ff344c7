/* http_speedtest: the LibreSpeed and Cloudflare speed-test endpoints (content/speedtest.h). */
#ifndef DEBITD_HTTP_SPEEDTEST_H
#define DEBITD_HTTP_SPEEDTEST_H

#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>

#include "http_req.h"
#include "server.h"

/* The speed-test protocols (http_speedtest.c, speedtest.h). ENDPOINT is the route's
 * (enum speedtest_endpoint): 404 when its protocol is switched off. A POST to empty or __up
 * is called on the request's first call (http_speedtest_early), to refuse before the body,
 * then for each piece of it, and answered after its end (REQ_SPEED_UP). */
enum MHD_Result http_speedtest(struct listener *l, struct MHD_Connection *conn, struct req *r, int endpoint,
                               const char *method, const char *upload_data, size_t *upload_data_size);
/* ENDPOINT (enum speedtest_endpoint) with METHOD is answered from the request's first call. */
int http_speedtest_early(int endpoint, const char *method);
/* From http_completed: a speed test of R ended with BYTES of body sent or received: its
 * counters, and its place in speedtest.per_ip given back. Nothing for another request. */
void http_speedtest_end(struct listener *l, struct req *r, uint64_t bytes);

#endif
