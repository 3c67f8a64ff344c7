/* http_conn: what a kept-alive connection's responses need not read again (its struct
 * conn's facts and kept response, conn.h), and the sender's byte counts that go with it. */
#include "http_conn.h"
#include "http_peer.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "sys.h"
#include "tcp_info.h"

uint64_t http_tcp_bytes_acked(int sock)
{
    struct tcp_info_sample ti;
    char err[128];
    if (sock < 0 || tcp_info_read(sock, &ti, err, sizeof err) < 0)
        return 0;
    return ti.bytes_acked;
}

/* In the connection's struct conn (conn.h), read and written on its worker. Reading the
 * facts for every response was 3 syscalls (getsockopt TCP_CONGESTION and
 * SO_MAX_PACING_RATE, getsockname), about 9 % of debitd's CPU per small request, and the
 * start's TCP_INFO another 4 % (docs/performance.md). */

struct http_conn_facts *http_conn_facts(struct MHD_Connection *conn)
{
    struct conn *c = conn_of(conn);
    return c ? &c->facts : NULL;
}

/* The client's address and port, and "ADDR:PORT" or "[ADDR]:PORT" ("" when unknown). */
static void client_name(struct MHD_Connection *conn, struct http_client *c)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    c->addr[0] = c->remote[0] = 0;
    c->port = 0;
    if (!ci || !ci->client_addr)
        return;
    if (ci->client_addr->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ci->client_addr;
        inet_ntop(AF_INET, &a->sin_addr, c->addr, sizeof c->addr);
        c->port = ntohs(a->sin_port);
        snprintf(c->remote, sizeof c->remote, "%s:%u", c->addr, c->port);
    } else if (ci->client_addr->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ci->client_addr;
        inet_ntop(AF_INET6, &a->sin6_addr, c->addr, sizeof c->addr);
        c->port = ntohs(a->sin6_port);
        snprintf(c->remote, sizeof c->remote, "[%s]:%u", c->addr, c->port);
    }
}

const struct http_client *http_conn_client(struct MHD_Connection *conn, struct http_client *scratch)
{
    struct http_conn_facts *f = http_conn_facts(conn);
    struct http_client *c = f ? &f->client : scratch;
    if (!f || !f->client_read) {
        client_name(conn, c);
        c->have_peer = http_peer(conn, &c->peer) == 0;
        if (f)
            f->client_read = 1;
    }
    return c;
}

struct MHD_Response *http_conn_reuse_get(struct MHD_Connection *conn, const char *sig, size_t len, char **id_at)
{
    struct conn *e = conn_of(conn);
    if (!e || !e->reuse || !e->reuse->resp)
        return NULL;
    struct conn_reuse *u = e->reuse;
    if (u->sig_len != len || memcmp(u->sig, sig, len) != 0) {
        conn_reuse_drop(e); /* something changed (a reload, the offload state, another file) */
        return NULL;
    }
    *id_at = u->id_at;
    return u->resp;
}

int http_conn_reuse_put(struct MHD_Connection *conn, struct MHD_Response *resp, const char *sig, size_t len,
                        char *id_at)
{
    struct conn *e = conn_of(conn);
    if (!e)
        return -1;
    struct conn_reuse *u = e->reuse;
    if (!u || u->resp != resp) { /* a new response: the old one's reference goes */
        conn_reuse_drop(e);
        if (!u || u->cap < len) {
            struct conn_reuse *n = realloc(u, sizeof *n + len);
            if (!n)
                return -1;
            e->reuse = u = n;
            u->cap = len;
        }
        u->resp = resp;
    }
    memcpy(u->sig, sig, len);
    u->sig_len = len;
    u->id_at = id_at;
    return 0;
}

int http_conn_written(struct MHD_Connection *conn, uint64_t *written)
{
    struct http_conn_facts *f = http_conn_facts(conn);
    if (!f || !f->written_known)
        return -1;
    *written = f->written;
    return 0;
}

void http_conn_note_end(struct MHD_Connection *conn, const struct tcp_info_sample *ti)
{
    struct http_conn_facts *f = http_conn_facts(conn);
    if (!f)
        return;
    /* every byte written so far is acknowledged, in flight or not yet sent: the unique
     * bytes sent (all sent minus resent) plus the unsent ones */
    f->written_known = ti && (ti->have & TCP_INFO_HAVE_SENT) && (ti->have & TCP_INFO_HAVE_MIN_RTT) &&
                       ti->bytes_sent >= ti->bytes_retrans;
    f->written = f->written_known ? ti->bytes_sent - ti->bytes_retrans + ti->notsent_bytes : 0;
}
