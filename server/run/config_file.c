/* config_file: the libconfig front end of config.h (config_load_file) and its printer
 * (config_print). Every error names FILE:LINE and the setting's full path. */
#include "config.h"

#include <libconfig.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cfg.h"
#include "config_table.h"
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

/* metrics.allow: numeric addresses or networks; the file's list replaces the default */
static int parse_metrics_allow(struct config *c, const config_setting_t *list, char *err, size_t errlen)
{
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

/* The table's names of GROUP's members (NULL: the top level's keys, copied into NAMES),
 * NULL-terminated, in the table's order: what cfg_check_keys accepts and lists. */
#define KEYS_MAX 40
static void table_keys(const char *group, const char **keys, char (*names)[32])
{
    size_t n = 0;
    for (size_t i = 0; i < config_table_len && n + 1 < KEYS_MAX; i++) {
        const struct config_entry *e = &config_table[i];
        if (group) {
            if (config_entry_in(e, group))
                keys[n++] = config_entry_leaf(e);
            continue;
        }
        int len = (int)strcspn(e->name, ".");
        if (n && strlen(keys[n - 1]) == (size_t)len && strncmp(keys[n - 1], e->name, (size_t)len) == 0)
            continue; /* a group's members are adjacent in the table */
        snprintf(names[n], sizeof names[n], "%.*s", len, e->name);
        keys[n] = names[n];
        n++;
    }
    keys[n] = NULL;
}

/* "{ connections = 10000; per_ip = 100; idle_timeout = 30; }": GROUP's first three members
 * that have a default, for the message about a group written as something else. */
static void group_example(const char *group, char *buf, size_t len)
{
    struct config d = {0};
    config_table_defaults(&d);
    size_t off = (size_t)snprintf(buf, len, "a group {");
    int shown = 0;
    for (size_t i = 0; i < config_table_len && shown < 3 && off < len; i++) {
        char v[96];
        const struct config_entry *e = &config_table[i];
        if (!config_entry_in(e, group) || !config_table_format(&d, e, v, sizeof v)[0])
            continue;
        off += (size_t)snprintf(buf + off, len - off, " %s = %s;", config_entry_leaf(e), v);
        shown++;
    }
    if (off < len)
        snprintf(buf + off, len - off, " }");
    config_table_free(&d);
}

/* Group GROUP's table settings (GROUP NULL: the top level's scalars) from G. */
static int read_group(struct config *c, const char *group, const config_setting_t *g, char *err, size_t errlen)
{
    if (group) {
        char example[200];
        group_example(group, example, sizeof example);
        const char *keys[KEYS_MAX];
        table_keys(group, keys, NULL);
        if (!need_type(g, CONFIG_TYPE_GROUP, example, err, errlen) || cfg_check_keys(g, keys, err, errlen) < 0)
            return -1;
    }
    for (size_t i = 0; i < config_table_len; i++)
        if (config_entry_in(&config_table[i], group) && config_table_read(c, &config_table[i], g, err, errlen) < 0)
            return -1;
    if (group && strcmp(group, "offload") == 0 && !c->offload.interface)
        return cfg_error(err, errlen, g, "interface is missing");
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
    const char *keys[KEYS_MAX];
    char names[KEYS_MAX][32];
    table_keys(NULL, keys, names);
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
    if ((s = config_setting_get_member(root, "listen")) && parse_listen(c, s, err, errlen) < 0)
        goto out;
    /* the file's list replaces the defaults: dropped before upload.path is checked against
     * them; upload before files, so that a file that collides with it names the file's line */
    if (config_setting_get_member(root, "files"))
        config_clear_files(c);
    if (read_group(c, NULL, root, err, errlen) < 0)
        goto out;
    for (int i = 0; keys[i]; i++) { /* the groups, in the table's order */
        if (!config_table_find(keys[i]) && (s = config_setting_get_member(root, keys[i])) &&
            read_group(c, keys[i], s, err, errlen) < 0)
            goto out;
    }
    if ((s = config_setting_get_member(root, "files")) && parse_files(c, s, err, errlen) < 0)
        goto out;
    if ((s = config_lookup(&lc, "metrics.allow")) && parse_metrics_allow(c, s, err, errlen) < 0)
        goto out;
    ret = 0;
out:
    config_destroy(&lc);
    return ret;
}

/* The hand-printed settings: listen, files, metrics.allow. */
static void print_listen(const struct config *c, FILE *out)
{
    char b1[48];
    fprintf(out, "listen = (\n");
    for (size_t i = 0; i < c->n_listen; i++) {
        const struct tcp_profile *t = &c->listen[i].tcp;
        fprintf(out, "  { address = \"%s\"; port = %u; tcp_nopush = %s; connection_memory = %s;", c->listen[i].address,
                c->listen[i].port, c->listen[i].tcp_nopush ? "true" : "false",
                config_fmt_size(c->listen[i].conn_memory, b1, sizeof b1));
        if (!tcp_profile_is_default(t)) {
            fprintf(out, " tcp = {");
            if (t->congestion[0])
                fprintf(out, " congestion = \"%s\";", t->congestion);
            if (t->pacing_rate_bps) {
                units_format_rate_tc(t->pacing_rate_bps, b1, sizeof b1);
                fprintf(out, " pacing_rate = \"%s\";", b1);
            }
            if (t->sndbuf)
                fprintf(out, " sndbuf = %s;", config_fmt_size(t->sndbuf, b1, sizeof b1));
            if (t->notsent_lowat)
                fprintf(out, " notsent_lowat = %s;", config_fmt_size(t->notsent_lowat, b1, sizeof b1));
            fprintf(out, " };");
        }
        if (c->listen[i].tls.cert)
            fprintf(out, " tls = { cert = \"%s\"; key = \"%s\"; priorities = \"%s\"; };", c->listen[i].tls.cert,
                    c->listen[i].tls.key, c->listen[i].tls.priorities ? c->listen[i].tls.priorities
                                                                       : TLS_DEFAULT_PRIORITIES);
        fprintf(out, " }%s\n", i + 1 < c->n_listen ? "," : "");
    }
    fprintf(out, ");\n");
}

static void print_files(const struct config *c, FILE *out)
{
    char b1[48], buf[64];
    fprintf(out, "files = (\n");
    uint64_t region = config_region_size(c);
    for (size_t i = 0; i < c->n_files; i++) {
        units_format_size(c->files[i].size, buf, sizeof buf);
        fprintf(out, "  { path = \"%s\"; size = %s; }%s # %llu bytes%s\n", c->files[i].path,
                config_fmt_size(c->files[i].size, b1, sizeof b1), i + 1 < c->n_files ? "," : "",
                (unsigned long long)c->files[i].size, c->files[i].size > region ? ", repeats the region" : "");
    }
    fprintf(out, ");\n");
}

static void print_hand(const struct config *c, const struct config_entry *e, FILE *out)
{
    if (strcmp(e->name, "listen") == 0) {
        print_listen(c, out);
    } else if (strcmp(e->name, "files") == 0) {
        print_files(c, out);
    } else if (strcmp(e->name, "metrics.allow") == 0) {
        fprintf(out, " allow = (");
        for (size_t i = 0; i < c->metrics.allow.n; i++)
            fprintf(out, "%s \"%s\"", i ? "," : "", c->metrics.allow.e[i].spec);
        fprintf(out, " );");
    }
}

/* What -t says after a setting's line (or in its place): resolved values, unset settings.
 * 1 when it wrote something. */
static int print_note(const struct config *c, const char *name, FILE *out)
{
    char buf[64];
    int n = 0;
    if (strcmp(name, "threads") == 0) {
        n = fprintf(out, " # %u worker thread(s) per listener", config_threads_effective(c));
    } else if (strcmp(name, "ram") == 0) {
        units_format_size(config_region_size(c), buf, sizeof buf);
        n = fprintf(out, " # content region: %s", buf);
    } else if (strcmp(name, "upload") == 0 && !c->upload_path) {
        n = fprintf(out, " # no upload sink");
    } else if (strcmp(name, "limits") == 0 && !c->per_ip_bytes) {
        n = fprintf(out, " # no per-address quota");
    } else if (strcmp(name, "user") == 0) {
        if (c->user)
            n = fprintf(out, " # uid %u", (unsigned)c->uid);
        else
            n = fprintf(out, "# user: not set (debitd keeps the identity it was started with)");
    } else if (strcmp(name, "group") == 0) {
        if (c->group)
            n = fprintf(out, " # gid %u", (unsigned)c->gid);
        else if (c->user)
            n = fprintf(out, "# group: the user's primary group, gid %u", (unsigned)c->gid);
    }
    return n > 0;
}

/* "leaf = value;" of E, or nothing for an unset string without a default (a string with
 * one, unset, is written "": upload.path = "" is no sink, not the default). */
static int print_value(const struct config *c, const struct config_entry *e, const char *leaf, FILE *out)
{
    char v[1200];
    if (!config_table_format(c, e, v, sizeof v)[0]) {
        if (e->kind != CONFIG_STRING || !e->def_str)
            return 0;
        snprintf(v, sizeof v, "\"\"");
    }
    fprintf(out, "%s%s = %s;", config_entry_in(e, NULL) ? "" : " ", leaf, v);
    return 1;
}

/* GROUP's line: "group = { a = 1; b = 2; };", or a comment when its first member, a string
 * without a default, is unset (offload without an interface). */
static void print_group(const struct config *c, const char *group, size_t from, FILE *out)
{
    const struct config_entry *first = &config_table[from];
    char v[8];
    if (first->kind == CONFIG_STRING && !first->def_str && !config_table_format(c, first, v, sizeof v)[0]) {
        fprintf(out, "# %s: not managed (no %s)\n", group, first->name);
        return;
    }
    fprintf(out, "%s = {", group);
    for (size_t i = from; i < config_table_len && config_entry_in(&config_table[i], group); i++) {
        if (config_table[i].kind == CONFIG_HAND) {
            print_hand(c, &config_table[i], out);
        } else {
            print_value(c, &config_table[i], config_entry_leaf(&config_table[i]), out);
        }
    }
    fprintf(out, " };");
    print_note(c, group, out);
    fputc('\n', out);
}

void config_print(const struct config *c, FILE *out)
{
    fprintf(out, "# effective settings of debitd %s, from %s\n", DEBIT_VERSION, c->source);
    for (size_t i = 0; i < config_table_len; i++) {
        const struct config_entry *e = &config_table[i];
        if (e->kind == CONFIG_HAND && config_entry_in(e, NULL)) {
            print_hand(c, e, out);
        } else if (config_entry_in(e, NULL)) {
            int printed = print_value(c, e, e->name, out);
            if (print_note(c, e->name, out) || printed)
                fputc('\n', out);
        } else {
            char group[32];
            snprintf(group, sizeof group, "%.*s", (int)strcspn(e->name, "."), e->name);
            print_group(c, group, i, out);
            while (i + 1 < config_table_len && config_entry_in(&config_table[i + 1], group))
                i++;
        }
    }
}
