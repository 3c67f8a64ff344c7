/* http_peer: what a request's client address decides: whose transfer record it may read
 * (/transfers/ID in http_pages.c asks http_peer) and how much of its per-address quota is left. */
#include "http_peer.h"
#include "http_req.h"

#include <stdio.h>

#include "sys.h"

const struct sockaddr *http_peer_addr(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    return ci ? ci->client_addr : NULL;
}

int http_peer(struct MHD_Connection *conn, struct peer *p)
{
    return peer_from_sockaddr(http_peer_addr(conn), p);
}

int http_quota_refused(struct listener *l, struct MHD_Connection *conn, struct req *r, uint64_t len,
                       char *retry, size_t retrylen)
{
    struct server *s = l->srv;
    struct peer p;
    if (!s->snap->cfg->per_ip_bytes || http_peer(conn, &p) < 0)
        return 0;
    unsigned char key[PEER_ADDR_LEN];
    peer_quota_key(&p, key);
    uint64_t after = 0;
    if (quota_take(s->quota, key, len, (uint64_t)sys_mono_ms(), &r->quota, &after) != QUOTA_OVER)
        return 0;
    s->counters.quota_refused++;
    snprintf(retry, retrylen, "%llu", (unsigned long long)after);
    return 1;
}

void http_quota_settle(struct listener *l, struct req *r, uint64_t sent)
{
    if (r->quota.bytes > sent)
        quota_refund(l->srv->quota, &r->quota, r->quota.bytes - sent, (uint64_t)sys_mono_ms());
}
