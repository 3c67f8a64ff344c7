/* libFuzzer harness for server/guard/http_strict.c (the strict-HTTP request checks).
 *
 * Input: byte 0 picks the HTTP version (bit 0: HTTP/1.1) and the error buffer's size (the
 * other bits, 0-127: truncation is exercised too); then the request target up to the first
 * '\n'; then header lines, one per '\n', split as libmicrohttpd 0.9.75 splits them (the name
 * is everything before the first ':', whitespace included; the value loses its leading
 * blanks); a line without ':' is skipped (libmicrohttpd refuses it before us). Bytes are
 * passed by length, NULs included.
 *
 * Checks: the results are in range, the status matches the result, err is a terminated
 * string that says why on every refusal, and OK leaves err alone. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http_strict.h"

#define MAX_FIELDS 64

static void check_err(enum http_strict_result r, const char *err, size_t errlen)
{
    if (r == HTTP_STRICT_OK) {
        if (strcmp(err, "untouched") != 0)
            abort();
        return;
    }
    if (errlen == 0)
        return;
    if (!memchr(err, 0, errlen) || (errlen > 1 && !err[0]))
        abort(); /* not terminated within errlen, or no reason given */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int http11 = data[0] & 1;
    size_t errlen = data[0] >> 1;
    const char *p = (const char *)data + 1, *end = (const char *)data + size;
    char err[128];

    const char *eol = memchr(p, '\n', (size_t)(end - p));
    const char *tend = eol ? eol : end;
    strcpy(err, "untouched");
    enum http_strict_result r = http_strict_check_target(p, (size_t)(tend - p), err, errlen);
    if (r != HTTP_STRICT_OK && r != HTTP_STRICT_BAD_REQUEST)
        abort();
    check_err(r, err, errlen);

    struct http_strict_field f[MAX_FIELDS];
    size_t n = 0;
    p = eol ? eol + 1 : end;
    while (p < end && n < MAX_FIELDS) {
        eol = memchr(p, '\n', (size_t)(end - p));
        const char *le = eol ? eol : end;
        const char *colon = memchr(p, ':', (size_t)(le - p));
        if (colon) {
            const char *v = colon + 1;
            while (v < le && (*v == ' ' || *v == '\t'))
                v++;
            f[n++] = (struct http_strict_field){p, (size_t)(colon - p), v, (size_t)(le - v)};
        }
        p = eol ? eol + 1 : end;
    }
    strcpy(err, "untouched");
    r = http_strict_check_fields(f, n, http11, err, errlen);
    unsigned status = http_strict_status(r);
    if (!(r == HTTP_STRICT_OK && status == 0) && !(r == HTTP_STRICT_BAD_REQUEST && status == 400))
        abort();
    /* accepted: any Transfer-Encoding is exactly "chunked" (ASCII case ignored), the one value
     * libmicrohttpd decodes (issue 31) */
    for (size_t i = 0; r == HTTP_STRICT_OK && i < n; i++)
        if (f[i].name_len == 17 && strncasecmp(f[i].name, "Transfer-Encoding", 17) == 0 &&
            !(f[i].value_len == 7 && strncasecmp(f[i].value, "chunked", 7) == 0))
            abort();
    check_err(r, err, errlen);
    /* a request whose only header is a good Host is fine whatever the version */
    struct http_strict_field host = {"Host", 4, "example.org", 11};
    if (http_strict_check_fields(&host, 1, http11, NULL, 0) != HTTP_STRICT_OK)
        abort();
    return 0;
}
