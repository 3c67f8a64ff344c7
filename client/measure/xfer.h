/* xfer: state shared by one download and its libcurl callbacks (cb_*.c). Internal to the
 * client's download module. */
#ifndef DEBIT_XFER_H
#define DEBIT_XFER_H

#include <curl/curl.h>
#include <jansson.h>
#include <stdint.h>

#include "download.h"
#include "result.h"
#include "series.h"

#define XFER_WINDOW_STEPS 8

enum xfer_stall {
    XFER_STALL_NONE = 0,
    XFER_STALL_NOTHING, /* nothing at all for stall_s */
    XFER_STALL_SLOW,    /* less than stall_rate_Bps over stall_s */
};

struct xfer {
    const struct dl_options *opt;
    const struct dl_hooks *hooks;

    double t_start;       /* sys_mono_s() at curl_easy_perform */
    double t_hdr_end;     /* end of the last response header block */
    double t_last_byte;   /* last body byte */
    double t_last_data;   /* last time anything (header or body) arrived: stall detection */
    double t_progress;    /* last progress hook call */
    double rate_t;        /* rate window start */
    uint64_t rate_bytes;  /* bytes at rate_t */
    double rate_mbps;

    uint64_t bytes;       /* body bytes counted */
    int64_t expected;     /* Content-Length of the final response, else -1 */
    long status;          /* status of the latest response */
    char reason[128];     /* its reason phrase */
    json_t *debit_headers; /* X-Debit-* of the latest response (owned) */

    uint64_t rx_bytes;    /* everything received: header lines and body, counted or not */
    /* --stall-rate's sliding window: checkpoints (time, rx_bytes) at least stall_s /
     * XFER_WINDOW_STEPS apart; the oldest is stall_s old or more once the ring is full. */
    double win_t[XFER_WINDOW_STEPS + 1];
    uint64_t win_b[XFER_WINDOW_STEPS + 1];
    unsigned win_n, win_head;
    uint64_t stall_window_bytes; /* what the failing window received, for the message */
    double stall_window_s;

    int max_bytes_hit;
    enum xfer_stall stalled;
    int interrupted;

    curl_socket_t sock;   /* the latest socket opened (CURL_SOCKET_BAD when none) */
    struct tcp_info_sample tcp; /* of the socket closed last (have == 0: none worth keeping) */

    struct series series;
};

/* Add a checkpoint of rx_bytes at now to the --stall-rate window (cb_xferinfo.c). */
void xfer_window_push(struct xfer *x, double now);

size_t cb_write(char *ptr, size_t size, size_t nmemb, void *ud);
size_t cb_header(char *ptr, size_t size, size_t nitems, void *ud);
int cb_xferinfo(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow);
curl_socket_t cb_opensocket(void *ud, curlsocktype purpose, struct curl_sockaddr *addr);
int cb_closesocket(void *ud, curl_socket_t fd);
int cb_sockopt(void *ud, curl_socket_t fd, curlsocktype purpose);

#endif
