/* libFuzzer harness for server/content/speedtest.c: a speed-test request's query string (as
 * a LibreSpeed or Cloudflare client, or anybody, sends it) and its path. Input: the query,
 * then after the first NUL (if any) a path. Invariants: garbage's length is whole MiB from 1
 * to 1024 and within the cap (1 MiB at least); a refused bytes= is 0; the endpoint and note
 * are known values. */
#include <stdint.h>
#include <string.h>

#include "fuzzlib.h"
#include "speedtest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    if (!s)
        return 0;
    struct speedtest_query q;
    speedtest_query_parse(s, &q);
    FUZZ_CHECK(q.has_bytes || !q.bytes_ok);
    FUZZ_CHECK(q.bytes_ok || q.bytes == 0);
    FUZZ_CHECK(q.has_cksize || q.cksize == 0);
    const uint64_t caps[] = {0, 1, SPEEDTEST_MIB, 100ULL * SPEEDTEST_MIB + 3, 1ULL << 30, UINT64_MAX};
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
        uint64_t n = speedtest_garbage_bytes(&q, caps[i]);
        FUZZ_CHECK(n % SPEEDTEST_MIB == 0 && n >= SPEEDTEST_MIB && n <= (uint64_t)SPEEDTEST_CKSIZE_MAX * SPEEDTEST_MIB);
        FUZZ_CHECK(n <= caps[i] || n == SPEEDTEST_MIB);
    }
    size_t len = strlen(s);
    const char *path = len < size ? s + len + 1 : s;
    enum speedtest_endpoint e = speedtest_endpoint(path);
    FUZZ_CHECK(e >= SPEEDTEST_NONE && e < SPEEDTEST_N_ENDPOINTS);
    FUZZ_CHECK(e == SPEEDTEST_NONE || speedtest_endpoint_name(e)[0]);
    const char *note = speedtest_ip_note(path);
    FUZZ_CHECK(note[0] == 0 || strncmp(note, " - ", 3) == 0);
    free(s);
    return 0;
}
