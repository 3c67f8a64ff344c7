/* server_record: after a download from debitd, fetch the server's own record of it (sender
 * TCP_INFO: cwnd, total_retrans, rwnd/sndbuf-limited times...; docs/tcp_info.md) from
 * WIRE_TRANSFERS_PATH ID, ID being the response's WIRE_HDR_TRANSFER header — like iperf3's
 * --get-server-output, so a result says why a server was slower. dl_perform calls it as
 * the last step of a successful download: the record is part of the run's data. Contract
 * with debitd: common/wire.h. */
#ifndef DEBIT_SERVER_RECORD_H
#define DEBIT_SERVER_RECORD_H

#include <jansson.h>
#include <stddef.h>

#include "download.h"
#include "result.h"

/* Total time spent retrying while the record says "sending" or is not there yet. */
#define SERVER_RECORD_RETRY_S 1.0

/* The body of a 200 answer to GET WIRE_TRANSFERS_PATH ID (NUL-terminated; NULL: none) as
 * a new JSON object (caller decrefs), or NULL when it is not one. *sending is set to 1
 * when its "state" is "sending" (debitd is still sending: worth asking again), else 0.
 * Pure: the seam fuzz/fuzz_transfers_json.c drives. */
json_t *server_record_parse(const char *body, int *sending);

/* If r came from a server that sent X-Debit-Transfer, fetch its record from the same
 * scheme://host:port (with o's --resolve/--connect-to/interface settings, and the IP
 * family the download used: debitd serves a record only to the address that made the
 * transfer, docs/server.md) and store the
 * object in r->server_record. Returns 1 when stored, 0 when r has no transfer ID, -1 when
 * the fetch failed (err says why; the run itself stays as it was). */
int server_record_fetch(struct run_result *r, const struct dl_options *o, char *err, size_t errlen);

#endif
