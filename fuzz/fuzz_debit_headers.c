/* libFuzzer harness for the client's parser of response headers
 * (client/measure/cb_header.c: status line, Content-Length, every X-Debit-* header),
 * driven as libcurl drives it: one call per header line, the input cut at each '\n'
 * (a hostile server chooses every byte). Invariants: the status and reason stay sane, and
 * every X-Debit-* value kept is a JSON string (valid UTF-8: the JSON output is exact),
 * under a canonical-case name. */
#include <ctype.h>
#include <jansson.h>
#include <stdint.h>
#include <string.h>

#include "fuzzlib.h"
#include "xfer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dl_options opt;
    dl_options_defaults(&opt);
    struct xfer x = {.opt = &opt, .expected = -1, .sock = CURL_SOCKET_BAD};
    x.debit_headers = json_object();
    if (!x.debit_headers)
        return 0;
    size_t off = 0;
    while (off < size) {
        const uint8_t *nl = memchr(data + off, '\n', size - off);
        size_t n = nl ? (size_t)(nl - (data + off)) + 1 : size - off;
        /* libcurl hands over a buffer it owns, not NUL-terminated: so do we */
        char *line = malloc(n ? n : 1);
        if (!line)
            break;
        memcpy(line, data + off, n);
        size_t got = cb_header(line, 1, n, &x);
        FUZZ_CHECK(got == n);
        free(line);
        off += n;
    }
    FUZZ_CHECK(memchr(x.reason, 0, sizeof x.reason) != NULL);
    FUZZ_CHECK(x.expected >= -1);
    const char *key;
    json_t *v;
    json_object_foreach(x.debit_headers, key, v) {
        FUZZ_CHECK(json_is_string(v));
        FUZZ_CHECK(strncmp(key, "X-Debit-", 8) == 0);
        for (const char *p = key; *p; p++)
            FUZZ_CHECK(!islower((unsigned char)*p) || (p > key && p[-1] != '-'));
        char *dump = json_dumps(v, JSON_ENCODE_ANY);
        FUZZ_CHECK(dump != NULL);
        free(dump);
    }
    json_decref(x.debit_headers);
    return 0;
}
