/* store-bench: the measuring half of bench/store.sh (docs/store.md "Costs").
 *
 *   store-bench insert SPEC RUN.json N   store the run N times the way debit does (one
 *                                        store_session_run each: record, offloads, one
 *                                        transaction) and print the cost per run in ms
 *   store-bench generate SPEC N V S      add N synthetic runs over V vantages x S servers
 *                                        (server factor 1 + 0.25 (s mod 4), vantage factor
 *                                        1 + 0.5 (v mod 3)), then ANALYZE
 *
 * Built by `make $(BUILD)/store-bench`; not installed. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "store.h"
#include "store_session.h"
#include "sys.h"

static int insert(const struct store_spec *spec, const char *runfile, long n)
{
    char err[1024];
    json_error_t je;
    json_t *run = json_load_file(runfile, 0, &je);
    if (!run) {
        fprintf(stderr, "store-bench: %s: %s\n", runfile, je.text);
        return 1;
    }
    char *argv[] = {"store-bench"};
    struct store_session *s = store_session_begin(spec, "bench", 1, argv, err, sizeof err);
    if (!s || *store_session_error(s)) {
        fprintf(stderr, "store-bench: %s\n", s ? store_session_error(s) : err);
        return 1;
    }
    double *ms = calloc((size_t)n, sizeof *ms);
    for (long i = 0; ms && i < n; i++) {
        double t0 = sys_mono_s();
        if (store_session_run(s, run, err, sizeof err) != STORE_PUT_STORED) {
            fprintf(stderr, "store-bench: run %ld: %s %s\n", i, err, store_session_error(s));
            return 1;
        }
        ms[i] = (sys_mono_s() - t0) * 1000;
    }
    printf("store a run: n %ld, median %.3f ms, p90 %.3f ms, max %.3f ms\n", n, stats_median(ms, (size_t)n),
           stats_quantile(ms, (size_t)n, 0.9), stats_max(ms, (size_t)n));
    free(ms);
    store_session_free(s);
    json_decref(run);
    return 0;
}

/* One statement for both engines: a recursive series, rows built from its counter. */
static int generate(const struct store_spec *spec, long n, long v, long srv)
{
    char err[1024], sql[2048];
    struct store *st = store_open(spec, err, sizeof err);
    if (!st) {
        fprintf(stderr, "store-bench: %s\n", err);
        return 1;
    }
    snprintf(sql, sizeof sql,
             "WITH RECURSIVE g(i) AS (SELECT CAST(0 AS BIGINT) UNION ALL SELECT i + 1 FROM g WHERE i < %ld) "
             "INSERT INTO runs (run_id, started_at, vantage, server, url, direction, streams, bytes, avg_mbps, ok,"
             " run) "
             "SELECT 'bench-%ld-' || i, 1790000000 + i * 0.5, 'v' || (i %% %ld), 's' || ((i / %ld) %% %ld), "
             "'http://bench/', 'download', 1, 1000000, "
             "100.0 * (1 + 0.5 * ((i %% %ld) %% 3)) * (1 + 0.25 * (((i / %ld) %% %ld) %% 4)) * "
             "(0.9 + ((i * 7919) %% 200) / 1000.0), 1, '{\"bench\": true}' FROM g",
             n - 1, (long)sys_wall_s(), v, v, srv, v, v, srv);
    double t0 = sys_mono_s();
    if (store_exec(st, sql, err, sizeof err) != 0 ||
        store_exec(st, store_kind(st) == STORE_PG ? "VACUUM ANALYZE runs" : "ANALYZE", err, sizeof err) != 0) {
        fprintf(stderr, "store-bench: %s\n", err);
        store_close(st);
        return 1;
    }
    printf("generated %ld runs (%ld vantages x %ld servers) in %.1f s\n", n, v, srv, sys_mono_s() - t0);
    store_close(st);
    return 0;
}

int main(int argc, char **argv)
{
    struct store_spec spec;
    char err[1024];
    if (argc < 3 || store_spec_parse(argv[2], &spec, err, sizeof err) != 0 || spec.kind == STORE_NONE) {
        fprintf(stderr, "usage: store-bench insert SPEC RUN.json N | generate SPEC N V S\n");
        return 2;
    }
    if (strcmp(argv[1], "insert") == 0 && argc == 5)
        return insert(&spec, argv[3], atol(argv[4]));
    if (strcmp(argv[1], "generate") == 0 && argc == 6)
        return generate(&spec, atol(argv[3]), atol(argv[4]), atol(argv[5]));
    fprintf(stderr, "usage: store-bench insert SPEC RUN.json N | generate SPEC N V S\n");
    return 2;
}
