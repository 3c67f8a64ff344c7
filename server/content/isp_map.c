/* isp_map: see isp_map.h. The prefixes are kept sorted by family, length (longest first)
 * and address; a lookup masks the address to each length present and searches that run:
 * at most 33 (IPv4) or 129 (IPv6) binary searches, whatever the map's size. */
#include "isp_map.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

struct row {
    uint8_t fam;      /* 4 or 6 */
    uint8_t len;      /* prefix length */
    uint8_t addr[16]; /* masked to len; IPv4 in the first 4 bytes */
    unsigned line;
    char *text; /* the entry's strings, one allocation */
    struct isp_entry e;
};

struct run { /* the rows of one family and length: rows[start .. start+count) */
    uint8_t fam, len;
    size_t start, count;
};

struct isp_map {
    struct row *rows;
    size_t n;
    struct run runs[33 + 129];
    size_t n_runs;
};

void isp_map_free(struct isp_map *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        free(m->rows[i].text);
    free(m->rows);
    free(m);
}

size_t isp_map_count(const struct isp_map *m)
{
    return m ? m->n : 0;
}

static void mask(uint8_t *a, unsigned len, unsigned bytes)
{
    for (unsigned i = 0; i < bytes; i++) {
        unsigned keep = len >= 8 * (i + 1) ? 8 : len > 8 * i ? len - 8 * i : 0;
        a[i] &= (uint8_t)(0xffu << (8 - keep));
    }
}

/* S as an address (4 or 16 bytes into A, *FAM 4 or 6; a mapped IPv4 as IPv4): 0, or -1. */
static int parse_addr(const char *s, uint8_t *a, uint8_t *fam)
{
    memset(a, 0, 16);
    if (inet_pton(AF_INET, s, a) == 1) {
        *fam = 4;
        return 0;
    }
    struct in6_addr a6;
    if (inet_pton(AF_INET6, s, &a6) != 1)
        return -1;
    if (IN6_IS_ADDR_V4MAPPED(&a6)) {
        memcpy(a, a6.s6_addr + 12, 4);
        *fam = 4;
    } else {
        memcpy(a, a6.s6_addr, 16);
        *fam = 6;
    }
    return 0;
}

/* "ADDR[/LEN]" into R: 0, or -1 with the reason. */
static int parse_prefix(const char *s, struct row *r, char *err, size_t errlen)
{
    char buf[64];
    const char *slash = strchr(s, '/');
    size_t n = slash ? (size_t)(slash - s) : strlen(s);
    if (n >= sizeof buf)
        return err_set(err, errlen, "\"%s\" is not an address prefix", s);
    memcpy(buf, s, n);
    buf[n] = 0;
    if (parse_addr(buf, r->addr, &r->fam) < 0 || (r->fam == 4 && strchr(buf, ':')))
        return err_set(err, errlen, "\"%s\" is not an IPv4 or IPv6 prefix (\"198.51.100.0/24\", \"2001:db8::/32\")", s);
    unsigned max = r->fam == 4 ? 32 : 128, len = max;
    if (slash) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(slash + 1, &end, 10);
        if (!slash[1] || *end || slash[1] < '0' || slash[1] > '9' || errno || v > max)
            return err_set(err, errlen, "\"%s\": the prefix length must be 0..%u", s, max);
        len = (unsigned)v;
    }
    uint8_t masked[16];
    memcpy(masked, r->addr, 16);
    mask(masked, len, r->fam == 4 ? 4 : 16);
    if (memcmp(masked, r->addr, 16) != 0)
        return err_set(err, errlen, "\"%s\": bits set after the first %u (the network is %s)", s, len,
                       inet_ntop(r->fam == 4 ? AF_INET : AF_INET6, masked, buf, sizeof buf) ? buf : "?");
    r->len = (uint8_t)len;
    return 0;
}

/* S (LEN bytes) is valid UTF-8 (as jansson takes it: no overlong form, no surrogate)
 * without control characters. */
static int clean_text(const unsigned char *s, size_t len)
{
    for (size_t i = 0; i < len;) {
        unsigned c = s[i], more = c < 0x80 ? 0 : c >= 0xc2 && c < 0xe0 ? 1 : c >= 0xe0 && c < 0xf0 ? 2 : c >= 0xf0 && c < 0xf5 ? 3 : 9;
        if (c < 0x20 || c == 0x7f || more > 3 || (more && i + more >= len))
            return 0;
        for (unsigned k = 1; k <= more; k++)
            if ((s[i + k] & 0xc0) != 0x80)
                return 0;
        unsigned c1 = more ? s[i + 1] : 0;
        if ((c == 0xe0 && c1 < 0xa0) || (c == 0xed && c1 >= 0xa0) || (c == 0xf0 && c1 < 0x90) || (c == 0xf4 && c1 >= 0x90))
            return 0;
        i += 1 + more;
    }
    return 1;
}

/* The fields of LINE (NUL-terminated, changed in place): up to MAX pointers into it, each
 * trimmed of blanks, double quotes removed ("" inside is a quote). Their count, or -1 for an
 * unclosed quote. */
static int split(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        char *start = p, *out = p;
        if (*p == '"') {
            for (p++;; p++) {
                if (!*p)
                    return -1;
                if (*p == '"' && p[1] != '"')
                    break;
                *out++ = *p;
                if (*p == '"')
                    p++;
            }
            p++;
            while (*p == ' ' || *p == '\t')
                p++;
            if (*p && *p != ',')
                return -1;
        } else {
            while (*p && *p != ',')
                *out++ = *p++;
            while (out > start && (out[-1] == ' ' || out[-1] == '\t'))
                out--;
        }
        char sep = *p;
        *out = 0;
        if (n < max)
            f[n] = start;
        n++;
        if (!sep)
            return n;
        p++;
    }
}

/* ASN as "", "64500" or "AS64500" into *OUT: 0, or -1. */
static int parse_asn(const char *s, uint32_t *out)
{
    *out = 0;
    if (!*s)
        return 0;
    if ((s[0] == 'A' || s[0] == 'a') && (s[1] == 'S' || s[1] == 's'))
        s += 2;
    if (*s < '0' || *s > '9')
        return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno || v > UINT32_MAX)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* One line's entry into R: 1, 0 for a line to skip, -1 with the reason. */
static int parse_line(char *line, struct row *r, char *err, size_t errlen)
{
    size_t n = strlen(line);
    if (n && line[n - 1] == '\r')
        line[--n] = 0;
    const char *p = line + strspn(line, " \t");
    if (!*p || *p == '#')
        return 0;
    char *f[5];
    int nf = split(line, f, 5);
    if (nf < 0)
        return err_set(err, errlen, "a quote is not closed");
    if (nf < 4 || nf > 5)
        return err_set(err, errlen, "%d fields (expected prefix,isp name,asn,country[,city])", nf);
    if (parse_prefix(f[0], r, err, errlen) < 0)
        return -1;
    if (!f[1][0])
        return err_set(err, errlen, "the isp name is empty");
    const char *city = nf == 5 ? f[4] : "";
    const char *what[] = {"isp name", "country", "city"};
    const char *val[] = {f[1], f[3], city};
    for (int i = 0; i < 3; i++) {
        if (!clean_text((const unsigned char *)val[i], strlen(val[i])) || strlen(val[i]) > 200)
            return err_set(err, errlen, "the %s is not UTF-8 text without control characters (at most 200 bytes)",
                           what[i]);
        if (i && strpbrk(val[i], ",\"")) /* sent as headers (cf-meta-*): no list separator */
            return err_set(err, errlen, "the %s has a ',' or '\"'", what[i]);
    }
    if (parse_asn(f[2], &r->e.asn) < 0)
        return err_set(err, errlen, "\"%s\" is not an AS number (\"64500\", \"AS64500\" or empty)", f[2]);
    size_t li = strlen(f[1]) + 1, lc = strlen(f[3]) + 1, lt = strlen(city) + 1;
    if (!(r->text = malloc(li + lc + lt)))
        return err_set(err, errlen, "out of memory");
    memcpy(r->text, f[1], li);
    memcpy(r->text + li, f[3], lc);
    memcpy(r->text + li + lc, city, lt);
    r->e.isp = r->text;
    r->e.country = r->text + li;
    r->e.city = r->text + li + lc;
    return 1;
}

static int row_cmp(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    if (x->fam != y->fam)
        return x->fam - y->fam;
    if (x->len != y->len)
        return y->len - x->len;
    return memcmp(x->addr, y->addr, 16);
}

/* Sort M's rows and find its runs: 0, or -1 with the duplicate's lines. */
static int index_rows(struct isp_map *m, const char *name, char *err, size_t errlen)
{
    if (m->n) /* no rows (a map of comments): rows is NULL, which qsort may not take */
        qsort(m->rows, m->n, sizeof *m->rows, row_cmp);
    for (size_t i = 0; i < m->n; i++) {
        struct row *r = &m->rows[i];
        if (i && row_cmp(r, r - 1) == 0) {
            unsigned a = r[-1].line < r->line ? r[-1].line : r->line, b = a == r->line ? r[-1].line : r->line;
            return err_set(err, errlen, "%s:%u: the prefix of line %u again", name, b, a);
        }
        if (!m->n_runs || m->runs[m->n_runs - 1].fam != r->fam || m->runs[m->n_runs - 1].len != r->len)
            m->runs[m->n_runs++] = (struct run){r->fam, r->len, i, 0};
        m->runs[m->n_runs - 1].count++;
    }
    return 0;
}

struct isp_map *isp_map_parse(const char *text, size_t len, const char *name, char *err, size_t errlen)
{
    struct isp_map *m = calloc(1, sizeof *m);
    size_t cap = 0;
    char *line = NULL;
    if (!m)
        goto oom;
    unsigned lineno = 0;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t n = nl ? (size_t)(nl - (text + at)) : len - at;
        lineno++;
        char *l = realloc(line, n + 1);
        if (!l)
            goto oom;
        line = l;
        memcpy(line, text + at, n);
        line[n] = 0;
        at += n + 1;
        if (strlen(line) != n) {
            err_set(err, errlen, "%s:%u: a NUL byte", name, lineno);
            goto fail;
        }
        if (m->n == cap) {
            size_t c = cap ? cap * 2 : 64;
            struct row *rows = realloc(m->rows, c * sizeof *rows);
            if (!rows)
                goto oom;
            m->rows = rows;
            cap = c;
        }
        struct row *r = &m->rows[m->n];
        memset(r, 0, sizeof *r);
        r->line = lineno;
        char why[200];
        int got = parse_line(line, r, why, sizeof why);
        if (got < 0) {
            err_set(err, errlen, "%s:%u: %s", name, lineno, why);
            goto fail;
        }
        m->n += (size_t)got;
    }
    free(line);
    if (index_rows(m, name, err, errlen) < 0)
        goto fail_kept;
    return m;
oom:
    err_set(err, errlen, "%s: out of memory", name);
fail:
    free(line);
fail_kept:
    isp_map_free(m);
    return NULL;
}

struct isp_map *isp_map_load(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "re");
    if (!f) {
        err_set(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    char chunk[65536];
    size_t n;
    int bad = !mem;
    while (mem && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        bad |= fwrite(chunk, 1, n, mem) != n;
    bad |= ferror(f);
    int saved = errno;
    fclose(f);
    if (mem)
        fclose(mem);
    struct isp_map *m = NULL;
    if (bad)
        err_set(err, errlen, "%s: %s", path, saved ? strerror(saved) : "read error");
    else
        m = isp_map_parse(buf ? buf : "", len, path, err, errlen);
    free(buf);
    return m;
}

const struct isp_entry *isp_map_lookup(const struct isp_map *m, const char *ip)
{
    uint8_t a[16];
    uint8_t fam;
    if (!m || !ip || parse_addr(ip, a, &fam) < 0)
        return NULL;
    for (size_t i = 0; i < m->n_runs; i++) {
        const struct run *run = &m->runs[i];
        if (run->fam != fam)
            continue;
        struct row key = {.fam = fam, .len = run->len};
        memcpy(key.addr, a, 16);
        mask(key.addr, run->len, 16);
        const struct row *hit = bsearch(&key, m->rows + run->start, run->count, sizeof key, row_cmp);
        if (hit)
            return &hit->e;
    }
    return NULL;
}
