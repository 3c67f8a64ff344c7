/* server_record: after a download from debitd, fetch the server's own record of it (sender
 * TCP_INFO: cwnd, retransmits, rwnd/sndbuf-limited times...) from /transfers/ID, ID being
 * the response's X-Debit-Transfer header — like iperf3's --get-server-output, so a result
 * says why a server was slower. Contract with debitd: 200 with a JSON object whose "state"
 * is "sending" or "done"; 404 until the record exists. */
#ifndef DEBIT_SERVER_RECORD_H
#define DEBIT_SERVER_RECORD_H

#include <stddef.h>

#include "download.h"
#include "result.h"

/* Total time spent retrying while the record says "sending" or is not there yet. */
#define SERVER_RECORD_RETRY_S 1.0

/* If r came from a server that sent X-Debit-Transfer, fetch /transfers/ID from the same
 * scheme://host:port (with o's --resolve/--connect-to/interface settings) and store the
 * object in r->server_record. Returns 1 when stored, 0 when r has no transfer ID, -1 when
 * the fetch failed (err says why; the run itself stays as it was). */
int server_record_fetch(struct run_result *r, const struct dl_options *o, char *err, size_t errlen);

/* The /transfers/ID URL for base URL `url` and `id` (new string, caller frees), or NULL. */
char *server_record_url(const char *url, const char *id);

#endif
