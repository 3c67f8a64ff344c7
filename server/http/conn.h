/* conn: everything debitd remembers about one libmicrohttpd connection, in one struct (as
 * lwan's struct lwan_connection). Made at MHD_CONNECTION_NOTIFY_STARTED and hung on the
 * connection's socket context, read back with MHD_CONNECTION_INFO_SOCKET_CONTEXT (conn_of),
 * freed once at MHD_CONNECTION_NOTIFY_CLOSED. The interposers, which see only a
 * descriptor, find it through mhd_compat's one descriptor table (conn_new puts it there).
 *
 * Every field is read and written on the connection's libmicrohttpd worker thread, but for
 * the deadline entry (deadline.h locks it for the watchdog thread) and the interposers'
 * state (mhd_compat.h). */
#ifndef DEBITD_CONN_H
#define DEBITD_CONN_H

#include <microhttpd.h>

#include "deadline.h"
#include "http_conn.h"
#include "mhd_compat.h"
#include "tls.h"

/* A response kept for the connection's next request, with one reference of its own
 * (http_conn.c). */
struct conn_reuse {
    struct MHD_Response *resp;
    char *id_at; /* libmicrohttpd's copy of its X-Debit-Transfer value, NULL when it has none */
    size_t sig_len, cap;
    char sig[]; /* http_file_head_sig and the body, cap bytes */
};

struct conn {
    struct mhd_fd_state io;         /* the interposers' (nopush.h, sendstep.h) */
    int sock;
    struct deadline_conn *deadline; /* the watchdog's entry (watchdog.h), or NULL */
    struct tls_creds *creds;        /* the credentials its TLS handshake uses, or NULL */
    struct http_conn_facts facts;   /* what its responses repeat (http_conn.c) */
    struct conn_reuse *reuse;       /* its last small file response (http_conn.c), or NULL */
    void **req_cls;                 /* the request the access handler is running (http_log.c) */
    int ack_slot;                   /* its last body's ack_watch slot + 1, 0 = none (ack_watch.h) */
    uint64_t ack_seq;               /* that body's transfer */
};

/* A new connection on SOCK (zeroed), in mhd_compat's descriptor table. NULL when out of
 * memory (the connection is then served without what it would remember). */
struct conn *conn_new(int sock);
/* Free C: out of the descriptor table, its kept response and credentials released (the
 * caller closes its deadline entry first). NULL is fine. */
void conn_free(struct conn *c);
/* Give up C's kept response (its reference; the allocation stays for the next one). */
void conn_reuse_drop(struct conn *c);
/* The struct conn of libmicrohttpd's CONN (its socket context), or NULL. */
struct conn *conn_of(struct MHD_Connection *conn);

#endif
