/* cb_sock: libcurl's open/close socket callbacks. They let us read the receiver's
 * TCP_INFO at the very end of the connection, just before libcurl closes it (each download
 * uses its own connection, so the socket closed last is the one that carried the body). */
#include "xfer.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

/* A socket that never connected tells nothing worth keeping: still SYN_SENT (timed out),
 * or CLOSE having received at most one segment (the RST refusing the SYN). One that did
 * connect received the SYN-ACK and then at least a FIN or RST. */
static int connected(const struct tcp_info_sample *t)
{
    return t->state != TCP_SYN_SENT && !(t->state == TCP_CLOSE && t->segs_in <= 1);
}

curl_socket_t cb_opensocket(void *ud, curlsocktype purpose, struct curl_sockaddr *addr)
{
    struct xfer *x = ud;
    (void)purpose;
    curl_socket_t fd = socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
    if (fd != CURL_SOCKET_BAD)
        x->sock = fd;
    return fd;
}

int cb_closesocket(void *ud, curl_socket_t fd)
{
    struct xfer *x = ud;
    if (fd == x->sock) {
        struct tcp_info_sample t;
        if (tcp_info_read(fd, &t, NULL, 0) == 0 && connected(&t)) {
            x->tcp = t;
            int v = 0;
            socklen_t len = sizeof v;
            x->so_rcvbuf = getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, &len) == 0 ? v : -1;
        }
        x->sock = CURL_SOCKET_BAD;
    }
    /* Its number may be reused by the next connection (a redirect): read it no more. */
    if (fd == x->ks.fd)
        x->ks.fd = -1;
    return close(fd);
}

/* --rcvbuf: a fixed receive buffer instead of autotuning. SO_RCVBUFFORCE (root) passes
 * net.core.rmem_max, which caps SO_RCVBUF (4 MiB here, below autotuning's 32 MiB). */
int cb_sockopt(void *ud, curl_socket_t fd, curlsocktype purpose)
{
    struct xfer *x = ud;
    if (purpose != CURLSOCKTYPE_IPCXN || !x->opt->rcvbuf)
        return CURL_SOCKOPT_OK;
    int v = x->opt->rcvbuf > (1u << 30) ? 1 << 30 : (int)x->opt->rcvbuf;
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof v) != 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof v);
    return CURL_SOCKOPT_OK;
}
