/* Unit tests for server/observe/metrics.c: the per-file rows and the exact text exposition it
 * renders from them, struct counters (counters.h) and a view. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "metrics.h"

static char *render_with(const struct metrics *m, const struct counters *c, const struct metrics_view *v)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    assert_int_equal(metrics_render(m, c, v, f), 0);
    fclose(f);
    return buf;
}

static char *render(const struct metrics *m, const struct metrics_view *v)
{
    static const struct counters zero;
    return render_with(m, &zero, v);
}

static void has(const char *text, const char *line)
{
    char want[512];
    snprintf(want, sizeof want, "\n%s\n", line);
    if (!strstr(text, want))
        fail_msg("missing line: %s\n--- in:\n%s", line, text);
}

static void test_render(void **state)
{
    (void)state;
    struct metrics *m = metrics_new(2, 2);
    assert_non_null(m);
    struct counters k = {.connections = 9, .active = 2, .uploads = 1, .upload_bytes = 4096, .quota_refused = 4};
    static const unsigned statuses[] = {200, 200, 206, 301, 404, 416, 503, 99, 600, 101};
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++)
        counters_response(&k, statuses[i]);
    static const struct {
        size_t listener, file;
        uint64_t bytes;
        double s;
    } xfers[] = {
        {0, 0, 1000, 0.005}, /* le 0.01 */
        {0, 0, 24, 0.01},    /* le 0.01: bounds are inclusive */
        {1, 1, 7, 3.0},      /* le 5 */
        {1, 0, 5, 1000.0},   /* +Inf only */
    };
    for (size_t i = 0; i < sizeof xfers / sizeof xfers[0]; i++) {
        metrics_file_bytes(m, xfers[i].listener, xfers[i].file, xfers[i].bytes);
        counters_transfer(&k, xfers[i].bytes, xfers[i].s);
    }
    metrics_file_bytes(m, 2, 0, 99); /* no such listener: ignored */
    metrics_file_bytes(m, 0, 2, 99); /* no such file */
    metrics_verdict(m, 0, VERDICT_RECEIVER_CPU);
    metrics_verdict(m, 0, VERDICT_RECEIVER_CPU);
    metrics_verdict(m, 1, VERDICT_SENDER_CPU);
    metrics_verdict(m, 2, VERDICT_NETWORK);                          /* no such listener: ignored */
    metrics_verdict(m, 0, (enum verdict_kind)(VERDICT_UNKNOWN + 1)); /* no such verdict */
    const char *listeners[] = {"127.0.0.1:80", "[::]:8080"};
    const char *files[] = {"/a.dat", "/q\"uo\\te"};
    const char *rnames[] = {"per_ip", "header_timeout"};
    const uint64_t refusals[] = {3, 0};
    const struct metrics_offload off[] = {{"lo", "tso", 1}, {"lo", "gro", 0}};
    const struct metrics_tcp tcp[] = {{"127.0.0.1:80", "bbr", "100Mbit", "auto", "off"}};
    const struct metrics_accept acc[] = {{"127.0.0.1:80", 40, 3, 2, 1, 5}, {"[::]:8080", 7, 0, 0, 0, 0}};
    struct metrics_view v = {
        .version = "1.2.3", .listeners = listeners, .n_listeners = 2, .files = files, .n_files = 2,
        .uptime_s = 12.5, .refusal_names = rnames, .refusals = refusals, .n_refusals = 2, .offload = off, .n_offload = 2,
        .tcp = tcp, .n_tcp = 1, .accept = acc, .n_accept = 2,
        .quota_entries = 8, .quota_capacity = 8, .quota_overflow = 11,
    };
    char *t = render_with(m, &k, &v);
    assert_true(strncmp(t, "# HELP debitd_build_info ", 25) == 0);
    static const char *const lines[] = {
        "# TYPE debitd_build_info gauge",
        "debitd_build_info{version=\"1.2.3\"} 1",
        "debitd_uptime_seconds 12.500",
        "# TYPE debitd_sent_bytes_total counter",
        "debitd_sent_bytes_total{file=\"/a.dat\",listener=\"127.0.0.1:80\"} 1024",
        "# TYPE debitd_transfers_total counter",
        "debitd_transfers_total{listener=\"127.0.0.1:80\",limited_by=\"receiver_cpu\"} 2",
        "debitd_transfers_total{listener=\"127.0.0.1:80\",limited_by=\"network\"} 0",
        "debitd_transfers_total{listener=\"127.0.0.1:80\",limited_by=\"unknown\"} 0",
        "debitd_transfers_total{listener=\"[::]:8080\",limited_by=\"sender_cpu\"} 1",
        "debitd_transfers_total{listener=\"[::]:8080\",limited_by=\"receiver_cpu\"} 0",
        "debitd_sent_bytes_total{file=\"/q\\\"uo\\\\te\",listener=\"127.0.0.1:80\"} 0",
        "debitd_sent_bytes_total{file=\"/a.dat\",listener=\"[::]:8080\"} 5",
        "debitd_sent_bytes_total{file=\"/q\\\"uo\\\\te\",listener=\"[::]:8080\"} 7",
        "debitd_responses_total{code=\"1xx\"} 1",
        "debitd_responses_total{code=\"2xx\"} 3",
        "debitd_responses_total{code=\"3xx\"} 1",
        "debitd_responses_total{code=\"4xx\"} 2",
        "debitd_responses_total{code=\"5xx\"} 1",
        "# TYPE debitd_transfer_duration_seconds histogram",
        "debitd_transfer_duration_seconds_bucket{le=\"0.01\"} 2",
        "debitd_transfer_duration_seconds_bucket{le=\"2.5\"} 2",
        "debitd_transfer_duration_seconds_bucket{le=\"5\"} 3",
        "debitd_transfer_duration_seconds_bucket{le=\"600\"} 3",
        "debitd_transfer_duration_seconds_bucket{le=\"+Inf\"} 4",
        "debitd_transfer_duration_seconds_sum 1003.015000000",
        "debitd_transfer_duration_seconds_count 4",
        "debitd_connections_total 9",
        "# TYPE debitd_active_connections gauge",
        "debitd_active_connections 2",
        "debitd_uploads_total 1",
        "debitd_upload_bytes_total 4096",
        "# TYPE debitd_quota_refused_total counter",
        "debitd_quota_refused_total 4",
        "# TYPE debitd_quota_entries gauge",
        "debitd_quota_entries 8",
        "# TYPE debitd_quota_table_size gauge",
        "debitd_quota_table_size 8",
        "# TYPE debitd_quota_overflow_total counter",
        "debitd_quota_overflow_total 11",
        "debitd_refusals_total{reason=\"per_ip\"} 3",
        "debitd_refusals_total{reason=\"header_timeout\"} 0",
        "debitd_offload_enabled{interface=\"lo\",feature=\"tso\"} 1",
        "debitd_offload_enabled{interface=\"lo\",feature=\"gro\"} 0",
        "debitd_tcp_profile_info{listener=\"127.0.0.1:80\",cc=\"bbr\",pacing=\"100Mbit\",sndbuf=\"auto\",notsent_lowat=\"off\"} 1",
        "# TYPE debitd_accepted_connections_total counter",
        "debitd_accepted_connections_total{listener=\"127.0.0.1:80\",result=\"handed\"} 40",
        "debitd_accepted_connections_total{listener=\"127.0.0.1:80\",result=\"refused\"} 3",
        "debitd_accepted_connections_total{listener=\"[::]:8080\",result=\"handed\"} 7",
        "debitd_accepted_connections_total{listener=\"[::]:8080\",result=\"refused\"} 0",
        "# TYPE debitd_listener_connections gauge",
        "debitd_listener_connections{listener=\"127.0.0.1:80\"} 5",
        "debitd_listener_connections{listener=\"[::]:8080\"} 0",
        "# TYPE debitd_accept_paused_total counter",
        "debitd_accept_paused_total{listener=\"127.0.0.1:80\"} 2",
        "# TYPE debitd_accept_errors_total counter",
        "debitd_accept_errors_total{listener=\"127.0.0.1:80\"} 1",
        "debitd_accept_errors_total{listener=\"[::]:8080\"} 0",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        has(t, lines[i]);
    /* every family has its HELP and TYPE once; the text ends with a newline */
    assert_int_equal(t[strlen(t) - 1], '\n');
    free(t);

    /* a view with fewer rows than the counters (a configuration that changed): no overrun */
    v.n_files = 1;
    v.n_listeners = 1;
    v.n_accept = 1;
    t = render_with(m, &k, &v);
    assert_null(strstr(t, "[::]:8080"));
    assert_null(strstr(t, "uo\\\\te"));
    free(t);
    metrics_free(m);
    metrics_free(NULL);
}

/* A reload's new rows take the old ones over by file: a file that stays keeps its bytes (at
 * its new index), a new one starts at 0. (Statuses and durations are in struct counters,
 * which a reload does not replace.) */
static void test_carry(void **state)
{
    (void)state;
    struct metrics *old = metrics_new(1, 2), *new = metrics_new(1, 3);
    assert_non_null(old);
    assert_non_null(new);
    metrics_file_bytes(old, 0, 0, 100); /* /a */
    metrics_file_bytes(old, 0, 1, 7);   /* /gone */
    metrics_verdict(old, 0, VERDICT_SENDER_BUFFER);
    const size_t from[] = {SIZE_MAX, 0, SIZE_MAX}; /* new: /new, /a, /c */
    metrics_carry(new, old, from);
    metrics_free(old);
    const char *listeners[] = {"127.0.0.1:80"};
    const char *files[] = {"/new", "/a", "/c"};
    struct metrics_view v = {.version = "x", .listeners = listeners, .n_listeners = 1, .files = files,
                             .n_files = 3, .config_generation = 4, .reloads_ok = 3, .reloads_refused = 1};
    char *t = render(new, &v);
    has(t, "debitd_sent_bytes_total{file=\"/a\",listener=\"127.0.0.1:80\"} 100");
    has(t, "debitd_sent_bytes_total{file=\"/new\",listener=\"127.0.0.1:80\"} 0");
    has(t, "debitd_sent_bytes_total{file=\"/c\",listener=\"127.0.0.1:80\"} 0");
    has(t, "debitd_config_generation 4");
    has(t, "debitd_transfers_total{listener=\"127.0.0.1:80\",limited_by=\"sender_buffer\"} 1"); /* carried */
    has(t, "debitd_config_reloads_total{result=\"ok\"} 3");
    has(t, "debitd_config_reloads_total{result=\"refused\"} 1");
    free(t);
    metrics_free(new);
}

static void test_empty(void **state)
{
    (void)state;
    struct metrics *m = metrics_new(0, 0);
    assert_non_null(m);
    struct metrics_view v = {.version = "x"};
    char *t = render(m, &v);
    has(t, "debitd_transfer_duration_seconds_count 0");
    has(t, "# TYPE debitd_sent_bytes_total counter");
    free(t);
    metrics_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_carry),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
