/* Unit tests for client/output/plot.c's helpers: each latency panel's own scale, the
 * measurement line of the titles, and the runs counted in a key title. (The pictures
 * themselves: tests/e2e/client_plots.sh.) */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "plot_int.h"
#include "result.h"
#include "summary.h"

struct row {
    const char *scenario, *server;
    int ok;
    double mbps, body_s;
    uint64_t bytes;
};

/* One run per row; a successful one gets a flat series of body_s / 0.1 samples at mbps. */
static void fill(struct result_set *rs, const struct row *rows, size_t n)
{
    result_set_init(rs);
    for (size_t i = 0; i < n; i++) {
        struct run_result *r = result_new();
        r->server = strdup(rows[i].server);
        r->url = strdup("http://x/");
        r->scenario = rows[i].scenario ? strdup(rows[i].scenario) : NULL;
        r->ok = rows[i].ok;
        r->run = 1 + (unsigned)(i / 2);
        r->started_at = 1796526000.0 + (double)i; /* 2026-12-06 03:00:00 UTC */
        if (r->ok) {
            r->avg_mbps = rows[i].mbps;
            r->body_s = rows[i].body_s;
            r->bytes = rows[i].bytes;
            r->content_length = (int64_t)rows[i].bytes;
            r->series_interval_s = 0.1;
            r->nseries = (size_t)(rows[i].body_s / 0.1 + 0.5);
            r->series = calloc(r->nseries, sizeof *r->series);
            for (size_t k = 0; k < r->nseries; k++)
                r->series[k] = rows[i].mbps;
        } else {
            result_fail(r, RESULT_ERR_HTTP, "HTTP 500");
        }
        assert_int_equal(result_set_add(rs, r), 0);
    }
}

static void test_panels_own_scale(void **state)
{
    (void)state;
    static const struct row rows[] = {
        {"0ms", "A", 1, 900, 1.0, 1000000},   {"0ms", "B", 1, 600, 1.0, 1000000},
        {"100ms", "A", 1, 90, 10.0, 1000000}, {"100ms", "B", 1, 60, 8.0, 1000000},
    };
    struct result_set rs;
    fill(&rs, rows, 4);
    struct summary s;
    assert_int_equal(summary_compute(&rs, NULL, 0, &s), 0);
    double t, y;
    plot_panel_ranges(&rs, &s, "0ms", &t, &y);
    assert_float_equal(t, 1.0, 1e-9);
    assert_float_equal(y, 900, 1e-9);
    plot_panel_ranges(&rs, &s, "100ms", &t, &y);
    assert_float_equal(t, 10.0, 1e-9);
    assert_float_equal(y, 90, 1e-9);
    plot_panel_ranges(&rs, &s, "none", &t, &y);
    assert_true(t == 0 && y == 0);
    summary_free(&s);
    result_set_clear(&rs);
}

static void test_titles(void **state)
{
    (void)state;
    static const struct row rows[] = {
        {NULL, "A", 1, 900, 1.0, 10485760}, {NULL, "C", 0, 0, 0, 0}, {NULL, "A", 1, 900, 1.0, 10485760},
        {NULL, "C", 0, 0, 0, 0},           {NULL, "A", 1, 900, 1.0, 10485760}, {NULL, "C", 0, 0, 0, 0},
    };
    struct result_set rs;
    fill(&rs, rows, 6);
    char line[160];
    plot_measurement_line(&rs, line, sizeof line);
    assert_string_equal(line, "3 runs per server, file 10 MiB, 2026-12-06 03:00 UTC");
    struct summary s;
    assert_int_equal(summary_compute(&rs, NULL, 0, &s), 0);
    struct plot_axes a;
    plot_axes_init(&a, &s);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    plot_key_title_runs(f, &s, &a, 0, 0);
    fputc(' ', f);
    plot_key_title_runs(f, &s, &a, 0, 1);
    fclose(f);
    assert_string_equal(buf, "\"A\" \"C (0/3 ok)\"");
    free(buf);
    summary_free(&s);
    result_set_clear(&rs);
    /* nothing received: said so */
    fill(&rs, rows + 1, 1);
    plot_measurement_line(&rs, line, sizeof line);
    assert_string_equal(line, "1 run per server, no file received, 2026-12-06 03:00 UTC");
    result_set_clear(&rs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_panels_own_scale),
        cmocka_unit_test(test_titles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
