/* http_conn: what a connection's responses repeat (its local address, TCP profile, client,
 * bytes written so far) and the reuse of its small file responses. Kept in its struct conn
 * (conn.h). */
#ifndef DEBITD_HTTP_CONN_H
#define DEBITD_HTTP_CONN_H

#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "peer.h"
#include "tcp_info.h"

/* Sender-side tcpi_bytes_acked of SOCK (http_conn.c); 0 if unreadable. */
uint64_t http_tcp_bytes_acked(int sock);
/* What a connection's responses repeat (http_conn.c): filled by its first file response */
/* A connection's client as a transfer record and the access log name it. */
struct http_client {
    char addr[46];   /* numeric address (INET6_ADDRSTRLEN); "" when unknown */
    unsigned port;
    char remote[64]; /* "ADDR:PORT" or "[ADDR]:PORT"; "" when unknown */
    int have_peer;   /* peer is read (the record's owner) */
    struct peer peer;
};

struct http_conn_facts {
    int filled;                    /* have_local, local and tcp are read */
    int have_local;
    struct sockaddr_storage local; /* port 0 */
    char tcp[160];                 /* the X-Debit-Tcp value */
    int client_read;               /* client is read */
    struct http_client client;     /* a transfer record's remote and owner */
    int written_known;             /* written is true of the connection's stream so far */
    uint64_t written;              /* bytes handed to the kernel by the responses so far */
};
struct conn;
/* The facts of CONN (in its struct conn, conn.h: zeroed when it started), or NULL when it
 * has none (out of memory at its start). Valid until the connection closes. Called on the
 * connection's worker thread, as every function below. */
struct http_conn_facts *http_conn_facts(struct MHD_Connection *conn);
/* CONN's client, read on the connection's first call and kept in its facts (for every
 * request, inet_ntop and snprintf were 2.3 % of a small request's CPU): a pointer into
 * them, or to SCRATCH, filled, when there are none. */
const struct http_client *http_conn_client(struct MHD_Connection *conn, struct http_client *scratch);
/* Bytes CONN's earlier responses handed to the kernel, as the last response's own end read
 * of TCP_INFO left them (http_conn_note_end): 0 and *WRITTEN set when known, -1 when not
 * (the connection's first response, a response in between that had no such read, or no
 * struct conn). A response's acknowledged bytes are then tcpi_bytes_acked at its end minus
 * this, with no TCP_INFO read at its start. */
int http_conn_written(struct MHD_Connection *conn, uint64_t *written);
/* Note the end of one of CONN's responses: TI its TCP_INFO read at the end (bytes handed to
 * the kernel = tcpi_bytes_sent - tcpi_bytes_retrans + tcpi_notsent_bytes), or NULL when
 * the response had none (what follows is then unknown). */
void http_conn_note_end(struct MHD_Connection *conn, const struct tcp_info_sample *ti);
/* Reuse of a connection's small file responses (http_conn.c): building one (13 headers,
 * three allocations each, and as many frees) was about 10 % of a 4 KiB request's CPU, and a
 * kept-alive connection asks for the same file again (docs/performance.md). */
/* The response CONN's previous file request kept (http_conn_reuse_put) when its signature
 * equals SIG (LEN bytes): it carries exactly the headers and body this request's would,
 * but for X-Debit-Transfer, whose value libmicrohttpd keeps at *ID_AT (NULL when the
 * response has none), and nobody else holds it (its request is over). Owned by the
 * connection: not to be destroyed. NULL when there is none or it differs (then it is
 * dropped). */
struct MHD_Response *http_conn_reuse_get(struct MHD_Connection *conn, const char *sig, size_t len, char **id_at);
/* Keep RESP, with signature SIG and its X-Debit-Transfer value at ID_AT (libmicrohttpd's
 * copy, mhd_compat_header_at; NULL: none), for CONN's next request: 0 when the connection
 * took over the caller's reference (or already had RESP, from http_conn_reuse_get), -1
 * when it has no struct conn or no memory (the caller keeps it). */
int http_conn_reuse_put(struct MHD_Connection *conn, struct MHD_Response *resp, const char *sig, size_t len,
                        char *id_at);

#endif
