/* Unit tests for server/http/http_www.c's table of embedded files (tools/embed): each file of
 * server/http/www/ is in the binary byte for byte, NUL-terminated (the template is scanned as
 * a string), with the Content-Type of its extension; www_find finds exactly those names. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_www.h"

/* The source tree: tests/run exports DEBIT_TOP; by hand, run from the top. */
static char *slurp(const char *name, size_t *len)
{
    const char *top = getenv("DEBIT_TOP");
    char path[1024];
    snprintf(path, sizeof path, "%s/server/http/www/%s", top ? top : ".", name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    char *buf = malloc(1 << 22);
    assert_non_null(buf);
    *len = fread(buf, 1, 1 << 22, f);
    fclose(f);
    return buf;
}

static void test_files(void **state)
{
    (void)state;
    static const struct {
        const char *name, *type;
    } want[] = {
        {"index.html", "text/html; charset=utf-8"},
        {"speed.css", "text/css; charset=utf-8"},
        {"speed.js", "text/javascript; charset=utf-8"},
    };
    assert_int_equal(www_n_assets, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const struct www_asset *a = www_find(want[i].name);
        assert_non_null(a);
        assert_string_equal(a->type, want[i].type);
        size_t len;
        char *src = slurp(want[i].name, &len);
        assert_int_equal(a->len, len);
        assert_memory_equal(a->data, src, len);
        assert_int_equal(a->data[a->len], 0);
        free(src);
    }
}

static void test_find(void **state)
{
    (void)state;
    static const char *const none[] = {"", "speed", "speed.js.map", "../speed.js", "SPEED.JS", "index.htm"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        assert_null(www_find(none[i]));
}

static void test_template_markers(void **state)
{
    (void)state;
    const struct www_asset *t = www_find("index.html");
    assert_non_null(t);
    /* what http_front_page fills: each marker once */
    static const char *const marks[] = {"<!--debit:config-->", "<!--debit:files-->", "<!--debit:version-->"};
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
        const char *p = strstr((const char *)t->data, marks[i]);
        assert_non_null(p);
        assert_null(strstr(p + 1, marks[i]));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_files),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_template_markers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
