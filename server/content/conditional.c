/* conditional: see conditional.h. */
#include "conditional.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* ---- HTTP-date (RFC 9110 5.6.7) ---- */

static const char *const day_short[7] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
static const char *const day_long[7] = {"Monday", "Tuesday", "Wednesday", "Thursday",
                                        "Friday", "Saturday", "Sunday"};
static const char *const month_names[12] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                            "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

/* The letters at *PP, compared case-sensitively (an HTTP-date is) with the N names in
 * NAMES: the index of the one they equal, -1 if none; *PP moves past the letters. */
static int name_index(const char **pp, const char *const *names, int n)
{
    const char *p = *pp, *q = p;
    while ((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z'))
        q++;
    *pp = q;
    for (int i = 0; i < n; i++)
        if (strlen(names[i]) == (size_t)(q - p) && memcmp(names[i], p, (size_t)(q - p)) == 0)
            return i;
    return -1;
}

/* Exactly N digits at *PP: their value, or -1. */
static int digits(const char **pp, int n)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*pp)[i];
        if (c < '0' || c > '9')
            return -1;
        v = v * 10 + (c - '0');
    }
    *pp += n;
    return v;
}

static int expect(const char **pp, char c)
{
    if (**pp != c)
        return -1;
    (*pp)++;
    return 0;
}

/* "HH:MM:SS" (a leap second 60 allowed, as the RFC's range says): seconds into the day. */
static long time_of_day(const char **pp)
{
    int h = digits(pp, 2);
    if (h < 0 || h > 23 || expect(pp, ':') < 0)
        return -1;
    int m = digits(pp, 2);
    if (m < 0 || m > 59 || expect(pp, ':') < 0)
        return -1;
    int s = digits(pp, 2);
    if (s < 0 || s > 60)
        return -1;
    return h * 3600L + m * 60L + s;
}

static int is_leap(int y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Days from 1970-01-01 to Y-M-D (M 1..12), proleptic Gregorian (H. Hinnant's
 * days_from_civil): no timegm, which reads the TZ environment and locks. */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* An RFC 850 two-digit year YY: the RFC's rule, a year more than 50 years in the future
 * is the most recent past year with the same last two digits; so the year is the one with
 * those digits in (now - 50, now + 50]. */
static int full_year(int yy)
{
    time_t now = time(NULL);
    struct tm tm;
    int cur = gmtime_r(&now, &tm) ? tm.tm_year + 1900 : 2000;
    int y = cur - cur % 100 + yy;
    if (y > cur + 50)
        y -= 100;
    else if (y <= cur - 50)
        y += 100;
    return y;
}

int cond_parse_date(const char *s, time_t *out)
{
    if (!s)
        return -1;
    const char *p = skip_ws(s);
    const char *name = p;
    int year, month, day;
    long tod;
    if (name_index(&p, day_short, 7) >= 0) {
        if (*p == ',') { /* IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT */
            p++;
            if (expect(&p, ' ') < 0 || (day = digits(&p, 2)) < 0 || expect(&p, ' ') < 0 ||
                (month = name_index(&p, month_names, 12)) < 0 || expect(&p, ' ') < 0 ||
                (year = digits(&p, 4)) < 0 || expect(&p, ' ') < 0 || (tod = time_of_day(&p)) < 0 ||
                expect(&p, ' ') < 0 || strncmp(p, "GMT", 3) != 0)
                return -1;
            p += 3;
        } else { /* asctime: Sun Nov  6 08:49:37 1994 (the day padded with a space) */
            if (expect(&p, ' ') < 0 || (month = name_index(&p, month_names, 12)) < 0 || expect(&p, ' ') < 0)
                return -1;
            if (*p == ' ') {
                p++;
                day = digits(&p, 1);
            } else {
                day = digits(&p, 2);
            }
            if (day < 0 || expect(&p, ' ') < 0 || (tod = time_of_day(&p)) < 0 || expect(&p, ' ') < 0 ||
                (year = digits(&p, 4)) < 0)
                return -1;
        }
    } else {
        p = name;
        if (name_index(&p, day_long, 7) < 0) /* RFC 850: Sunday, 06-Nov-94 08:49:37 GMT */
            return -1;
        int yy;
        if (expect(&p, ',') < 0 || expect(&p, ' ') < 0 || (day = digits(&p, 2)) < 0 || expect(&p, '-') < 0 ||
            (month = name_index(&p, month_names, 12)) < 0 || expect(&p, '-') < 0 || (yy = digits(&p, 2)) < 0 ||
            expect(&p, ' ') < 0 || (tod = time_of_day(&p)) < 0 || expect(&p, ' ') < 0 ||
            strncmp(p, "GMT", 3) != 0)
            return -1;
        p += 3;
        year = full_year(yy);
    }
    if (*skip_ws(p) != 0) /* one date and nothing else: a second member is not one date */
        return -1;
    static const unsigned char mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int last = mdays[month] + (month == 1 && is_leap(year));
    if (day < 1 || day > last)
        return -1;
    /* The weekday name is not checked against the date: nginx does not either, and a
     * client that got it wrong still means the date. */
    *out = (time_t)(days_from_civil(year, (unsigned)month + 1, (unsigned)day) * 86400 + tod);
    return 0;
}

/* ---- entity tags (RFC 9110 8.8.3) ---- */

/* etagc: %x21 / %x23-7E / obs-text */
static int etagc(unsigned char c)
{
    return c == 0x21 || (c >= 0x23 && c != 0x7f);
}

/* Whether the list LIST (If-Match or If-None-Match: "*" or #entity-tag) matches ETAG, a
 * strong tag with its quotes. STRONG: strong comparison (If-Match: a W/ member never
 * matches), else weak (If-None-Match: the opaque-tags alone are compared). A malformed
 * member is skipped to the next comma and never matches, as nginx does. */
static int tag_list_match(const char *list, const char *etag, int strong)
{
    const char *p = skip_ws(list);
    if (*p == '*' && *skip_ws(p + 1) == 0)
        return 1;
    size_t elen = strlen(etag);
    while (*p) {
        p = skip_ws(p);
        if (*p == ',') {
            p++;
            continue;
        }
        if (!*p)
            break;
        int weak = p[0] == 'W' && p[1] == '/';
        const char *t = weak ? p + 2 : p, *q = t + 1;
        if (*t == '"') {
            while (*q && *q != '"' && etagc((unsigned char)*q))
                q++;
            if (*q == '"') {
                const char *after = skip_ws(q + 1);
                if (*after == ',' || *after == 0) {
                    size_t n = (size_t)(q + 1 - t);
                    if (n == elen && memcmp(t, etag, n) == 0 && !(strong && weak))
                        return 1;
                    p = after;
                    continue;
                }
            }
        }
        while (*p && *p != ',') /* malformed: on to the next member */
            p++;
    }
    return 0;
}

/* ---- evaluation (RFC 9110 13.2.2) ---- */

/* Last-Modified minus the date in VALUE, in *DIFF: 0, or -1 when either is not a valid
 * HTTP-date (the precondition is then ignored). Parsed only for a request that sends a
 * date: the common request has none. */
static int modified_after(const char *value, const char *last_modified, time_t *diff)
{
    time_t d, lm;
    if (cond_parse_date(value, &d) < 0 || !last_modified || cond_parse_date(last_modified, &lm) < 0)
        return -1;
    *diff = lm - d;
    return 0;
}

enum cond_result cond_evaluate(const struct cond_headers *h, const char *etag, const char *last_modified)
{
    time_t diff;
    if (h->if_match) {
        if (!tag_list_match(h->if_match, etag, 1))
            return COND_PRECONDITION_FAILED;
    } else if (h->if_unmodified_since && modified_after(h->if_unmodified_since, last_modified, &diff) == 0 &&
               diff > 0) {
        return COND_PRECONDITION_FAILED;
    }
    if (h->if_none_match) {
        if (tag_list_match(h->if_none_match, etag, 0))
            return COND_NOT_MODIFIED;
    } else if (h->if_modified_since && modified_after(h->if_modified_since, last_modified, &diff) == 0 &&
               diff <= 0) {
        return COND_NOT_MODIFIED;
    }
    return COND_PASS;
}
