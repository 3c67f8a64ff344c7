/* conn: see conn.h. */
#include "conn.h"

#include <stdlib.h>

struct conn *conn_new(int sock)
{
    struct conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->sock = sock;
    mhd_compat_fd_attach(sock, c);
    return c;
}

void conn_free(struct conn *c)
{
    if (!c)
        return;
    mhd_compat_fd_detach(c->sock, c); /* the descriptor's number will be reused */
    conn_reuse_drop(c);
    free(c->reuse);
    tls_creds_release(c->creds);
    free(c);
}

void conn_reuse_drop(struct conn *c)
{
    if (c->reuse) {
        if (c->reuse->resp)
            MHD_destroy_response(c->reuse->resp);
        c->reuse->resp = NULL;
        c->reuse->sig_len = 0;
    }
}

struct conn *conn_of(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}
