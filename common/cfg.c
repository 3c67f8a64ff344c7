/* cfg: see cfg.h. */
#include "cfg.h"
#include "cfg_literal.h"
#include "err.h"
#include "units.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cfg_load(config_t *cfg, const char *path, char *err, size_t errlen)
{
    /* read once, parse what was read: a pipe (-c <(...)) cannot be read twice, and a file
     * rewritten meanwhile is checked as parsed */
    size_t len = 0;
    errno = 0;
    char *text = cfg_read_all(path, &len);
    if (!text)
        return err_set(err, errlen, "%s: cannot read: %s", path, strerror(errno));
    const char *nul = memchr(text, 0, len);
    if (nul) { /* config_read_string would stop there; libconfig's file scanner refuses it */
        unsigned line = 1;
        for (const char *q = text; q < nul; q++)
            line += *q == '\n';
        free(text);
        return err_set(err, errlen, "%s:%u: syntax: a NUL byte", path, line);
    }
    char *name = strdup(path);
    if (!name) {
        free(text);
        return err_set(err, errlen, "%s: out of memory", path);
    }
    errno = 0;
    if (config_read_string(cfg, text) != CONFIG_TRUE) {
        const char *file = config_error_file(cfg);
        int r = config_error_type(cfg) == CONFIG_ERR_FILE_IO
                    ? err_set(err, errlen, "%s: cannot read: %s", file ? file : path, strerror(errno))
                    : err_set(err, errlen, "%s:%d: syntax: %s", file ? file : path, config_error_line(cfg),
                              config_error_text(cfg));
        free(text);
        free(name);
        return r;
    }
    /* settings of the main file carry no file name (parsed from a string): the root's
     * hook holds it for cfg_error_prefix, freed by config_destroy */
    config_set_destructor(cfg, free);
    config_setting_set_hook(config_root_setting(cfg), name);

    int ret = cfg_literal_check(cfg, text, len, path, err, errlen);
    free(text);
    return ret;
}

const char *cfg_setting_path(const config_setting_t *s, char *buf, size_t len)
{
    const config_setting_t *chain[32];
    int n = 0;
    for (const config_setting_t *p = s; p && !config_setting_is_root(p) && n < 32; p = config_setting_parent(p))
        chain[n++] = p;
    size_t off = 0;
    buf[0] = 0;
    for (int i = n - 1; i >= 0 && off < len; i--) {
        const char *name = config_setting_name(chain[i]);
        int w;
        if (name)
            w = snprintf(buf + off, len - off, "%s%s", off ? "." : "", name);
        else
            w = snprintf(buf + off, len - off, "[%d]", config_setting_index(chain[i]));
        if (w < 0)
            break;
        off += (size_t)w;
    }
    return buf;
}

int cfg_error_prefix(char *err, size_t errlen, const config_setting_t *s)
{
    char path[256];
    const char *file = s ? config_setting_source_file(s) : NULL;
    if (s && !file) { /* the main file of cfg_load: its name is the root's hook */
        const config_setting_t *root = s;
        while (config_setting_parent(root))
            root = config_setting_parent(root);
        file = config_setting_get_hook(root);
    }
    int line = s ? (int)config_setting_source_line(s) : 0;
    return err_prefix(err, errlen, "%s:%d: %s", file ? file : "(config)", line,
                      s ? cfg_setting_path(s, path, sizeof path) : "");
}

int cfg_error(char *err, size_t errlen, const config_setting_t *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err_vset(err, errlen, fmt, ap);
    va_end(ap);
    return cfg_error_prefix(err, errlen, s);
}

int cfg_check_keys(const config_setting_t *group, const char *const *allowed, char *err, size_t errlen)
{
    if (!group)
        return 0;
    int n = config_setting_length(group);
    for (int i = 0; i < n; i++) {
        const config_setting_t *m = config_setting_get_elem(group, (unsigned)i);
        const char *name = config_setting_name(m);
        if (!name)
            continue;
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            if (strcmp(*a, name) == 0)
                ok = 1;
        if (!ok) {
            char list[512] = "";
            size_t off = 0;
            for (const char *const *a = allowed; *a && off < sizeof list; a++) {
                int w = snprintf(list + off, sizeof list - off, "%s%s", off ? ", " : "", *a);
                off += w > 0 ? (size_t)w : 0;
            }
            return cfg_error(err, errlen, m, "unknown setting (expected one of: %s)", list);
        }
        for (int j = 0; j < i; j++) {
            const char *other = config_setting_name(config_setting_get_elem(group, (unsigned)j));
            if (other && strcmp(other, name) == 0)
                return cfg_error(err, errlen, m, "given twice");
        }
    }
    return 0;
}

int cfg_get_bool(const config_setting_t *group, const char *name, int *out, char *err, size_t errlen)
{
    const config_setting_t *s = group ? config_setting_get_member(group, name) : NULL;
    if (!s)
        return 0;
    if (config_setting_type(s) != CONFIG_TYPE_BOOL)
        return cfg_error(err, errlen, s, "expected true or false");
    *out = config_setting_get_bool(s);
    return 1;
}

int cfg_get_string(const config_setting_t *group, const char *name, const char **out, char *err, size_t errlen)
{
    const config_setting_t *s = group ? config_setting_get_member(group, name) : NULL;
    if (!s)
        return 0;
    if (config_setting_type(s) != CONFIG_TYPE_STRING)
        return cfg_error(err, errlen, s, "expected a string in double quotes");
    *out = config_setting_get_string(s);
    return 1;
}

int cfg_int_value(const config_setting_t *s, long long *out)
{
    int t = s ? config_setting_type(s) : CONFIG_TYPE_NONE;
    if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64)
        return 0;
    *out = t == CONFIG_TYPE_INT ? config_setting_get_int(s) : config_setting_get_int64(s);
    return 1;
}

int cfg_get_uint(const config_setting_t *group, const char *name, uint64_t min, uint64_t max,
                 uint64_t *out, char *err, size_t errlen)
{
    const config_setting_t *s = group ? config_setting_get_member(group, name) : NULL;
    if (!s)
        return 0;
    long long v;
    if (!cfg_int_value(s, &v))
        return cfg_error(err, errlen, s, "expected an integer");
    if (v < 0 || (uint64_t)v < min || (uint64_t)v > max)
        return cfg_error(err, errlen, s, "%lld is out of range [%llu, %llu]", v,
                         (unsigned long long)min, (unsigned long long)max);
    *out = (uint64_t)v;
    return 1;
}

static int get_units(const config_setting_t *group, const char *name,
                     enum units_err (*parse)(const char *, uint64_t *),
                     uint64_t int_scale, const char *example, uint64_t *out, char *err, size_t errlen)
{
    const config_setting_t *s = group ? config_setting_get_member(group, name) : NULL;
    if (!s)
        return 0;
    long long v;
    if (cfg_int_value(s, &v)) {
        if (v < 0)
            return cfg_error(err, errlen, s, "must not be negative");
        if (int_scale > 1 && (uint64_t)v > UINT64_MAX / int_scale)
            return cfg_error(err, errlen, s, "too large");
        *out = (uint64_t)v * int_scale;
        return 1;
    }
    if (config_setting_type(s) != CONFIG_TYPE_STRING)
        return cfg_error(err, errlen, s, "expected a number or a string such as \"%s\"", example);
    const char *str = config_setting_get_string(s);
    enum units_err e = parse(str, out);
    if (e != UNITS_OK)
        return cfg_error(err, errlen, s, "\"%s\": %s (example: \"%s\")", str, units_strerror(e), example);
    return 1;
}

int cfg_get_size(const config_setting_t *group, const char *name, uint64_t *out, char *err, size_t errlen)
{
    return get_units(group, name, units_parse_size, 1, "1GiB", out, err, errlen);
}

int cfg_get_duration(const config_setting_t *group, const char *name, uint64_t *usec, char *err, size_t errlen)
{
    return get_units(group, name, units_parse_duration, 1000000, "10ms", usec, err, errlen);
}
