/* config_table: see config_table.h. */
#include "config_table.h"

#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cfg.h"
#include "err.h"
#include "isp_map.h"
#include "units.h"

/* ---- the checks of the odd strings (the table's `check` and `set`) ---- */

static int check_access(const char *v, char *err, size_t errlen)
{
    return v[0] ? 0 : err_set(err, errlen, "empty (use \"-\" for stderr, \"off\", or a file path)");
}

static int check_interface(const char *v, char *err, size_t errlen)
{
    if (!v[0] || strlen(v) >= IF_NAMESIZE || strchr(v, '/') || strchr(v, ' '))
        return err_set(err, errlen, "\"%s\" is not a valid interface name", v);
    return 0;
}

/* A value sent as a header as it is (speedtest.colo): printable ASCII, no ',' (a list
 * separator to a reader), short. */
static int check_header_token(const char *v, char *err, size_t errlen)
{
    if (strlen(v) > 64)
        return err_set(err, errlen, "longer than 64 characters");
    for (const char *p = v; *p; p++)
        if (*p < ' ' || *p > '~' || *p == ',')
            return err_set(err, errlen, "\"%s\": only printable ASCII without ',' may be sent as a header", v);
    return 0;
}

static int check_absolute(const char *v, char *err, size_t errlen)
{
    return v[0] == '/' ? 0 : err_set(err, errlen, "must be an absolute path");
}

/* speedtest.isp_map: the file is read now (at start, at each reload, by -t), so that a
 * bad line is a configuration error naming it; "" = no map */
static int set_isp_map(struct config *c, const char *v, char *err, size_t errlen)
{
    struct isp_map *m = NULL;
    char *copy = NULL;
    if (v[0] && check_absolute(v, err, errlen) < 0)
        return -1;
    if (v[0] && !(m = isp_map_load(v, err, errlen)))
        return -1;
    if (v[0] && !(copy = strdup(v))) {
        isp_map_free(m);
        return err_set(err, errlen, "out of memory");
    }
    free(c->speedtest.isp_map);
    isp_map_free(c->speedtest.isp);
    c->speedtest.isp_map = copy;
    c->speedtest.isp = m;
    return 0;
}

/* upload.path: "" = no sink; a path is checked against the files (config_set_upload) */
static int set_upload_path(struct config *c, const char *v, char *err, size_t errlen)
{
    char *copy = strdup(v); /* v may be c->upload_path, which the setter frees */
    if (!copy)
        return err_set(err, errlen, "out of memory");
    int r = config_set_upload(c, copy, c->upload_max, err, errlen);
    free(copy);
    return r;
}

static const char *const log_levels[] = {"error", "warn", "info", "debug", NULL};
static const char *const access_formats[] = {"json", "combined", NULL};
static const char *const seccomp_modes[] = {"eperm", "kill", "log", "off", NULL};
static const char *const telemetry_modes[] = {"off", "on", "redacted", NULL};

#define FIELD(f) offsetof(struct config, f), sizeof(((struct config *)0)->f)
#define LINE(f) .line_offset = offsetof(struct config, f)
#define HAND(n, r) {.name = n, .kind = CONFIG_HAND, .reload = r}

/* In the order of the file's top-level keys and of each group's members (the order the
 * "unknown setting (expected one of: ...)" messages list them). Ranges are the ones
 * docs/server.md and man/debitd.conf.5 give; tests/unit/server/run/test_config_table.c
 * checks every default against both. */
const struct config_entry config_table[] = {
    HAND("listen", CONFIG_RELOAD_HAND),
    {"threads", CONFIG_UINT, FIELD(threads), 0, 1024, .def = 0, .reload = CONFIG_RESTART},
    {"seed", CONFIG_UINT, FIELD(seed), 0, INT64_MAX, .def = 1, .reload = CONFIG_RELOAD_CONTENT},
    {"ram", CONFIG_SIZE, FIELD(ram), 4096, UINT64_MAX, .zero_ok = 1, .def = 0, .reload = CONFIG_RELOAD_REGION,
     .range_msg = "%llu bytes is too small (at least 4KiB, or 0 for no cap)", LINE(ram_line)},
    HAND("files", CONFIG_RELOAD_HAND),
    {"upload.path", CONFIG_STRING, FIELD(upload_path), .def_str = "/upload", .reload = CONFIG_RELOAD_UPLOAD,
     .set = set_upload_path},
    {"upload.max_size", CONFIG_SIZE, FIELD(upload_max), 0, UINT64_MAX, .def = 10ULL << 30,
     .reload = CONFIG_RELOAD_UPLOAD},
    {"limits.connections", CONFIG_UINT, FIELD(max_connections), 1, 1000000, .def = 10000, .reload = CONFIG_RESTART},
    /* a public host: one address may not take every slot */
    {"limits.per_ip", CONFIG_UINT, FIELD(per_ip), 0, 1000000, .def = 100, .reload = CONFIG_RELOAD_LIMITS},
    {"limits.idle_timeout", CONFIG_SEC, FIELD(idle_timeout), 0, 86400, .def = 30, .reload = CONFIG_RESTART,
     .range_msg = "more than one day"},
    /* the slow-client deadlines and the quota's table size are not in /status's limits
     * (docs/server.md lists what is) */
    {"limits.header_timeout", CONFIG_MSEC, FIELD(header_timeout_ms), 100, 3600000, .zero_ok = 1, .def = 5000,
     .reload = CONFIG_RELOAD_LIMITS, .range_msg = "%llu ms is out of range (0 = none, or 100ms to 1 hour)",
     .status_hidden = 1},
    {"limits.body_min_rate", CONFIG_RATE, FIELD(body_min_rate), 0, 1000000000, .def = 1000,
     .reload = CONFIG_RELOAD_LIMITS, .status_hidden = 1},
    {"limits.per_ip_bytes", CONFIG_SIZE, FIELD(per_ip_bytes), 0, UINT64_MAX, .def = 0,
     .reload = CONFIG_RELOAD_LIMITS},
    /* "100GiB a day" is how hosts state a fair use */
    {"limits.per_ip_window", CONFIG_MSEC, FIELD(per_ip_window_ms), 1000, 366ULL * 86400000, .def = 86400000,
     .reload = CONFIG_RELOAD_LIMITS, .range_msg = "must be from 1s to 366d"},
    /* addresses the quota tracks at once (about 170 bytes each); the table is sized at start */
    {"limits.per_ip_table", CONFIG_UINT, FIELD(per_ip_table), 1, 10000000, .def = 100000, .reload = CONFIG_RESTART,
     .status_hidden = 1},
    {"limits.drain_timeout", CONFIG_MSEC, FIELD(drain_timeout_ms), 0, 3600000, .def = 10000,
     .reload = CONFIG_RELOAD_LIMITS, .range_msg = "more than one hour"},
    {"log.level", CONFIG_ENUM, FIELD(log_level), .def = LOG_LEVEL_INFO, .reload = CONFIG_RELOAD_LOG_LEVEL,
     .names = log_levels, .what = "level"},
    {"log.access", CONFIG_STRING, FIELD(access_log), .def_str = "-", .reload = CONFIG_RELOAD_ACCESS_LOG,
     .check = check_access, LINE(access_log_line)},
    {"log.access_format", CONFIG_ENUM, FIELD(access_format), .def = ACCESS_FORMAT_JSON,
     .reload = CONFIG_RELOAD_ACCESS_FORMAT, .names = access_formats, .what = "format"},
    {"transfers", CONFIG_UINT, FIELD(transfers_keep), 1, 1000000, .def = 1024, .reload = CONFIG_RESTART},
    {"transfers_acked", CONFIG_BOOL, FIELD(transfers_acked), .def = 1, .reload = CONFIG_RELOAD_OTHER},
    {"privacy.details", CONFIG_BOOL, FIELD(details), .def = 1, .reload = CONFIG_RELOAD_OTHER},
    {"privacy.public_transfers", CONFIG_BOOL, FIELD(public_transfers), .def = 0, .reload = CONFIG_RELOAD_OTHER},
    {"offload.interface", CONFIG_STRING, FIELD(offload.interface), .reload = CONFIG_RESTART,
     .check = check_interface, LINE(offload.interface_line)},
    {"offload.tso", CONFIG_TRISTATE, FIELD(offload.wish.want[OFFLOAD_TSO]), .def = OFFLOAD_LEAVE,
     .reload = CONFIG_RELOAD_OFFLOAD},
    {"offload.gso", CONFIG_TRISTATE, FIELD(offload.wish.want[OFFLOAD_GSO]), .def = OFFLOAD_LEAVE,
     .reload = CONFIG_RELOAD_OFFLOAD},
    {"offload.gro", CONFIG_TRISTATE, FIELD(offload.wish.want[OFFLOAD_GRO]), .def = OFFLOAD_LEAVE,
     .reload = CONFIG_RELOAD_OFFLOAD},
    {"offload.restore", CONFIG_BOOL, FIELD(offload.restore), .def = 1, .reload = CONFIG_RESTART},
    {"offload.required", CONFIG_BOOL, FIELD(offload.required), .def = 1, .reload = CONFIG_RELOAD_OFFLOAD},
    {"offload.state_file", CONFIG_STRING, FIELD(offload.state_file), .def_str = CONFIG_OFFLOAD_STATE_FILE,
     .reload = CONFIG_RESTART, .check = check_absolute},
    {"http.strict", CONFIG_BOOL, FIELD(http_strict), .def = 1, .reload = CONFIG_RELOAD_OTHER},
    {"user", CONFIG_STRING, FIELD(user), .reload = CONFIG_RESTART, .set = config_set_user},
    {"group", CONFIG_STRING, FIELD(group), .reload = CONFIG_RESTART, .set = config_set_group},
    {"seccomp", CONFIG_ENUM, FIELD(seccomp), .def = CONFIG_SECCOMP_EPERM, .reload = CONFIG_RESTART,
     .names = seccomp_modes, .what = "mode"},
    {"metrics.enabled", CONFIG_BOOL, FIELD(metrics.enabled), .def = 1, .reload = CONFIG_RELOAD_OTHER},
    HAND("metrics.allow", CONFIG_RELOAD_OTHER),
    /* speed tests on, as large as LibreSpeed's ckSize=1024 and Cloudflare's 250 MB steps;
     * per_ip 16: LibreSpeed's web client runs 6 streams, its CLI 3 (speedtest.h) */
    {"speedtest.librespeed", CONFIG_BOOL, FIELD(speedtest.librespeed), .def = 1, .reload = CONFIG_RELOAD_OTHER},
    {"speedtest.cloudflare", CONFIG_BOOL, FIELD(speedtest.cloudflare), .def = 1, .reload = CONFIG_RELOAD_OTHER},
    {"speedtest.max_bytes", CONFIG_SIZE, FIELD(speedtest.max_bytes), 1ULL << 20, UINT64_MAX, .def = 1ULL << 30,
     .reload = CONFIG_RELOAD_LIMITS, .range_msg = "%llu bytes is too small (at least 1MiB)"},
    {"speedtest.per_ip", CONFIG_UINT, FIELD(speedtest.per_ip), 0, 1000000, .def = 16, .reload = CONFIG_RELOAD_LIMITS},
    /* cf-meta-colo: Cloudflare names its data centre (an IATA code); a site names itself */
    {"speedtest.colo", CONFIG_STRING, FIELD(speedtest.colo), .def_str = "debitd", .reload = CONFIG_RELOAD_OTHER,
     .check = check_header_token},
    {"speedtest.isp_map", CONFIG_STRING, FIELD(speedtest.isp_map), .reload = CONFIG_RELOAD_OTHER, .set = set_isp_map},
    /* off, as LibreSpeed's telemetry_level defaults to 0: a visitor's results are kept only
     * when the operator asks; 1000 results in at most 32 MiB (telemetry.h) */
    {"speedtest.telemetry", CONFIG_ENUM, FIELD(speedtest.telemetry), .def = CONFIG_TELEMETRY_OFF,
     .reload = CONFIG_RELOAD_OTHER, .names = telemetry_modes, .what = "mode"},
    {"speedtest.telemetry_keep", CONFIG_UINT, FIELD(speedtest.telemetry_keep), 1, 1000000, .def = 1000,
     .reload = CONFIG_RESTART},
    /* ndt7 on; a client runs download, then upload: a few at once is generous */
    {"ndt7.enabled", CONFIG_BOOL, FIELD(ndt7.enabled), .def = 1, .reload = CONFIG_RELOAD_OTHER},
    {"ndt7.per_ip", CONFIG_UINT, FIELD(ndt7.per_ip), 0, 1000000, .def = 4, .reload = CONFIG_RELOAD_LIMITS},
};
const size_t config_table_len = ARRAY_SIZE(config_table);

const struct config_entry *config_table_find(const char *name)
{
    for (size_t i = 0; i < config_table_len; i++)
        if (strcmp(config_table[i].name, name) == 0)
            return &config_table[i];
    return NULL;
}

const char *config_entry_leaf(const struct config_entry *e)
{
    const char *dot = strchr(e->name, '.');
    return dot ? dot + 1 : e->name;
}

int config_entry_in(const struct config_entry *e, const char *group)
{
    const char *dot = strchr(e->name, '.');
    if (!group)
        return !dot;
    size_t n = strlen(group);
    return dot && (size_t)(dot - e->name) == n && strncmp(e->name, group, n) == 0;
}

/* ---- the field ---- */

static void *field(struct config *c, const struct config_entry *e)
{
    return (char *)c + e->offset;
}

static const void *cfield(const struct config *c, const struct config_entry *e)
{
    return (const char *)c + e->offset;
}

static uint64_t get_num(const struct config *c, const struct config_entry *e)
{
    if (e->width == sizeof(uint64_t)) {
        uint64_t v;
        memcpy(&v, cfield(c, e), sizeof v);
        return v;
    }
    uint32_t v; /* unsigned, int, and enums: 4 bytes (checked by test_config_table.c) */
    memcpy(&v, cfield(c, e), sizeof v);
    return v;
}

static void set_num(struct config *c, const struct config_entry *e, uint64_t v)
{
    if (e->width == sizeof(uint64_t)) {
        memcpy(field(c, e), &v, sizeof v);
    } else {
        uint32_t w = (uint32_t)v;
        memcpy(field(c, e), &w, sizeof w);
    }
}

static char **str_field(struct config *c, const struct config_entry *e)
{
    return (char **)field(c, e);
}

static const char *get_str(const struct config *c, const struct config_entry *e)
{
    const char *const *p = (const char *const *)cfield(c, e);
    return *p;
}

static int store_string(struct config *c, const struct config_entry *e, const char *v, char *err, size_t errlen)
{
    if (e->set)
        return e->set(c, v, err, errlen);
    if (e->check && e->check(v, err, errlen) < 0)
        return -1;
    char *copy = strdup(v);
    if (!copy)
        return err_set(err, errlen, "out of memory");
    char **p = str_field(c, e);
    free(*p);
    *p = copy;
    return 0;
}

/* "a, b or c" of E's names */
static void names_list(const struct config_entry *e, char *buf, size_t len)
{
    size_t n = 0, off = 0;
    while (e->names[n])
        n++;
    buf[0] = 0;
    for (size_t i = 0; i < n && off < len; i++) {
        int w = snprintf(buf + off, len - off, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ", e->names[i]);
        if (w < 0)
            break;
        off += (size_t)w;
    }
}

static int store_enum(struct config *c, const struct config_entry *e, const char *v, char *err, size_t errlen)
{
    for (size_t i = 0; e->names[i]; i++)
        if (strcmp(v, e->names[i]) == 0) {
            set_num(c, e, i);
            return 0;
        }
    char list[160];
    names_list(e, list, sizeof list);
    return err_set(err, errlen, "unknown %s \"%s\" (expected %s)", e->what, v, list);
}

static int out_of_range(const struct config_entry *e, uint64_t v)
{
    return !(e->zero_ok && v == 0) && (v < e->min || v > e->max);
}

/* A number in the kind's own unit of reading (bytes, microseconds, bytes/s) into the field. */
static int store_number(struct config *c, const struct config_entry *e, uint64_t v, char *err, size_t errlen)
{
    switch (e->kind) {
    case CONFIG_UINT:
        if (v < e->min || v > e->max)
            return err_set(err, errlen, "%llu is out of range [%llu, %llu]", (unsigned long long)v,
                           (unsigned long long)e->min, (unsigned long long)e->max);
        break;
    case CONFIG_SIZE:
        if (out_of_range(e, v))
            return err_set(err, errlen, e->range_msg, (unsigned long long)v);
        break;
    case CONFIG_MSEC:
        if (v % 1000 != 0)
            return err_set(err, errlen, "must be whole milliseconds");
        v /= 1000;
        if (out_of_range(e, v))
            return err_set(err, errlen, e->range_msg, (unsigned long long)v);
        break;
    case CONFIG_SEC:
        if (v % 1000000 != 0)
            return err_set(err, errlen, "must be whole seconds (libmicrohttpd's resolution)");
        v /= 1000000;
        if (out_of_range(e, v))
            return err_set(err, errlen, e->range_msg, (unsigned long long)v);
        break;
    default:
        break;
    }
    set_num(c, e, v);
    return 0;
}

/* limits.body_min_rate: a rate in a string ("1kB/s", "8kbit"), "0" = none */
static int store_rate(struct config *c, const struct config_entry *e, const char *rate, char *err, size_t errlen)
{
    uint64_t bps;
    enum units_err ue = units_parse_rate(rate, &bps);
    if (ue != UNITS_OK)
        return err_set(err, errlen, "\"%s\": %s (example: \"1kB/s\"; \"0\" = no floor)", rate, units_strerror(ue));
    if (bps != 0 && bps < 8)
        return err_set(err, errlen, "\"%s\" is below 1 byte/s (\"0\" = no floor)", rate);
    if (bps / 8 > e->max)
        return err_set(err, errlen, "\"%s\" is above 1GB/s: a floor that high would cut honest uploads", rate);
    set_num(c, e, bps / 8);
    return 0;
}

int config_table_set_text(struct config *c, const struct config_entry *e, const char *text, char *err,
                          size_t errlen)
{
    uint64_t v = 0;
    enum units_err ue = UNITS_OK;
    switch (e->kind) {
    case CONFIG_STRING: return store_string(c, e, text, err, errlen);
    case CONFIG_ENUM: return store_enum(c, e, text, err, errlen);
    case CONFIG_RATE: return store_rate(c, e, text, err, errlen);
    case CONFIG_BOOL:
    case CONFIG_TRISTATE:
        if (strcmp(text, "true") != 0 && strcmp(text, "false") != 0)
            return err_set(err, errlen, "expected true or false");
        v = text[0] == 't';
        set_num(c, e, e->kind == CONFIG_BOOL ? v : v ? OFFLOAD_ON : OFFLOAD_OFF);
        return 0;
    case CONFIG_UINT: ue = units_parse_uint(text, 0, UINT64_MAX, &v); break;
    case CONFIG_SIZE: ue = units_parse_size(text, &v); break;
    case CONFIG_MSEC:
    case CONFIG_SEC: ue = units_parse_duration(text, &v); break;
    case CONFIG_HAND: return err_set(err, errlen, "not a single value");
    }
    if (ue != UNITS_OK)
        return err_set(err, errlen, "\"%s\": %s", text, units_strerror(ue));
    return store_number(c, e, v, err, errlen);
}

int config_table_read(struct config *c, const struct config_entry *e, const config_setting_t *group, char *err,
                      size_t errlen)
{
    const char *leaf = config_entry_leaf(e);
    const config_setting_t *s = config_setting_get_member(group, leaf);
    if (!s || e->kind == CONFIG_HAND)
        return 0;
    uint64_t v = 0;
    int on = 0, r = 0;
    const char *str = NULL;
    switch (e->kind) {
    case CONFIG_BOOL:
    case CONFIG_TRISTATE:
        if ((r = cfg_get_bool(group, leaf, &on, err, errlen)) < 0)
            return -1;
        set_num(c, e, e->kind == CONFIG_BOOL ? (uint64_t)on : on ? OFFLOAD_ON : OFFLOAD_OFF);
        break;
    case CONFIG_UINT:
        /* cfg_get_uint's own "N is out of range [min, max]", with the setting's place */
        if ((r = cfg_get_uint(group, leaf, e->min, e->max, &v, err, errlen)) < 0)
            return -1;
        set_num(c, e, v);
        break;
    case CONFIG_SIZE:
    case CONFIG_MSEC:
    case CONFIG_SEC:
        r = e->kind == CONFIG_SIZE ? cfg_get_size(group, leaf, &v, err, errlen)
                                   : cfg_get_duration(group, leaf, &v, err, errlen);
        if (r < 0)
            return -1;
        if (store_number(c, e, v, err, errlen) < 0)
            return cfg_error_prefix(err, errlen, s);
        break;
    case CONFIG_RATE: {
        char text[64];
        long long zero;
        if (config_setting_type(s) == CONFIG_TYPE_STRING)
            snprintf(text, sizeof text, "%s", config_setting_get_string(s));
        else if (cfg_int_value(s, &zero) && zero == 0)
            snprintf(text, sizeof text, "0");
        else
            return cfg_error(err, errlen, s, "expected a string such as \"1kB/s\", or 0 for no floor");
        if (store_rate(c, e, text, err, errlen) < 0)
            return cfg_error_prefix(err, errlen, s);
        break;
    }
    case CONFIG_ENUM:
    case CONFIG_STRING:
        if ((r = cfg_get_string(group, leaf, &str, err, errlen)) < 0)
            return -1;
        if ((e->kind == CONFIG_ENUM ? store_enum(c, e, str, err, errlen) : store_string(c, e, str, err, errlen)) < 0)
            return cfg_error_prefix(err, errlen, s);
        break;
    case CONFIG_HAND: break;
    }
    if (e->line_offset) {
        unsigned line = (unsigned)config_setting_source_line(s);
        memcpy((char *)c + e->line_offset, &line, sizeof line);
    }
    return 1;
}

int config_table_defaults(struct config *c)
{
    for (size_t i = 0; i < config_table_len; i++) {
        const struct config_entry *e = &config_table[i];
        if (e->kind == CONFIG_HAND)
            continue;
        if (e->kind != CONFIG_STRING) {
            set_num(c, e, e->def);
            continue;
        }
        char **p = str_field(c, e);
        free(*p);
        *p = NULL;
        if (e->def_str && !(*p = strdup(e->def_str)))
            return -1;
    }
    return 0;
}

void config_table_free(struct config *c)
{
    for (size_t i = 0; i < config_table_len; i++)
        if (config_table[i].kind == CONFIG_STRING) {
            char **p = str_field(c, &config_table[i]);
            free(*p);
            *p = NULL;
        }
}

const char *config_fmt_size(uint64_t v, char *buf, size_t len)
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

const char *config_fmt_ms(uint64_t ms, char *buf, size_t len)
{
    static const struct {
        uint64_t ms;
        const char *unit;
    } u[] = {{86400000, "d"}, {3600000, "h"}, {60000, "min"}, {1000, "s"}};
    for (size_t i = 0; i < ARRAY_SIZE(u); i++)
        if (ms && ms % u[i].ms == 0) {
            snprintf(buf, len, "\"%llu%s\"", (unsigned long long)(ms / u[i].ms), u[i].unit);
            return buf;
        }
    snprintf(buf, len, "\"%llums\"", (unsigned long long)ms);
    return buf;
}

const char *config_table_format(const struct config *c, const struct config_entry *e, char *buf, size_t len)
{
    uint64_t v = e->kind == CONFIG_STRING || e->kind == CONFIG_HAND ? 0 : get_num(c, e);
    const char *s;
    buf[0] = 0;
    switch (e->kind) {
    case CONFIG_BOOL: snprintf(buf, len, "%s", v ? "true" : "false"); break;
    case CONFIG_TRISTATE:
        if (v != OFFLOAD_LEAVE)
            snprintf(buf, len, "%s", v == OFFLOAD_ON ? "true" : "false");
        break;
    case CONFIG_UINT: snprintf(buf, len, "%llu%s", (unsigned long long)v, v > INT32_MAX ? "L" : ""); break;
    case CONFIG_SIZE: config_fmt_size(v, buf, len); break;
    case CONFIG_MSEC: config_fmt_ms(v, buf, len); break;
    case CONFIG_SEC: snprintf(buf, len, "%llu", (unsigned long long)v); break;
    case CONFIG_RATE:
        if (v % 1000 == 0 && v)
            snprintf(buf, len, "\"%llukB/s\"", (unsigned long long)(v / 1000));
        else
            snprintf(buf, len, "\"%lluB/s\"", (unsigned long long)v);
        break;
    case CONFIG_ENUM: snprintf(buf, len, "\"%s\"", e->names[v]); break;
    case CONFIG_STRING:
        if ((s = get_str(c, e)))
            snprintf(buf, len, "\"%s\"", s);
        break;
    case CONFIG_HAND: break;
    }
    return buf;
}

uint64_t config_table_num(const struct config *c, const struct config_entry *e)
{
    return get_num(c, e);
}

const char *config_table_str(const struct config *c, const struct config_entry *e)
{
    return get_str(c, e);
}

int config_table_equal(const struct config *a, const struct config *b, const struct config_entry *e)
{
    if (e->kind == CONFIG_HAND)
        return 1;
    if (e->kind != CONFIG_STRING)
        return get_num(a, e) == get_num(b, e);
    const char *x = get_str(a, e), *y = get_str(b, e);
    return (!x && !y) || (x && y && strcmp(x, y) == 0);
}
