/* units: see units.h. One suffix table per kind keeps the parser a single loop. */
#include "units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct unit {
    const char *suffix;
    double factor;
    int case_insensitive;
};

static const struct unit size_units[] = {
    {"", 1, 0},          {"B", 1, 0},
    {"KiB", 1024.0, 0},  {"MiB", 1048576.0, 0}, {"GiB", 1073741824.0, 0}, {"TiB", 1099511627776.0, 0},
    {"Kio", 1024.0, 0},  {"Mio", 1048576.0, 0}, {"Gio", 1073741824.0, 0}, {"Tio", 1099511627776.0, 0},
    {"K", 1024.0, 0},    {"M", 1048576.0, 0},   {"G", 1073741824.0, 0},   {"T", 1099511627776.0, 0},
    {"k", 1024.0, 0},
    {"kB", 1e3, 0},      {"KB", 1e3, 0},        {"MB", 1e6, 0},           {"GB", 1e9, 0}, {"TB", 1e12, 0},
    {"ko", 1e3, 0},      {"Mo", 1e6, 0},        {"Go", 1e9, 0},           {"To", 1e12, 0},
    {NULL, 0, 0},
};

/* Bits: prefix letter case-insensitive (tc writes "mbit"); a capital B means bytes. */
static const struct unit rate_units[] = {
    {"", 1, 0},
    {"bit", 1, 1}, {"bit/s", 1, 1}, {"b/s", 1, 0}, {"bps", 1, 0},
    {"k", 1e3, 1}, {"kbit", 1e3, 1}, {"kbit/s", 1e3, 1}, {"kb/s", 1e3, 0}, {"Kb/s", 1e3, 0}, {"kbps", 1e3, 0}, {"Kbps", 1e3, 0},
    {"M", 1e6, 1}, {"Mbit", 1e6, 1}, {"Mbit/s", 1e6, 1}, {"Mb/s", 1e6, 0}, {"Mbps", 1e6, 0},
    {"G", 1e9, 1}, {"Gbit", 1e9, 1}, {"Gbit/s", 1e9, 1}, {"Gb/s", 1e9, 0}, {"Gbps", 1e9, 0},
    {"T", 1e12, 1}, {"Tbit", 1e12, 1}, {"Tbit/s", 1e12, 1}, {"Tb/s", 1e12, 0}, {"Tbps", 1e12, 0},
    {"B/s", 8, 0}, {"kB/s", 8e3, 0}, {"KB/s", 8e3, 0}, {"MB/s", 8e6, 0}, {"GB/s", 8e9, 0},
    {NULL, 0, 0},
};

static const struct unit duration_units[] = {
    {"", 1e6, 0}, {"s", 1e6, 0}, {"sec", 1e6, 0}, {"ms", 1e3, 0}, {"us", 1, 0},
    {"min", 60e6, 0}, {"h", 3600e6, 0}, {"d", 86400e6, 0}, {NULL, 0, 0},
};

const char *units_strerror(enum units_err e)
{
    switch (e) {
    case UNITS_OK: return "ok";
    case UNITS_EMPTY: return "empty value";
    case UNITS_NOT_NUMBER: return "not a number";
    case UNITS_BAD_SUFFIX: return "unknown unit";
    case UNITS_OVERFLOW: return "too large";
    case UNITS_RANGE: return "out of range";
    case UNITS_TOO_FINE: return "finer than the unit holds";
    case UNITS_NEGATIVE: return "negative";
    }
    return "unknown error";
}

/* Splits "12.5MiB" into an exact integer part, a fraction and a suffix. strtoull does the
 * integer part so that 2^64-1 bytes round-trip exactly; only a fraction goes through a double. */
static enum units_err parse_with(const char *s, const struct unit *table, uint64_t *out)
{
    if (!s || !*s)
        return UNITS_EMPTY;
    while (isspace((unsigned char)*s))
        s++;
    if (*s == '-' && (isdigit((unsigned char)s[1]) || s[1] == '.'))
        return UNITS_NEGATIVE;
    if (!isdigit((unsigned char)*s))
        return *s ? UNITS_NOT_NUMBER : UNITS_EMPTY;
    errno = 0;
    char *end;
    unsigned long long ip = strtoull(s, &end, 10);
    if (errno == ERANGE)
        return UNITS_OVERFLOW;
    double frac = 0;
    if (*end == '.') {
        const char *f = end + 1;
        if (!isdigit((unsigned char)*f))
            return UNITS_NOT_NUMBER;
        double scale = 0.1;
        while (isdigit((unsigned char)*f)) {
            frac += (*f - '0') * scale;
            scale /= 10;
            f++;
        }
        end = (char *)f;
    }
    while (*end == ' ')
        end++;
    for (const struct unit *u = table; u->suffix; u++) {
        int match = u->case_insensitive ? strcasecmp(end, u->suffix) == 0 : strcmp(end, u->suffix) == 0;
        if (!match)
            continue;
        uint64_t f = (uint64_t)u->factor;
        if ((double)f == u->factor && frac == 0) {
            if (f && ip > UINT64_MAX / f)
                return UNITS_OVERFLOW;
            *out = (uint64_t)ip * f;
            return UNITS_OK;
        }
        double v = ((double)ip + frac) * u->factor;
        if (v >= 18446744073709551616.0)
            return UNITS_OVERFLOW;
        *out = (uint64_t)v;
        return UNITS_OK;
    }
    return UNITS_BAD_SUFFIX;
}

enum units_err units_parse_size(const char *s, uint64_t *bytes)
{
    return parse_with(s, size_units, bytes);
}

enum units_err units_parse_rate(const char *s, uint64_t *bits_per_s)
{
    return parse_with(s, rate_units, bits_per_s);
}

enum units_err units_parse_duration(const char *s, uint64_t *usec)
{
    return parse_with(s, duration_units, usec);
}

enum units_err units_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    if (!s || !*s)
        return UNITS_EMPTY;
    if (*s == '-' && isdigit((unsigned char)s[1]))
        return UNITS_NEGATIVE;
    if (!isdigit((unsigned char)*s))
        return UNITS_NOT_NUMBER;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE)
        return UNITS_OVERFLOW;
    if (*end)
        return UNITS_NOT_NUMBER;
    if (v < min || v > max)
        return UNITS_RANGE;
    *out = v;
    return UNITS_OK;
}

enum units_err units_parse_percent(const char *s, int sign_required, uint64_t max_ppm, uint64_t *ppm)
{
    const char *p = s;
    if (!p || !*p)
        return UNITS_EMPTY;
    if (*p < '0' || *p > '9')
        return UNITS_NOT_NUMBER;
    uint64_t whole = 0, limit = max_ppm / 10000 + 1;
    for (; *p >= '0' && *p <= '9'; p++) {
        whole = whole * 10 + (uint64_t)(*p - '0');
        if (whole > limit)
            return UNITS_RANGE; /* also keeps the sum below from overflowing */
    }
    uint64_t frac = 0; /* in 10^-4 percent = ppm */
    int digits = 0, finer = 0;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return UNITS_NOT_NUMBER;
        for (; *p >= '0' && *p <= '9'; p++, digits++) {
            if (digits < 4)
                frac = frac * 10 + (uint64_t)(*p - '0');
            else if (*p != '0')
                finer = 1;
        }
        for (int d = digits; d < 4; d++)
            frac *= 10;
    }
    uint64_t v = whole * 10000 + frac;
    if (*p == '\0' && ((v == 0 && !finer) || !sign_required)) {
        /* "0": nothing needs no unit; without sign_required a bare number is a percentage */
    } else if (*p != '%' || p[1] != '\0') {
        return UNITS_BAD_SUFFIX;
    }
    if (v > max_ppm || (v == max_ppm && finer))
        return UNITS_RANGE;
    if (finer)
        return UNITS_TOO_FINE;
    *ppm = v;
    return UNITS_OK;
}

int units_format_size(uint64_t bytes, char *buf, size_t len)
{
    static const char *names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int i = 0;
    double v = (double)bytes;
    while (v >= 1024.0 && i < 6) {
        v /= 1024.0;
        i++;
    }
    if (i == 0)
        return snprintf(buf, len, "%llu B", (unsigned long long)bytes);
    /* %.3g would print 1000 to 1023.x as "1.02e+03" */
    if (v == floor(v) || v >= 100)
        return snprintf(buf, len, "%.0f %s", v, names[i]);
    return snprintf(buf, len, "%.3g %s", v, names[i]);
}

void units_format_mbps(double v, char *buf, size_t len)
{
    if (!isfinite(v))
        snprintf(buf, len, "-");
    else if (v >= 99.5)
        snprintf(buf, len, "%.0f", v);
    else if (v >= 9.995)
        snprintf(buf, len, "%.1f", v);
    else
        snprintf(buf, len, "%.2f", v);
}

int units_format_rate_tc(uint64_t bps, char *buf, size_t len)
{
    static const struct { uint64_t f; const char *n; } t[] = {
        {1000000000000ULL, "Tbit"}, {1000000000ULL, "Gbit"}, {1000000ULL, "Mbit"}, {1000ULL, "Kbit"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (bps >= t[i].f && bps % t[i].f == 0)
            return snprintf(buf, len, "%llu%s", (unsigned long long)(bps / t[i].f), t[i].n);
    return snprintf(buf, len, "%llubit", (unsigned long long)bps);
}
