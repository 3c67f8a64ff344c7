/* drain: see drain.h. */
#include "drain.h"

#include <errno.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sys.h"

#define DRAIN_POLL_MS 50

void server_quiesce(struct server *s)
{
    if (s->draining)
        return;
    s->draining = 1;
    for (size_t i = 0; i < s->n_listeners; i++) {
        struct listener *l = &s->listeners[i];
        if (!l->acceptor)
            continue;
        acceptor_stop(l->acceptor);
        /* Shutting a listening socket down makes the kernel refuse new connections now and
         * reset the ones waiting in the backlog, instead of completing handshakes nobody
         * will ever accept; server_stop closes it. */
        if (l->fd >= 0)
            shutdown(l->fd, SHUT_RDWR);
    }
}

enum server_drain_end server_drain(struct server *s, unsigned timeout_ms, const sigset_t *stop, int *sig)
{
    int64_t deadline = sys_mono_ms() + timeout_ms;
    for (;;) {
        if (s->in_flight == 0)
            return SERVER_DRAIN_DONE;
        int64_t left = deadline - sys_mono_ms();
        if (left <= 0)
            return SERVER_DRAIN_TIMEOUT;
        if (left > DRAIN_POLL_MS)
            left = DRAIN_POLL_MS;
        struct timespec ts = {0, left * 1000000L};
        int got = sigtimedwait(stop, NULL, &ts);
        if (got > 0) {
            *sig = got;
            return SERVER_DRAIN_SIGNAL;
        }
    }
}
