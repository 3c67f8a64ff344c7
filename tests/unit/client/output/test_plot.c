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

#include "client/output/fixture_runs.h"

/* A run as the pictures read it: fixture_fill's row, its body (time, bytes) when it
 * succeeded, its run number. */
struct plot_row {
    struct fixture_run f;
    double body_s;
    uint64_t bytes;
    unsigned run;
};

static void fill(struct result_set *rs, const struct plot_row *rows, size_t n)
{
    struct fixture_run f[8];
    assert_true(n <= 8);
    for (size_t i = 0; i < n; i++)
        f[i] = rows[i].f;
    fixture_fill(rs, f, n);
    for (size_t i = 0; i < n; i++) {
        rs->runs[i]->run = rows[i].run;
        if (rows[i].f.ok)
            fixture_body(rs->runs[i], rows[i].body_s, rows[i].bytes);
    }
}

static void test_panels_own_scale(void **state)
{
    (void)state;
    static const struct plot_row rows[] = {
        {{"0ms", NULL, "A", 1, 900}, 1.0, 1000000, 1},   {{"0ms", NULL, "B", 1, 600}, 1.0, 1000000, 1},
        {{"100ms", NULL, "A", 1, 90}, 10.0, 1000000, 2}, {{"100ms", NULL, "B", 1, 60}, 8.0, 1000000, 2},
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
    static const struct plot_row rows[] = {
        {{NULL, NULL, "A", 1, 900}, 1.0, 10485760, 1}, {{NULL, NULL, "C", 0, 0}, 0, 0, 1},
        {{NULL, NULL, "A", 1, 900}, 1.0, 10485760, 2}, {{NULL, NULL, "C", 0, 0}, 0, 0, 2},
        {{NULL, NULL, "A", 1, 900}, 1.0, 10485760, 3}, {{NULL, NULL, "C", 0, 0}, 0, 0, 3},
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
