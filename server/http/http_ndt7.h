/* http_ndt7: the ndt7 routes (M-Lab's spec/ndt7-protocol.md): the handshake, the limits
 * and the record, before libmicrohttpd's upgrade hands the test to http_ndt7_run. */
#ifndef DEBITD_HTTP_NDT7_H
#define DEBITD_HTTP_NDT7_H

#include <jansson.h>
#include <microhttpd.h>
#include <stdint.h>

#include "http_req.h"
#include "server.h"

/* GET /ndt/v7/download or /ndt/v7/upload (UPLOAD) (http_ndt7.c): the WebSocket handshake
 * checked (400 as ndt-server when it is not one, or lacks the ndt7 subprotocol), the
 * per-address cap (429) and quota (429) applied, a transfer record begun, and a 101 queued
 * whose upgrade starts the test's thread (http_ndt7_run.c). */
enum MHD_Result http_ndt7(struct listener *l, struct MHD_Connection *conn, struct req *r, int upload);
/* The request of an ndt7 test completes (from http_completed, after the thread let go of
 * the connection, or when the upgrade never happened): the record's JSON for the access log
 * (a new reference, or NULL) and the payload bytes in *BYTES; R's test is freed. */
json_t *http_ndt7_completed(struct listener *l, struct req *r, uint64_t *bytes);

#endif
