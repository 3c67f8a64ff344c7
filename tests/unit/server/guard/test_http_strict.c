/* Unit tests for server/guard/http_strict.c: the raw target and header-list checks, table-driven.
 * Header lists are written as "Name: value" lines and split the way libmicrohttpd 0.9.75
 * does (the name keeps whitespace before the colon, the value loses its leading blanks). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "http_strict.h"

static const char *result_name(enum http_strict_result r)
{
    static const char *const n[] = {"OK", "BAD_REQUEST"};
    return n[r];
}

struct target_row {
    const char *target;
    size_t len; /* 0: strlen */
    enum http_strict_result want;
    const char *why; /* substring of err, or NULL */
};

static void test_target(void **state)
{
    (void)state;
    static const struct target_row rows[] = {
        {"/", 0, HTTP_STRICT_OK, NULL},
        {"/files/1GiB.dat", 0, HTTP_STRICT_OK, NULL},
        {"/files/a%20b.dat", 0, HTTP_STRICT_OK, NULL},      /* an encoded space is a name */
        {"/files/a%26b.bin", 0, HTTP_STRICT_OK, NULL},
        {"/files/%C3%A9t%c3%a9", 0, HTTP_STRICT_OK, NULL},  /* UTF-8, either case of hex */
        {"/files/\xc3\xa9t\xc3\xa9", 0, HTTP_STRICT_OK, NULL}, /* raw UTF-8 */
        {"/x?a=%2F&b=%0a", 0, HTTP_STRICT_OK, NULL},        /* query: only NUL matters */
        {"/x?a=b?c", 0, HTTP_STRICT_OK, NULL},
        {"", 0, HTTP_STRICT_OK, NULL},                      /* the router answers */
        {"*", 0, HTTP_STRICT_OK, NULL},
        {"/a b", 0, HTTP_STRICT_BAD_REQUEST, "space or control"},
        {"/a\tb", 0, HTTP_STRICT_BAD_REQUEST, "space or control"},
        {"/a\x01", 0, HTTP_STRICT_BAD_REQUEST, "space or control"},
        {"/a\x7f", 0, HTTP_STRICT_BAD_REQUEST, "space or control"},
        {"/a\0b", 4, HTTP_STRICT_BAD_REQUEST, "space or control"}, /* a raw NUL, by length */
        {"/a?b=\x1b", 0, HTTP_STRICT_BAD_REQUEST, "space or control"},
        {"/a%00b", 0, HTTP_STRICT_BAD_REQUEST, "%00"},
        {"/a?x=%00", 0, HTTP_STRICT_BAD_REQUEST, "%00"},
        {"/files%2Fa", 0, HTTP_STRICT_BAD_REQUEST, "%2F"},
        {"/files%2fa", 0, HTTP_STRICT_BAD_REQUEST, "%2F"},
        {"/a%0d%0a", 0, HTTP_STRICT_BAD_REQUEST, "encoded control"},
        {"/a%7F", 0, HTTP_STRICT_BAD_REQUEST, "encoded control"},
        {"/a%1f", 0, HTTP_STRICT_BAD_REQUEST, "encoded control"},
        {"/a%zz", 0, HTTP_STRICT_BAD_REQUEST, "malformed"},
        {"/a%4", 0, HTTP_STRICT_BAD_REQUEST, "malformed"},  /* truncated at the end */
        {"/a%", 0, HTTP_STRICT_BAD_REQUEST, "malformed"},
        {"/a%%41", 0, HTTP_STRICT_BAD_REQUEST, "malformed"},
        {"/a%2", 0, HTTP_STRICT_BAD_REQUEST, "malformed"},
        {"/a%41", 3, HTTP_STRICT_BAD_REQUEST, "malformed"}, /* the escape past LEN is not read */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char err[128] = "";
        size_t len = rows[i].len ? rows[i].len : strlen(rows[i].target);
        enum http_strict_result r = http_strict_check_target(rows[i].target, len, err, sizeof err);
        if (r != rows[i].want || (rows[i].why && !strstr(err, rows[i].why)))
            fail_msg("row %zu \"%s\": got %s \"%s\", want %s \"%s\"", i, rows[i].target, result_name(r), err,
                     result_name(rows[i].want), rows[i].why ? rows[i].why : "");
        if (r == HTTP_STRICT_OK)
            assert_string_equal(err, ""); /* untouched */
    }
    assert_int_equal(http_strict_check_target(NULL, 0, NULL, 0), HTTP_STRICT_OK);
}

/* LINES ("Name: value\n"...) into F; returns how many. */
static size_t split(const char *lines, struct http_strict_field *f, size_t max)
{
    size_t n = 0;
    const char *p = lines;
    while (*p && n < max) {
        const char *eol = strchr(p, '\n');
        const char *end = eol ? eol : p + strlen(p);
        const char *colon = memchr(p, ':', (size_t)(end - p));
        assert_non_null(colon);
        const char *v = colon + 1;
        while (v < end && (*v == ' ' || *v == '\t'))
            v++;
        f[n++] = (struct http_strict_field){p, (size_t)(colon - p), v, (size_t)(end - v)};
        p = eol ? eol + 1 : end;
    }
    return n;
}

struct fields_row {
    const char *lines;
    int http11;
    enum http_strict_result want;
    const char *why;
};

static void test_fields(void **state)
{
    (void)state;
    static const struct fields_row rows[] = {
        {"Host: example.org", 1, HTTP_STRICT_OK, NULL},
        {"host: example.org:8080\nAccept: */*", 1, HTTP_STRICT_OK, NULL},
        {"Host: [::1]:8080", 1, HTTP_STRICT_OK, NULL},
        {"Host: 127.0.0.1", 1, HTTP_STRICT_OK, NULL},
        {"", 0, HTTP_STRICT_OK, NULL},                                   /* HTTP/1.0: Host optional */
        {"Host: ", 0, HTTP_STRICT_OK, NULL},                             /* empty Host in 1.0 */
        {"Host: t\nContent-Length: 5", 1, HTTP_STRICT_OK, NULL},
        {"Host: t\nContent-Length: 0 ", 1, HTTP_STRICT_OK, NULL},        /* trailing OWS */
        {"Host: t\nTransfer-Encoding: chunked", 1, HTTP_STRICT_OK, NULL},
        {"Host: t\ntransfer-encoding: CHUNKED", 1, HTTP_STRICT_OK, NULL},
        {"Host: t\nX-Tab: a\tb", 1, HTTP_STRICT_OK, NULL},              /* HTAB is allowed in values */
        {"Host: t\nX-8bit: \xc3\xa9", 1, HTTP_STRICT_OK, NULL},
        {"Host: t\nX-~!#$%&'*+-.^_`|: 1", 1, HTTP_STRICT_OK, NULL},     /* every tchar */
        {"Host: t\nX-Empty:", 1, HTTP_STRICT_OK, NULL},
        /* framing */
        {"Host: t\nContent-Length: 5\nContent-Length: 10", 1, HTTP_STRICT_BAD_REQUEST, "Content-Length repeated"},
        {"Host: t\nContent-Length: 5\ncontent-length: 5", 1, HTTP_STRICT_BAD_REQUEST, "Content-Length repeated"},
        {"Host: t\nContent-Length: 5, 5", 1, HTTP_STRICT_BAD_REQUEST, "not a decimal"},
        {"Host: t\nContent-Length: -1", 1, HTTP_STRICT_BAD_REQUEST, "not a decimal"},
        {"Host: t\nContent-Length: +5", 1, HTTP_STRICT_BAD_REQUEST, "not a decimal"},
        {"Host: t\nContent-Length:", 1, HTTP_STRICT_BAD_REQUEST, "not a decimal"},
        {"Host: t\nContent-Length: 12345678901234567890", 1, HTTP_STRICT_BAD_REQUEST, "not a decimal"},
        {"Host: t\nContent-Length: 5\nTransfer-Encoding: chunked", 1, HTTP_STRICT_BAD_REQUEST, "both"},
        {"Host: t\nTransfer-Encoding: chunked\nContent-Length: 5", 1, HTTP_STRICT_BAD_REQUEST, "both"},
        {"Host: t\nTransfer-Encoding: chunked\nTransfer-Encoding: chunked", 1, HTTP_STRICT_BAD_REQUEST,
         "Transfer-Encoding repeated"},
        {"Transfer-Encoding: chunked", 0, HTTP_STRICT_BAD_REQUEST, "HTTP/1.0"},
        {"Host: t\nTransfer-Encoding: gzip", 1, HTTP_STRICT_BAD_REQUEST, "other than chunked"},
        {"Host: t\nTransfer-Encoding: gzip, chunked", 1, HTTP_STRICT_BAD_REQUEST, "other than chunked"},
        {"Host: t\nTransfer-Encoding: xchunked", 1, HTTP_STRICT_BAD_REQUEST, "other than chunked"},
        {"Host: t\nTransfer-Encoding: gzip;q=1", 1, HTTP_STRICT_BAD_REQUEST, "other than chunked"},
        {"Host: t\nTransfer-Encoding: GZIP ,chunked", 1, HTTP_STRICT_BAD_REQUEST, "other than chunked"},
        /* issue 31: every value libmicrohttpd would not take as exactly chunked is a 400 */
        {"Host: t\nTransfer-Encoding: identity", 1, HTTP_STRICT_BAD_REQUEST, "other than chunked"},
        {"Host: t\nTransfer-Encoding: chunked, gzip", 1, HTTP_STRICT_BAD_REQUEST, "other than chunked"},
        {"Host: t\nTransfer-Encoding: deflate", 1, HTTP_STRICT_BAD_REQUEST, "other than chunked"},
        {"Host: t\nTransfer-Encoding: chunke", 1, HTTP_STRICT_BAD_REQUEST, "other than chunked"},
        {"Host: t\nTransfer-Encoding: chunkedx", 1, HTTP_STRICT_BAD_REQUEST, "other than chunked"},
        {"Host: t\nTransfer-Encoding: cHuNkEd", 1, HTTP_STRICT_OK, NULL},
        /* case is ASCII only, as MHD_str_equal_caseless_: no Kelvin sign or dotless i */
        {"Host: t\nTransfer-Encoding: chunked\xe2\x84\xaa", 1, HTTP_STRICT_BAD_REQUEST, "malformed coding"},
        /* chunked as libmicrohttpd 0.9.75 does not decode it: exactly "chunked" or refused */
        {"Host: t\nTransfer-Encoding: chunked ", 1, HTTP_STRICT_BAD_REQUEST, "blanks"},
        {"Host: t\nTransfer-Encoding: chunked\t", 1, HTTP_STRICT_BAD_REQUEST, "blanks"},
        {"Host: t\nTransfer-Encoding: Chunked  \t ", 1, HTTP_STRICT_BAD_REQUEST, "blanks"},
        {"Host: t\nTransfer-Encoding: chunked;ext=1", 1, HTTP_STRICT_BAD_REQUEST, "parameter"},
        {"Host: t\nTransfer-Encoding: chunked ; x", 1, HTTP_STRICT_BAD_REQUEST, "parameter"},
        {"Host: t\nTransfer-Encoding: chunked, chunked", 1, HTTP_STRICT_BAD_REQUEST, "more than once"},
        {"Host: t\nTransfer-Encoding: chunked,", 1, HTTP_STRICT_BAD_REQUEST, "empty coding"},
        {"Host: t\nTransfer-Encoding: , chunked", 1, HTTP_STRICT_BAD_REQUEST, "empty coding"},
        {"Host: t\nTransfer-Encoding:", 1, HTTP_STRICT_BAD_REQUEST, "empty coding"},
        {"Host: t\nTransfer-Encoding:  ", 1, HTTP_STRICT_BAD_REQUEST, "empty coding"},
        {"Host: t\nTransfer-Encoding: chun\"ked", 1, HTTP_STRICT_BAD_REQUEST, "malformed coding"},
        {"Host: t\nTransfer-Encoding: chunked x", 1, HTTP_STRICT_BAD_REQUEST, "malformed coding"},
        {"Host: t\nTransfer-Encoding: chunked\xc2\xa0", 1, HTTP_STRICT_BAD_REQUEST, "malformed coding"},
        /* names */
        {"Host: t\nContent-Length : 5", 1, HTTP_STRICT_BAD_REQUEST, "whitespace"},
        {"Host: t\nContent-Length\t: 5", 1, HTTP_STRICT_BAD_REQUEST, "whitespace"},
        {"Host : t", 1, HTTP_STRICT_BAD_REQUEST, "whitespace"},
        {" Host: t", 1, HTTP_STRICT_BAD_REQUEST, "whitespace"},
        {"Host: t\nX(y): 1", 1, HTTP_STRICT_BAD_REQUEST, "invalid character"},
        {"Host: t\nX\"y: 1", 1, HTTP_STRICT_BAD_REQUEST, "invalid character"},
        {"Host: t\nX\x01y: 1", 1, HTTP_STRICT_BAD_REQUEST, "invalid character"},
        {"Host: t\n: 1", 1, HTTP_STRICT_BAD_REQUEST, "empty name"},
        /* values */
        {"Host: t\nX-A: a\x01z", 1, HTTP_STRICT_BAD_REQUEST, "control character"},
        {"Host: t\nX-A: a\rz", 1, HTTP_STRICT_BAD_REQUEST, "control character"},
        {"Host: t\nX-A: a\x7fz", 1, HTTP_STRICT_BAD_REQUEST, "control character"},
        /* Host */
        {"Accept: */*", 1, HTTP_STRICT_BAD_REQUEST, "without Host"},
        {"Host: a\nHost: a", 1, HTTP_STRICT_BAD_REQUEST, "Host repeated"},
        {"Host: a\nHost: b", 0, HTTP_STRICT_BAD_REQUEST, "Host repeated"},
        {"Host: ", 1, HTTP_STRICT_BAD_REQUEST, "malformed Host"},
        {"Host: a/b", 1, HTTP_STRICT_BAD_REQUEST, "malformed Host"},
        {"Host: a b", 1, HTTP_STRICT_BAD_REQUEST, "malformed Host"},
        {"Host: user@a", 1, HTTP_STRICT_BAD_REQUEST, "malformed Host"},
        {"Host: a\\b", 0, HTTP_STRICT_BAD_REQUEST, "malformed Host"},
        /* the order of kinds: a name problem before framing, framing before Host */
        {"X y: 1\nContent-Length: 1\nContent-Length: 2", 1, HTTP_STRICT_BAD_REQUEST, "whitespace"},
        {"Transfer-Encoding: gzip", 1, HTTP_STRICT_BAD_REQUEST, "other than chunked"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct http_strict_field f[16];
        size_t n = split(rows[i].lines, f, 16);
        char err[128] = "";
        enum http_strict_result r = http_strict_check_fields(f, n, rows[i].http11, err, sizeof err);
        if (r != rows[i].want || (rows[i].why && !strstr(err, rows[i].why)))
            fail_msg("row %zu \"%s\": got %s \"%s\", want %s \"%s\"", i, rows[i].lines, result_name(r), err,
                     result_name(rows[i].want), rows[i].why ? rows[i].why : "");
    }
    /* a NUL inside a value, which only a length can carry */
    struct http_strict_field nul[] = {{"Host", 4, "t", 1}, {"X-A", 3, "a\0b", 3}};
    assert_int_equal(http_strict_check_fields(nul, 2, 1, NULL, 0), HTTP_STRICT_BAD_REQUEST);
    assert_int_equal(http_strict_check_fields(NULL, 0, 0, NULL, 0), HTTP_STRICT_OK);
}

static void test_status(void **state)
{
    (void)state;
    assert_int_equal(http_strict_status(HTTP_STRICT_OK), 0);
    assert_int_equal(http_strict_status(HTTP_STRICT_BAD_REQUEST), 400);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_target),
        cmocka_unit_test(test_fields),
        cmocka_unit_test(test_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
