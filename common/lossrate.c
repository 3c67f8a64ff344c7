/* lossrate: see lossrate.h. The number itself is units_parse_percent's (exact in ppm,
 * immune to a locale whose decimal point is a comma); this adds the loss-rate wording. */
#include "lossrate.h"

#include <stdio.h>
#include <string.h>

#include "err.h"
#include "units.h"

#define HINT "expected a percentage such as 1%% or 0.5%%"

int lossrate_parse(const char *value, uint32_t *ppm, char *err, size_t errlen)
{
    if (*value == '-')
        return err_set(err, errlen, "'%s': a loss rate cannot be negative", value);
    uint64_t v = 0;
    switch (units_parse_percent(value, 1, LOSSRATE_PPM_MAX, &v)) {
    case UNITS_OK: *ppm = (uint32_t)v; return 0;
    case UNITS_EMPTY: return err_set(err, errlen, "empty value (" HINT ")");
    case UNITS_BAD_SUFFIX:
        /* nothing after the number: the sign is missing; something else: another unit */
        return err_set(err, errlen, "'%s': %s (" HINT ")", value,
                       value[strspn(value, "0123456789.")] ? "unknown unit" : "the % sign is missing");
    case UNITS_RANGE:
    case UNITS_OVERFLOW: return err_set(err, errlen, "'%s': above 100%%", value);
    case UNITS_TOO_FINE: return err_set(err, errlen, "'%s': finer than 0.0001%%", value);
    case UNITS_NEGATIVE: /* caught above, with its own words */
    case UNITS_NOT_NUMBER: break;
    }
    return err_set(err, errlen, "'%s': not a number (" HINT ")", value);
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
