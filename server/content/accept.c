/* accept: see accept.h. */
#include "accept.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

static const char *skip_ows(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* A qvalue (RFC 9110 12.4.2: "0", "0.5", "1.000") at P, up to END, as 0..1000; -1 if malformed. */
static int qvalue(const char *p, const char *end)
{
    if (p >= end || (*p != '0' && *p != '1'))
        return -1;
    int whole = *p++ - '0', frac = 0, digits = 0;
    if (p < end && *p == '.') {
        p++;
        while (p < end && isdigit((unsigned char)*p) && digits < 3) {
            frac = frac * 10 + (*p++ - '0');
            digits++;
        }
    }
    if (p != end)
        return -1;
    while (digits++ < 3)
        frac *= 10;
    if (whole == 1 && frac != 0)
        return -1;
    return whole * 1000 + frac;
}

/* The q parameter of the parameters at P..END (";a=b;q=0.5"): 1000 when absent, -1 if malformed. */
static int member_q(const char *p, const char *end)
{
    int q = 1000;
    while (p < end) {
        const char *semi = memchr(p, ';', (size_t)(end - p));
        const char *pe = semi ? semi : end;
        const char *k = skip_ows(p);
        if (pe - k >= 2 && (k[0] == 'q' || k[0] == 'Q') && k[1] == '=') {
            const char *v = k + 2, *ve = pe;
            while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
                ve--;
            q = qvalue(v, ve);
        }
        p = semi ? semi + 1 : end;
    }
    return q;
}

/* How specifically the range R..RE matches TYPE: 3 the same type and subtype, 2 the type
 * with the subtype "*", 1 both "*", 0 not. */
static int specificity(const char *r, const char *re, const char *type)
{
    const char *slash = memchr(r, '/', (size_t)(re - r));
    const char *tslash = strchr(type, '/');
    if (!slash || !tslash || slash == r || slash + 1 == re)
        return 0;
    size_t rt = (size_t)(slash - r), rs = (size_t)(re - slash - 1);
    size_t tt = (size_t)(tslash - type), ts = strlen(tslash + 1);
    if (rt == 1 && *r == '*')
        return rs == 1 && slash[1] == '*' ? 1 : 0;
    if (rt != tt || strncasecmp(r, type, tt) != 0)
        return 0;
    if (rs == 1 && slash[1] == '*')
        return 2;
    return rs == ts && strncasecmp(slash + 1, tslash + 1, ts) == 0 ? 3 : 0;
}

int accept_weight(const char *accept, const char *type)
{
    if (!accept || !*skip_ows(accept))
        return 1000;
    int best = 0, weight = 0;
    for (const char *p = accept; *p;) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        const char *r = skip_ows(p);
        const char *semi = memchr(r, ';', (size_t)(end - r));
        const char *re = semi ? semi : end;
        while (re > r && (re[-1] == ' ' || re[-1] == '\t'))
            re--;
        int spec = specificity(r, re, type);
        int q = semi ? member_q(semi + 1, end) : 1000;
        if (spec > best && q >= 0) {
            best = spec;
            weight = q;
        }
        p = comma ? comma + 1 : end;
    }
    return weight;
}

int accept_prefers(const char *accept, const char *a, const char *b)
{
    return accept_weight(accept, a) > accept_weight(accept, b);
}
