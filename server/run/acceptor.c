/* acceptor: see acceptor.h. */
#include "acceptor.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "err.h"
#include "log.h"
#include "sys.h"

/* After an accept() failure that leaves the connection in the backlog (out of descriptors
 * or memory), the socket stays readable: wait this long before trying again instead of
 * spinning, as nginx does (ngx_event_accept's 500 ms; shorter here, a test host's
 * descriptors come back fast). Said in the log at most once per ACCEPTOR_WARN_MS. */
#define ACCEPTOR_RETRY_MS 100
#define ACCEPTOR_WARN_MS 10000

struct acceptor {
    int fd;                  /* listening socket (not owned) */
    int wake;                /* eventfd: acceptor_stop, or a close while at the limit */
    struct MHD_Daemon *mhd;  /* not owned */
    unsigned limit;
    char name[64];
    pthread_t thread;
    int running;             /* the thread exists and was not joined */
    _Atomic int stopping;
    _Atomic unsigned open;   /* handed and not closed: counted before the hand-over, so a
                              * close that comes first cannot take it below zero */
    _Atomic uint64_t accepted, refused, at_limit, errors;
    int64_t warned_ms;       /* the acceptor thread's own */
};

static void wake(struct acceptor *a)
{
    uint64_t one = 1;
    /* only fails when the counter is at its maximum: the thread has a wake-up pending */
    ssize_t n = write(a->wake, &one, sizeof one);
    (void)n;
}

/* Wait for the listening socket (unless `listen_too` is 0) or a wake-up, at most timeout_ms
 * (-1: no limit). Returns 1 when the socket is readable. */
static int wait_for(struct acceptor *a, int listen_too, int timeout_ms)
{
    struct pollfd p[2] = {{a->wake, POLLIN, 0}, {a->fd, POLLIN, 0}};
    int r = poll(p, listen_too ? 2 : 1, timeout_ms);
    if (r > 0 && (p[0].revents & POLLIN)) {
        uint64_t v;
        ssize_t n = read(a->wake, &v, sizeof v);
        (void)n;
    }
    return r > 0 && listen_too && (p[1].revents & (POLLIN | POLLERR | POLLHUP));
}

/* accept() failed with e: 1 to go on accepting now, 0 to wait for the socket, -1 to stop */
static int accept_failed(struct acceptor *a, int e)
{
    switch (e) {
    case EAGAIN:
#if EWOULDBLOCK != EAGAIN
    case EWOULDBLOCK:
#endif
        return 0;
    case EINTR:
    case ECONNABORTED: /* the peer gave up in the backlog: the next one is there */
    case EPROTO:
    case EPERM: /* a firewall rule refused this one */
        return 1;
    case EMFILE:
    case ENFILE:
    case ENOBUFS:
    case ENOMEM: {
        a->errors++;
        int64_t now = sys_mono_ms();
        if (!a->warned_ms || now - a->warned_ms >= ACCEPTOR_WARN_MS) {
            log_warn("%s: accept: %s; connections wait in the backlog, tried again every %d ms "
                     "(raise the descriptor limit, or lower limits.connections)",
                     a->name, strerror(e), ACCEPTOR_RETRY_MS);
            a->warned_ms = now;
        }
        wait_for(a, 0, ACCEPTOR_RETRY_MS);
        return 1;
    }
    default:
        a->errors++;
        log_error("%s: accept: %s; no more connections are accepted on this listener", a->name, strerror(e));
        return -1;
    }
}

static void *acceptor_main(void *arg)
{
    struct acceptor *a = arg;
    pthread_setname_np(pthread_self(), "debitd-accept");
    while (!a->stopping) {
        if (a->open >= a->limit) {
            /* a close below the limit writes `wake` (acceptor_closed); checked again after
             * the wait, so one that came before it is not lost */
            a->at_limit++;
            while (!a->stopping && a->open >= a->limit)
                wait_for(a, 0, -1);
            continue;
        }
        if (!wait_for(a, 1, -1))
            continue;
        /* as many as are waiting, then poll again: the limit and stop are checked per one */
        while (!a->stopping && a->open < a->limit) {
            struct sockaddr_storage ss;
            socklen_t sl = sizeof ss;
            int c = accept4(a->fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (c < 0) {
                int r = accept_failed(a, errno);
                if (r < 0)
                    return NULL;
                if (r == 0)
                    break;
                continue;
            }
            /* counted before the hand-over, as `open`: a worker may answer the connection's
             * first request (a /status or /metrics that counts itself) before
             * MHD_add_connection returns here */
            a->open++;
            a->accepted++;
            /* closes c itself on failure: the accept policy refused it (per_ip), or no worker
             * had room (not reached: each may hold the whole limit, acceptor.h) */
            if (MHD_add_connection(a->mhd, c, (struct sockaddr *)&ss, sl) != MHD_YES) {
                a->open--;
                a->accepted--;
                a->refused++;
            }
        }
    }
    return NULL;
}

struct acceptor *acceptor_new(int fd, struct MHD_Daemon *mhd, unsigned limit, const char *name, char *err,
                              size_t errlen)
{
    struct acceptor *a = calloc(1, sizeof *a);
    if (!a) {
        err_set(err, errlen, "%s: acceptor: out of memory", name);
        return NULL;
    }
    a->fd = fd;
    a->mhd = mhd;
    a->limit = limit ? limit : UINT_MAX;
    snprintf(a->name, sizeof a->name, "%s", name);
    a->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (a->wake < 0) {
        err_set(err, errlen, "%s: acceptor: eventfd: %s", name, strerror(errno));
        free(a);
        return NULL;
    }
    int e = pthread_create(&a->thread, NULL, acceptor_main, a);
    if (e) {
        err_set(err, errlen, "%s: acceptor: cannot start a thread: %s", name, strerror(e));
        close(a->wake);
        free(a);
        return NULL;
    }
    a->running = 1;
    return a;
}

void acceptor_closed(struct acceptor *a)
{
    if (!a)
        return;
    /* only the close that takes it off the limit wakes the thread (the one that waits) */
    if (atomic_fetch_sub(&a->open, 1) == a->limit)
        wake(a);
}

void acceptor_stop(struct acceptor *a)
{
    if (!a || !a->running)
        return;
    a->stopping = 1;
    wake(a);
    pthread_join(a->thread, NULL);
    a->running = 0;
}

void acceptor_stats(const struct acceptor *a, struct acceptor_stats *out)
{
    memset(out, 0, sizeof *out);
    if (!a)
        return;
    out->accepted = a->accepted;
    out->refused = a->refused;
    out->at_limit = a->at_limit;
    out->errors = a->errors;
    out->open = a->open;
}

void acceptor_free(struct acceptor *a)
{
    if (!a)
        return;
    acceptor_stop(a);
    close(a->wake);
    free(a);
}
