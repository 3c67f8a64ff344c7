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
/* A small answer of BODY (LEN bytes, copied) to a speed-test request of endpoint E with
 * its protocol's headers (the query's cors asked for), and NAME: VALUE (NAME may be NULL). */
enum MHD_Result http_speedtest_answer(struct listener *l, struct MHD_Connection *conn, struct req *r, int e,
                                      unsigned status, const char *body, size_t len, const char *type,
                                      const char *name, const char *value);
/* J as PHP's json_encode writes it ("\/", "\u00e9"), compact, keys in order: a new string,
 * NULL when out of memory. J is released. */
char *http_php_json(json_t *j);

#endif
