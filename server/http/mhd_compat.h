/* mhd_compat: everything debitd does beneath libmicrohttpd's public API, in one place (as
 * lwan keeps its platform gaps in src/lib/missing/). Each "trick" below relies on how one
 * libmicrohttpd version behaves inside; each has a fallback that uses the public API only.
 *
 *   MHD_TRICK_SETSOCKOPT   debitd defines setsockopt(): libmicrohttpd's TCP_CORK and
 *                          TCP_NODELAY calls reach it (tcp_nopush, nopush.h). Fallback:
 *                          libmicrohttpd's order, headers pushed alone.
 *   MHD_TRICK_SENDFILE     debitd defines sendfile64(): libmicrohttpd's 128 KiB sendfile
 *                          steps reach it and may be widened (sendstep.h). Fallback: its
 *                          own steps.
 *   MHD_TRICK_HEADER_WRITE a kept response's X-Debit-Transfer value is written over in
 *                          libmicrohttpd's own copy (mhd_compat_header_replace). Fallback:
 *                          MHD_del_response_header + MHD_add_response_header.
 *   MHD_TRICK_QUERY_CUT    a query too large for the connection pool is cut at its '?' in
 *                          libmicrohttpd's read buffer, from the URI log callback, so that
 *                          its parser (which before 1.0 loses its own 431) stores none
 *                          (mhd_compat_cut_query). Fallback: not cut (the 414 is still
 *                          queued if the handler is called).
 *   MHD_TRICK_LAYOUT       strict HTTP reads where 0.9.75 lays a request's lines in its read
 *                          buffer (a NUL inside a line, an obs-fold: http_guard.c).
 *                          Fallback: those two checks are skipped; the others run.
 *   MHD_TRICK_LOG_TEXT     libmicrohttpd's once-per-connection log messages are recognised
 *                          by their text and counted by the refusal log instead of logged
 *                          (mhd_compat_log_reason). Fallback: each is a log line.
 *   MHD_TRICK_EXPECT_BLANK a GET's "Expect: 100-continue" without a body is blanked in
 *                          libmicrohttpd's header copy before it answers 100 (0.9.75 sends
 *                          100, then loses a pipelined request: mhd_compat_expect_blank).
 *                          Fallback: libmicrohttpd's own behaviour.
 *   MHD_TRICK_TLS_SESSION  the GnuTLS session's user pointer is the MHD_Connection, which
 *                          is how the certificate callback (no closure of its own) finds the
 *                          credentials the connection was accepted with. Fallback: the
 *                          listener's current credentials at the handshake, found through
 *                          the worker thread (tls.h, tls_thread_cert).
 *   MHD_TRICK_TLS_START    at MHD_CONNECTION_NOTIFY_STARTED the connection's GnuTLS session
 *                          exists and has not begun its handshake, and its transport is the
 *                          connection's socket (gnutls_transport_get_int): session tickets
 *                          and the Finished hook's TCP_QUICKACK are set up then
 *                          (mhd_compat_tls_started). Fallback: neither (every handshake a
 *                          full one; a client's first request may wait for a delayed ACK).
 *   MHD_TRICK_TLS_WRITE    after an upgrade on HTTPS the ndt7 thread writes its frames into
 *                          the connection's GnuTLS session itself (mhd_compat_upgraded_session):
 *                          libmicrohttpd's relay sends on it only what the application writes
 *                          to its socketpair end, so the thread is its only sender. Fallback:
 *                          the frames go through the socketpair and the relay.
 *   MHD_TRICK_RELAY_RECV   ... and receives the client's bytes from it too, the relay told to
 *                          read no more (its receive size set to 0 in the upgrade handler,
 *                          after checking every field of 0.9.75's handle that it expects:
 *                          mhd_compat_relay_recv_off). 0.9.75 leaves the relay of an HTTPS
 *                          upgrade its 8-byte emergency buffer (the 101's write buffer took the
 *                          whole memory pool and is not given back), 4 bytes a step each way;
 *                          and one thread sends and receives, so a TLS 1.3 KeyUpdate GnuTLS
 *                          answers while receiving never races the frames. Fallback: the
 *                          relay receives, 4 bytes a step (with TLS_WRITE on, while the
 *                          thread sends: GnuTLS's one sender and one receiver).
 *
 * Not a trick but an assumption tested with the rest: a 304 carries the Content-Length of
 * the response's size and never reads its body (0.9.75 does it; 1.0 documents it at
 * MHD_queue_response): mhd_compat_response_304.
 *
 * mhd_compat_probe() decides once, at start (before the seccomp filter: it calls dlsym),
 * which tricks are on: all of them only for a libmicrohttpd version in MHD_COMPAT_VERIFIED
 * whose setsockopt/sendfile64 calls really reach debitd's; none for any other version, or
 * when the environment has DEBITD_MHD_COMPAT=plain (tests run the fallbacks so). Auditing a
 * new libmicrohttpd: docs/architecture.md, "Upgrading libmicrohttpd";
 * tests/unit/server/http/test_mhd_compat.c asserts each assumption against the installed
 * library.
 *
 * The interposers only see a descriptor: one table, indexed by descriptor below
 * MHD_COMPAT_MAX_FD, holds a pointer to each connection's struct conn (conn.h), whose
 * struct mhd_fd_state is what they read. */
#ifndef DEBITD_MHD_COMPAT_H
#define DEBITD_MHD_COMPAT_H

#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "refusal_log.h"

#define MHD_COMPAT_VERIFIED "0.9.75" /* comma-separated: the versions every trick was verified with */
#define MHD_COMPAT_ENV "DEBITD_MHD_COMPAT" /* "plain": every trick off, as for an unknown version */
#define MHD_COMPAT_MAX_FD 65536

enum mhd_trick {
    MHD_TRICK_SETSOCKOPT = 1u << 0,
    MHD_TRICK_SENDFILE = 1u << 1,
    MHD_TRICK_HEADER_WRITE = 1u << 2,
    MHD_TRICK_QUERY_CUT = 1u << 3,
    MHD_TRICK_LAYOUT = 1u << 4,
    MHD_TRICK_LOG_TEXT = 1u << 5,
    MHD_TRICK_TLS_SESSION = 1u << 6,
    MHD_TRICK_EXPECT_BLANK = 1u << 7,
    MHD_TRICK_TLS_START = 1u << 8,
    MHD_TRICK_TLS_WRITE = 1u << 9,
    MHD_TRICK_RELAY_RECV = 1u << 10,
};
#define MHD_TRICK_ALL 0x7ffu

struct conn;
struct tls_listener;

/* What the interposers keep of a connection's socket (in its struct conn; written and
 * read on its worker). */
struct mhd_fd_state {
    _Atomic unsigned char nopush; /* nopush.c's NOPUSH_* bits */
    _Atomic uint64_t send_end;    /* sendstep.c: the sendfile body's end in the region + 1; 0: none */
};

/* Decide which tricks are on (see above) and log it: one info line naming the version and
 * the tricks, or a warning naming what falls back. Idempotent; the first call of any
 * function below probes too, silently. Returns the tricks that are on. */
unsigned mhd_compat_probe(void);
/* True when TRICK is on; the tricks that are on (mhd_compat_state.c, as below). */
int mhd_compat_on(enum mhd_trick trick);
unsigned mhd_compat_tricks(void);
/* Why every trick is off ("DEBITD_MHD_COMPAT=plain", "not a version debitd was verified
 * with"), or NULL when the version is a verified one. */
const char *mhd_compat_plain_reason(void);
/* Tests: probe again as if the version were unknown (UNKNOWN = 1) or as found (0). */
void mhd_compat_force_unknown(int unknown);
/* Tests: probe again with the tricks in SET off, as in a build that lacks them (0: none). */
void mhd_compat_force_off(unsigned set);
/* "setsockopt interposer, sendfile64 interposer, ..." for the tricks in SET ("none"). */
void mhd_compat_describe(unsigned set, char *buf, size_t len);

/* The interposers' state of the connection on descriptor FD, or NULL (none, or FD beyond
 * the table). */
struct mhd_fd_state *mhd_compat_fd(int fd);
/* C is the connection on FD from now on (conn_new); until mhd_compat_fd_detach(FD, C)
 * (conn_free: only if it is still C). */
void mhd_compat_fd_attach(int fd, struct conn *c);
void mhd_compat_fd_detach(int fd, struct conn *c);
/* The kernel's setsockopt, never the interposer. */
int mhd_compat_kernel_setsockopt(int fd, int level, int name, const void *val, socklen_t len);
/* Whether the interposers were entered since the last mhd_compat_seen_reset (tests): the
 * bits MHD_TRICK_SETSOCKOPT and MHD_TRICK_SENDFILE, whatever the tricks' state; and
 * MHD_TRICK_TLS_START once the Finished hook ran on a socket. */
unsigned mhd_compat_seen(void);
void mhd_compat_seen_reset(void);

/* The header NAME of RESP, where libmicrohttpd keeps its value (NULL: none). Read-only
 * unless MHD_TRICK_HEADER_WRITE is on. */
char *mhd_compat_header_at(struct MHD_Response *resp, const char *name);
/* Give RESP's header NAME (now AT, from mhd_compat_header_at, or NULL) the value VALUE
 * ("" removes it). Written over in place when the trick is on and the lengths are equal;
 * else deleted and added. Returns where the value now is (NULL: none). Only for a response
 * nobody else holds and not yet queued. */
char *mhd_compat_header_replace(struct MHD_Response *resp, const char *name, char *at, const char *value);
/* From the URI log callback: cut URI's query at its '?' in libmicrohttpd's read buffer
 * (MHD_TRICK_QUERY_CUT). Returns 1 if cut, 0 if not (trick off, or no query). */
int mhd_compat_cut_query(const char *uri);
/* Blank the value V (libmicrohttpd's copy of a request's Expect header, as
 * MHD_lookup_connection_value_n gave it) so that no 100 Continue is sent, when
 * MHD_TRICK_EXPECT_BLANK is on. Returns 1 if blanked, 0 if not. */
int mhd_compat_expect_blank(const char *v);
/* The refusal a libmicrohttpd log message MSG stands for, or REFUSAL_N (log it as it is;
 * always REFUSAL_N when MHD_TRICK_LOG_TEXT is off). */
enum refusal_reason mhd_compat_log_reason(const char *msg);
/* The texts mhd_compat_log_reason knows, in order (tests), and how many. */
const char *mhd_compat_log_text(size_t i, enum refusal_reason *reason);
size_t mhd_compat_log_texts(void);
/* A 304 for a body of SIZE bytes: libmicrohttpd writes SIZE as its Content-Length (the
 * 200's, RFC 9110 8.6) and sends no body. NULL when out of memory. */
struct MHD_Response *mhd_compat_response_304(uint64_t size);
/* The MHD_Connection of a TLS handshake's SESSION (MHD_TRICK_TLS_SESSION), or NULL. */
struct MHD_Connection *mhd_compat_tls_connection(gnutls_session_t session);
/* At MHD_CONNECTION_NOTIFY_STARTED of CONN on a TLS listener T, before its handshake: T's
 * session tickets (tls_session_tickets) and the Finished hook's TCP_QUICKACK on its GnuTLS
 * session, when MHD_TRICK_TLS_START is on. Returns 1 if set up, 0 if not. */
int mhd_compat_tls_started(struct MHD_Connection *conn, struct tls_listener *t);
/* The GnuTLS session an upgraded HTTPS connection CONN's thread may write to itself
 * (MHD_TRICK_TLS_WRITE), or NULL: write to the upgrade's socket, libmicrohttpd relays it. */
gnutls_session_t mhd_compat_upgraded_session(struct MHD_Connection *conn);
/* From the upgrade handler of an HTTPS connection CONN (URH, the application's socket
 * SOCK): tell libmicrohttpd's relay to receive no more, when MHD_TRICK_RELAY_RECV and
 * MHD_TRICK_TLS_WRITE are on and URH holds what 0.9.75's does there. Returns 1 when the
 * caller must now receive on the session itself (gnutls_record_recv, polling the TCP
 * socket; the socketpair stays silent), 0 when the client's bytes still come through the
 * socketpair (a warning once when the handle is not as expected). */
int mhd_compat_relay_recv_off(struct MHD_Connection *conn, struct MHD_UpgradeResponseHandle *urh, int sock);
/* The certificate callback (gnutls_certificate_retrieve_function2) of every TLS listener:
 * the connection's credentials (its struct conn's, tls_creds_cert), or with the trick off
 * the worker thread's listener's (tls_thread_cert). */
int mhd_compat_tls_cert(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
                        const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length, gnutls_pcert_st **pcert,
                        unsigned int *pcert_length, gnutls_privkey_t *privkey);

#endif
