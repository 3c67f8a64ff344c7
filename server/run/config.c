/* config: see config.h. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <grp.h>
#include <libconfig.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <unistd.h>

#include "array.h"
#include "cfg.h"
#include "config_table.h"
#include "isp_map.h"
#include "err.h"
#include "tls.h"
#include "units.h"
#include "wire.h"

int config_clear_listeners(struct config *c)
{
    for (size_t i = 0; i < c->n_listen; i++) {
        free(c->listen[i].address);
        free(c->listen[i].tls.cert);
        free(c->listen[i].tls.key);
        free(c->listen[i].tls.priorities);
    }
    free(c->listen);
    c->listen = NULL;
    c->n_listen = 0;
    return 0;
}

void config_clear_files(struct config *c)
{
    for (size_t i = 0; i < c->n_files; i++)
        free(c->files[i].path);
    free(c->files);
    c->files = NULL;
    c->n_files = 0;
}

const char *config_place(const struct config *c, unsigned line, char *buf, size_t len)
{
    if (line)
        snprintf(buf, len, "%s:%u", c->source ? c->source : "?", line);
    else
        snprintf(buf, len, "%s", c->source ? c->source : "?");
    return buf;
}

void config_free(struct config *c)
{
    if (!c)
        return;
    config_clear_listeners(c);
    config_clear_files(c);
    free(c->source);
    config_table_free(c);
    isp_map_free(c->speedtest.isp);
    acl_clear(&c->metrics.allow);
    memset(c, 0, sizeof *c);
}

int config_add_listener(struct config *c, const char *address, uint64_t port, char *err, size_t errlen)
{
    struct listen_cfg l = {0};
    if (port < 1 || port > 65535)
        return err_set(err, errlen, "port %llu is out of range [1, 65535]", (unsigned long long)port);
    struct sockaddr_in *s4 = (struct sockaddr_in *)&l.sa;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&l.sa;
    if (inet_pton(AF_INET, address, &s4->sin_addr) == 1) {
        s4->sin_family = AF_INET;
        s4->sin_port = htons((uint16_t)port);
        l.salen = sizeof *s4;
    } else if (inet_pton(AF_INET6, address, &s6->sin6_addr) == 1) {
        s6->sin6_family = AF_INET6;
        s6->sin6_port = htons((uint16_t)port);
        l.salen = sizeof *s6;
    } else {
        return err_set(err, errlen, "\"%s\" is not a numeric IPv4 or IPv6 address (\"::\" = every address, "
                       "IPv4 and IPv6)", address);
    }
    if (c->n_listen >= CONFIG_MAX_LISTENERS)
        return err_set(err, errlen, "more than %d listeners", CONFIG_MAX_LISTENERS);
    for (size_t i = 0; i < c->n_listen; i++)
        if (c->listen[i].salen == l.salen && memcmp(&c->listen[i].sa, &l.sa, l.salen) == 0)
            return err_set(err, errlen, "%s port %llu is already listed", address, (unsigned long long)port);
    struct listen_cfg *n = realloc(c->listen, (c->n_listen + 1) * sizeof *n);
    if (!n)
        return err_set(err, errlen, "out of memory");
    c->listen = n;
    if (!(l.address = strdup(address)))
        return err_set(err, errlen, "out of memory");
    l.port = (uint16_t)port;
    tcp_profile_defaults(&l.tcp);
    l.tcp_nopush = 1; /* as Debian's nginx.conf (tcp_nopush on with sendfile) */
    l.conn_memory = CONFIG_CONN_MEMORY_DEFAULT;
    c->listen[c->n_listen++] = l;
    return 0;
}

int config_set_listener_tls(struct listen_cfg *l, const char *cert, const char *key, const char *priorities,
                            const char **field, char *err, size_t errlen)
{
    static const char *const names[] = {[TLS_FIELD_CERT] = "cert", [TLS_FIELD_KEY] = "key",
                                        [TLS_FIELD_PRIORITIES] = "priorities"};
    enum tls_field f = TLS_FIELD_CERT;
    if (tls_check(cert, key, priorities, &f, err, errlen) < 0) {
        *field = names[f];
        return -1;
    }
    char *c2 = strdup(cert), *k2 = strdup(key), *p2 = priorities ? strdup(priorities) : NULL;
    if (!c2 || !k2 || (priorities && !p2)) {
        free(c2), free(k2), free(p2);
        *field = names[TLS_FIELD_CERT];
        return err_set(err, errlen, "out of memory");
    }
    free(l->tls.cert), free(l->tls.key), free(l->tls.priorities);
    l->tls.cert = c2, l->tls.key = k2, l->tls.priorities = p2;
    return 0;
}

int config_set_listener_memory(struct listen_cfg *l, uint64_t bytes, char *err, size_t errlen)
{
    if (bytes < CONFIG_CONN_MEMORY_MIN || bytes > CONFIG_CONN_MEMORY_MAX)
        return err_set(err, errlen, "%llu bytes is out of range (8KiB to 1MiB)", (unsigned long long)bytes);
    l->conn_memory = bytes;
    return 0;
}

int config_add_listener_spec(struct config *c, const char *spec, char *err, size_t errlen)
{
    char addr[INET6_ADDRSTRLEN + 2];
    const char *port_s;
    if (spec[0] == '[') {
        const char *close = strchr(spec, ']');
        if (!close || close[1] != ':' || (size_t)(close - spec - 1) >= sizeof addr)
            return err_set(err, errlen, "\"%s\": expected [IPV6]:PORT", spec);
        memcpy(addr, spec + 1, (size_t)(close - spec - 1));
        addr[close - spec - 1] = 0;
        port_s = close + 2;
    } else {
        const char *colon = strrchr(spec, ':');
        if (!colon) {
            strcpy(addr, "::");
            port_s = spec;
        } else {
            if (strchr(spec, ':') != colon)
                return err_set(err, errlen, "\"%s\": write an IPv6 address in brackets: [ADDR]:PORT", spec);
            if ((size_t)(colon - spec) >= sizeof addr)
                return err_set(err, errlen, "\"%s\": address too long", spec);
            memcpy(addr, spec, (size_t)(colon - spec));
            addr[colon - spec] = 0;
            port_s = colon + 1;
        }
    }
    uint64_t port;
    enum units_err e = units_parse_uint(port_s, 1, 65535, &port);
    if (e != UNITS_OK)
        return err_set(err, errlen, "\"%s\": port \"%s\": %s (expected 1 to 65535)", spec, port_s, units_strerror(e));
    return config_add_listener(c, addr, port, err, errlen);
}

static int is_reserved(const char *p)
{
    /* "/transfers" itself too: a file there would shadow the folder of the records */
    size_t n = strlen(WIRE_TRANSFERS_PATH) - 1;
    return strcmp(p, WIRE_STATUS_PATH) == 0 || strcmp(p, WIRE_METRICS_PATH) == 0 || (strncmp(p, WIRE_TRANSFERS_PATH, n) == 0 && (p[n] == 0 || p[n] == '/'));
}

/* a is a folder prefix of b: b = a + "/" + ... */
static int is_folder_of(const char *a, const char *b)
{
    size_t n = strlen(a);
    return strncmp(a, b, n) == 0 && b[n] == '/';
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Shared by files and the upload path: what makes an URL path acceptable. */
static int check_path_syntax(const char *path, char *err, size_t errlen)
{
    if (path[0] != '/')
        return err_set(err, errlen, "\"%s\" must start with '/'", path);
    if (path[1] == 0 || path[strlen(path) - 1] == '/')
        return err_set(err, errlen, "\"%s\" names a folder, not a file", path);
    if (strstr(path, "//") || strstr(path, "/./") || strstr(path, "/../") || ends_with(path, "/..") ||
        ends_with(path, "/."))
        return err_set(err, errlen, "\"%s\": empty, '.' or '..' path segment", path);
    for (const unsigned char *p = (const unsigned char *)path; *p; p++)
        if (*p <= ' ' || *p == 0x7f || *p == '?' || *p == '#' || *p == '%' || *p == '"' || *p == '<' ||
            *p == '>' || *p == '\\')
            return *p > ' ' && *p != 0x7f
                       ? err_set(err, errlen, "\"%s\": character '%c' is not allowed in a path", path, *p)
                       : err_set(err, errlen, "\"%s\": character 0x%02x (a space or control character) is not allowed in a path",
                                 path, *p);
    if (is_reserved(path))
        return err_set(err, errlen, "\"%s\" is reserved for debitd's own pages (%s, %s, %s)", path, WIRE_STATUS_PATH,
                       WIRE_METRICS_PATH, WIRE_TRANSFERS_PATH);
    return 0;
}

static int check_against_file(const char *path, const char *other, char *err, size_t errlen)
{
    char sha[1100];
    if (strcmp(path, other) == 0)
        return err_set(err, errlen, "duplicate path \"%s\"", path);
    if (is_folder_of(path, other) || is_folder_of(other, path))
        return err_set(err, errlen, "\"%s\" and \"%s\": a path cannot be both a file and a folder", path, other);
    snprintf(sha, sizeof sha, "%s.sha256", other);
    if (strcmp(path, sha) == 0)
        return err_set(err, errlen, "\"%s\" collides with the checksum of \"%s\"", path, other);
    snprintf(sha, sizeof sha, "%s.sha256", path);
    if (strcmp(other, sha) == 0)
        return err_set(err, errlen, "the checksum of \"%s\" collides with \"%s\"", path, other);
    return 0;
}

int config_add_file(struct config *c, const char *path, uint64_t size, char *err, size_t errlen)
{
    if (strlen(path) > 1024)
        return err_set(err, errlen, "path longer than 1024 bytes");
    if (check_path_syntax(path, err, errlen) < 0)
        return -1;
    if (size > CONFIG_MAX_FILE_SIZE)
        return err_set(err, errlen, "size %llu is larger than the 16 TiB limit", (unsigned long long)size);
    if (c->n_files >= CONFIG_MAX_FILES)
        return err_set(err, errlen, "more than %d files", CONFIG_MAX_FILES);
    for (size_t i = 0; i < c->n_files; i++)
        if (check_against_file(path, c->files[i].path, err, errlen) < 0)
            return -1;
    if (c->upload_path && check_against_file(path, c->upload_path, err, errlen) < 0)
        return -1;
    struct file_cfg *n = realloc(c->files, (c->n_files + 1) * sizeof *n);
    if (!n)
        return err_set(err, errlen, "out of memory");
    c->files = n;
    if (!(c->files[c->n_files].path = strdup(path)))
        return err_set(err, errlen, "out of memory");
    c->files[c->n_files].size = size;
    c->n_files++;
    return 0;
}

int config_set_upload(struct config *c, const char *path, uint64_t max_size, char *err, size_t errlen)
{
    if (path && path[0]) {
        if (check_path_syntax(path, err, errlen) < 0)
            return -1;
        for (size_t i = 0; i < c->n_files; i++)
            if (check_against_file(path, c->files[i].path, err, errlen) < 0)
                return -1;
    }
    char *copy = NULL;
    if (path && path[0] && !(copy = strdup(path)))
        return err_set(err, errlen, "out of memory");
    free(c->upload_path);
    c->upload_path = copy;
    c->upload_max = max_size;
    return 0;
}

/* A user or group name as useradd(8) accepts it: nothing that could be a path or an option. */
static int check_id_name(const char *what, const char *name, char *err, size_t errlen)
{
    if (!name[0] || strlen(name) > 64 || name[0] == '-')
        return err_set(err, errlen, "\"%s\" is not a valid %s name", name, what);
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (*p <= ' ' || *p == ':' || *p == '/' || *p == 0x7f)
            return err_set(err, errlen, "\"%s\" is not a valid %s name", name, what);
    return 0;
}

int config_set_user(struct config *c, const char *name, char *err, size_t errlen)
{
    if (check_id_name("user", name, err, errlen) < 0)
        return -1;
    uid_t uid;
    gid_t gid;
    if (c->ids) {
        if (!c->ids->user || strcmp(name, c->ids->user) != 0)
            return err_set(err, errlen, "\"%s\" is not the user debitd started as (%s%s%s): changes need a restart",
                           name, c->ids->user ? "\"" : "", c->ids->user ? c->ids->user : "none",
                           c->ids->user ? "\"" : "");
        uid = c->ids->uid;
        gid = c->ids->user_gid;
    } else {
        struct passwd pw, *res = NULL;
        char buf[4096];
        int e = getpwnam_r(name, &pw, buf, sizeof buf, &res);
        if (!res)
            return e ? err_set(err, errlen, "cannot look up user \"%s\": %s", name, strerror(e))
                     : err_set(err, errlen, "user \"%s\" does not exist", name);
        uid = pw.pw_uid;
        gid = pw.pw_gid;
    }
    char *copy = strdup(name);
    if (!copy)
        return err_set(err, errlen, "out of memory");
    free(c->user);
    c->user = copy;
    c->uid = uid;
    c->user_gid = gid;
    if (!c->group)
        c->gid = gid;
    return 0;
}

int config_set_group(struct config *c, const char *name, char *err, size_t errlen)
{
    if (check_id_name("group", name, err, errlen) < 0)
        return -1;
    gid_t gid;
    if (c->ids) {
        if (!c->ids->group || strcmp(name, c->ids->group) != 0)
            return err_set(err, errlen, "\"%s\" is not the group debitd started with (%s%s%s): changes need a "
                           "restart", name, c->ids->group ? "\"" : "", c->ids->group ? c->ids->group : "none",
                           c->ids->group ? "\"" : "");
        gid = c->ids->group_gid;
    } else {
        struct group gr, *res = NULL;
        char buf[4096];
        int e = getgrnam_r(name, &gr, buf, sizeof buf, &res);
        if (!res)
            return e ? err_set(err, errlen, "cannot look up group \"%s\": %s", name, strerror(e))
                     : err_set(err, errlen, "group \"%s\" does not exist", name);
        gid = gr.gr_gid;
    }
    char *copy = strdup(name);
    if (!copy)
        return err_set(err, errlen, "out of memory");
    free(c->group);
    c->group = copy;
    c->gid = gid;
    return 0;
}

void config_ids_free(struct config_ids *ids)
{
    if (!ids)
        return;
    free(ids->user);
    free(ids->group);
    memset(ids, 0, sizeof *ids);
}

int config_ids_pin(struct config_ids *ids, const struct config *c)
{
    memset(ids, 0, sizeof *ids);
    ids->uid = c->uid;
    ids->user_gid = c->user_gid;
    ids->group_gid = c->gid;
    if ((c->user && !(ids->user = strdup(c->user))) || (c->group && !(ids->group = strdup(c->group)))) {
        config_ids_free(ids);
        return -1;
    }
    return 0;
}

static const char *const seccomp_names[] = {"eperm", "kill", "log", "off"};

int config_set_log_level(struct config *c, const char *name, char *err, size_t errlen)
{
    return config_table_set_text(c, config_table_find("log.level"), name, err, errlen);
}

int config_set_header_timeout(struct config *c, const char *duration, char *err, size_t errlen)
{
    return config_table_set_text(c, config_table_find("limits.header_timeout"), duration, err, errlen);
}

int config_set_body_min_rate(struct config *c, const char *rate, char *err, size_t errlen)
{
    return config_table_set_text(c, config_table_find("limits.body_min_rate"), rate, err, errlen);
}

const char *config_seccomp_name(enum config_seccomp m)
{
    return (size_t)m < ARRAY_SIZE(seccomp_names) ? seccomp_names[m] : "?";
}

int config_defaults(struct config *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    /* every scalar from the table (config_table.c); the lists here */
    if (!(c->source = strdup("(defaults)")) || config_table_defaults(c) < 0)
        return err_set(err, errlen, "out of memory");
    if (config_add_listener(c, "::", 8080, err, errlen) < 0 ||
        config_add_file(c, "/ram/1GiB.dat", 1ULL << 30, err, errlen) < 0 ||
        config_add_file(c, "/files/1Gio.dat", 1ULL << 30, err, errlen) < 0)
        return -1;
    /* a public host: counters for the operator's own scraper, not for every visitor */
    static const char *const loopback[] = {"127.0.0.1", "::1"};
    for (size_t i = 0; i < ARRAY_SIZE(loopback); i++)
        if (config_add_metrics_allow(c, loopback[i], err, errlen) < 0)
            return -1;
    return 0;
}

int config_add_metrics_allow(struct config *c, const char *spec, char *err, size_t errlen)
{
    return acl_add(&c->metrics.allow, spec, err, errlen);
}

unsigned config_threads_effective(const struct config *c)
{
    if (c->threads)
        return c->threads;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1;
}

uint64_t config_region_size(const struct config *c)
{
    uint64_t max = 0;
    for (size_t i = 0; i < c->n_files; i++)
        if (c->files[i].size > max)
            max = c->files[i].size;
    return c->ram && c->ram < max ? c->ram : max;
}

int config_region_warning(const struct config *c, uint64_t mem_total, char *warn, size_t len)
{
    uint64_t region = config_region_size(c);
    if (!mem_total || region <= mem_total)
        return 0;
    char r[32], m[32], where[PATH_MAX + 16];
    units_format_size(region, r, sizeof r);
    units_format_size(mem_total, m, sizeof m);
    snprintf(warn, len, "%s: ram: the content region (%s%s) is larger than this host's memory (MemTotal %s): "
             "it is generated into RAM and stays resident, so the start would fail or swap; set ram well below "
             "it (files larger than the region repeat it)", config_place(c, c->ram_line, where, sizeof where), r,
             c->ram ? ", ram" : ", the largest file: ram not set", m);
    return 1;
}

int config_validate(const struct config *c, char *err, size_t errlen)
{
    if (c->n_listen == 0)
        return err_set(err, errlen, "%s: listen: at least one listener is needed", c->source);
    if (c->group && !c->user)
        return err_set(err, errlen, "%s: group: \"%s\" without a user (set user too: debitd changes the group "
                       "only when it changes the user)", c->source, c->group);
    uint64_t region = config_region_size(c);
    for (size_t i = 0; i < c->n_files; i++)
        if (region && c->files[i].size / region > 65536)
            return err_set(err, errlen, "%s: ram: %llu bytes is too small for \"%s\" (%llu bytes would repeat "
                           "it more than 65536 times)", c->source, (unsigned long long)c->ram, c->files[i].path,
                           (unsigned long long)c->files[i].size);
    return 0;
}
