/* urlpath: the path a request names, as a file server maps it (nginx's
 * ngx_http_parse_complex_uri, RFC 3986 section 5.2.4): an absolute-form target's scheme and
 * authority dropped (RFC 9112 3.2.2: a server MUST accept that form), the fragment cut,
 * repeated slashes merged, "." and ".." segments resolved. Pure: no I/O, no allocation. */
#ifndef DEBIT_URLPATH_H
#define DEBIT_URLPATH_H

#include <stddef.h>

enum urlpath_result {
    URLPATH_OK = 0,
    URLPATH_ABOVE_ROOT, /* ".." past "/" (nginx: 400) */
    URLPATH_TOO_LONG,   /* the result does not fit OUT */
    URLPATH_NOT_PATH,   /* neither "/..." nor "http(s)://authority[/...]" (nginx: 400) */
};

/* Static text for a result. */
const char *urlpath_strerror(enum urlpath_result r);

/* The normalised path of the decoded target IN, into OUT (OUTLEN bytes, NUL-terminated);
 * OUT is left unspecified unless URLPATH_OK. "/f/./a//b/../c#x" -> "/f/a/c";
 * "http://host:8080/f" -> "/f"; "http://host" -> "/"; a trailing "/." or "/.." keeps its
 * slash ("/f/." -> "/f/"), as a folder. */
enum urlpath_result urlpath_normalize(const char *in, char *out, size_t outlen);

#endif
