/* watchdog: see watchdog.h. */
#include "watchdog.h"

#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "err.h"
#include "log.h"
#include "sys.h"

struct watchdog {
    struct deadlines dl;
    struct refusal_log rl;
    int have_dl, have_rl;
    pthread_t thread;
    int wake; /* eventfd that stops the thread; -1 when it is not running */
};

void watchdog_set_limits(struct watchdog *w, const struct config *cfg)
{
    deadlines_set_limits(&w->dl, (int64_t)cfg->header_timeout_ms, cfg->body_min_rate);
}

struct watchdog *watchdog_new(const struct config *cfg, char *err, size_t errlen)
{
    struct watchdog *w = calloc(1, sizeof *w);
    if (!w) {
        err_set(err, errlen, "out of memory");
        return NULL;
    }
    w->wake = -1;
    /* every connection libmicrohttpd may accept: limits.connections per listener */
    size_t cap = (size_t)(cfg->max_connections ? cfg->max_connections : WATCHDOG_MAX_CONNECTIONS) * cfg->n_listen;
    if (cap > WATCHDOG_MAX_CONNECTIONS)
        cap = WATCHDOG_MAX_CONNECTIONS;
    if (deadlines_init(&w->dl, cap, (int64_t)cfg->header_timeout_ms, cfg->body_min_rate, DEADLINE_BODY_WINDOW_MS, err,
                       errlen) < 0) {
        free(w);
        return NULL;
    }
    w->have_dl = 1;
    if (refusal_log_init(&w->rl, WATCHDOG_LOG_INTERVAL_MS, sys_mono_ms(), err, errlen) < 0) {
        watchdog_free(w);
        return NULL;
    }
    w->have_rl = 1;
    return w;
}

static void flush(struct watchdog *w, int force)
{
    char line[1024];
    if (refusal_log_flush(&w->rl, sys_mono_ms(), force, line, sizeof line) == 1)
        log_info("%s", line);
}

/* Called by deadline_scan with the table locked: C's socket is still libmicrohttpd's and
 * open (its close waits for the lock in watchdog_conn_closed). */
static void expire(void *arg, struct deadline_conn *c, enum deadline_reason why)
{
    struct watchdog *w = arg;
    shutdown(c->fd, SHUT_RDWR);
    char addr[INET6_ADDRSTRLEN];
    refusal_addr_format((const struct sockaddr *)&c->addr, c->addrlen, addr, sizeof addr);
    refusal_log_note(&w->rl, why == DEADLINE_BODY_RATE ? REFUSAL_BODY_RATE : REFUSAL_HEADER_TIMEOUT, addr);
}

static void *watchdog_main(void *arg)
{
    struct watchdog *w = arg;
    struct pollfd pfd = {.fd = w->wake, .events = POLLIN};
    size_t high = 0; /* most connections open since the last trim */
    for (;;) {
        int r = poll(&pfd, 1, WATCHDOG_TICK_MS);
        if (r > 0 || (r < 0 && errno != EINTR))
            return NULL; /* watchdog_stop woke us */
        deadline_scan(&w->dl, sys_mono_ms(), expire, w);
        flush(w, 0);
        /* A wave of connections leaves libmicrohttpd's freed per-connection pools (32 KiB
         * each) scattered in malloc's arenas, which then keep them: measured, RSS grew by
         * 2-7 MiB with each wave of 2,000 slow clients, and malloc_trim gave it back. So give
         * it back after each large drop; rare (a drop of WATCHDOG_TRIM_DROP connections) and
         * a few ms when it happens. */
        size_t n = deadline_count(&w->dl);
        if (n > high)
            high = n;
        if (high - n >= WATCHDOG_TRIM_DROP) {
            malloc_trim(0);
            high = n;
        }
    }
}

int watchdog_start(struct watchdog *w, char *err, size_t errlen)
{
    w->wake = eventfd(0, EFD_CLOEXEC);
    if (w->wake < 0)
        return err_set(err, errlen, "eventfd: %s", strerror(errno));
    int e = pthread_create(&w->thread, NULL, watchdog_main, w);
    if (e) {
        close(w->wake);
        w->wake = -1;
        return err_set(err, errlen, "starting the deadline watchdog thread: %s", strerror(e));
    }
    return 0;
}

void watchdog_stop(struct watchdog *w)
{
    if (!w || w->wake < 0)
        return;
    uint64_t one = 1;
    ssize_t n = write(w->wake, &one, sizeof one);
    (void)n; /* an eventfd write of 1 cannot fail short of overflow */
    pthread_join(w->thread, NULL);
    close(w->wake);
    w->wake = -1;
    flush(w, 1);
}

void watchdog_free(struct watchdog *w)
{
    if (!w)
        return;
    watchdog_stop(w);
    if (w->have_rl)
        refusal_log_destroy(&w->rl);
    if (w->have_dl)
        deadlines_destroy(&w->dl);
    free(w);
}

struct deadline_conn *watchdog_conn_started(struct watchdog *w, struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *fd = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *ad = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!fd)
        return NULL;
    const struct sockaddr *sa = ad ? ad->client_addr : NULL;
    socklen_t len = !sa ? 0 : sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    return deadline_open(&w->dl, fd->connect_fd, sa, len, sys_mono_ms());
}

void watchdog_conn_closed(struct watchdog *w, struct deadline_conn *c)
{
    deadline_close(&w->dl, c);
}

void watchdog_request(struct watchdog *w, struct deadline_conn *c, int first, size_t body_bytes)
{
    if (!c)
        return;
    if (first)
        deadline_headers_done(&w->dl, c, sys_mono_ms());
    else if (body_bytes)
        deadline_body(c, body_bytes);
    else
        deadline_body_done(&w->dl, c);
}

void watchdog_request_done(struct watchdog *w, struct deadline_conn *c)
{
    if (c)
        deadline_request_done(&w->dl, c, sys_mono_ms());
}

int watchdog_mhd_message(struct watchdog *w, enum refusal_reason r, const char *msg)
{
    if (r >= REFUSAL_N)
        return !watchdog_line(w, msg);
    refusal_log_note(&w->rl, r, NULL);
    return 1;
}

int watchdog_line(struct watchdog *w, const char *msg)
{
    return refusal_log_line(&w->rl, sys_mono_ms(), msg);
}

void watchdog_refused(struct watchdog *w, const struct sockaddr *sa, socklen_t len)
{
    char addr[INET6_ADDRSTRLEN];
    refusal_addr_format(sa, len, addr, sizeof addr);
    refusal_log_note(&w->rl, REFUSAL_LIMIT, addr);
}

uint64_t watchdog_total(struct watchdog *w, enum refusal_reason reason)
{
    return refusal_log_total(&w->rl, reason);
}
