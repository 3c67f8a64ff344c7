/* cfg_literal: see cfg_literal.h. */
#include "cfg_literal.h"
#include "cfg.h"
#include "err.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- integer literals that libconfig could not hold ----
 *
 * libconfig 1.5 as Debian 12 builds it keeps a bare integer in 32 bits: 4294967296 becomes
 * an INT 0, 10737418240 an INT -2147483648, 4294986497 an INT 19201, with nothing in the
 * setting to tell (it scans the digits with atoi; a bare hex such as 0xFFFFFFFF becomes
 * -1 the same way). With the L suffix it keeps 64 bits, saturating past them
 * (9223372036854775808L becomes INT64_MAX). The literal is gone once parsed, so cfg_load
 * scans the text itself for integer literals, in the order libconfig's scanner meets them,
 * pairs the n-th literal of a file with the n-th integer setting of that file in document
 * order, and refuses any setting whose value differs from its literal's. */

#define CFG_MAX_FILE (16u << 20) /* a configuration file larger than this is refused */

/* One integer literal as written. */
struct int_lit {
    unsigned line;
    int bare;        /* no L suffix */
    int fits64;      /* the literal's value fits a long long (value valid) */
    long long value;
    const char *at;  /* into the text, len bytes, L suffix excluded */
    size_t len;
};

struct int_lits {
    struct int_lit *v;
    size_t n, cap;
};

static int lits_push(struct int_lits *l, const struct int_lit *x)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 32;
        struct int_lit *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = *x;
    return 0;
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }
static int is_xdigit(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
static int is_name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '*'; }
static int is_name_char(char c) { return is_name_start(c) || is_digit(c) || c == '-' || c == '_'; }

/* Length of libconfig's float token at p (0 if none): [-+]?[0-9]*\.[0-9]*(e[-+]?[0-9]+)?
 * or [-+]?[0-9]+(\.[0-9]*)?e[-+]?[0-9]+. */
static size_t float_len(const char *p)
{
    size_t i = (*p == '-' || *p == '+') ? 1 : 0, d = 0, frac = 0;
    while (is_digit(p[i + d]))
        d++;
    i += d;
    if (p[i] == '.') {
        frac = 1;
        i++;
        while (is_digit(p[i]))
            i++;
    } else if (d == 0) {
        return 0;
    }
    if (p[i] == 'e' || p[i] == 'E') {
        size_t j = i + 1;
        if (p[j] == '-' || p[j] == '+')
            j++;
        if (is_digit(p[j])) {
            while (is_digit(p[j]))
                j++;
            return j;
        }
    }
    return frac ? i : 0;
}

/* Every integer literal of text (NUL-terminated, len bytes), with the lexical rules of
 * libconfig 1.5's scanner: comments (#, //, slash-star), strings with their escapes, names
 * (which may hold digits), floats, decimal and hex integers with an optional L or LL. An
 * action: 0, or -1 out of memory. */
static int scan_int_lits(const char *text, size_t len, struct int_lits *out)
{
    const char *p = text, *end = text + len;
    unsigned line = 1;
    while (p < end) {
        char c = *p;
        if (c == '\n') {
            line++;
            p++;
        } else if (c == '/' && p[1] == '*') {
            for (p += 2; p < end && !(p[0] == '*' && p[1] == '/'); p++)
                line += *p == '\n';
            p = p < end ? p + 2 : end;
        } else if (c == '#' || (c == '/' && p[1] == '/')) {
            while (p < end && *p != '\n')
                p++;
        } else if (c == '"') {
            for (p++; p < end && *p != '"'; p++) {
                if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
                    p++;
                else
                    line += *p == '\n';
            }
            if (p < end)
                p++;
        } else if (is_name_start(c)) {
            while (p < end && is_name_char(*p))
                p++;
        } else if (c == '0' && (p[1] == 'x' || p[1] == 'X') && is_xdigit(p[2])) {
            struct int_lit l = {.line = line, .bare = 1, .at = p};
            const char *q = p + 2;
            while (is_xdigit(*q))
                q++;
            l.len = (size_t)(q - p);
            errno = 0;
            char *e;
            unsigned long long u = strtoull(p, &e, 16);
            l.fits64 = errno == 0 && e == q && u <= (unsigned long long)INT64_MAX;
            l.value = l.fits64 ? (long long)u : 0;
            if (*q == 'L') {
                l.bare = 0;
                q += q[1] == 'L' ? 2 : 1;
            }
            if (lits_push(out, &l) < 0)
                return -1;
            p = q;
        } else if (is_digit(c) || c == '.' || ((c == '-' || c == '+') && (is_digit(p[1]) || p[1] == '.'))) {
            size_t sign = (c == '-' || c == '+') ? 1 : 0, d = 0;
            while (is_digit(p[sign + d]))
                d++;
            size_t fl = float_len(p), il = d ? sign + d : 0;
            if (p[il] == 'L' && d)
                il += p[il + 1] == 'L' ? 2 : 1;
            if (fl >= il || d == 0) { /* a float (never the same length as an integer) */
                p += fl ? fl : 1;
                continue;
            }
            struct int_lit l = {.line = line, .bare = p[sign + d] != 'L', .at = p, .len = sign + d};
            errno = 0;
            char *e;
            long long v = strtoll(p, &e, 10);
            l.fits64 = errno == 0 && e == p + sign + d;
            l.value = l.fits64 ? v : 0;
            if (lits_push(out, &l) < 0)
                return -1;
            p += il;
        } else {
            p++;
        }
    }
    return 0;
}

/* The integer settings (INT, INT64) under s, in document order. */
struct int_settings {
    const config_setting_t **v;
    size_t n, cap;
};

static int settings_push(struct int_settings *out, const config_setting_t *s)
{
    if (out->n == out->cap) {
        size_t cap = out->cap ? 2 * out->cap : 32;
        const config_setting_t **v = realloc(out->v, cap * sizeof *v);
        if (!v)
            return -1;
        out->v = v;
        out->cap = cap;
    }
    out->v[out->n++] = s;
    return 0;
}

static int collect_ints(const config_setting_t *s, struct int_settings *out)
{
    int t = config_setting_type(s);
    if (t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64)
        return settings_push(out, s);
    if (config_setting_is_aggregate(s))
        for (int i = 0; i < config_setting_length(s); i++)
            if (collect_ints(config_setting_get_elem(s, (unsigned)i), out) < 0)
                return -1;
    return 0;
}

static long long stored_value(const config_setting_t *s)
{
    long long v = 0;
    cfg_int_value(s, &v);
    return v;
}

/* Fill err with why literal l cannot be read (no place). Always returns -1. */
static int lit_error(char *err, size_t errlen, const struct int_lit *l)
{
    int n = l->len > 40 ? 40 : (int)l->len;
    const char *more = l->len > 40 ? "..." : "";
    if (!l->fits64)
        return err_set(err, errlen, "%.*s%s%s does not fit a 64-bit integer", n, l->at, more, l->bare ? "" : "L");
    /* a size as a string, when the value has an exact binary unit ("4GiB") */
    static const char *const unit[] = {"TiB", "GiB", "MiB", "KiB"};
    for (int i = 0; i < 4 && l->value > 0; i++) {
        long long m = 1LL << (10 * (4 - i));
        if (l->value % m == 0)
            return err_set(err, errlen,
                           "%.*s does not fit a libconfig integer (32 bits): write it with the L suffix (%.*sL) "
                           "or, for a size, as a string (\"%lld%s\")", n, l->at, n, l->at, l->value / m, unit[i]);
    }
    return err_set(err, errlen, "%.*s does not fit a libconfig integer (32 bits): write it with the L suffix (%.*sL)",
                   n, l->at, n, l->at);
}

/* Pair the literals of one file (text) with its integer settings (the subset of all whose
 * source file is file; NULL: the main file) and refuse the first whose value is not its
 * literal's. When the two do not pair up (a scanner that disagrees with libconfig's), any
 * literal that cannot hold in libconfig 1.5's own terms is refused at its line instead.
 * An action: 0, or -1 with err filled. */
static int check_file_ints(const char *text, size_t len, const char *file, const char *shown,
                           const struct int_settings *all, char *err, size_t errlen)
{
    struct int_lits lits = {0};
    struct int_settings mine = {0};
    int ret = -1;
    if (scan_int_lits(text, len, &lits) < 0) {
        err_set(err, errlen, "%s: out of memory", shown);
        goto out;
    }
    for (size_t i = 0; i < all->n; i++) {
        const char *f = config_setting_source_file(all->v[i]);
        if (!(f == file || (f && file && strcmp(f, file) == 0)))
            continue;
        if (settings_push(&mine, all->v[i]) < 0) {
            err_set(err, errlen, "%s: out of memory", shown);
            goto out;
        }
    }
    /* a file included k times holds k copies of its literals */
    int paired = lits.n > 0 ? mine.n > 0 && mine.n % lits.n == 0 : mine.n == 0;
    for (size_t i = 0; paired && i < mine.n; i++) {
        const struct int_lit *l = &lits.v[i % lits.n];
        unsigned sl = config_setting_source_line(mine.v[i]);
        /* a named setting's line is its name's, an element's its value's */
        paired = config_setting_name(mine.v[i]) ? l->line >= sl : l->line <= sl;
    }
    if (paired) {
        for (size_t i = 0; i < mine.n; i++) {
            const struct int_lit *l = &lits.v[i % lits.n];
            if (!l->fits64 || l->value != stored_value(mine.v[i])) {
                lit_error(err, errlen, l);
                cfg_error_prefix(err, errlen, mine.v[i]);
                goto out;
            }
        }
    } else {
        for (size_t i = 0; i < lits.n; i++) {
            const struct int_lit *l = &lits.v[i];
            if (!l->fits64 || (l->bare && (l->value < INT32_MIN || l->value > INT32_MAX))) {
                lit_error(err, errlen, l);
                err_prefix(err, errlen, "%s:%u", shown, l->line);
                goto out;
            }
        }
    }
    ret = 0;
out:
    free(lits.v);
    free(mine.v);
    return ret;
}

/* The whole of path into a new NUL-terminated buffer (*len bytes). An action: the buffer,
 * or NULL with errno set (EFBIG beyond CFG_MAX_FILE). */
char *cfg_read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n + 1 >= cap) {
            char *b = cap >= CFG_MAX_FILE ? NULL : realloc(buf, cap * 2);
            if (!b) {
                free(buf);
                buf = NULL;
                errno = cap >= CFG_MAX_FILE ? EFBIG : ENOMEM;
                break;
            }
            buf = b;
            cap *= 2;
        }
        size_t r = fread(buf + n, 1, cap - 1 - n, f);
        n += r;
        if (r == 0) {
            if (ferror(f)) {
                int e = errno ? errno : EIO;
                free(buf);
                buf = NULL;
                errno = e;
            }
            break;
        }
    }
    fclose(f);
    if (buf) {
        buf[n] = 0;
        *len = n;
    }
    return buf;
}

int cfg_literal_check(const config_t *cfg, const char *text, size_t len, const char *path, char *err, size_t errlen)
{
    struct int_settings all = {0};
    int ret = -1;
    if (collect_ints(config_root_setting(cfg), &all) < 0) {
        err_set(err, errlen, "%s: out of memory", path);
        goto out;
    }
    if (check_file_ints(text, len, NULL, path, &all, err, errlen) < 0)
        goto out;
    /* files brought in by @include, each once */
    for (size_t i = 0; i < all.n; i++) {
        const char *f = config_setting_source_file(all.v[i]);
        int seen = !f;
        for (size_t j = 0; j < i && !seen; j++) {
            const char *g = config_setting_source_file(all.v[j]);
            seen = g && strcmp(f, g) == 0;
        }
        if (seen)
            continue;
        size_t ilen = 0;
        errno = 0;
        char *itext = cfg_read_all(f, &ilen);
        if (!itext) {
            err_set(err, errlen, "%s: cannot read again to check its integers: %s", f, strerror(errno));
            goto out;
        }
        int r = check_file_ints(itext, ilen, f, f, &all, err, errlen);
        free(itext);
        if (r < 0)
            goto out;
    }
    ret = 0;
out:
    free(all.v);
    return ret;
}

