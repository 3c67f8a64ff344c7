/* server: see server.h. */
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "ack_watch.h"
#include "err.h"
#include "log.h"
#include "logfile.h"
#include "sys.h"
#include "tcp_profile.h"
#include "units.h"

double server_uptime(const struct server *s)
{
    return sys_mono_s() - s->start_mono;
}

static void listener_name(const struct listen_cfg *l, char *buf, size_t len)
{
    if (l->sa.ss_family == AF_INET6)
        snprintf(buf, len, "[%s]:%u", l->address, l->port);
    else
        snprintf(buf, len, "%s:%u", l->address, l->port);
}

void server_set_last_modified(struct server *s)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(s->last_modified, sizeof s->last_modified, "%a, %d %b %Y %H:%M:%S GMT", &tm);
}

/* The acknowledgement watcher (ack_watch.h): 256 bodies at once (more at once are "full",
 * not watched: several MB each in flight, more than the machine's links carry); 10 s to
 * drain a buffer; reads at least 2 ms apart, scheduled by how fast its ACKs come. */
static const struct ack_watch_opts ACK_WATCH_OPTS = {.slots = 256, .limit_s = 10, .interval_s = 0.002};

struct server *server_new(struct config *cfg, char *err, size_t errlen)
{
    struct server *s = calloc(1, sizeof *s);
    if (!s) {
        err_set(err, errlen, "out of memory");
        return NULL;
    }
    pthread_rwlock_init(&s->swap_lock, NULL);
    if (!(s->snap = snapshot_first(cfg, NULL, NULL))) { /* the region and digest: server_start */
        free(s);
        err_set(err, errlen, "out of memory");
        return NULL;
    }
    s->reload.generation = 1;
    s->sampler_wake = -1;
    s->backing_fd = -1;
    s->start_mono = sys_mono_s();
    s->start_wall = sys_wall_s();
    s->reload.loaded_wall = s->start_wall;
    struct utsname u;
    snprintf(s->kernel, sizeof s->kernel, "%s", uname(&u) == 0 ? u.release : "unknown");
    server_set_last_modified(s);

    if (logfile_open(cfg, &s->access, err, errlen) < 0)
        goto fail;
    s->transfers = transfers_new(cfg->transfers_keep);
    /* made even while speedtest.telemetry is off: a reload may turn it on */
    s->telemetry = telemetry_new(cfg->speedtest.telemetry_keep, TELEMETRY_RING_BYTES);
    if (s->transfers && !(s->acks = ack_watch_new(&ACK_WATCH_OPTS, NULL, transfers_acked, s->transfers))) {
        err_set(err, errlen, "out of memory");
        goto fail;
    }
    s->quota = quota_new(cfg->per_ip_table);
    s->cpu = cpu_budget_new(NULL);
    s->ndt7_per_ip = ip_limit_new(cfg->ndt7.per_ip, 64, err, errlen); /* a reload sets its limit anew */
    if (!s->transfers || !s->telemetry || !s->quota || !s->cpu || !s->ndt7_per_ip) {
        err_set(err, errlen, "out of memory");
        goto fail;
    }
    if (!(s->watchdog = watchdog_new(cfg, err, errlen)))
        goto fail;
    if (!(s->metrics = metrics_new(cfg->n_listen, cfg->n_files))) {
        err_set(err, errlen, "out of memory");
        goto fail;
    }
    s->listeners = calloc(cfg->n_listen, sizeof *s->listeners);
    if (!s->listeners) {
        err_set(err, errlen, "out of memory");
        goto fail;
    }
    quota_set_limits(s->quota, cfg->per_ip_bytes, cfg->per_ip_window_ms, (uint64_t)sys_mono_ms());
    if (!(s->speed_per_ip = ip_limit_new(cfg->speedtest.per_ip, cfg->max_connections, err, errlen)))
        goto fail;
    s->n_listeners = cfg->n_listen;
    for (size_t i = 0; i < cfg->n_listen; i++) {
        s->listeners[i].srv = s;
        s->listeners[i].cfg = &cfg->listen[i];
        s->listeners[i].fd = -1;
        listener_name(&cfg->listen[i], s->listeners[i].name, sizeof s->listeners[i].name);
        if (!(s->listeners[i].per_ip = ip_limit_new(cfg->per_ip, cfg->max_connections, err, errlen)))
            goto fail;
        /* the certificate and key are read here, before main drops privileges */
        const struct listen_cfg *lc = &cfg->listen[i];
        if (lc->tls.cert && !(s->listeners[i].tls = tls_listener_new(lc->tls.cert, lc->tls.key, lc->tls.priorities,
                                                                      err, errlen))) {
            err_prefix(err, errlen, "%s: listen %s: tls", cfg->source, s->listeners[i].name);
            goto fail;
        }
    }
    return s;
fail:
    server_free(s);
    return NULL;
}

/* TCP_INFO is sampled here, not on the send path: libmicrohttpd sends file bodies with
 * sendfile (or one sendmsg over an iovec) and calls nothing of ours per chunk. One thread,
 * one getsockopt per sending transfer per tick: nothing measurable next to the transfer. */
#define SAMPLE_MS 100
/* The cgroup is looked up again this often (cpu_budget.h): the lab moves debitd into one
 * after it started. A few small file reads a second, from this thread only (cpu_budget_new
 * did the first lookup before it started). */
#define CPU_BUDGET_MS 1000

static void *sampler_main(void *arg)
{
    struct server *s = arg;
    struct pollfd pfd = {.fd = s->sampler_wake, .events = POLLIN};
    int64_t budget_at = sys_mono_ms() - CPU_BUDGET_MS; /* the first tick refreshes it */
    for (;;) {
        int r = poll(&pfd, 1, SAMPLE_MS);
        if (r > 0 || (r < 0 && errno != EINTR))
            return NULL; /* sampler_stop woke us */
        transfers_sample(s->transfers);
        if (sys_mono_ms() - budget_at >= CPU_BUDGET_MS) {
            char err[256];
            cpu_budget_refresh(s->cpu, err, sizeof err); /* a failure shows in /status */
            budget_at = sys_mono_ms();
        }
    }
}

static int sampler_start(struct server *s, char *err, size_t errlen)
{
    s->sampler_wake = eventfd(0, EFD_CLOEXEC);
    if (s->sampler_wake < 0)
        return err_set(err, errlen, "eventfd: %s", strerror(errno));
    int e = pthread_create(&s->sampler, NULL, sampler_main, s);
    if (e) {
        close(s->sampler_wake);
        s->sampler_wake = -1;
        return err_set(err, errlen, "starting the TCP_INFO sampler thread: %s", strerror(e));
    }
    return 0;
}

static void sampler_stop(struct server *s)
{
    if (s->sampler_wake < 0)
        return;
    uint64_t one = 1;
    ssize_t w = write(s->sampler_wake, &one, sizeof one);
    (void)w; /* an eventfd write of 1 cannot fail short of overflow */
    pthread_join(s->sampler, NULL);
    close(s->sampler_wake);
    s->sampler_wake = -1;
}

struct digest *server_digest_new(const struct content *content, const struct config *cfg, char *err,
                                 size_t errlen)
{
    uint64_t *sizes = calloc(cfg->n_files ? cfg->n_files : 1, sizeof *sizes);
    if (!sizes) {
        err_set(err, errlen, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < cfg->n_files; i++)
        sizes[i] = cfg->files[i].size;
    struct digest *d = digest_new(content, sizes, cfg->n_files, err, errlen);
    free(sizes);
    return d;
}

/* The hashing thread, for every configured file size (all memory allocated here), taken
 * over by the first snapshot. */
static int digest_start(struct server *s, char *err, size_t errlen)
{
    struct digest *d = server_digest_new(s->snap->content, s->snap->cfg, err, errlen);
    if (!d)
        return -1;
    snapshot_first_fill(s->snap, NULL, d);
    return 0;
}

void server_read_lock(struct server *s)
{
    pthread_rwlock_rdlock(&s->swap_lock);
}

void server_read_unlock(struct server *s)
{
    pthread_rwlock_unlock(&s->swap_lock);
}

static int open_listener(struct listener *l, char *err, size_t errlen)
{
    const struct listen_cfg *c = l->cfg;
    int fd = socket(c->sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        err_set(err, errlen, "listen %s: socket: %s", l->name, strerror(errno));
        return -1;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (c->sa.ss_family == AF_INET6) {
        /* "::" serves IPv4 too (dual stack); a specific IPv6 address only itself */
        const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&c->sa;
        int v6only = !IN6_IS_ADDR_UNSPECIFIED(&s6->sin6_addr);
        if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof v6only) < 0) {
            err_set(err, errlen, "listen %s: IPV6_V6ONLY: %s", l->name, strerror(errno));
            close(fd);
            return -1;
        }
    }
    if (bind(fd, (const struct sockaddr *)&c->sa, c->salen) < 0) {
        int e = errno;
        err_set(err, errlen, "listen %s: cannot bind: %s%s", l->name, strerror(e),
                e == EADDRINUSE ? " (another process listens on this port)"
                : e == EADDRNOTAVAIL ? " (no interface has this address)"
                : e == EACCES ? " (ports below 1024 need CAP_NET_BIND_SERVICE)" : "");
        close(fd);
        return -1;
    }
    /* An HTTPS listener's connection is accepted only once its first bytes (the
     * ClientHello, a TLS client always speaks first) have arrived, as nginx's `deferred`:
     * the worker it is handed to finds the ClientHello there instead of sleeping until it
     * comes (2.25–2.51 against 2.54–3.02 wake-ups of the worker per handshake, docs/performance.md,
     * "HTTPS handshakes"), and a client that connects and says nothing holds no
     * connection of debitd's. 1 s, as nginx: after it the kernel accepts the connection
     * at the client's next ACK, data or not. Plain listeners accept at once (their even
     * spread and limit, "Accepting" in docs/server.md, are counted on idle connects). */
    int defer_s = 1;
    if (c->tls.cert && setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer_s, sizeof defer_s) < 0)
        log_warn("listen %s: TCP_DEFER_ACCEPT: %s (connections are accepted before their ClientHello)", l->name,
                 strerror(errno));
    if (listen(fd, 4096) < 0) {
        err_set(err, errlen, "listen %s: listen: %s", l->name, strerror(errno));
        close(fd);
        return -1;
    }
    l->fd = fd;
    return 0;
}

enum server_start_err server_bind(struct server *s, char *err, size_t errlen)
{
    const struct config *cfg = s->snap->cfg;
    if (s->bound)
        return SERVER_START_OK;
    /* bind everything first, so that a port in use fails before anything is served; and
     * check each TCP profile on a scratch socket (an algorithm EPERM, a clamped buffer) */
    for (size_t i = 0; i < s->n_listeners; i++) {
        struct listener *l = &s->listeners[i];
        if (!tcp_profile_is_default(&l->cfg->tcp) &&
            tcp_profile_probe(&l->cfg->tcp, l->cfg->sa.ss_family, err, errlen) < 0) {
            err_prefix(err, errlen, "%s: listen %s: tcp", cfg->source, l->name);
            return SERVER_START_CONFIG;
        }
        if (open_listener(l, err, errlen) < 0)
            return SERVER_START_CONFIG;
        char prof[160];
        tcp_profile_format(&l->cfg->tcp, prof, sizeof prof);
        log_info("listen %s: TCP profile %s", l->name, prof);
    }
    /* the content's private huge tmpfs needs CAP_SYS_ADMIN, which the privilege drop after
     * this function takes away: open its file now, fill it in server_start */
    s->backing_fd = content_backing_open(config_region_size(cfg), s->backing_why, sizeof s->backing_why);
    s->bound = 1;
    return SERVER_START_OK;
}

/* The start's region is complete (or could not be had): said once, from the generating
 * thread. Until then and after a failure, file bodies are computed per response. */
static void content_done(const struct content *c, void *arg)
{
    const struct server *s = arg; /* its cfg may be a reload's by now: the start's figures */
    uint64_t region = content_region_size(c);
    char sz[32];
    units_format_size(region, sz, sizeof sz);
    if (content_failure(c)) {
        log_error("content: %s: %s; serving every file from the generator (a copy per byte, no sendfile) until "
                  "a restart", sz, content_failure(c));
        return;
    }
    log_info("content: %s generated from seed %llu in %.3f s (getting the memory %.3f s, the generator %.3f CPU-s; "
             "%s, shared by %zu file(s); %.0f%% in 2 MiB pages, shmem_enabled=%s); zero-copy from now on", sz,
             (unsigned long long)s->start_seed, content_gen_seconds(c), content_alloc_seconds(c),
             content_gen_cpu_seconds(c), content_backing(c), s->start_files,
             region ? 100.0 * (double)content_huge_bytes(c) / (double)region : 0.0, content_thp_setting(c));
}

enum server_start_err server_start(struct server *s, server_listen_fn *listen_fn, char *err, size_t errlen)
{
    const struct config *cfg = s->snap->cfg;
    unsigned threads = config_threads_effective(cfg);
    /* more workers than connections could never all be used */
    if (cfg->max_connections && threads > cfg->max_connections)
        threads = cfg->max_connections;
    s->threads = threads;
    enum server_start_err be = server_bind(s, err, errlen);
    if (be != SERVER_START_OK)
        return be;
    /* then the content, in the background: requests that arrive meanwhile get the same
     * bytes computed by the generator (a copy, said in their send path), zero-copy once
     * it is complete (docs/server.md, "Start-up") */
    uint64_t region = config_region_size(cfg);
    s->start_seed = cfg->seed;
    s->start_files = cfg->n_files;
    struct content *content =
        content_start(s->backing_fd, s->backing_why, cfg->seed, region, 0, content_done, s, err, errlen);
    s->backing_fd = -1; /* owned by the content now */
    snapshot_first_fill(s->snap, content, NULL);
    if (!content || digest_start(s, err, errlen) < 0 || sampler_start(s, err, errlen) < 0 ||
        ack_watch_start(s->acks, err, errlen) < 0 ||
        watchdog_start(s->watchdog, err, errlen) < 0)
        return SERVER_START_RUNTIME;
    for (size_t i = 0; i < s->n_listeners; i++) {
        struct listener *l = &s->listeners[i];
        /* per netns: every transfer's record shows it (sndbuf.tcp_wmem_max) */
        char werr[160];
        if (tcp_wmem_max(&l->tcp_wmem_max, werr, sizeof werr) < 0)
            l->tcp_wmem_max = 0;
        if (tcp_rmem_max(&l->tcp_rmem_max, werr, sizeof werr) < 0) /* uploads' rcvbuf.tcp_rmem_max */
            l->tcp_rmem_max = 0;
        if (listen_fn(l, threads, err, errlen) < 0)
            return l->mhd ? SERVER_START_RUNTIME : SERVER_START_CONFIG;
        log_info("listening on %s (%u worker thread%s)", l->name, threads, threads > 1 ? "s" : "");
    }
    return SERVER_START_OK;
}

/* The ndt7 tests still running (their threads use the daemons' upgraded connections, which
 * MHD_stop_daemon frees) end within their 50 ms poll once told; bounded at 5 s. */
static void ndt7_stop_tests(struct server *s)
{
    s->ndt7_stop = 1;
    for (int i = 0; i < 500 && s->ndt7_running; i++)
        sys_sleep_ms(10);
    if (s->ndt7_running)
        log_error("%u ndt7 test(s) did not stop within 5 s", (unsigned)s->ndt7_running);
}

void server_stop(struct server *s)
{
    if (!s)
        return;
    sampler_stop(s);
    /* first: it cancels a running hash and resumes every suspended .sha256 request, which
     * MHD_stop_daemon requires (it aborts with a connection still suspended) */
    snapshot_stop_digests(s->snap, s->retired); /* and those a reload replaced */
    ndt7_stop_tests(s);
    for (size_t i = 0; i < s->n_listeners; i++) {
        /* first: it must not hand a connection to a daemon being stopped */
        acceptor_stop(s->listeners[i].acceptor);
        if (s->listeners[i].mhd) {
            MHD_stop_daemon(s->listeners[i].mhd);
            s->listeners[i].mhd = NULL;
        }
        if (s->listeners[i].fd >= 0) {
            close(s->listeners[i].fd);
            s->listeners[i].fd = -1;
        }
    }
    watchdog_stop(s->watchdog); /* after the daemons: its last summary counts their closes */
}

void server_free(struct server *s)
{
    if (!s)
        return;
    server_stop(s);
    if (s->backing_fd >= 0) /* bound, never started */
        close(s->backing_fd);
    for (size_t i = 0; s->listeners && i < s->n_listeners; i++) {
        acceptor_free(s->listeners[i].acceptor); /* after server_stop: closes counted it */
        ip_limit_free(s->listeners[i].per_ip);
        tls_listener_free(s->listeners[i].tls);
    }
    free(s->listeners);
    watchdog_free(s->watchdog);
    metrics_free(s->metrics);
    ip_limit_free(s->ndt7_per_ip);
    snapshot_free_all(s->snap, &s->retired); /* they own the content and the digests */
    ack_watch_free(s->acks); /* after the daemons closed their connections; into transfers */
    transfers_free(s->transfers);
    telemetry_free(s->telemetry);
    quota_free(s->quota);
    ip_limit_free(s->speed_per_ip);
    cpu_budget_free(s->cpu);
    if (s->access && s->access != stderr)
        fclose(s->access);
    pthread_rwlock_destroy(&s->swap_lock);
    free(s);
}

void server_access_log(struct server *s, const char *line)
{
    if (!s->access || !line)
        return;
    /* one write per line: concurrent workers never interleave (O_APPEND for files) */
    ssize_t w = write(fileno(s->access), line, strlen(line));
    (void)w;
}

int server_reopen_logs(struct server *s, char *err, size_t errlen)
{
    if (!s->access || s->access == stderr)
        return 0;
    return logfile_reopen(s->snap->cfg->access_log, fileno(s->access), err, errlen);
}
