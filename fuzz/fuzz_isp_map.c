/* libFuzzer harness for server/content/isp_map.c: an operator's speedtest.isp_map file
 * (read at start and at every reload: a bad line must be an error naming it, never a crash)
 * and the lookup of a client's address in it. Input: the map's text, then after the first
 * NUL (if any) an address to look up. Invariants: a map is either loaded or refused with
 * "NAME:" at the start of its error; a found entry has a non-empty ISP name. */
#include <stdint.h>
#include <string.h>

#include "fuzzlib.h"
#include "isp_map.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    if (!s)
        return 0;
    size_t len = strlen(s);
    const char *ip = len < size ? s + len + 1 : "198.51.100.7";
    char err[512] = "";
    struct isp_map *m = isp_map_parse(s, len, "fuzz.csv", err, sizeof err);
    if (!m) {
        FUZZ_CHECK(strncmp(err, "fuzz.csv", 8) == 0);
    } else {
        static const char *probes[] = {"127.0.0.1", "::1", "::ffff:10.0.0.1", "2001:db8::1", "0.0.0.0"};
        for (size_t i = 0; i <= sizeof probes / sizeof probes[0]; i++) {
            const struct isp_entry *e = isp_map_lookup(m, i ? probes[i - 1] : ip);
            FUZZ_CHECK(!e || (e->isp && e->isp[0] && e->country && e->city));
        }
        isp_map_free(m);
    }
    free(s);
    return 0;
}
