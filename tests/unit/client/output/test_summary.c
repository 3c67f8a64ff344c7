/* Unit tests for client/summary.c and client/report.c on synthetic runs: medians over
 * successful runs only, counts, comparison to the first server of each cell, and the
 * Markdown/CSV layouts. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "progress.h"
#include "report.h"
#include "result.h"
#include "summary.h"

#include "client/output/fixture_runs.h"

/* What report_write prints in format f (caller frees). */
static char *render(enum report_format f, const struct result_set *rs, const struct summary *s, unsigned runs)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    assert_non_null(fp);
    struct report_meta m = {.runs = runs};
    assert_int_equal(report_write(fp, f, rs, s, &m), 0);
    fclose(fp);
    return buf;
}

static void test_single_cell(void **state)
{
    (void)state;
    static const struct fixture_run rows[] = {
        {NULL, NULL, "OVH", 1, 722}, {NULL, NULL, "DT", 1, 404}, {NULL, NULL, "OVH", 1, 723},
        {NULL, NULL, "DT", 0, 9999}, {NULL, NULL, "OVH", 1, 597}, {NULL, NULL, "DT", 1, 476},
        {NULL, NULL, "OVH", 1, 726}, {NULL, NULL, "DT", 1, 392}, {NULL, NULL, "OVH", 1, 720},
        {NULL, NULL, "DT", 1, 452},
    };
    struct result_set rs;
    fixture_fill(&rs, rows, sizeof rows / sizeof rows[0]);
    struct summary s;
    assert_int_equal(summary_compute(&rs, NULL, 0, &s), 0);
    assert_int_equal(s.n, 2);
    assert_string_equal(s.rows[0].server, "OVH");
    assert_int_equal(s.rows[0].runs_ok, 5);
    assert_float_equal(s.rows[0].median_mbps, 722, 1e-9);
    assert_float_equal(s.rows[0].min_mbps, 597, 1e-9);
    assert_float_equal(s.rows[0].max_mbps, 726, 1e-9);
    /* Quartiles, R type 7: 597 720 722 723 726 -> 720 and 723. */
    assert_float_equal(s.rows[0].q1_mbps, 720, 1e-9);
    assert_float_equal(s.rows[0].q3_mbps, 723, 1e-9);
    assert_true(s.rows[0].is_reference && !s.rows[0].has_comparison);
    /* DT: the failed 9999 is excluded: median of 404 476 392 452 = 428. */
    assert_int_equal(s.rows[1].runs_ok, 4);
    assert_int_equal(s.rows[1].runs_failed, 1);
    assert_float_equal(s.rows[1].median_mbps, 428, 1e-9);
    assert_float_equal(s.rows[1].max_mbps, 476, 1e-9);
    assert_float_equal(s.rows[1].q1_mbps, 401, 1e-9); /* 392 404 452 476 */
    assert_float_equal(s.rows[1].q3_mbps, 458, 1e-9);
    assert_true(s.rows[1].has_comparison);
    assert_float_equal(s.rows[1].ratio, 428.0 / 722, 1e-12);
    assert_true(s.rows[1].ci_lo <= s.rows[1].ratio && s.rows[1].ratio <= s.rows[1].ci_hi);
    /* Every DT below every OVH, 5 vs 4, no ties: exact p = 2 / C(9,4) = 2/126. */
    assert_int_equal(s.rows[1].mw.method, STATS_MW_EXACT);
    assert_float_equal(s.rows[1].mw.p, 2.0 / 126, 1e-12);
    assert_float_equal(s.rows[1].median_total_mbps, 214, 1e-9);

    char *buf = render(REPORT_MARKDOWN, &rs, &s, 5);
    assert_non_null(strstr(buf, "| scenario | Srv OVH | Srv DT |\n|---|---|---|\n| measured | 722 | 428 |\n"));
    free(buf);
    buf = render(REPORT_CSV, &rs, &s, 5);
    assert_non_null(strstr(buf, "\n,,OVH,http://x/,5,0,722.000,597.000,726.000,361.000,0.300,,,,,,,unknown,5,\n"));
    assert_non_null(strstr(buf, "\n,,DT,http://x/,4,1,428.000,392.000,476.000,214.000,0.300,,0.592798,"));
    free(buf);
    summary_free(&s);
    result_set_clear(&rs);
}

/* 3 + 3 runs cannot reach p < 0.05 whatever they measure (smallest exact p: 0.1): the
 * table says "n too small", the JSON keeps p_value and flags it; 4 + 4 prints p. */
static void test_p_n_too_small(void **state)
{
    (void)state;
    static const struct fixture_run rows[] = {
        {NULL, NULL, "A", 1, 900}, {NULL, NULL, "B", 1, 100}, {NULL, NULL, "A", 1, 910}, {NULL, NULL, "B", 1, 110},
        {NULL, NULL, "A", 1, 920}, {NULL, NULL, "B", 1, 120}, {NULL, NULL, "A", 1, 930}, {NULL, NULL, "B", 1, 130},
    };
    for (size_t n = 6; n <= 8; n += 2) {
        struct result_set rs;
        fixture_fill(&rs, rows, n);
        struct summary s;
        assert_int_equal(summary_compute(&rs, NULL, 0, &s), 0);
        char *buf = render(REPORT_TABLE, &rs, &s, (unsigned)n / 2);
        char *js = render(REPORT_JSON, &rs, &s, (unsigned)n / 2);
        if (n == 6) {
            assert_non_null(strstr(buf, "n too small"));
            assert_null(strstr(buf, "(exact)"));
            assert_non_null(strstr(js, "\"p_value\": 0.1"));
            assert_non_null(strstr(js, "\"p_n_too_small\": true"));
        } else {
            assert_null(strstr(buf, "n too small"));
            assert_non_null(strstr(buf, "0.0286 (exact)"));
            assert_non_null(strstr(js, "\"p_n_too_small\": false"));
        }
        free(buf);
        free(js);
        summary_free(&s);
        result_set_clear(&rs);
    }
}

/* limited_by of a row: the verdict of most runs; a tie goes to the median run's verdict;
 * the prediction is the median of the runs'; every format carries it. */
static void test_verdict_majority(void **state)
{
    (void)state;
    static const struct fixture_run rows[] = {
        {NULL, NULL, "OVH", 1, 236}, {NULL, NULL, "DT", 1, 400}, {NULL, NULL, "OVH", 1, 231},
        {NULL, NULL, "DT", 1, 410},  {NULL, NULL, "OVH", 1, 900}, {NULL, NULL, "DT", 1, 420},
        {NULL, NULL, "OVH", 1, 229}, {NULL, NULL, "DT", 1, 430},  {NULL, NULL, "OVH", 1, 910},
    };
    static const char *const verdicts[] = {"sender_buffer", "network", "sender_buffer", "sender_cpu", "network",
                                           "sender_cpu", "sender_buffer", "network", "network"};
    static const double predicted[] = {236, 950, 236, 950, 950, 950, 236, 950, 950};
    struct result_set rs;
    fixture_fill(&rs, rows, sizeof rows / sizeof rows[0]);
    for (size_t i = 0; i < rs.n; i++) {
        rs.runs[i]->limited_by = verdicts[i];
        rs.runs[i]->limited_by_evidence = strdup(verdicts[i]);
        rs.runs[i]->predicted_mbps = predicted[i];
    }
    struct summary s;
    assert_int_equal(summary_compute(&rs, NULL, 0, &s), 0);
    /* OVH: sender_buffer 3, network 2. Predictions 236 236 950 236 950: median 236. */
    assert_string_equal(s.rows[0].limited_by, "sender_buffer");
    assert_int_equal(s.rows[0].limited_by_runs, 3);
    assert_false(s.rows[0].limited_by_tie);
    assert_float_equal(s.rows[0].median_predicted_mbps, 236, 1e-9);
    /* DT: network 400 430, sender_cpu 410 420: a tie. Median 415; the run closest to it
     * (the first of 410 and 420 at 5 from it) is 410, sender_cpu: the tie goes there. */
    assert_string_equal(s.rows[1].limited_by, "sender_cpu");
    assert_int_equal(s.rows[1].limited_by_runs, 2);
    assert_true(s.rows[1].limited_by_tie);
    char *buf = render(REPORT_MARKDOWN, &rs, &s, 5);
    assert_non_null(strstr(buf, "- OVH limited by sender_buffer (3 of 5 runs), predicted 236 Mb/s: sender_buffer\n"));
    assert_non_null(strstr(buf, "- DT limited by sender_cpu (2 of 4 runs, a tie: the median run's), predicted 950 Mb/s"));
    free(buf);
    buf = render(REPORT_TABLE, &rs, &s, 5);
    assert_non_null(strstr(buf, "\n  OVH limited by sender_buffer (3 of 5 runs), predicted 236 Mb/s: sender_buffer\n"));
    free(buf);
    buf = render(REPORT_CSV, &rs, &s, 5);
    assert_non_null(strstr(buf, ",limited_by,limited_by_runs,predicted_mbps\n"));
    assert_non_null(strstr(buf, ",sender_buffer,3,236.000\n"));
    assert_non_null(strstr(buf, ",sender_cpu,2,950.000\n"));
    free(buf);
    json_t *j = summary_to_json(&s);
    assert_string_equal(json_string_value(json_object_get(json_array_get(j, 1), "limited_by")), "sender_cpu");
    assert_true(json_is_true(json_object_get(json_array_get(j, 1), "limited_by_tie")));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(json_array_get(j, 0), "limited_by_runs"), "network")), 2);
    json_decref(j);
    summary_free(&s);
    result_set_clear(&rs);
}

static void test_cells(void **state)
{
    (void)state;
    static const struct fixture_run rows[] = {
        {"natural", "on", "A", 1, 700}, {"natural", "on", "B", 1, 400},
        {"natural", "off", "A", 1, 690}, {"natural", "off", "B", 1, 380},
        {"+10 ms", "on", "A", 1, 600}, {"+10 ms", "on", "B", 1, 370},
        {"+10 ms", "off", "A", 1, 590}, {"+10 ms", "off", "B", 0, 0},
    };
    struct result_set rs;
    fixture_fill(&rs, rows, sizeof rows / sizeof rows[0]);
    struct summary s;
    assert_int_equal(summary_compute(&rs, NULL, 0, &s), 0);
    assert_int_equal(s.n, 8);
    int refs = 0;
    for (size_t k = 0; k < s.n; k++)
        refs += s.rows[k].is_reference;
    assert_int_equal(refs, 4); /* one reference per cell */
    assert_true(isnan(s.rows[7].median_mbps));
    assert_false(s.rows[7].has_comparison);
    char *buf = render(REPORT_MARKDOWN, &rs, &s, 1);
    /* The seed's layout: rows = latency, columns = server x variant (variant-major). */
    assert_non_null(strstr(buf, "| scenario | Srv A (on) | Srv B (on) | Srv A (off) | Srv B (off) |\n"
                                "|---|---|---|---|---|\n"
                                "| natural | 700 | 400 | 690 | 380 |\n"
                                "| +10 ms | 600 | 370 | 590 | - |\n"));
    free(buf);
    summary_free(&s);
    result_set_clear(&rs);
}

/* n = 1 on a side: the ratio stays, the CI is not a number (JSON null with the reason,
 * "[n/a]" with a footnote in the table); a slow start missing in every run is explained. */
static void test_figures_without_meaning(void **state)
{
    (void)state;
    static const struct fixture_run rows[] = {
        {NULL, NULL, "A", 1, 100},
        {NULL, NULL, "B", 1, 50},
    };
    struct result_set rs;
    fixture_fill(&rs, rows, 2);
    for (size_t i = 0; i < rs.n; i++)
        rs.runs[i]->slow_start_s = -1; /* as dl_perform leaves a run under 10 intervals */
    struct summary s;
    assert_int_equal(summary_compute(&rs, NULL, 0, &s), 0);
    assert_true(s.rows[1].has_comparison);
    assert_true(fabs(s.rows[1].ratio - 0.5) < 1e-12);
    assert_false(isfinite(s.rows[1].ci_lo));
    assert_false(isfinite(s.rows[0].median_slow_start_s));
    char notes[512];
    assert_string_equal(summary_footnotes(&s, notes, sizeof notes), SUMMARY_CI_NOTE "\n" SUMMARY_SLOW_START_NOTE);
    json_t *j = summary_to_json(&s);
    json_t *b = json_array_get(j, 1);
    assert_true(json_is_null(json_object_get(b, "ratio_ci95")));
    assert_string_equal(json_string_value(json_object_get(b, "ratio_ci95_note")), SUMMARY_CI_NOTE);
    json_decref(j);
    char *t = render(REPORT_TABLE, &rs, &s, 1);
    assert_non_null(strstr(t, "0.500 [n/a]"));
    assert_non_null(strstr(t, "\n" SUMMARY_CI_NOTE "\n"));
    assert_non_null(strstr(t, "\n" SUMMARY_SLOW_START_NOTE "\n"));
    free(t);
    summary_free(&s);
    result_set_clear(&rs);
    /* Two runs a side: a CI, no footnote for it. */
    static const struct fixture_run rows2[] = {
        {NULL, NULL, "A", 1, 100}, {NULL, NULL, "B", 1, 50}, {NULL, NULL, "A", 1, 110}, {NULL, NULL, "B", 1, 55},
    };
    fixture_fill(&rs, rows2, 4);
    assert_int_equal(summary_compute(&rs, NULL, 0, &s), 0);
    assert_true(isfinite(s.rows[1].ci_lo) && isfinite(s.rows[1].ci_hi));
    assert_string_equal(summary_footnotes(&s, notes, sizeof notes), "");
    summary_free(&s);
    result_set_clear(&rs);
}

static void test_progress_line(void **state)
{
    (void)state;
    static const struct {
        uint64_t bytes;
        int64_t expected;
        double rate;
        const char *cell;
        const char *want;
    } rows[] = {
        {536870912, 1073741824, 722, NULL, "[run 3/10] OVH  50% 722 Mb/s  ETA 6s"},
        {0, 1073741824, 0, NULL, "[run 3/10] OVH   0% 0.00 Mb/s"},
        {10485760, -1, 9.5, NULL, "[run 3/10] OVH   10.0 MiB 9.50 Mb/s"},
        {1073741824, 1073741824, 900, "+10 ms", "[run 3/10] +10 ms OVH 100% 900 Mb/s"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *fp = open_memstream(&buf, &len);
        assert_non_null(fp);
        struct progress pr = {.out = fp, .enabled = 1, .step = 3, .total = 10, .server = "OVH", .cell = rows[i].cell};
        struct dl_progress p = {.bytes = rows[i].bytes, .expected = rows[i].expected, .rate_mbps = rows[i].rate};
        progress_draw(&p, &pr);
        assert_true(pr.drawn);
        progress_clear(&pr);
        fclose(fp);
        char want[300];
        snprintf(want, sizeof want, "\r\033[K%s\r\033[K", rows[i].want); /* drawn in place, then erased */
        assert_string_equal(buf, want);
        free(buf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_cell),
        cmocka_unit_test(test_p_n_too_small),
        cmocka_unit_test(test_verdict_majority),
        cmocka_unit_test(test_cells),
        cmocka_unit_test(test_progress_line),
        cmocka_unit_test(test_figures_without_meaning),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
