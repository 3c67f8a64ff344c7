/* ndt7: debit as an ndt7 client (M-Lab's spec/ndt7-protocol.md): `debit ws://HOST/ndt/v7/download`
 * (or wss://, or .../upload) measures an ndt7 server as a file download is measured —
 * bytes, rates, the series, the receiver's TCP_INFO — and keeps the server's measurement
 * messages as the server's side of the run: the last one whole (its TCPInfo is the
 * sender's TCP_INFO, for a download), and from debitd its /transfers/ID record (the 101's
 * X-Debit-Transfer). The WebSocket is ws.c's. */
#ifndef DEBIT_NDT7_H
#define DEBIT_NDT7_H

#include "download.h"
#include "result.h"

#define NDT7_PROTOCOL "net.measurementlab.ndt.v7"
#define NDT7_UPLOAD_S 10.0 /* the client's part of an upload (the spec's 10 s) */
#define NDT7_MAX_S 15.0    /* no close by then: the client ends the test (ndt-server's limit) */

/* 1 when URL is ws:// or wss:// (an ndt7 test), else 0. */
int ndt7_is_url(const char *url);
/* Run the ndt7 test at URL (the path's last element says download or upload) into R, as
 * dl_perform does a download: never fails, the outcome is in r->ok / r->error. */
void ndt7_perform(const char *url, const struct dl_options *o, const struct dl_hooks *h, struct run_result *r);

#endif
