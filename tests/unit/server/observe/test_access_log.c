/* Unit tests for server/observe/access_log.c: the access-log line in both formats, table-driven:
 * each entry with its exact combined line and the JSON keys it must carry; escaping of
 * quotes, backslashes, control characters and invalid UTF-8 in the target and User-Agent
 * (a log line must never be split or unparseable, whatever a client sends). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "access_log.h"

/* 2000-10-10T13:55:36.250Z */
#define T0 971186136.25

static const struct {
    struct access_entry e;
    const char *combined;
    const char *json_target; /* "target" as the JSON line must decode it */
    const char *json_ua;     /* NULL: JSON null */
} cases[] = {
    {{T0, "127.0.0.1", 40000, "[::]:8080", "GET", "/p", "/p", "HTTP/1.1", 200, 2326, 0, 0.5, "UA", NULL, NULL, NULL},
     "127.0.0.1 - - [10/Oct/2000:13:55:36 +0000] \"GET /p HTTP/1.1\" 200 2326 \"-\" \"UA\"\n", "/p", "UA"},
    {{T0, "::1", 5, "l", "HEAD", "/a?b=1", "/a", "HTTP/1.0", 404, 0, 0, 0, NULL, "http://r/", NULL, NULL},
     "::1 - - [10/Oct/2000:13:55:36 +0000] \"HEAD /a?b=1 HTTP/1.0\" 404 0 \"http://r/\" \"-\"\n", "/a?b=1", NULL},
    /* a quote, a backslash and a control character: escaped, the line stays one line */
    {{T0, "10.0.0.1", 1, "l", "GET", "/x\"y\\z", "/x", "HTTP/1.1", 400, 12, 0, 0, "a\"b\nc", NULL, NULL, NULL},
     "10.0.0.1 - - [10/Oct/2000:13:55:36 +0000] \"GET /x\\x22y\\x5Cz HTTP/1.1\" 400 12 \"-\" \"a\\x22b\\x0Ac\"\n",
     "/x\"y\\z", "a\"b\nc"},
    /* UTF-8 kept in JSON, invalid bytes as \xHH; combined escapes every non-ASCII byte */
    {{T0, "10.0.0.1", 1, "l", "GET", "/\xc3\xa9\xff", "/", "HTTP/1.1", 413, 20, 5, 0, "\xc0\xaf", NULL, NULL, NULL},
     "10.0.0.1 - - [10/Oct/2000:13:55:36 +0000] \"GET /\\xC3\\xA9\\xFF HTTP/1.1\" 413 20 \"-\" \"\\xC0\\xAF\"\n",
     "/\xc3\xa9\\xFF", "\\xC0\\xAF"},
    /* no response was queued; nothing known of the request */
    {{T0, NULL, 0, NULL, NULL, NULL, NULL, NULL, 0, 0, 0, 0, NULL, NULL, NULL, NULL},
     "- - - [10/Oct/2000:13:55:36 +0000] \"- - -\" 000 0 \"-\" \"-\"\n", NULL, NULL},
};

static void test_combined(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *line = access_log_line(ACCESS_FORMAT_COMBINED, &cases[i].e);
        assert_non_null(line);
        assert_string_equal(line, cases[i].combined);
        free(line);
    }
}

static void check_str(json_t *o, const char *key, const char *want)
{
    json_t *v = json_object_get(o, key);
    if (!want) {
        assert_true(json_is_null(v));
        return;
    }
    assert_non_null(json_string_value(v));
    assert_string_equal(json_string_value(v), want);
}

static void test_json(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct access_entry *e = &cases[i].e;
        char *line = access_log_line(ACCESS_FORMAT_JSON, e);
        assert_non_null(line);
        size_t n = strlen(line);
        assert_true(n > 0 && line[n - 1] == '\n');
        assert_null(memchr(line, '\n', n - 1)); /* one line */
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        assert_non_null(o);
        check_str(o, "time", "2000-10-10T13:55:36.250Z");
        check_str(o, "target", cases[i].json_target);
        check_str(o, "user_agent", cases[i].json_ua);
        check_str(o, "method", e->method);
        check_str(o, "version", e->version);
        assert_int_equal(json_integer_value(json_object_get(o, "status")), e->status);
        assert_int_equal(json_integer_value(json_object_get(o, "bytes")), e->bytes);
        assert_int_equal(json_integer_value(json_object_get(o, "port")), e->port);
        assert_true(json_real_value(json_object_get(o, "duration_s")) == e->duration_s);
        assert_int_equal(json_object_get(o, "received") != NULL, e->received != 0);
        assert_int_equal(json_object_get(o, "id") != NULL, 0); /* no transfer: no ID */
        json_decref(o);
        free(line);
    }
}

/* "[ADDR]:PORT" for IPv6 in "remote", as the transfer records write it */
static void test_json_remote(void **state)
{
    (void)state;
    char *a = access_log_line(ACCESS_FORMAT_JSON, &cases[0].e), *b = access_log_line(ACCESS_FORMAT_JSON, &cases[1].e);
    json_t *ja = json_loads(a, 0, NULL), *jb = json_loads(b, 0, NULL);
    check_str(ja, "remote", "127.0.0.1:40000");
    check_str(jb, "remote", "[::1]:5");
    check_str(jb, "referer", "http://r/");
    assert_null(json_object_get(ja, "referer"));
    json_decref(ja);
    json_decref(jb);
    free(a);
    free(b);
}

/* a download: the transfer record's keys and figures stay (tests and tools read them), the
 * request's are added */
static void test_json_transfer(void **state)
{
    (void)state;
    json_t *t = json_pack("{s:s, s:s, s:s, s:i, s:I, s:f, s:s, s:{s:f}}", "id", "ab-1", "state", "done", "path",
                          "/f", "status", 206, "bytes", (json_int_t)1000, "duration_s", 2.0, "remote",
                          "127.0.0.1:9", "tcp", "rtt_ms", 0.5);
    struct access_entry e = {T0, "127.0.0.1", 9, "l", "GET", "/f", "/f", "HTTP/1.1", 206, 1000, 0, 2.5, "curl/7", NULL, t, NULL};
    char *line = access_log_line(ACCESS_FORMAT_JSON, &e);
    json_t *o = json_loads(line, 0, NULL);
    assert_non_null(o);
    check_str(o, "id", "ab-1");
    check_str(o, "state", "done");
    check_str(o, "user_agent", "curl/7");
    check_str(o, "method", "GET");
    assert_int_equal(json_integer_value(json_object_get(o, "status")), 206);
    assert_true(json_real_value(json_object_get(o, "duration_s")) == 2.0);
    assert_true(json_real_value(json_object_get(json_object_get(o, "tcp"), "rtt_ms")) == 0.5);
    assert_int_equal(json_object_size(t), 8); /* borrowed: left as it was */
    json_decref(o);
    free(line);
    json_decref(t);
}

static void test_format_names(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int ok;
        enum access_format want;
    } t[] = {{"json", 1, ACCESS_FORMAT_JSON}, {"combined", 1, ACCESS_FORMAT_COMBINED}, {"JSON", 0, 0},
             {"", 0, 0}, {NULL, 0, 0}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        enum access_format f = ACCESS_FORMAT_JSON;
        char err[128] = "";
        assert_int_equal(access_log_parse_format(t[i].name, &f, err, sizeof err), t[i].ok ? 0 : -1);
        if (t[i].ok) {
            assert_int_equal(f, t[i].want);
            assert_string_equal(access_log_format_name(f), t[i].name);
        } else {
            assert_non_null(strstr(err, "expected json or combined"));
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_combined),     cmocka_unit_test(test_json),          cmocka_unit_test(test_json_remote),
        cmocka_unit_test(test_json_transfer), cmocka_unit_test(test_format_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
