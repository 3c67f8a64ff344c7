/* http_daemon: one libmicrohttpd daemon per listener, with debitd's callbacks (see http.h). */
#include "http_daemon.h"
#include "http_guard.h"
#include "http_handler.h"

#include <limits.h>
#include <stdint.h>
#include <sys/socket.h>

#include "err.h"
#include "log.h"
#include "mhd_compat.h"
#include "nopush.h"
#include "sendstep.h"

/* libmicrohttpd's accept policy: limits.per_ip, enforced here rather than by libmicrohttpd
 * so that the refusal log names the address. Called by the worker that accepted, after
 * libmicrohttpd's own check of limits.connections; an admitted connection is released by
 * http_connection at MHD_CONNECTION_NOTIFY_CLOSED. */
static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t addrlen)
{
    struct listener *l = cls;
    if (ip_limit_acquire(l->per_ip, addr, addrlen) == 1)
        return MHD_YES;
    watchdog_refused(l->srv->watchdog, addr, addrlen);
    return MHD_NO;
}

void http_daemon_probe(const struct server *s)
{
    mhd_compat_probe(); /* which tricks beneath libmicrohttpd's API are on, logged once */
    for (size_t i = 0; i < s->n_listeners; i++) {
        const struct listener *l = &s->listeners[i];
        /* asked for every listener (a reload may turn it on), before the seccomp filter:
         * the answer (a dlsym) is cached */
        if (!nopush_interposed() && l->cfg->tcp_nopush)
            log_warn("listen %s: tcp_nopush: setsockopt() is not interposed in this build: the headers of file "
                     "responses go out alone (libmicrohttpd's order)", l->name);
    }
    /* likewise the sendfile steps (sendstep.h), before the filter */
    if (!sendstep_interposed())
        log_warn("sendfile64() is not interposed in this build: file bodies go in libmicrohttpd's 128 KiB steps "
                 "only");
}

int http_daemon_start(struct listener *l, unsigned threads, char *err, size_t errlen)
{
    const struct config *cfg = l->srv->snap->cfg;
    /* suspend/resume: a .sha256 request waits for the hashing thread (digest.h); no
     * listening socket and ITC: the acceptor (acceptor.h) accepts, and libmicrohttpd's
     * worker learns of a connection it hands over through its inter-thread channel */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ITC | MHD_USE_NO_LISTEN_SOCKET | MHD_ALLOW_UPGRADE; /* ndt7's WebSocket (http_ndt7.c) */
    /* epoll, except on a TLS listener: there libmicrohttpd 0.9.75's epoll loop spins through
     * the handshake. GnuTLS reads the socket itself, so libmicrohttpd never sees the EAGAIN
     * that takes a connection off its ready list, and calls gnutls_handshake again at once
     * until the client's next flight arrives: 90 to 118 calls per handshake against 2 with
     * poll (uprobes on gnutls_handshake over openssl s_time -new), each recomputing the
     * expected Finished (5 SHA-384 digests), about 1 ms of CPU per handshake more than
     * nginx; with poll the same as nginx (docs/performance.md, "HTTPS handshakes"). poll
     * scans every connection of the worker on each wake-up, a cost that matters only at
     * thousands of connections per worker. */
    flags |= l->tls ? MHD_USE_POLL : MHD_USE_EPOLL;
    if (l->cfg->sa.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    struct MHD_OptionItem opts[16];
    int n = 0;
    if (l->tls) {
        flags |= tls_mhd_flags();
        tls_mhd_options(l->tls, mhd_compat_tls_cert, opts, &n);
        if (!mhd_compat_on(MHD_TRICK_TLS_SESSION)) /* handshakes take the current credentials */
            tls_listener_keep_retired(l->tls);
    }
    if (threads > 1)
        opts[n++] = (struct MHD_OptionItem){MHD_OPTION_THREAD_POOL_SIZE, threads, NULL};
    /* The acceptor keeps limits.connections for the listener. libmicrohttpd splits its
     * own limit evenly between the workers, and a worker at its share would close a
     * connection handed to it (leaking its per_ip slot: no close notification): so each
     * worker may hold the whole limit, which the acceptor never lets them pass. */
    unsigned mhd_limit = !cfg->max_connections || cfg->max_connections > UINT_MAX / threads
                             ? UINT_MAX
                             : cfg->max_connections * threads;
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, mhd_limit, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT, cfg->idle_timeout, NULL};
    /* Without this MHD may fall back from sendfile to pread+send, a copy per byte,
     * where it cannot suppress SIGPIPE per call; main() ignores SIGPIPE. */
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_SIGPIPE_HANDLED_BY_APP, 1, NULL};
    /* Level 0 even when strict: in 0.9.75 level 1 only adds "a space in the target" (the
     * connection closed without an answer) and "HTTP/1.1 without Host" (a 400 whose header
     * block is sent twice); http_guard.c refuses both with a proper 400, and the rest
     * libmicrohttpd does not check (docs/http-strictness.md). */
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_STRICT_FOR_CLIENT, 0, NULL};
    /* the pool that holds a request's header block and the answer's (http_guard.c) */
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t)l->cfg->conn_memory, NULL};
    opts[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    l->mhd = MHD_start_daemon(flags, 0, accept_policy, l, http_access, l,
                              MHD_OPTION_EXTERNAL_LOGGER, http_mhd_log, l,
                              MHD_OPTION_ARRAY, opts,
                              MHD_OPTION_NOTIFY_COMPLETED, http_completed, l,
                              MHD_OPTION_NOTIFY_CONNECTION, http_connection, l,
                              MHD_OPTION_URI_LOG_CALLBACK, http_uri_log, l,
                              MHD_OPTION_END);
    if (!l->mhd) {
        err_set(err, errlen, "listen %s: libmicrohttpd refused to start (see the messages above)", l->name);
        return -1;
    }
    l->acceptor = acceptor_new(l->fd, l->mhd, cfg->max_connections, l->name, err, errlen);
    if (!l->acceptor)
        return -1;
    return 0;
}
