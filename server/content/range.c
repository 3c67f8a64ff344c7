/* range: see range.h. */
#include "range.h"

#include "conditional.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* Digits only (no sign, no space). More than 64 bits of them saturate: such a position is
 * still valid syntax (1*DIGIT) and lies beyond any file, so a first-pos there is
 * unsatisfiable (416, as nginx answers) and a last-pos or suffix there clamps to the end. */
static int parse_u64(const char **pp, uint64_t *out)
{
    const char *p = *pp;
    if (!isdigit((unsigned char)*p))
        return -1;
    uint64_t v = 0;
    while (isdigit((unsigned char)*p)) {
        unsigned d = (unsigned)(*p - '0');
        v = v > (UINT64_MAX - d) / 10 ? UINT64_MAX : v * 10 + d;
        p++;
    }
    *pp = p;
    *out = v;
    return 0;
}

/* One range-spec, up to the next comma or the end. Returns 1 satisfiable (r filled),
 * 0 unsatisfiable, -1 syntax error. */
static int parse_spec(const char **pp, uint64_t size, struct range *r)
{
    const char *p = skip_ws(*pp);
    uint64_t a, b;
    int ret;
    if (*p == '-') { /* suffix: last n bytes */
        p++;
        if (parse_u64(&p, &b) < 0)
            return -1;
        if (b == 0 || size == 0) {
            ret = 0;
        } else {
            r->first = b >= size ? 0 : size - b;
            r->last = size - 1;
            ret = 1;
        }
    } else {
        if (parse_u64(&p, &a) < 0 || *p != '-')
            return -1;
        p++;
        int open = !isdigit((unsigned char)*p);
        if (!open && parse_u64(&p, &b) < 0)
            return -1;
        if (!open && b < a)
            return -1; /* RFC: invalid, the whole header is ignored */
        if (a >= size) {
            ret = 0;
        } else {
            r->first = a;
            r->last = (open || b >= size) ? size - 1 : b;
            ret = 1;
        }
    }
    p = skip_ws(p);
    if (*p != ',' && *p != 0)
        return -1;
    *pp = p;
    return ret;
}

enum range_kind range_parse(const char *header, uint64_t size, struct range *out)
{
    if (!header)
        return RANGE_NONE;
    const char *p = skip_ws(header);
    if (strncasecmp(p, "bytes", 5) != 0)
        return RANGE_NONE;
    p = skip_ws(p + 5);
    if (*p != '=')
        return RANGE_NONE;
    p++;
    int specs = 0, satisfiable = 0;
    struct range first = {0, 0};
    for (;;) {
        p = skip_ws(p);
        if (*p == ',') { /* empty list elements are allowed by the list syntax */
            p++;
            continue;
        }
        if (*p == 0)
            break;
        struct range r;
        int k = parse_spec(&p, size, &r);
        if (k < 0)
            return RANGE_NONE;
        specs++;
        if (k == 1 && satisfiable++ == 0)
            first = r;
    }
    if (specs == 0)
        return RANGE_NONE;
    if (satisfiable == 0)
        return RANGE_UNSATISFIABLE;
    if (specs > 1)
        return RANGE_MULTI;
    *out = first;
    return RANGE_ONE;
}

int range_if_range_ok(const char *if_range, const char *etag, const char *last_modified)
{
    if (!if_range)
        return 1;
    const char *p = skip_ws(if_range);
    size_t n = strlen(p);
    while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    if (n >= 2 && p[0] == 'W' && p[1] == '/')
        return 0;
    if (p[0] == '"')
        return etag && strlen(etag) == n && memcmp(p, etag, n) == 0;
    /* a date: the same second as Last-Modified in any HTTP-date format, as nginx compares
     * them (conditional.c holds the one parser) */
    time_t a, b;
    return last_modified && cond_parse_date(p, &a) == 0 && cond_parse_date(last_modified, &b) == 0 && a == b;
}
