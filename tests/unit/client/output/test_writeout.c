/* Unit tests for client/output/writeout.c: parse errors name the bad part, escapes,
 * per-row vs once-only formats, "-" for unknown figures, %{json} as the JSON report. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "writeout.h"

/* Two servers: A (reference, 2 runs ok) and B (compared, 1 ok, 1 failed). */
static struct summary fake_summary(struct server_summary rows[2])
{
    memset(rows, 0, 2 * sizeof rows[0]);
    rows[0] = (struct server_summary){.server = "A", .url = "http://a/f", .runs_ok = 2, .median_mbps = 941.25,
                                      .min_mbps = 900, .max_mbps = 982.5, .q1_mbps = NAN, .q3_mbps = NAN,
                                      .median_total_mbps = 800, .median_slow_start_s = 0.3,
                                      .median_rtt_ms = NAN, .median_min_rtt_ms = NAN, .is_reference = 1,
                                      .limited_by = "network", .median_predicted_mbps = 957.5};
    rows[1] = (struct server_summary){.server = "B", .url = "http://b/f", .runs_ok = 1, .runs_failed = 1,
                                      .median_mbps = 470.5, .min_mbps = 470.5, .max_mbps = 470.5,
                                      .median_total_mbps = 400, .median_slow_start_s = NAN, .median_rtt_ms = 0.05,
                                      .has_comparison = 1, .ratio = 0.5, .ci_lo = 0.25, .ci_hi = 0.75,
                                      .median_predicted_mbps = NAN};
    rows[1].mw.p = 0.0079;
    rows[1].mw.method = STATS_MW_EXACT;
    return (struct summary){.rows = rows, .n = 2};
}

static char *render(const char *fmt, const struct summary *s, const struct report_meta *m)
{
    char err[1024] = "";
    struct writeout *w = writeout_parse(fmt, err, sizeof err);
    assert_non_null(w);
    char *buf = NULL;
    size_t len = 0;
    FILE *fp = open_memstream(&buf, &len);
    struct result_set rs;
    result_set_init(&rs);
    assert_int_equal(writeout_print(fp, w, &rs, s, m), 0);
    fclose(fp);
    writeout_free(w);
    return buf;
}

static void test_rows(void **state)
{
    (void)state;
    struct server_summary rows[2];
    struct summary s = fake_summary(rows);
    struct report_meta m = {.order = "alternate", .runs = 2};
    static const struct {
        const char *fmt, *want;
    } cases[] = {
        {"%{server} %{median_mbps}\\n", "A 941.250\nB 470.500\n"},
        {"%{server}:%{runs_ok}/%{runs_failed}\\t", "A:2/0\tB:1/1\t"},
        {"%{server} %{ratio} [%{ci95_low},%{ci95_high}] %{p_value} %{p_method}\\n",
         "A - [-,-] - -\nB 0.500000 [0.250000,0.750000] 0.0079 exact\n"},
        {"%{server} %{median_rtt_ms} %{median_slow_start_s} %{q1_mbps}\\n", "A - 0.300 -\nB 0.050 - 0.000\n"},
        {"%{scenario}/%{variant} %{url}\\n", "-/- http://a/f\n-/- http://b/f\n"},
        {"%{server} %{limited_by} %{predicted_mbps}\\n", "A network 957.500\nB - -\n"},
        {"100%% %{server}\\\\\\r", "100% A\\\r100% B\\\r"},
        /* No per-row variable: once. */
        {"%{order} %{runs_per_server} %{seed} %{interrupted}\\n", "alternate 2 - false\n"},
        {"plain", "plain"},
        {"", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *got = render(cases[i].fmt, &s, &m);
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("format '%s': got '%s', want '%s'", cases[i].fmt, got, cases[i].want);
        free(got);
    }
}

static void test_json(void **state)
{
    (void)state;
    struct server_summary rows[2];
    struct summary s = fake_summary(rows);
    struct report_meta m = {.order = "random", .seed = 42, .seed_used = 1, .runs = 2};
    char *got = render("%{json}\\n", &s, &m);
    json_error_t je;
    json_t *o = json_loads(got, JSON_DISABLE_EOF_CHECK, &je);
    assert_non_null(o);
    assert_int_equal(json_integer_value(json_object_get(o, "seed")), 42);
    assert_int_equal(json_array_size(json_object_get(o, "summary")), 2);
    /* One line: compact JSON, then the format's \n. */
    assert_ptr_equal(strchr(got, '\n'), got + strlen(got) - 1);
    json_decref(o);
    free(got);
}

static void test_errors(void **state)
{
    (void)state;
    static const struct {
        const char *fmt, *want;
    } cases[] = {
        {"%{median}", "'%{median}': unknown variable (known: server url "},
        {"%{median_mbps", "'%{median_mbps': unterminated %{"},
        {"x\\q", "'\\q': unknown escape"},
        {"x\\", "'\\': unknown escape"},
        {"%{}", "'%{}': unknown variable"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[1024] = "";
        struct writeout *w = writeout_parse(cases[i].fmt, err, sizeof err);
        assert_null(w);
        if (strncmp(err, cases[i].want, strlen(cases[i].want)) != 0)
            fail_msg("format '%s': error '%s', want '%s...'", cases[i].fmt, err, cases[i].want);
    }
}

static void test_variables_listed(void **state)
{
    (void)state;
    size_t n = 0;
    for (const char *const *v = writeout_variables; *v; v++, n++) {
        char fmt[64], err[256];
        snprintf(fmt, sizeof fmt, "%%{%s}", *v);
        struct writeout *w = writeout_parse(fmt, err, sizeof err);
        assert_non_null(w);
        writeout_free(w);
    }
    assert_int_equal(n, 30);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_variables_listed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
