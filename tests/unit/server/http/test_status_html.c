/* Unit tests for server/http/http_status_html.c: /status's HTML from a JSON object, with
 * every key and value escaped, scalars written as the JSON writes them, sections as
 * headings, arrays as lists; the exact page of a small object. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "http_status_html.h"

static char *page(const char *json)
{
    json_error_t e;
    json_t *j = json_loads(json, JSON_PRESERVE_ORDER, &e);
    if (!j)
        fail_msg("bad test JSON: %s", e.text);
    size_t len = 0;
    char *p = http_status_html(j, &len);
    json_decref(j);
    assert_non_null(p);
    assert_int_equal(strlen(p), len);
    return p;
}

static void test_escaped(void **state)
{
    (void)state;
    char *p = page("{\"version\": \"1<2>&\\\"'\", \"k<b>\": \"<script>alert(1)</script>\","
                   " \"sec\": {\"a&b\": [\"x'y\", {\"q\": \"\\\"\"}], \"empty\": [], \"n\": null, \"t\": true,"
                   " \"r\": 0.25, \"i\": -3}}");
    static const char *const want[] = {
        "<title>debitd 1&lt;2&gt;&amp;&quot;&#39; status</title>",
        "<tr><th>k&lt;b&gt;</th><td>&lt;script&gt;alert(1)&lt;/script&gt;</td></tr>",
        "<h2 id=\"sec\">sec</h2>",
        "<tr><th>a&amp;b</th><td><ol start=\"0\">\n<li>x&#39;y</li>\n<li><table>\n<tr><th>q</th><td>&quot;</td></tr>",
        "<tr><th>empty</th><td><code>[]</code></td></tr>",
        "<tr><th>n</th><td><code>null</code></td></tr>",
        "<tr><th>t</th><td><code>true</code></td></tr>",
        "<tr><th>r</th><td><code>0.25</code></td></tr>",
        "<tr><th>i</th><td><code>-3</code></td></tr>",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (!strstr(p, want[i]))
            fail_msg("missing: %s\n--- in:\n%s", want[i], p);
    assert_null(strstr(p, "<script>"));
    assert_null(strstr(p, "<b>"));
    free(p);
}

static void test_exact(void **state)
{
    (void)state;
    char *p = page("{\"version\": \"9\", \"pid\": 7, \"counters\": {\"requests\": 2}}");
    const char *body = strstr(p, "<body>");
    assert_non_null(body);
    assert_string_equal(body, "<body>\n<h1>debitd 9 status</h1>\n"
                              "<p><a href=\"/\">index</a> &mdash; the same as JSON: "
                              "<code>curl -H 'Accept: application/json' URL</code></p>\n"
                              "<h2 id=\"server\">server</h2>\n<table>\n"
                              "<tr><th>version</th><td>9</td></tr>\n"
                              "<tr><th>pid</th><td><code>7</code></td></tr>\n"
                              "</table>\n"
                              "<h2 id=\"counters\">counters</h2>\n<table>\n"
                              "<tr><th>requests</th><td><code>2</code></td></tr>\n"
                              "</table>\n</body></html>\n");
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_escaped),
        cmocka_unit_test(test_exact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
