/* http_strict: the request checks debitd adds to libmicrohttpd's own (docs/http-strictness.md).
 * Pure functions over a request's raw target and its header list, as libmicrohttpd 0.9.75
 * hands them over; no libmicrohttpd type here, so that unit tests and the fuzzer call them
 * directly. Each check answers which status a strict server sends (400) and why. */
#ifndef DEBITD_HTTP_STRICT_H
#define DEBITD_HTTP_STRICT_H

#include <stddef.h>

enum http_strict_result {
    HTTP_STRICT_OK = 0,
    HTTP_STRICT_BAD_REQUEST, /* 400 */
};

/* One request header as received: NAME is everything before the colon (libmicrohttpd keeps
 * whitespace there), VALUE without its leading whitespace. Neither needs a terminating NUL. */
struct http_strict_field {
    const char *name;
    size_t name_len;
    const char *value;
    size_t value_len;
};

/* The request target TARGET (LEN bytes) as the client sent it, before percent-decoding: a
 * space or control byte, a malformed %-escape, an encoded NUL anywhere, an encoded '/' or
 * control character in the path (before '?') are HTTP_STRICT_BAD_REQUEST. TARGET NULL or
 * empty is OK here (libmicrohttpd and the router answer it). Fills err on a refusal. */
enum http_strict_result http_strict_check_target(const char *target, size_t len, char *err, size_t errlen);

/* The N header fields F of one request. HTTP11 is nonzero for HTTP/1.1 (and later 1.x).
 * BAD_REQUEST: a name that is empty or not an RFC 9110 token (whitespace before the colon),
 * a control character in a value, Content-Length repeated or not digits, Content-Length
 * with Transfer-Encoding, Transfer-Encoding repeated or in HTTP/1.0, Host missing (HTTP/1.1),
 * repeated or malformed, a Transfer-Encoding that is not exactly "chunked" (ASCII case
 * ignored, as libmicrohttpd compares it): another coding (gzip, "gzip, chunked",
 * identity), trailing blanks, a parameter, chunked twice, not a list of tokens. The
 * first problem found wins, in that order of kinds; err says which. */
enum http_strict_result http_strict_check_fields(const struct http_strict_field *f, size_t n, int http11,
                                                 char *err, size_t errlen);

/* The HTTP status of a result: 0 (OK) or 400. */
unsigned http_strict_status(enum http_strict_result r);

#endif
