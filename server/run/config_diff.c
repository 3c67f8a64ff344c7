/* config_diff: see config_diff.h. */
#include "config_diff.h"
#include "config_table.h"

#include <stdio.h>
#include <string.h>

static int str_eq(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

static int tcp_eq(const struct tcp_profile *a, const struct tcp_profile *b)
{
    return strcmp(a->congestion, b->congestion) == 0 && a->pacing_rate_bps == b->pacing_rate_bps &&
           a->sndbuf == b->sndbuf && a->notsent_lowat == b->notsent_lowat;
}

static int acl_eq(const struct acl *a, const struct acl *b)
{
    if (a->n != b->n)
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (a->e[i].prefix != b->e[i].prefix || memcmp(&a->e[i].net, &b->e[i].net, sizeof a->e[i].net) != 0)
            return 0;
    return 1;
}

/* The same listeners in the same order (address and port; their TCP profiles may differ). */
static int listeners_eq(const struct config *a, const struct config *b)
{
    if (a->n_listen != b->n_listen)
        return 0;
    for (size_t i = 0; i < a->n_listen; i++)
        if (a->listen[i].port != b->listen[i].port || a->listen[i].salen != b->listen[i].salen ||
            memcmp(&a->listen[i].sa, &b->listen[i].sa, a->listen[i].salen) != 0)
            return 0;
    return 1;
}

/* HTTP vs HTTPS and the GnuTLS priorities are options of the listener's libmicrohttpd
 * daemon, fixed at its start; the certificate and key files are not (tls_reload swaps them
 * for new handshakes), so their paths may change. */
static int tls_modes_eq(const struct config *a, const struct config *b)
{
    for (size_t i = 0; i < a->n_listen && i < b->n_listen; i++)
        if ((a->listen[i].tls.cert != NULL) != (b->listen[i].tls.cert != NULL) ||
            !str_eq(a->listen[i].tls.priorities, b->listen[i].tls.priorities))
            return 0;
    return 1;
}

static const struct file_cfg *find(const struct config *c, const char *path)
{
    for (size_t i = 0; i < c->n_files; i++)
        if (strcmp(c->files[i].path, path) == 0)
            return &c->files[i];
    return NULL;
}

static int has_size(const struct config *c, uint64_t size)
{
    for (size_t i = 0; i < c->n_files; i++)
        if (c->files[i].size == size)
            return 1;
    return 0;
}

/* What a running debitd cannot change: the libmicrohttpd daemons' options (listeners,
 * threads, connection limit, idle timeout, connection memory), the transfer ring, the
 * identity and filter taken at start, and the interface whose original offload state is
 * kept for the exit: the listeners by hand, the rest as the table says (CONFIG_RESTART). */
static const char *restart_needed(const struct config *o, const struct config *n)
{
    if (!listeners_eq(o, n))
        return "listen";
    if (!tls_modes_eq(o, n))
        return "listen.tls";
    for (size_t i = 0; i < n->n_listen; i++) /* the same listeners, by listeners_eq */
        if (o->listen[i].conn_memory != n->listen[i].conn_memory)
            return "listen.connection_memory";
    for (size_t i = 0; i < config_table_len; i++)
        if (config_table[i].reload == CONFIG_RESTART && !config_table_equal(o, n, &config_table[i]))
            return config_table[i].name;
    return NULL;
}

/* 1 when a setting whose change a reload takes over as R differs. */
static int changed(const struct config *o, const struct config *n, enum config_reload r)
{
    for (size_t i = 0; i < config_table_len; i++)
        if (config_table[i].reload == r && !config_table_equal(o, n, &config_table[i]))
            return 1;
    return 0;
}

void config_diff(const struct config *o, const struct config *n, struct config_diff *d)
{
    memset(d, 0, sizeof *d);
    d->restart = restart_needed(o, n);
    for (size_t i = 0; i < n->n_files; i++) {
        const struct file_cfg *was = find(o, n->files[i].path);
        if (!was)
            d->files_added++;
        else if (was->size != n->files[i].size)
            d->files_resized++;
        if (!has_size(o, n->files[i].size))
            d->sizes = 1;
    }
    for (size_t i = 0; i < o->n_files; i++)
        if (!find(n, o->files[i].path))
            d->files_removed++;
    d->content = changed(o, n, CONFIG_RELOAD_CONTENT) || config_region_size(o) != config_region_size(n);
    if (d->content)
        d->sizes = 1; /* a new region: every digest anew */
    d->upload = changed(o, n, CONFIG_RELOAD_UPLOAD);
    d->limits = d->upload || changed(o, n, CONFIG_RELOAD_LIMITS);
    if (!d->restart) /* the same listeners: compare their profiles one by one */
        for (size_t i = 0; i < n->n_listen && i < 64; i++)
            if (!tcp_eq(&o->listen[i].tcp, &n->listen[i].tcp) || o->listen[i].tcp_nopush != n->listen[i].tcp_nopush)
                d->tcp |= 1ULL << i;
    d->offload = changed(o, n, CONFIG_RELOAD_OFFLOAD);
    d->log_level = changed(o, n, CONFIG_RELOAD_LOG_LEVEL);
    d->access_log = changed(o, n, CONFIG_RELOAD_ACCESS_LOG);
    d->access_format = changed(o, n, CONFIG_RELOAD_ACCESS_FORMAT);
    d->other = changed(o, n, CONFIG_RELOAD_OTHER) || !acl_eq(&o->metrics.allow, &n->metrics.allow);
}

int config_diff_any(const struct config_diff *d)
{
    return d->files_added || d->files_removed || d->files_resized || d->content || d->limits || d->tcp ||
           d->offload || d->log_level || d->access_log || d->access_format || d->other;
}

/* Append to BUF, ", "-separated. */
static void add(char *buf, size_t len, const char *what, const char *name)
{
    size_t n = strnlen(buf, len);
    if (n + 1 >= len)
        return;
    snprintf(buf + n, len - n, "%s%s%s", n ? ", " : "", what, name ? name : "");
}

void config_diff_format(const struct config_diff *d, const struct config *new, char *buf, size_t len)
{
    if (!len)
        return;
    buf[0] = 0;
    if (d->files_added || d->files_removed || d->files_resized) {
        char f[96];
        snprintf(f, sizeof f, "+%zu file%s, -%zu, %zu resized", d->files_added, d->files_added == 1 ? "" : "s",
                 d->files_removed, d->files_resized);
        add(buf, len, f, NULL);
    }
    if (d->content)
        add(buf, len, "new content region", NULL);
    if (d->limits)
        add(buf, len, "limits changed", NULL);
    for (size_t i = 0; i < new->n_listen && i < 64; i++)
        if (d->tcp & (1ULL << i)) {
            char name[80];
            const struct listen_cfg *l = &new->listen[i];
            snprintf(name, sizeof name, l->sa.ss_family == AF_INET6 ? "[%s]:%u changed" : "%s:%u changed",
                     l->address, l->port);
            add(buf, len, "tcp profile of ", name);
        }
    if (d->offload)
        add(buf, len, "offloads changed", NULL);
    if (d->log_level)
        add(buf, len, "log level changed", NULL);
    if (d->access_log)
        add(buf, len, "access log changed", NULL);
    if (d->access_format)
        add(buf, len, "access log format changed", NULL);
    if (d->other)
        add(buf, len, "privacy/strict/metrics changed", NULL);
    if (!buf[0])
        snprintf(buf, len, "nothing changed");
}
