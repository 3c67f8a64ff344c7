/* drain: a graceful stop. server_quiesce stops accepting (every listener refuses new
 * connections at once, as a closed port does) while the connections already accepted go
 * on; server_drain then waits until no download or upload is under way, or the drain timeout
 * passes, or one more stop signal arrives. server_stop/server_free end what is left. */
#ifndef DEBITD_DRAIN_H
#define DEBITD_DRAIN_H

#include <signal.h>

#include "server.h"

/* Stop accepting on every listener (acceptor_stop, then shutdown of the listening
 * socket so that new connections are refused rather than left in the backlog), and mark
 * the server draining: every answer from now on carries Connection: close. Idempotent. */
void server_quiesce(struct server *s);

/* How server_drain ended. */
enum server_drain_end {
    SERVER_DRAIN_DONE = 0, /* no request was left */
    SERVER_DRAIN_TIMEOUT,  /* TIMEOUT_MS passed with requests still running */
    SERVER_DRAIN_SIGNAL,   /* a signal of STOP arrived (*sig says which) */
};

/* After server_quiesce: wait (polling every 50 ms) until no download or upload is under
 * way (server.in_flight), TIMEOUT_MS
 * passes or a signal of STOP (blocked by the caller) arrives, which is then taken. */
enum server_drain_end server_drain(struct server *s, unsigned timeout_ms, const sigset_t *stop, int *sig);

#endif
