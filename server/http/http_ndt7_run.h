/* http_ndt7_run: one ndt7 test (M-Lab's spec/ndt7-protocol.md) as http_ndt7.c begins it (the
 * handshake, limits, record) and http_ndt7_run.c runs it on a thread of its own after
 * libmicrohttpd's upgrade. Not used outside server/http/http_ndt7*.c. */
#ifndef DEBITD_HTTP_NDT7_RUN_H
#define DEBITD_HTTP_NDT7_RUN_H

#include <jansson.h>
#include <microhttpd.h>
#include <stdint.h>
#include <sys/socket.h>

#include "http_req.h"
#include "quota.h"
#include "server.h"
#include "transfers.h"

#define NDT7_TEST_S 10.0  /* the spec's test length: the server closes then */
#define NDT7_MAX_S 13.0   /* the spec's MAY-close: anything left is cut */
#define NDT7_MEASURE_S 0.25 /* measurement messages, as ndt-server's mean */

struct ndt7_run {
    struct listener *l;
    struct req *r;     /* its request: libmicrohttpd frees it after the upgrade's close */
    int upload;        /* /ndt/v7/upload: count what arrives; else send */
    int started;       /* the upgrade handler started the thread: it cleans up */
    int finished;      /* the record and the limits are settled */
    uint64_t seq;      /* transfer record; 0 none */
    char id[TRANSFER_ID_LEN];
    struct sockaddr_storage peer; /* counted in srv->ndt7_per_ip */
    socklen_t peer_len;
    unsigned char quota_key[QUOTA_KEY_LEN];
    int quota_on;      /* limits.per_ip_bytes applies: each message is charged before it goes */
    uint64_t prepaid;  /* charged at the handshake, for the first message */
    /* what the measurement messages say besides the counters */
    char client[64], server[64], start_time[40], offload[256], ifname[20];
    /* set by the upgrade handler */
    struct MHD_UpgradeResponseHandle *urh;
    int fd;            /* what the test reads and writes: the TCP socket, or (HTTPS) libmicrohttpd's socketpair end */
    int tcp_fd;        /* the connection's TCP socket (TCP_INFO) */
    int tls;           /* fd is the socketpair: frames are written from the map, not with sendfile */
    void *tls_session; /* HTTPS: libmicrohttpd's gnutls_session_t, which the test writes to itself, or NULL */
    int tls_recv;      /* ... and receives from too (libmicrohttpd's relay reads no more) */
    char *extra;       /* bytes libmicrohttpd read past the request (owned) */
    size_t extra_len, extra_off;
    /* the outcome */
    uint64_t bytes;    /* payload bytes sent (download) or received (upload) */
    uint64_t frames;
    int ok;            /* the test ran its 10 s (or the client closed it) without an error */
    double seconds;
    json_t *entry;     /* the record at its end, for the access log (owned) */
};

/* libmicrohttpd's MHD_UpgradeHandler (http_ndt7_run.c): takes the socket and starts the
 * test's thread; CLS is the struct ndt7_run. */
void http_ndt7_upgraded(void *cls, struct MHD_Connection *conn, void *req_cls, const char *extra_in,
                        size_t extra_in_size, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh);
/* Settle RUN's record, metrics and per-address slot once (the thread's end, or a request
 * that never upgraded). The caller holds the server's read lock. */
void http_ndt7_finish(struct ndt7_run *run);

#endif
