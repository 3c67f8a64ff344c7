/* http: libmicrohttpd callbacks (kept apart from the rest, like curl's tool_cb_*.c). The
 * cls of every callback is the struct listener the connection arrived on. */
#ifndef DEBITD_HTTP_H
#define DEBITD_HTTP_H

#include <microhttpd.h>
#include <stdarg.h>

#include "server.h"

enum MHD_Result http_access(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                            const char *version, const char *upload_data, size_t *upload_data_size,
                            void **req_cls);
void http_completed(void *cls, struct MHD_Connection *conn, void **req_cls, enum MHD_RequestTerminationCode toe);
void http_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                     enum MHD_ConnectionNotificationCode toe);
void http_mhd_log(void *cls, const char *fmt, va_list ap);
/* MHD_OPTION_URI_LOG_CALLBACK (http_guard.c): the request target as sent, before
 * libmicrohttpd decodes it; returns the request's context (struct req) with the verdict of
 * the strict target check. */
void *http_uri_log(void *cls, const char *uri, struct MHD_Connection *conn);

/* Start L's libmicrohttpd daemon (THREADS workers, epoll, no listening socket of its own)
 * and the acceptor that hands it L's connections: server_start's server_listen_fn. Returns
 * 0, or -1 with err (l->mhd is NULL when libmicrohttpd refused the listener's options). */
int http_daemon_start(struct listener *l, unsigned threads, char *err, size_t errlen);
/* Warn, once at start and before the privilege drop, of what this build cannot do beneath
 * libmicrohttpd's API (tcp_nopush, sendfile steps). */
void http_daemon_probe(const struct server *s);

#endif
