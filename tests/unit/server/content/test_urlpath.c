/* Unit tests for server/content/urlpath.c: a request target's path as nginx maps it (absolute
 * form, fragments, repeated slashes, dot segments), table-driven. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "urlpath.h"

static void test_normalize(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        enum urlpath_result want;
        const char *out;
    } rows[] = {
        {"/", URLPATH_OK, "/"},
        {"/f/a.dat", URLPATH_OK, "/f/a.dat"},
        {"/f/", URLPATH_OK, "/f/"},
        {"/f/a.dat/", URLPATH_OK, "/f/a.dat/"}, /* a file with a slash stays one: 404 */
        {"//f//a.dat", URLPATH_OK, "/f/a.dat"},
        {"/f/./a.dat", URLPATH_OK, "/f/a.dat"},
        {"/f/../f/a.dat", URLPATH_OK, "/f/a.dat"},
        {"/f/x/y/../../a.dat", URLPATH_OK, "/f/a.dat"},
        {"/f/.", URLPATH_OK, "/f/"},
        {"/f/..", URLPATH_OK, "/"},
        {"/.", URLPATH_OK, "/"},
        {"/f/.a/..b/a.dat", URLPATH_OK, "/f/.a/..b/a.dat"}, /* only whole segments */
        {"/f/a.dat#frag", URLPATH_OK, "/f/a.dat"},
        {"/f/#", URLPATH_OK, "/f/"},
        {"http://h/f/a.dat", URLPATH_OK, "/f/a.dat"},
        {"HTTP://h:8080/f/a.dat", URLPATH_OK, "/f/a.dat"},
        {"https://h/f/a.dat", URLPATH_OK, "/f/a.dat"},
        {"http://h", URLPATH_OK, "/"},
        {"http://h#x", URLPATH_OK, "/"},
        {"http://h//f/../a", URLPATH_OK, "/a"},
        {"/..", URLPATH_ABOVE_ROOT, NULL},
        {"/../etc/passwd", URLPATH_ABOVE_ROOT, NULL},
        {"/f/../../a", URLPATH_ABOVE_ROOT, NULL},
        {"http://h/../a", URLPATH_ABOVE_ROOT, NULL},
        {"", URLPATH_NOT_PATH, NULL},
        {"f/a.dat", URLPATH_NOT_PATH, NULL},
        {"*", URLPATH_NOT_PATH, NULL},
        {"ftp://h/a", URLPATH_NOT_PATH, NULL},
        {"http:/h/a", URLPATH_NOT_PATH, NULL},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char out[64];
        enum urlpath_result r = urlpath_normalize(rows[i].in, out, sizeof out);
        if (r != rows[i].want)
            fail_msg("\"%s\": %s, want %s", rows[i].in, urlpath_strerror(r), urlpath_strerror(rows[i].want));
        if (r == URLPATH_OK && strcmp(out, rows[i].out) != 0)
            fail_msg("\"%s\": \"%s\", want \"%s\"", rows[i].in, out, rows[i].out);
    }
}

static void test_bounds(void **state)
{
    (void)state;
    char out[8];
    assert_int_equal(urlpath_normalize("/abcdef", out, sizeof out), URLPATH_OK); /* 7 + NUL */
    assert_string_equal(out, "/abcdef");
    assert_int_equal(urlpath_normalize("/abcdefg", out, sizeof out), URLPATH_TOO_LONG);
    assert_int_equal(urlpath_normalize("/abc/def", out, sizeof out), URLPATH_TOO_LONG);
    assert_int_equal(urlpath_normalize("/a/../abcdef", out, sizeof out), URLPATH_OK);
    assert_string_equal(out, "/abcdef");
    assert_int_equal(urlpath_normalize("/", out, 1), URLPATH_TOO_LONG);
    assert_int_equal(urlpath_normalize(NULL, out, sizeof out), URLPATH_TOO_LONG);
    assert_string_equal(urlpath_strerror(URLPATH_ABOVE_ROOT), "\"..\" above the root");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normalize),
        cmocka_unit_test(test_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
