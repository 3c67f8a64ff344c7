/* ack_watch: when did the client acknowledge a body's last byte? libmicrohttpd completes a
 * response when its last byte is handed to the kernel; at a few hundred Mbit/s the socket
 * buffers then still hold some MB, so a record that ends there is 5-14 % faster than the
 * client saw (docs/server.md, "acked_s"). The watcher takes the stream offset at which a
 * body ended (tcpi_bytes_acked + SIOCOUTQ, read when the response completed) and polls the
 * socket's TCP_INFO until tcpi_bytes_acked reaches it, then reports the moment of that
 * acknowledgement.
 *
 * Bounded: a fixed table of slots (a body that finds it full is reported "full", never
 * queued), a time limit per body, one thread that sleeps while the table is empty. A body
 * already acknowledged when it completes (most of them on a fast path) never enters the
 * table: it costs nothing but the completion's TCP_INFO read, which the caller already has.
 * A socket is read only while its slot holds it: ack_watch_settle, called before
 * libmicrohttpd closes a connection, reads it once more and drops it, and every deciding
 * read is checked against the socket's SO_COOKIE, so a descriptor closed another way and
 * reused by another connection is noticed and never taken for the first one. */
#ifndef DEBITD_ACK_WATCH_H
#define DEBITD_ACK_WATCH_H

#include <stdint.h>

#include "tcp_info.h"

enum ack_result {
    ACK_OK,      /* acknowledged; the moment is given */
    ACK_CLOSED,  /* the connection closed (or its descriptor was reused) first */
    ACK_TIMEOUT, /* not acknowledged within the time limit */
    ACK_FULL,    /* the table was full: not watched */
    ACK_UNREAD,  /* TCP_INFO unreadable or without tcpi_bytes_sent (Linux < 4.19) */
};

/* Called once per ack_watch_add, from the caller's thread (a body already acknowledged,
 * or one not watched) or from the watcher's: SEQ as given, RESULT, and for ACK_OK the
 * monotonic time (sys_mono_s) of the acknowledgement, else 0. Must not call back into the
 * watcher. */
typedef void (*ack_watch_done_fn)(void *ctx, uint64_t seq, enum ack_result result, double acked_mono);

/* How a socket is read: tcp_info_read, SO_COOKIE and SIOCOUTQ (bytes written and not yet
 * acknowledged) by default; tests substitute their own. Return 0 and fill, or -1. */
struct ack_watch_io {
    int (*read_info)(void *io_ctx, int sock, struct tcp_info_sample *ti);
    int (*read_cookie)(void *io_ctx, int sock, uint64_t *cookie);
    int (*read_outq)(void *io_ctx, int sock, uint64_t *bytes);
    void *io_ctx;
};

struct ack_watch_opts {
    unsigned slots;    /* table size (>= 1) */
    double limit_s;    /* give up on a body this long after it completed */
    double interval_s; /* the least time between two reads of a slot's socket */
};

/* A watcher with OPTS, reporting to DONE(CTX, ...); IO NULL = the real socket readers.
 * No thread yet (ack_watch_start). NULL when out of memory. */
struct ack_watch *ack_watch_new(const struct ack_watch_opts *opts, const struct ack_watch_io *io,
                                ack_watch_done_fn done, void *ctx);
/* Start the polling thread: 0, or -1 with err filled. */
int ack_watch_start(struct ack_watch *w, char *err, size_t errlen);
/* Stop the thread (if started), report every body still watched as ACK_CLOSED, release.
 * NULL is fine. */
void ack_watch_free(struct ack_watch *w);

/* The body SEQ on SOCK completed at NOW (sys_mono_s); LAST is the socket's TCP_INFO read
 * then (NULL: unreadable). Reports at once when LAST shows nothing in flight and nothing
 * unsent (ACK_OK at NOW: no read of its own), when the socket is unreadable (ACK_UNREAD) or
 * the table full (ACK_FULL), and returns -1; otherwise reads where the body ends, watches
 * it and returns its slot (for ack_watch_settle). Its first read is due when the delivery
 * rate says its end arrives, the next ones when the rate its acknowledgements grew at
 * says so; a body that makes no progress is read less and less often (2 ms doubling up to
 * 500 ms). The thread is woken only when the body is due before its next wake. */
int ack_watch_add(struct ack_watch *w, int sock, uint64_t seq, const struct tcp_info_sample *last, double now);

/* Read body SEQ in SLOT (ack_watch_add's) now, if it is still watched: at its connection's
 * next request (a client asks again once it has the body: the acknowledgement is then in)
 * or, CLOSING, before the socket is closed (what is not acknowledged then is reported
 * ACK_CLOSED). Returns 1 when it is still watched. O(1): a lock and one or two
 * getsockopt. W NULL or SLOT -1: nothing. */
int ack_watch_settle(struct ack_watch *w, int slot, uint64_t seq, int closing);

/* One pass over the table at NOW: read each slot's socket whose read is due, report and
 * drop what is acknowledged, closed or past its limit. The thread calls it when the first
 * read is due; tests call it directly (never while the thread runs: one pass at a time).
 * Returns how many slots are still watched. */
unsigned ack_watch_poll(struct ack_watch *w, double now);

#endif
