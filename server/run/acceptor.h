/* acceptor: the thread that accepts a listener's connections. libmicrohttpd 0.9.75's thread
 * pool lets every worker accept from the one listening socket, each with the socket in its
 * own epoll set (no EPOLLEXCLUSIVE): whichever worker wakes first takes a burst of
 * connections and keeps them for their whole life. In bench/many.sh one worker of two held
 * up to 76 % of 1,000 kept-alive connections, and such a round's p99 was 1.5-1.9 x a
 * balanced one's (docs/performance.md, "Connections spread evenly"). The acceptor accepts
 * every connection itself and hands it to MHD_add_connection, which puts it on the worker
 * its descriptor names (socket % workers; the next one with room if that one is full), so
 * the split is even. It keeps the listener's connection limit too: at the limit it stops
 * accepting, the connections waiting in the backlog (as libmicrohttpd's own accept and
 * nginx's accept_mutex do), until one closes. And a graceful stop is the acceptor's stop,
 * not MHD_quiesce_daemon (whose race with an epoll worker can abort the process, main.c). */
#ifndef DEBITD_ACCEPTOR_H
#define DEBITD_ACCEPTOR_H

#include <stddef.h>
#include <stdint.h>

#include <microhttpd.h>

struct acceptor;

/* What an acceptor has done so far (/status, listeners[].accept). */
struct acceptor_stats {
    uint64_t accepted;  /* connections handed to libmicrohttpd */
    uint64_t refused;   /* accepted, then refused by libmicrohttpd (accept policy: per_ip) */
    uint64_t at_limit;  /* times accepting paused because `limit` connections were open */
    uint64_t errors;    /* accept() failures other than "nothing to accept" (EMFILE, ...) */
    unsigned open;      /* connections handed and not yet closed */
};

/* Start a thread (named "debitd-accept") that accepts on fd, a listening non-blocking
 * socket that stays the caller's, and hands every connection to mhd, a daemon started with
 * MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC, with at most `limit` open at once (0: no limit). `name`
 * labels log lines. Returns NULL with err filled; the caller owns the result
 * (acceptor_free), and must call acceptor_closed for each closed connection of mhd. */
struct acceptor *acceptor_new(int fd, struct MHD_Daemon *mhd, unsigned limit, const char *name, char *err,
                              size_t errlen);

/* One of the connections mhd got from a has closed (MHD_CONNECTION_NOTIFY_CLOSED): another
 * may be accepted. Any thread; a NULL a does nothing. */
void acceptor_closed(struct acceptor *a);

/* Stop accepting and join the thread; the connections handed before go on. After it the
 * listening socket is only the caller's. Idempotent; NULL is fine. */
void acceptor_stop(struct acceptor *a);

/* A snapshot of a's counters (zeros for NULL). Any thread. */
void acceptor_stats(const struct acceptor *a, struct acceptor_stats *out);

/* Stop (acceptor_stop) and free. NULL is fine. */
void acceptor_free(struct acceptor *a);

#endif
