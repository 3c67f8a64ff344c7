/* config_file: the libconfig front end of config.h (config_load_file) and its printer
 * (config_print). Every error names FILE:LINE and the setting's full path. */
#include "config.h"

#include <libconfig.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cfg.h"
#include "err.h"
#include "tls.h"
#include "units.h"

static const config_setting_t *need_type(const config_setting_t *s, int type, const char *what,
                                         char *err, size_t errlen)
{
    if (!s)
        return NULL;
    if (config_setting_type(s) != type) {
        cfg_error(err, errlen, s, "expected %s", what);
        return NULL;
    }
    return s;
}

/* listen[].tls = { cert = "FILE"; key = "FILE"; priorities = "GnuTLS string"; } */
static int parse_listen_tls(struct listen_cfg *l, const config_setting_t *g, char *err, size_t errlen)
{
    static const char *const keys[] = {"cert", "key", "priorities", NULL};
    if (!g)
        return 0;
    if (!need_type(g, CONFIG_TYPE_GROUP, "a group { cert = \"FILE\"; key = \"FILE\"; }", err, errlen) ||
        cfg_check_keys(g, keys, err, errlen) < 0)
        return -1;
    const char *cert = NULL, *key = NULL, *prio = NULL, *field = "cert";
    if (cfg_get_string(g, "cert", &cert, err, errlen) < 0 || cfg_get_string(g, "key", &key, err, errlen) < 0 ||
        cfg_get_string(g, "priorities", &prio, err, errlen) < 0)
        return -1;
    if (!cert || !key)
        return cfg_error(err, errlen, g, "%s is missing (a TLS listener needs cert and key)", !cert ? "cert" : "key");
    if (config_set_listener_tls(l, cert, key, prio, &field, err, errlen) < 0) {
        const config_setting_t *at = config_setting_get_member(g, field);
        return cfg_error_prefix(err, errlen, at ? at : g);
    }
    return 0;
}

static int parse_listen(struct config *c, const config_setting_t *list, char *err, size_t errlen)
{
    if (!need_type(list, CONFIG_TYPE_LIST, "a list of groups: ( { address = \"::\"; port = 8080; } )", err, errlen))
        return -1;
    static const char *const keys[] = {"address", "port", "tcp", "tcp_nopush", "connection_memory", "tls", NULL};
    config_clear_listeners(c);
    int n = config_setting_length(list);
    if (n == 0)
        return cfg_error(err, errlen, list, "at least one listener is needed");
    for (int i = 0; i < n; i++) {
        const config_setting_t *g = config_setting_get_elem(list, (unsigned)i);
        if (!need_type(g, CONFIG_TYPE_GROUP, "a group { address = \"::\"; port = 8080; }", err, errlen) ||
            cfg_check_keys(g, keys, err, errlen) < 0)
            return -1;
        const char *addr = "::";
        uint64_t port = 0;
        if (cfg_get_string(g, "address", &addr, err, errlen) < 0)
            return -1;
        int r = cfg_get_uint(g, "port", 1, 65535, &port, err, errlen);
        if (r < 0)
            return -1;
        if (r == 0)
            return cfg_error(err, errlen, g, "port is missing");
        const config_setting_t *where = config_setting_get_member(g, "address");
        if (config_add_listener(c, addr, port, err, errlen) < 0)
            return cfg_error_prefix(err, errlen, where ? where : g);
        if (tcp_profile_from_cfg(config_setting_get_member(g, "tcp"), &c->listen[c->n_listen - 1].tcp, err,
                                 errlen) < 0 ||
            cfg_get_bool(g, "tcp_nopush", &c->listen[c->n_listen - 1].tcp_nopush, err, errlen) < 0)
            return -1;
        struct listen_cfg *lc = &c->listen[c->n_listen - 1];
        uint64_t mem = lc->conn_memory;
        if ((r = cfg_get_size(g, "connection_memory", &mem, err, errlen)) < 0)
            return -1;
        if (r && config_set_listener_memory(lc, mem, err, errlen) < 0)
            return cfg_error_prefix(err, errlen, config_setting_get_member(g, "connection_memory"));
        if (parse_listen_tls(lc, config_setting_get_member(g, "tls"), err, errlen) < 0)
            return -1;
    }
    return 0;
}

static int parse_files(struct config *c, const config_setting_t *list, char *err, size_t errlen)
{
    if (!need_type(list, CONFIG_TYPE_LIST, "a list of groups: ( { path = \"/ram/1GiB.dat\"; size = \"1GiB\"; } )",
                   err, errlen))
        return -1;
    static const char *const keys[] = {"path", "size", NULL};
    config_clear_files(c);
    int n = config_setting_length(list);
    for (int i = 0; i < n; i++) {
        const config_setting_t *g = config_setting_get_elem(list, (unsigned)i);
        if (!need_type(g, CONFIG_TYPE_GROUP, "a group { path = \"/ram/1GiB.dat\"; size = \"1GiB\"; }", err, errlen) ||
            cfg_check_keys(g, keys, err, errlen) < 0)
            return -1;
        const char *path = NULL;
        uint64_t size = 0;
        int r = cfg_get_string(g, "path", &path, err, errlen);
        if (r < 0)
            return -1;
        if (r == 0)
            return cfg_error(err, errlen, g, "path is missing");
        r = cfg_get_size(g, "size", &size, err, errlen);
        if (r < 0)
            return -1;
        if (r == 0)
            return cfg_error(err, errlen, g, "size is missing");
        if (size > CONFIG_MAX_FILE_SIZE)
            return cfg_error(err, errlen, config_setting_get_member(g, "size"),
                             "%llu bytes is larger than the 16 TiB limit", (unsigned long long)size);
        if (config_add_file(c, path, size, err, errlen) < 0)
            return cfg_error_prefix(err, errlen, config_setting_get_member(g, "path"));
    }
    return 0;
}

static int parse_upload(struct config *c, const config_setting_t *g, char *err, size_t errlen)
{
    static const char *const keys[] = {"path", "max_size", NULL};
    if (!need_type(g, CONFIG_TYPE_GROUP, "a group { path = \"/upload\"; max_size = \"10GiB\"; }", err, errlen) ||
        cfg_check_keys(g, keys, err, errlen) < 0)
        return -1;
    const char *path = c->upload_path ? c->upload_path : "/upload";
    uint64_t max = c->upload_max;
    if (cfg_get_string(g, "path", &path, err, errlen) < 0 || cfg_get_size(g, "max_size", &max, err, errlen) < 0)
        return -1;
    char *copy = strdup(path); /* path may point into c->upload_path, which the setter frees */
    if (!copy)
        return cfg_error(err, errlen, g, "out of memory");
    int r = config_set_upload(c, copy, max, err, errlen);
    free(copy);
    const config_setting_t *where = config_setting_get_member(g, "path");
    if (r < 0)
        return cfg_error_prefix(err, errlen, where ? where : g);
    return 0;
}

static int parse_limits(struct config *c, const config_setting_t *g, char *err, size_t errlen)
{
    static const char *const keys[] = {"connections", "per_ip", "idle_timeout", "header_timeout", "body_min_rate",
                                       "per_ip_bytes", "per_ip_window", "drain_timeout", NULL};
    if (!need_type(g, CONFIG_TYPE_GROUP, "a group { connections = 10000; per_ip = 100; idle_timeout = 30; }", err, errlen) ||
        cfg_check_keys(g, keys, err, errlen) < 0)
        return -1;
    uint64_t v;
    int r;
    if ((r = cfg_get_uint(g, "connections", 1, 1000000, &v, err, errlen)) < 0)
        return -1;
    if (r)
        c->max_connections = (unsigned)v;
    if ((r = cfg_get_uint(g, "per_ip", 0, 1000000, &v, err, errlen)) < 0)
        return -1;
    if (r)
        c->per_ip = (unsigned)v;
    if ((r = cfg_get_duration(g, "idle_timeout", &v, err, errlen)) < 0)
        return -1;
    if (r) {
        const config_setting_t *s = config_setting_get_member(g, "idle_timeout");
        if (v % 1000000 != 0)
            return cfg_error(err, errlen, s, "must be whole seconds (libmicrohttpd's resolution)");
        if (v / 1000000 > 86400)
            return cfg_error(err, errlen, s, "more than one day");
        c->idle_timeout = (unsigned)(v / 1000000);
    }
    if ((r = cfg_get_duration(g, "header_timeout", &v, err, errlen)) < 0)
        return -1;
    if (r && config_set_header_timeout(c, v, err, errlen) < 0)
        return cfg_error_prefix(err, errlen, config_setting_get_member(g, "header_timeout"));
    const config_setting_t *rate = config_setting_get_member(g, "body_min_rate");
    if (rate) {
        char text[64];
        long long zero;
        if (config_setting_type(rate) == CONFIG_TYPE_STRING)
            snprintf(text, sizeof text, "%s", config_setting_get_string(rate));
        else if (cfg_int_value(rate, &zero) && zero == 0)
            snprintf(text, sizeof text, "0");
        else
            return cfg_error(err, errlen, rate, "expected a string such as \"1kB/s\", or 0 for no floor");
        if (config_set_body_min_rate(c, text, err, errlen) < 0)
            return cfg_error_prefix(err, errlen, rate);
    }
    uint64_t bytes = c->per_ip_bytes, window = c->per_ip_window_ms * 1000;
    if (cfg_get_size(g, "per_ip_bytes", &bytes, err, errlen) < 0 ||
        cfg_get_duration(g, "per_ip_window", &window, err, errlen) < 0)
        return -1;
    if (config_set_quota(c, bytes, window, err, errlen) < 0) {
        const config_setting_t *w = config_setting_get_member(g, "per_ip_window");
        return cfg_error_prefix(err, errlen, w ? w : g);
    }
    if ((r = cfg_get_duration(g, "drain_timeout", &v, err, errlen)) < 0)
        return -1;
    if (r && config_set_drain_timeout(c, v, err, errlen) < 0)
        return cfg_error_prefix(err, errlen, config_setting_get_member(g, "drain_timeout"));
    return 0;
}

static int parse_privacy(struct config *c, const config_setting_t *g, char *err, size_t errlen)
{
    static const char *const keys[] = {"details", "public_transfers", NULL};
    if (!need_type(g, CONFIG_TYPE_GROUP, "a group { details = false; public_transfers = false; }", err, errlen) ||
        cfg_check_keys(g, keys, err, errlen) < 0)
        return -1;
    if (cfg_get_bool(g, "details", &c->details, err, errlen) < 0 ||
        cfg_get_bool(g, "public_transfers", &c->public_transfers, err, errlen) < 0)
        return -1;
    return 0;
}

static int parse_log(struct config *c, const config_setting_t *g, char *err, size_t errlen)
{
    static const char *const keys[] = {"level", "access", "access_format", NULL};
    if (!need_type(g, CONFIG_TYPE_GROUP, "a group { level = \"info\"; access = \"-\"; }", err, errlen) ||
        cfg_check_keys(g, keys, err, errlen) < 0)
        return -1;
    const char *s;
    int r;
    if ((r = cfg_get_string(g, "level", &s, err, errlen)) < 0)
        return -1;
    if (r && config_set_log_level(c, s, err, errlen) < 0)
        return cfg_error_prefix(err, errlen, config_setting_get_member(g, "level"));
    if ((r = cfg_get_string(g, "access", &s, err, errlen)) < 0)
        return -1;
    if (r) {
        if (!s[0])
            return cfg_error(err, errlen, config_setting_get_member(g, "access"),
                             "empty (use \"-\" for stderr, \"off\", or a file path)");
        char *copy = strdup(s);
        if (!copy)
            return cfg_error(err, errlen, config_setting_get_member(g, "access"), "out of memory");
        free(c->access_log);
        c->access_log = copy;
        c->access_log_line = (unsigned)config_setting_source_line(config_setting_get_member(g, "access"));
    }
    if ((r = cfg_get_string(g, "access_format", &s, err, errlen)) < 0)
        return -1;
    if (r && config_set_access_format(c, s, err, errlen) < 0)
        return cfg_error_prefix(err, errlen, config_setting_get_member(g, "access_format"));
    return 0;
}

static int parse_http(struct config *c, const config_setting_t *g, char *err, size_t errlen)
{
    static const char *const keys[] = {"strict", NULL};
    if (!need_type(g, CONFIG_TYPE_GROUP, "a group { strict = true; }", err, errlen) ||
        cfg_check_keys(g, keys, err, errlen) < 0)
        return -1;
    return cfg_get_bool(g, "strict", &c->http_strict, err, errlen) < 0 ? -1 : 0;
}

static int parse_metrics(struct config *c, const config_setting_t *g, char *err, size_t errlen)
{
    static const char *const keys[] = {"enabled", "allow", NULL};
    if (!need_type(g, CONFIG_TYPE_GROUP, "a group { enabled = true; allow = ( \"127.0.0.1\", \"::1\" ); }", err,
                   errlen) ||
        cfg_check_keys(g, keys, err, errlen) < 0 || cfg_get_bool(g, "enabled", &c->metrics.enabled, err, errlen) < 0)
        return -1;
    const config_setting_t *list = config_setting_get_member(g, "allow");
    if (!list)
        return 0;
    if (!config_setting_is_aggregate(list) || config_setting_is_group(list))
        return cfg_error(err, errlen, list, "expected a list of addresses: ( \"127.0.0.1\", \"10.0.0.0/8\" )");
    acl_clear(&c->metrics.allow); /* an empty list: nobody (enabled but unreachable) */
    for (int i = 0; i < config_setting_length(list); i++) {
        const config_setting_t *e = config_setting_get_elem(list, (unsigned)i);
        const char *spec = config_setting_get_string(e);
        if (!spec)
            return cfg_error(err, errlen, e, "expected a string such as \"127.0.0.1\" or \"10.0.0.0/8\"");
        if (config_add_metrics_allow(c, spec, err, errlen) < 0)
            return cfg_error_prefix(err, errlen, e);
    }
    return 0;
}

static int parse_offload(struct config *c, const config_setting_t *g, char *err, size_t errlen)
{
    static const char *const keys[] = {"interface", "tso", "gso", "gro", "restore", "required", "state_file", NULL};
    if (!need_type(g, CONFIG_TYPE_GROUP, "a group { interface = \"eth0\"; tso = false; gso = false; }", err, errlen) ||
        cfg_check_keys(g, keys, err, errlen) < 0)
        return -1;
    const char *s;
    int r = cfg_get_string(g, "interface", &s, err, errlen);
    if (r < 0)
        return -1;
    if (r == 0)
        return cfg_error(err, errlen, g, "interface is missing");
    if (!s[0] || strlen(s) >= IF_NAMESIZE || strchr(s, '/') || strchr(s, ' '))
        return cfg_error(err, errlen, config_setting_get_member(g, "interface"),
                         "\"%s\" is not a valid interface name", s);
    char *ifname = strdup(s);
    if (!ifname)
        return cfg_error(err, errlen, g, "out of memory");
    free(c->offload.interface);
    c->offload.interface = ifname;
    c->offload.interface_line = (unsigned)config_setting_source_line(config_setting_get_member(g, "interface"));
    static const char *const feats[] = {"tso", "gso", "gro"};
    for (int i = 0; i < OFFLOAD_SETTABLE; i++) {
        int on;
        if ((r = cfg_get_bool(g, feats[i], &on, err, errlen)) < 0)
            return -1;
        c->offload.wish.want[i] = r == 0 ? OFFLOAD_LEAVE : on ? OFFLOAD_ON : OFFLOAD_OFF;
    }
    if (cfg_get_bool(g, "restore", &c->offload.restore, err, errlen) < 0 ||
        cfg_get_bool(g, "required", &c->offload.required, err, errlen) < 0)
        return -1;
    if ((r = cfg_get_string(g, "state_file", &s, err, errlen)) < 0)
        return -1;
    if (r) {
        if (s[0] != '/')
            return cfg_error(err, errlen, config_setting_get_member(g, "state_file"), "must be an absolute path");
        char *copy = strdup(s);
        if (!copy)
            return cfg_error(err, errlen, config_setting_get_member(g, "state_file"), "out of memory");
        free(c->offload.state_file);
        c->offload.state_file = copy;
    }
    return 0;
}

/* user, group, seccomp (top level): group first, so that it overrides the user's primary
 * group whatever the order in the file. */
static int parse_privilege(struct config *c, const config_setting_t *root, char *err, size_t errlen)
{
    static const struct {
        const char *key;
        int (*set)(struct config *, const char *, char *, size_t);
    } keys[] = {{"group", config_set_group}, {"user", config_set_user}, {"seccomp", config_set_seccomp}};
    for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
        const char *v;
        int r = cfg_get_string(root, keys[i].key, &v, err, errlen);
        if (r < 0)
            return -1;
        if (r && keys[i].set(c, v, err, errlen) < 0)
            return cfg_error_prefix(err, errlen, config_setting_get_member(root, keys[i].key));
    }
    return 0;
}

int config_load_file(struct config *c, const char *path, char *err, size_t errlen)
{
    config_t lc;
    config_init(&lc);
    int ret = -1;
    if (cfg_load(&lc, path, err, errlen) < 0)
        goto out;
    const config_setting_t *root = config_root_setting(&lc);
    static const char *const keys[] = {"listen", "threads", "seed", "ram", "files", "upload",
                                       "limits", "log", "transfers", "privacy", "offload", "http", "user", "group",
                                       "seccomp", "metrics", NULL};
    if (cfg_check_keys(root, keys, err, errlen) < 0)
        goto out;
    char *source = strdup(path);
    if (!source) {
        err_set(err, errlen, "%s: out of memory", path);
        goto out;
    }
    free(c->source);
    c->source = source;
    const config_setting_t *s;
    uint64_t v;
    int r;
    if ((s = config_setting_get_member(root, "listen")) && parse_listen(c, s, err, errlen) < 0)
        goto out;
    if ((r = cfg_get_uint(root, "threads", 0, 1024, &v, err, errlen)) < 0)
        goto out;
    if (r && config_set_threads(c, v, err, errlen) < 0) { /* the same setter as everywhere */
        cfg_error_prefix(err, errlen, config_setting_get_member(root, "threads"));
        goto out;
    }
    if ((r = cfg_get_uint(root, "seed", 0, INT64_MAX, &v, err, errlen)) < 0)
        goto out;
    if (r)
        c->seed = v;
    if ((r = cfg_get_size(root, "ram", &v, err, errlen)) < 0)
        goto out;
    if (r) {
        if (v != 0 && v < 4096) {
            cfg_error(err, errlen, config_setting_get_member(root, "ram"),
                      "%llu bytes is too small (at least 4KiB, or 0 for no cap)", (unsigned long long)v);
            goto out;
        }
        c->ram = v;
        c->ram_line = (unsigned)config_setting_source_line(config_setting_get_member(root, "ram"));
    }
    if ((r = cfg_get_uint(root, "transfers", 1, 1000000, &v, err, errlen)) < 0)
        goto out;
    if (r)
        c->transfers_keep = (unsigned)v;
    /* upload before files, so that a file that collides with it names the file's line; the
     * file's list replaces the defaults, so drop them first */
    if (config_setting_get_member(root, "files"))
        config_clear_files(c);
    if ((s = config_setting_get_member(root, "upload")) && parse_upload(c, s, err, errlen) < 0)
        goto out;
    if ((s = config_setting_get_member(root, "files")) && parse_files(c, s, err, errlen) < 0)
        goto out;
    if ((s = config_setting_get_member(root, "limits")) && parse_limits(c, s, err, errlen) < 0)
        goto out;
    if ((s = config_setting_get_member(root, "log")) && parse_log(c, s, err, errlen) < 0)
        goto out;
    if ((s = config_setting_get_member(root, "offload")) && parse_offload(c, s, err, errlen) < 0)
        goto out;
    if ((s = config_setting_get_member(root, "privacy")) && parse_privacy(c, s, err, errlen) < 0)
        goto out;
    if ((s = config_setting_get_member(root, "http")) && parse_http(c, s, err, errlen) < 0)
        goto out;
    if ((s = config_setting_get_member(root, "metrics")) && parse_metrics(c, s, err, errlen) < 0)
        goto out;
    if (parse_privilege(c, root, err, errlen) < 0)
        goto out;
    ret = 0;
out:
    config_destroy(&lc);
    return ret;
}

/* A size as the config file would spell it: an exact binary unit when there is one, else
 * bytes, with libconfig's L suffix beyond 32 bits (it does not widen by itself). */
static const char *fmt_size(uint64_t v, char *buf, size_t len)
{
    static const char *const unit[] = {"TiB", "GiB", "MiB", "KiB"};
    for (int i = 0; i < 4 && v; i++) {
        uint64_t m = 1ULL << (10 * (4 - i));
        if (v % m == 0) {
            snprintf(buf, len, "\"%llu%s\"", (unsigned long long)(v / m), unit[i]);
            return buf;
        }
    }
    snprintf(buf, len, "%llu%s", (unsigned long long)v, v > INT32_MAX ? "L" : "");
    return buf;
}

/* Milliseconds in the largest unit that keeps them whole ("1d", "90min", "1500ms"). */
static const char *fmt_ms(uint64_t ms, char *buf, size_t len)
{
    static const struct {
        uint64_t ms;
        const char *unit;
    } u[] = {{86400000, "d"}, {3600000, "h"}, {60000, "min"}, {1000, "s"}};
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        if (ms && ms % u[i].ms == 0) {
            snprintf(buf, len, "\"%llu%s\"", (unsigned long long)(ms / u[i].ms), u[i].unit);
            return buf;
        }
    snprintf(buf, len, "\"%llums\"", (unsigned long long)ms);
    return buf;
}

void config_print(const struct config *c, FILE *out)
{
    char b1[48];
    char buf[64];
    fprintf(out, "# effective settings of debitd %s, from %s\n", DEBIT_VERSION, c->source);
    fprintf(out, "listen = (\n");
    for (size_t i = 0; i < c->n_listen; i++) {
        const struct tcp_profile *t = &c->listen[i].tcp;
        fprintf(out, "  { address = \"%s\"; port = %u; tcp_nopush = %s; connection_memory = %s;", c->listen[i].address,
                c->listen[i].port, c->listen[i].tcp_nopush ? "true" : "false",
                fmt_size(c->listen[i].conn_memory, b1, sizeof b1));
        if (!tcp_profile_is_default(t)) {
            fprintf(out, " tcp = {");
            if (t->congestion[0])
                fprintf(out, " congestion = \"%s\";", t->congestion);
            if (t->pacing_rate_bps) {
                units_format_rate_tc(t->pacing_rate_bps, b1, sizeof b1);
                fprintf(out, " pacing_rate = \"%s\";", b1);
            }
            if (t->sndbuf)
                fprintf(out, " sndbuf = %s;", fmt_size(t->sndbuf, b1, sizeof b1));
            if (t->notsent_lowat)
                fprintf(out, " notsent_lowat = %s;", fmt_size(t->notsent_lowat, b1, sizeof b1));
            fprintf(out, " };");
        }
        if (c->listen[i].tls.cert)
            fprintf(out, " tls = { cert = \"%s\"; key = \"%s\"; priorities = \"%s\"; };", c->listen[i].tls.cert,
                    c->listen[i].tls.key, c->listen[i].tls.priorities ? c->listen[i].tls.priorities
                                                                       : TLS_DEFAULT_PRIORITIES);
        fprintf(out, " }%s\n", i + 1 < c->n_listen ? "," : "");
    }
    fprintf(out, ");\n");
    fprintf(out, "threads = %u; # %u worker thread(s) per listener\n", c->threads, config_threads_effective(c));
    fprintf(out, "seed = %llu%s;\n", (unsigned long long)c->seed, c->seed > INT32_MAX ? "L" : "");
    units_format_size(config_region_size(c), buf, sizeof buf);
    fprintf(out, "ram = %s; # content region: %s\n", fmt_size(c->ram, b1, sizeof b1), buf);
    fprintf(out, "files = (\n");
    uint64_t region = config_region_size(c);
    for (size_t i = 0; i < c->n_files; i++) {
        units_format_size(c->files[i].size, buf, sizeof buf);
        fprintf(out, "  { path = \"%s\"; size = %s; }%s # %llu bytes%s\n", c->files[i].path,
                fmt_size(c->files[i].size, b1, sizeof b1), i + 1 < c->n_files ? "," : "",
                (unsigned long long)c->files[i].size, c->files[i].size > region ? ", repeats the region" : "");
    }
    fprintf(out, ");\n");
    if (c->upload_path)
        fprintf(out, "upload = { path = \"%s\"; max_size = %s; };\n", c->upload_path,
                fmt_size(c->upload_max, b1, sizeof b1));
    else /* spelled out: without an upload group, a re-read would get the default sink back */
        fprintf(out, "upload = { path = \"\"; }; # no upload sink\n");
    fprintf(out, "limits = { connections = %u; per_ip = %u; idle_timeout = %u; header_timeout = \"%llums\"; "
            "body_min_rate = \"%lluB/s\";", c->max_connections, c->per_ip, c->idle_timeout,
            (unsigned long long)c->header_timeout_ms, (unsigned long long)c->body_min_rate);
    char b2[32], b3[32];
    fprintf(out, " per_ip_bytes = %s; per_ip_window = %s; drain_timeout = %s; };%s\n",
            fmt_size(c->per_ip_bytes, b1, sizeof b1), fmt_ms(c->per_ip_window_ms, b2, sizeof b2),
            fmt_ms(c->drain_timeout_ms, b3, sizeof b3), c->per_ip_bytes ? "" : " # no per-address quota");
    fprintf(out, "log = { level = \"%s\"; access = \"%s\"; access_format = \"%s\"; };\n", log_level_name(c->log_level),
            c->access_log, access_log_format_name(c->access_format));
    fprintf(out, "transfers = %u;\n", c->transfers_keep);
    fprintf(out, "privacy = { details = %s; public_transfers = %s; };\n", c->details ? "true" : "false",
            c->public_transfers ? "true" : "false");
    fprintf(out, "http = { strict = %s; };\n", c->http_strict ? "true" : "false");
    fprintf(out, "metrics = { enabled = %s; allow = (", c->metrics.enabled ? "true" : "false");
    for (size_t i = 0; i < c->metrics.allow.n; i++)
        fprintf(out, "%s \"%s\"", i ? "," : "", c->metrics.allow.e[i].spec);
    fprintf(out, " ); };\n");
    if (c->offload.interface) {
        static const char *const v[] = {"", "true", "false"};
        fprintf(out, "offload = { interface = \"%s\";", c->offload.interface);
        static const char *const feats[] = {"tso", "gso", "gro"};
        for (int i = 0; i < OFFLOAD_SETTABLE; i++)
            if (c->offload.wish.want[i] != OFFLOAD_LEAVE)
                fprintf(out, " %s = %s;", feats[i], v[c->offload.wish.want[i]]);
        fprintf(out, " restore = %s; required = %s; state_file = \"%s\"; };\n", c->offload.restore ? "true" : "false",
                c->offload.required ? "true" : "false", c->offload.state_file);
    } else {
        fprintf(out, "# offload: not managed (no offload.interface)\n");
    }
    if (c->user)
        fprintf(out, "user = \"%s\"; # uid %u\n", c->user, (unsigned)c->uid);
    else
        fprintf(out, "# user: not set (debitd keeps the identity it was started with)\n");
    if (c->group)
        fprintf(out, "group = \"%s\"; # gid %u\n", c->group, (unsigned)c->gid);
    else if (c->user)
        fprintf(out, "# group: the user's primary group, gid %u\n", (unsigned)c->gid);
    fprintf(out, "seccomp = \"%s\";\n", config_seccomp_name(c->seccomp));
}
