/* reload: see reload.h. */
#include "reload.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config_diff.h"
#include "err.h"
#include "log.h"
#include "logfile.h"
#include "server.h"
#include "snapshot.h"
#include "sys.h"
#include "tcp_profile.h"
#include "units.h"

/* The configuration file must not block debitd's main thread in open(2) (a named FIFO
 * without a writer would, for ever, with SIGTERM unanswered): refused by its type, found
 * without blocking. An anonymous pipe (-c <(...)) never blocks an open and is read at start;
 * a reload re-reads by name, which only a regular file allows. */
static int check_config_path(const char *path, int reload, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) < 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
        return 0; /* cfg_load's own message ("cannot read: ...") */
    if (S_ISFIFO(st.st_mode) && !reload && sys_anonymous_pipe(path))
        return 0;
    return err_set(err, errlen, "%s: cannot read: it is %s, not a regular file%s", path, sys_file_type_name(st.st_mode),
                   reload && S_ISFIFO(st.st_mode) ? " (a reload reads the file again by name: a pipe works only at start)" : "");
}

int reload_load_config(struct config *c, const struct reload_args *a, char *err, size_t errlen)
{
    if (config_defaults(c, err, errlen) < 0)
        return -1;
    c->ids = a->ids;
    if (a->config_path && (check_config_path(a->config_path, a->ids != NULL, err, errlen) < 0 ||
                           config_load_file(c, a->config_path, err, errlen) < 0))
        return -1;
    /* the command line last, through the same setters */
    if (a->n_listen) {
        config_clear_listeners(c);
        for (size_t i = 0; i < a->n_listen; i++)
            if (config_add_listener_spec(c, a->listens[i], err, errlen) < 0)
                return err_prefix(err, errlen, "--listen");
    }
    if (a->log_level && config_set_log_level(c, a->log_level, err, errlen) < 0)
        return err_prefix(err, errlen, "--log-level");
    if (config_validate(c, err, errlen) < 0)
        return -1;
    /* as nginx -t does: a log that cannot be written is a configuration error (exit 2, also
     * with -t), checked without creating it (logfile.h) */
    char warn[1200];
    if (logfile_check(c, warn, sizeof warn, err, errlen) < 0)
        return -1;
    if (warn[0])
        log_warn("%s", warn);
    return 0;
}

/* Every reload re-reads each HTTPS listener's certificate and key, changed or not: a
 * renewal (certbot) rewrites the same paths. restart_needed() has already refused a file
 * that turns TLS on or off or changes its priorities, so listener i is the same daemon. */
int reload_tls(struct server *s, const struct config *new_cfg, char *err, size_t errlen)
{
    for (size_t i = 0; i < s->n_listeners && i < new_cfg->n_listen; i++) {
        const struct listen_cfg *l = &new_cfg->listen[i];
        if (!s->listeners[i].tls || !l->tls.cert)
            continue;
        if (tls_reload(s->listeners[i].tls, l->tls.cert, l->tls.key, err, errlen) < 0)
            return err_prefix(err, errlen, "listen[%zu].tls", i);
    }
    return 0;
}

static size_t file_index(const struct config *c, const char *path)
{
    for (size_t i = 0; i < c->n_files; i++)
        if (strcmp(c->files[i].path, path) == 0)
            return i;
    return SIZE_MAX;
}

size_t reload_file_row(const struct server *s, const struct snapshot *at, size_t file)
{
    if (!at || at == s->snap)
        return file;
    if (file >= at->cfg->n_files)
        return SIZE_MAX;
    return file_index(s->snap->cfg, at->cfg->files[file].path);
}

/* What a reload prepares before the swap: everything that can fail is done here, so that
 * the swap itself cannot. */
struct prepared {
    struct config *cfg;
    struct config_diff d;
    FILE *access; /* the new access log (d.access_log) */
    struct content *content;
    struct digest *digest;
    struct metrics *metrics;
    size_t *file_from; /* new file index -> old one, for metrics_carry */
};

static void prepared_free(struct prepared *p)
{
    if (p->access && p->access != stderr)
        fclose(p->access);
    digest_free(p->digest);
    content_free(p->content);
    metrics_free(p->metrics);
    free(p->file_from);
    if (p->cfg) {
        config_free(p->cfg);
        free(p->cfg);
    }
    memset(p, 0, sizeof *p);
}

static int prepare(struct server *s, const struct reload_args *a, struct prepared *p, char *err, size_t errlen)
{
    const struct config *old = s->snap->cfg;
    memset(p, 0, sizeof *p);
    if (!(p->cfg = calloc(1, sizeof *p->cfg)))
        return err_set(err, errlen, "out of memory");
    struct config *c = p->cfg;
    if (reload_load_config(c, a, err, errlen) < 0)
        return -1;
    config_diff(old, c, &p->d);
    if (p->d.restart)
        return err_set(err, errlen, "%s: %s: changes need a restart (the running configuration stays in force)",
                       c->source, p->d.restart);
    /* a profile that this process may no longer set (an algorithm outside
     * tcp_allowed_congestion_control without CAP_NET_ADMIN) is refused here, as at start */
    for (size_t i = 0; i < c->n_listen; i++)
        if ((p->d.tcp & (1ULL << i)) && !tcp_profile_is_default(&c->listen[i].tcp) &&
            tcp_profile_probe(&c->listen[i].tcp, c->listen[i].sa.ss_family, err, errlen) < 0)
            return err_prefix(err, errlen, "%s: listen %s: tcp", c->source, s->listeners[i].name);
    if (p->d.access_log && logfile_open(c, &p->access, err, errlen) < 0)
        return -1;
    if (p->d.content) {
        /* a memfd: the private huge tmpfs needs the CAP_SYS_ADMIN dropped after start */
        p->content = content_new_in(-1, "a reload makes its region in a memfd", c->seed, config_region_size(c), 0, err, errlen);
        if (!p->content)
            return err_prefix(err, errlen, "reload: content");
        char sz[32];
        units_format_size(config_region_size(c), sz, sizeof sz);
        log_info("reload: content: %s generated from seed %llu in %.3f s (%s)", sz, (unsigned long long)c->seed,
                 content_gen_seconds(p->content), content_backing(p->content));
    }
    if (p->d.sizes && !(p->digest = server_digest_new(p->content ? p->content : s->snap->content, c, err, errlen)))
        return err_prefix(err, errlen, "reload: digest");
    p->metrics = metrics_new(c->n_listen, c->n_files);
    p->file_from = calloc(c->n_files ? c->n_files : 1, sizeof *p->file_from);
    if (!p->metrics || !p->file_from)
        return err_set(err, errlen, "out of memory");
    for (size_t i = 0; i < c->n_files; i++)
        p->file_from[i] = file_index(old, c->files[i].path);
    /* last of what can fail inside debitd: the certificates it loads are then in force
     * unless the offloads (reload_run) fail */
    return reload_tls(s, c, err, errlen) < 0 ? -1 : 0;
}

/* Record the outcome for /status and /metrics. The caller holds the write lock (callbacks
 * read it). */
static void record(struct server *s, int ok, const char *error)
{
    s->reload.have_last = 1;
    s->reload.last_wall = sys_wall_s();
    s->reload.last_ok = ok;
    snprintf(s->reload.last_error, sizeof s->reload.last_error, "%s", ok ? "" : error);
    if (ok) {
        s->reload.ok++;
        s->reload.loaded_wall = s->reload.last_wall;
    } else {
        s->reload.refused++;
    }
}

int reload_run(struct server *s, const struct reload_args *a, struct offload_ctl *off, char *msg, size_t msglen)
{
    char err[1200];
    struct prepared p;
    int r = prepare(s, a, &p, err, sizeof err);
    struct snapshot *next = NULL;
    if (r == 0) {
        /* the snapshot takes the configuration, content and digest over (frees them on failure) */
        next = snapshot_next(s->snap, p.cfg, p.content, p.digest);
        p.cfg = NULL;
        p.content = NULL;
        p.digest = NULL;
        if (!next)
            r = err_set(err, sizeof err, "out of memory");
    }
    /* offloads last: the one step with an effect outside debitd, taken once nothing else can fail */
    if (r == 0 && p.d.offload) {
        switch (offload_ctl_change(off, next->cfg, err, sizeof err)) {
        case OFFLOAD_CTL_OK: break;
        case OFFLOAD_CTL_WARNING: log_warn("reload: %s", err); break;
        case OFFLOAD_CTL_FAILED:
            snapshot_put(next);
            snapshot_reap(&next); /* held by nobody: freed (its shares dropped) */
            r = -1;
            break;
        }
    }
    if (r < 0) {
        prepared_free(&p);
        snprintf(msg, msglen, "reload refused: %s", err);
        pthread_rwlock_wrlock(&s->swap_lock);
        record(s, 0, err);
        pthread_rwlock_unlock(&s->swap_lock);
        return -1;
    }
    struct config *nc = next->cfg;
    struct config_diff d = p.d;
    pthread_rwlock_wrlock(&s->swap_lock); /* no callback runs from here to the unlock */
    metrics_carry(p.metrics, s->metrics, p.file_from);
    struct snapshot *was = s->snap;
    struct metrics *old_metrics = s->metrics;
    FILE *old_access = s->access;
    s->snap = next;
    s->metrics = p.metrics;
    if (d.access_log)
        s->access = p.access;
    for (size_t i = 0; i < s->n_listeners; i++) {
        s->listeners[i].cfg = &nc->listen[i];
        ip_limit_set_limit(s->listeners[i].per_ip, nc->per_ip);
    }
    ip_limit_set_limit(s->speed_per_ip, nc->speedtest.per_ip);
    quota_set_limits(s->quota, nc->per_ip_bytes, nc->per_ip_window_ms, (uint64_t)sys_mono_ms());
    watchdog_set_limits(s->watchdog, nc);
    log_set_level(nc->log_level);
    if (d.content) /* other bytes: an If-Range date from before must not match them */
        server_set_last_modified(s);
    s->reload.generation = next->generation;
    record(s, 1, NULL); /* /status: the new generation and its reload, seen together */
    pthread_rwlock_unlock(&s->swap_lock);
    snapshot_retire(&s->retired, was);
    metrics_free(old_metrics);
    if (d.access_log && old_access && old_access != stderr)
        fclose(old_access);
    p.metrics = NULL;
    p.access = NULL;
    prepared_free(&p);
    size_t held = snapshot_reap(&s->retired);
    char what[600];
    config_diff_format(&d, nc, what, sizeof what);
    snprintf(msg, msglen, "reload: generation %llu from %s: %s%s", (unsigned long long)next->generation, nc->source,
             what, held ? " (the previous configuration stays until the responses that use it end)" : "");
    return 0;
}
