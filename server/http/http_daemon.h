/* http_daemon: one listener's libmicrohttpd daemon (its options and callbacks) and the
 * start-up probe of what this build can do beneath libmicrohttpd's API. */
#ifndef DEBITD_HTTP_DAEMON_H
#define DEBITD_HTTP_DAEMON_H

#include <stddef.h>

#include "server.h"

/* Start L's libmicrohttpd daemon (THREADS workers, epoll, poll on a TLS listener, no
 * listening socket of its own) and the acceptor that hands it L's connections:
 * server_start's server_listen_fn. Returns 0, or -1 with err (l->mhd is NULL when
 * libmicrohttpd refused the listener's options). */
int http_daemon_start(struct listener *l, unsigned threads, char *err, size_t errlen);
/* Warn, once at start and before the privilege drop, of what this build cannot do beneath
 * libmicrohttpd's API (tcp_nopush, sendfile steps). */
void http_daemon_probe(const struct server *s);

#endif
