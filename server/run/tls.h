/* tls: HTTPS listeners (listen[].tls) through libmicrohttpd's GnuTLS support.
 *
 * A TLS listener owns a `struct tls_listener`: the current certificate chain and key (a
 * reference-counted `tls_creds`, swapped by tls_reload) and its GnuTLS priority string.
 * libmicrohttpd asks for the certificate in every handshake (MHD_OPTION_HTTPS_CERT_CALLBACK,
 * gnutls_certificate_retrieve_function2); the callback hands out the credentials that were
 * current when the connection was accepted (tls_creds_take), and the connection keeps a
 * reference to them until libmicrohttpd has released its GnuTLS session (tls_creds_release).
 * So a reload swaps the credentials for NEW connections and never touches open ones.
 *
 * Files are read by tls_listener_new / tls_reload with the privileges of the caller: at
 * start (before privdrop) a root-only 0600 key is fine; a reload after the privilege drop
 * reads them as the configured user (docs/deploy.md). */
#ifndef DEBITD_TLS_H
#define DEBITD_TLS_H

#include <gnutls/abstract.h>
#include <jansson.h>
#include <microhttpd.h>
#include <stddef.h>
#include <time.h>

/* What listen[].tls.priorities defaults to: TLS 1.3 and 1.2 only, as nginx's default
 * ssl_protocols (GnuTLS's "NORMAL" alone still offers TLS 1.0 and 1.1). */
#define TLS_DEFAULT_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

/* Which setting a tls_check failure is about (the config file names it). */
enum tls_field {
    TLS_FIELD_CERT = 0,
    TLS_FIELD_KEY,
    TLS_FIELD_PRIORITIES,
};

struct tls_listener;
struct tls_creds;

/* Whether this libmicrohttpd can serve HTTPS with a certificate callback: 0, or -1 with a
 * reason ("libmicrohttpd was built without TLS support"). */
int tls_available(char *err, size_t errlen);

/* Check a listener's TLS settings as debitd -t does: CERT (PEM chain) and KEY (PEM) can be
 * read, parsed, and the key matches the certificate; PRIORITIES (NULL = the default) is a
 * valid GnuTLS priority string. Returns 0, or -1 with a plain reason in err and the
 * setting it is about in *field. */
int tls_check(const char *cert, const char *key, const char *priorities, enum tls_field *field, char *err,
              size_t errlen);

/* A TLS listener with CERT, KEY and PRIORITIES (NULL = the default), the files read now.
 * NULL with err (the reason names the file). Free with tls_listener_free once the daemon
 * that uses it has stopped. */
struct tls_listener *tls_listener_new(const char *cert, const char *key, const char *priorities, char *err,
                                      size_t errlen);
void tls_listener_free(struct tls_listener *t);

/* Re-read CERT and KEY (e.g. on SIGHUP) and make them the credentials of every handshake
 * that starts on a connection accepted from now on; open connections keep theirs. On any
 * error (unreadable file, a key that does not match) the old credentials stay in use and
 * -1 is returned with err. Thread-safe against the serving threads. Returns 0. */
int tls_reload(struct tls_listener *t, const char *cert, const char *key, char *err, size_t errlen);

/* The libmicrohttpd side: OR these flags into MHD_start_daemon's, and append the two
 * options (CERT_CALLBACK, priorities) at OPTS[*N] (room for 2 needed). The callback
 * (mhd_compat_tls_cert) finds the connection's credentials: tls_creds_cert, or
 * tls_thread_cert. */
unsigned tls_mhd_flags(void);
void tls_mhd_options(struct tls_listener *t, gnutls_certificate_retrieve_function2 *cert_callback,
                     struct MHD_OptionItem *opts, int *n);
/* Session tickets with T's key on SESSION, a server session before its first handshake
 * byte: a client that comes back with a ticket resumes without the certificate's signature
 * and a full key exchange (TLS 1.3 PSK with ECDHE, or a TLS 1.2 ticket), as with nginx.
 * Nothing to fail: without them every handshake is a full one. The caller knows when a
 * session is in that state (libmicrohttpd's side: mhd_compat_tls_started). */
void tls_session_tickets(struct tls_listener *t, gnutls_session_t session);
/* A reference to T's current credentials, taken for a connection at
 * MHD_CONNECTION_NOTIFY_STARTED (before its handshake) and released at _CLOSED (which
 * libmicrohttpd sends after gnutls_deinit): a reload never touches an open connection's.
 * Worker thread. */
struct tls_creds *tls_creds_take(struct tls_listener *t);
void tls_creds_release(struct tls_creds *c); /* NULL is fine */
/* The certificate chain and key of C (what the certificate callback returns; borrowed,
 * valid while the reference is held): 0, or -1 when C is NULL. */
int tls_creds_cert(const struct tls_creds *c, gnutls_pcert_st **pcert, unsigned *n, gnutls_privkey_t *key);
/* Without the connection (a libmicrohttpd whose GnuTLS session pointer is not known to be
 * its MHD_Connection): the current credentials of the listener whose credentials were last
 * taken on this thread (tls_creds_take: a libmicrohttpd worker serves one daemon). 0, or -1 when none
 * started here. Borrowed: valid while the listener lives if it keeps its retired ones. */
int tls_thread_cert(gnutls_pcert_st **pcert, unsigned *n, gnutls_privkey_t *key);
/* From now on a reload keeps T's replaced credentials until tls_listener_free: a
 * handshake given them by tls_thread_cert holds no reference of its own. */
void tls_listener_keep_retired(struct tls_listener *t);

/* "TLS1.3; TLS_AES_256_GCM_SHA384" for a connection's negotiated version and cipher suite
 * (IANA name), or "none" on a plain HTTP connection: the X-Debit-Tls header value. */
void tls_conn_describe(struct MHD_Connection *conn, char *buf, size_t len);

/* /status's "tls" object of a listener: certificate file, subject, not_after (UTC),
 * priorities, the versions they allow, reload count. A new object. */
json_t *tls_listener_json(struct tls_listener *t);

#endif
