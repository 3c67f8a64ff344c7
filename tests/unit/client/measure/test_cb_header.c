/* Unit tests for client/measure/cb_header.c: header blocks as libcurl hands them (one call
 * per line), and what the client keeps: status, reason, Content-Length, X-Debit-* (as the
 * JSON server_config). Table-driven; the hostile rows are what fuzz/fuzz_debit_headers.c
 * checks at scale (values that are not UTF-8 were dropped before: now kept escaped). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "array.h"
#include "xfer.h"

struct row {
    const char *name;
    const char *block; /* lines separated by '\n' (each handed over with its "\r\n") */
    long status;
    const char *reason;
    long long expected;
    const char *headers; /* json_dumps(JSON_SORT_KEYS | JSON_COMPACT) of debit_headers */
};

static const struct row rows[] = {
    {"debitd", "HTTP/1.1 200 OK\nContent-Length: 1048576\nX-Debit-Offload: tso=on gso=on gro=on\nX-Debit-Transfer: 6b907336-1\n",
     200, "OK", 1048576, "{\"X-Debit-Offload\":\"tso=on gso=on gro=on\",\"X-Debit-Transfer\":\"6b907336-1\"}"},
    {"canonical case, white space trimmed", "HTTP/1.1 206 Partial Content\nx-DEBIT-kernel: \t 6.1 \t\n", 206,
     "Partial Content", -1, "{\"X-Debit-Kernel\":\"6.1\"}"},
    {"a redirect's headers are forgotten", "HTTP/1.1 302 Found\nX-Debit-Transfer: a-1\nContent-Length: 5\n\nHTTP/1.1 200 OK\nX-Debit-Tcp: cc=bbr\n",
     200, "OK", -1, "{\"X-Debit-Tcp\":\"cc=bbr\"}"},
    {"no reason phrase", "HTTP/1.1 204\n", 204, "", -1, "{}"},
    {"bad Content-Length ignored", "HTTP/1.1 200 OK\nContent-Length: 12x\n", 200, "OK", -1, "{}"},
    {"negative Content-Length ignored", "HTTP/1.1 200 OK\nContent-Length: -5\n", 200, "OK", -1, "{}"},
    {"X-Debit- alone is no header of ours", "HTTP/1.1 200 OK\nX-Debit-: x\nX-Debitx: y\n", 200, "OK", -1, "{}"},
    /* hostile: control characters are kept exactly (JSON escapes them) */
    {"ESC and BEL in the reason and a value", "HTTP/1.1 500 \x1b[31mBAD\x07\nX-Debit-Tcp: a\x1b]0;t\x07\n", 500,
     "\x1b[31mBAD\x07", -1, "{\"X-Debit-Tcp\":\"a\\u001B]0;t\\u0007\"}"},
    {"a CR inside a value", "HTTP/1.1 200 OK\nX-Debit-Tcp: a\rb\n", 200, "OK", -1, "{\"X-Debit-Tcp\":\"a\\rb\"}"},
    /* hostile: not UTF-8 cannot be a JSON string: kept as its escaped text, not dropped */
    {"a value that is not UTF-8", "HTTP/1.1 200 OK\nX-Debit-Offload: tso=\x9b\xff\n", 200, "OK", -1,
     "{\"X-Debit-Offload\":\"tso=\\\\x9b\\\\xff\"}"},
    {"a reason that is not UTF-8", "HTTP/1.1 404 caf\xe9\n", 404, "caf\\xe9", -1, "{}"},
    {"a long reason is cut, still a C string", "HTTP/1.1 200 "
     "RRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRR\n",
     200, "RRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRRR",
     -1, "{}"},
};

static void feed(struct xfer *x, const char *block)
{
    const char *p = block;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        char *line = malloc(n + 2);
        assert_non_null(line);
        memcpy(line, p, n);
        memcpy(line + n, "\r\n", 2);
        assert_int_equal(cb_header(line, 1, n + 2, x), n + 2);
        free(line);
        p += n + (nl ? 1 : 0);
    }
}

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        struct dl_options opt;
        dl_options_defaults(&opt);
        struct xfer x = {.opt = &opt, .expected = -1, .sock = CURL_SOCKET_BAD};
        x.debit_headers = json_object();
        assert_non_null(x.debit_headers);
        feed(&x, rows[i].block);
        char *got = json_dumps(x.debit_headers, JSON_SORT_KEYS | JSON_COMPACT);
        assert_non_null(got);
        if (x.status != rows[i].status || strcmp(x.reason, rows[i].reason) != 0 || x.expected != rows[i].expected ||
            strcmp(got, rows[i].headers) != 0)
            fail_msg("%s: got %ld \"%s\" %lld %s, want %ld \"%s\" %lld %s", rows[i].name, x.status, x.reason,
                     (long long)x.expected, got, rows[i].status, rows[i].reason, rows[i].expected, rows[i].headers);
        free(got);
        json_decref(x.debit_headers);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
    };
    return cmocka_run_group_tests_name("cb_header", tests, NULL, NULL);
}
