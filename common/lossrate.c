/* lossrate: see lossrate.h. Decimal digits by hand rather than strtod: exact in ppm, and
 * immune to a locale whose decimal point is a comma. */
#include "lossrate.h"

#include <stdio.h>

#include "err.h"

#define HINT "expected a percentage such as 1%% or 0.5%%"

int lossrate_parse(const char *value, uint32_t *ppm, char *err, size_t errlen)
{
    const char *p = value;
    if (!*p)
        return err_set(err, errlen, "empty value (" HINT ")");
    if (*p == '-')
        return err_set(err, errlen, "'%s': a loss rate cannot be negative", value);
    if (*p < '0' || *p > '9')
        return err_set(err, errlen, "'%s': not a number (" HINT ")", value);
    uint64_t whole = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        whole = whole * 10 + (uint64_t)(*p - '0');
        if (whole > 100)
            return err_set(err, errlen, "'%s': above 100%%", value);
    }
    uint64_t frac = 0; /* in 10^-4 percent = ppm */
    int digits = 0, finer = 0;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return err_set(err, errlen, "'%s': not a number (" HINT ")", value);
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
    if (*p == '\0' && v == 0 && !finer) {
        *ppm = 0; /* "0", "0.0": no loss needs no unit */
        return 0;
    }
    if (*p != '%' || p[1] != '\0')
        return err_set(err, errlen, "'%s': %s (" HINT ")", value, *p ? "unknown unit" : "the % sign is missing");
    if (v > LOSSRATE_PPM_MAX || (v == LOSSRATE_PPM_MAX && finer))
        return err_set(err, errlen, "'%s': above 100%%", value);
    if (finer)
        return err_set(err, errlen, "'%s': finer than 0.0001%%", value);
    *ppm = (uint32_t)v;
    return 0;
}

int lossrate_format(uint32_t ppm, char *buf, size_t len)
{
    unsigned whole = ppm / 10000, frac = ppm % 10000;
    if (!frac)
        return snprintf(buf, len, "%u%%", whole);
    char f[8];
    snprintf(f, sizeof f, "%04u", frac);
    for (int i = 3; i > 0 && f[i] == '0'; i--)
        f[i] = '\0';
    return snprintf(buf, len, "%u.%s%%", whole, f);
}

double lossrate_pct(uint32_t ppm)
{
    return ppm / 10000.0;
}
