/* http_peer: what a request's client address decides (its peer, its quota). */
#ifndef DEBITD_HTTP_PEER_H
#define DEBITD_HTTP_PEER_H

#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>

#include "http_req.h"
#include "peer.h"
#include "server.h"

/* The client of CONN as a peer: 0, or -1 when MHD gives no IP address. */
int http_peer(struct MHD_Connection *conn, struct peer *p);
/* The client's address as libmicrohttpd holds it (no system call); NULL unknown. */
const struct sockaddr *http_peer_addr(struct MHD_Connection *conn);
/* Charge a response of LEN bytes to its client's quota (r->quota keeps the receipt).
 * Returns 0 to serve it, or 1 (nothing charged) when the address has used its budget:
 * then RETRY (LEN bytes) holds the Retry-After value in seconds. */
int http_quota_refused(struct listener *l, struct MHD_Connection *conn, struct req *r, uint64_t len,
                       char *retry, size_t retrylen);
/* Give back what a response charged but did not send (from http_completed). */
void http_quota_settle(struct listener *l, struct req *r, uint64_t sent);

#endif
