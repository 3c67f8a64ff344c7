/* libFuzzer harness for the client's parser of response headers
 * (client/measure/cb_header.c: status line, Content-Length, every X-Debit-* header),
 * driven as libcurl drives it: one call per header line, the input cut at each '\n'
 * (a hostile server chooses every byte). Invariants: the status and reason stay sane;
 * every X-Debit-* value kept is a JSON string (the JSON output must stay valid) under a
 * canonical-case name; and no X-Debit-* header of the latest response whose name is an
 * HTTP token is lost (values that are not UTF-8 used to be dropped silently: now kept
 * escaped, tests/unit/client/measure/test_cb_header.c). */
#include <ctype.h>
#include <jansson.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "fuzzlib.h"
#include "xfer.h"

static int tchar(unsigned char c)
{
    return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* The name cb_header files a header line under (its canonical case, cut at 127 bytes as
 * there), or 0 when the line is no X-Debit-* header with a token name. */
static int debit_key(const char *p, size_t n, char *key, size_t keylen)
{
    while (n > 0 && (p[n - 1] == '\r' || p[n - 1] == '\n' || p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    const char *colon = memchr(p, ':', n);
    if (!colon)
        return 0;
    size_t klen = (size_t)(colon - p);
    if (klen <= 8 || strncasecmp(p, "X-Debit-", 8) != 0)
        return 0;
    size_t kl = klen < keylen - 1 ? klen : keylen - 1;
    for (size_t i = 0; i < kl; i++) {
        if (!tchar((unsigned char)p[i]))
            return 0;
        int first = i == 0 || p[i - 1] == '-';
        key[i] = (char)(first ? toupper((unsigned char)p[i]) : tolower((unsigned char)p[i]));
    }
    key[kl] = 0;
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct dl_options opt;
    dl_options_defaults(&opt);
    struct xfer x = {.opt = &opt, .expected = -1, .sock = CURL_SOCKET_BAD};
    x.debit_headers = json_object();
    if (!x.debit_headers)
        return 0;
    size_t off = 0, block = 0; /* where the latest response's header lines start */
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
        size_t t = n;
        while (t > 0 && (line[t - 1] == '\r' || line[t - 1] == '\n' || line[t - 1] == ' ' || line[t - 1] == '\t'))
            t--;
        if (t > 5 && strncmp(line, "HTTP/", 5) == 0)
            block = off;
        free(line);
        off += n;
    }
    for (size_t o = block; o < size;) {
        const uint8_t *nl = memchr(data + o, '\n', size - o);
        size_t n = nl ? (size_t)(nl - (data + o)) + 1 : size - o;
        char key[128];
        if (debit_key((const char *)data + o, n, key, sizeof key))
            FUZZ_CHECK(json_object_get(x.debit_headers, key) != NULL);
        o += n;
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
