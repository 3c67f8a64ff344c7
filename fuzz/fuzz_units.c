/* libFuzzer harness for common/units.c: every parser on the input as text (what an
 * option, a config file or a scenario file may hold), every formatter on the values it
 * gives. Invariants: a uint parse stays in its bounds; formatters NUL-terminate inside
 * their buffer. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fuzzlib.h"
#include "units.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    if (!s)
        return 0;
    uint64_t v = 0, min = 0, max = UINT64_MAX;
    char buf[64];
    if (units_parse_size(s, &v) == UNITS_OK) {
        units_format_size(v, buf, sizeof buf);
        FUZZ_CHECK(memchr(buf, 0, sizeof buf));
    }
    if (units_parse_rate(s, &v) == UNITS_OK) {
        units_format_rate_tc(v, buf, sizeof buf);
        FUZZ_CHECK(memchr(buf, 0, sizeof buf));
        units_format_mbps(v / 1e6, buf, sizeof buf);
        FUZZ_CHECK(memchr(buf, 0, sizeof buf));
    }
    units_parse_duration(s, &v);
    if (size >= 16) {
        memcpy(&min, data, 8);
        memcpy(&max, data + 8, 8);
    }
    if (units_parse_uint(s, min, max, &v) == UNITS_OK)
        FUZZ_CHECK(v >= min && v <= max);
    /* the formatters on raw bit patterns: NaN, infinities, huge and tiny values */
    if (size >= 8) {
        double d;
        memcpy(&d, data, sizeof d);
        units_format_mbps(d, buf, sizeof buf);
        FUZZ_CHECK(memchr(buf, 0, sizeof buf));
        uint64_t u;
        memcpy(&u, data, sizeof u);
        units_format_size(u, buf, sizeof buf);
        units_format_rate_tc(u, buf, sizeof buf);
        units_format_size(u, buf, 3); /* truncation */
        FUZZ_CHECK(strlen(buf) < 3);
    }
    for (int e = UNITS_OK; e <= UNITS_RANGE; e++)
        FUZZ_CHECK(units_strerror((enum units_err)e) != NULL);
    free(s);
    return 0;
}
