/* cb_sock: libcurl's open/close socket callbacks. They let us read the receiver's
 * TCP_INFO at the very end of the connection, just before libcurl closes it (each download
 * uses its own connection, so the socket closed last is the one that carried the body). */
#include "xfer.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* From the kernel's enum (include/net/tcp_states.h); linux/tcp.h does not export it. */
enum { STATE_SYN_SENT = 2, STATE_CLOSE = 7 };

void xfer_read_tcp_info(int fd, struct tcp_summary *t)
{
    struct tcp_info ti;
    socklen_t len = sizeof ti;
    memset(&ti, 0, sizeof ti);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
        return;
    /* A socket that never connected (refused, timeout) tells nothing worth keeping. */
    if (ti.tcpi_state == STATE_SYN_SENT || (ti.tcpi_state == STATE_CLOSE && ti.tcpi_segs_in == 0))
        return;
    t->valid = 1;
    t->rtt_ms = ti.tcpi_rtt / 1000.0;
    t->rttvar_ms = ti.tcpi_rttvar / 1000.0;
    t->min_rtt_ms = ti.tcpi_min_rtt / 1000.0;
    t->rcv_rtt_ms = ti.tcpi_rcv_rtt / 1000.0;
    t->total_retrans = ti.tcpi_total_retrans;
    t->lost = ti.tcpi_lost;
    t->reordering = ti.tcpi_reordering;
    t->snd_mss = ti.tcpi_snd_mss;
    t->rcv_mss = ti.tcpi_rcv_mss;
    t->advmss = ti.tcpi_advmss;
    t->pmtu = ti.tcpi_pmtu;
    t->rcv_space = ti.tcpi_rcv_space;
    t->rcv_ssthresh = ti.tcpi_rcv_ssthresh;
    t->bytes_received = ti.tcpi_bytes_received;
    t->segs_in = ti.tcpi_segs_in;
    t->data_segs_in = ti.tcpi_data_segs_in;
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
        struct tcp_summary t = {0};
        xfer_read_tcp_info(fd, &t);
        if (t.valid)
            x->tcp = t;
        x->sock = CURL_SOCKET_BAD;
    }
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
