/* fixture_runs: synthetic runs for the client/output tests (summary, report, plot), one
 * result per row of a table.
 *
 * Header only (static inline), as tests/unit/testlib.h: the Makefile builds each
 * tests/unit/.../test_*.c into a binary of its own and compiles nothing else from this
 * folder. Include it after <cmocka.h>. */
#ifndef DEBIT_FIXTURE_RUNS_H
#define DEBIT_FIXTURE_RUNS_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "result.h"

struct fixture_run {
    const char *scenario, *variant, *server; /* NULL scenario, variant: none */
    int ok;
    double mbps; /* avg_mbps (total_mbps is half of it), failed runs too */
};

/* R received BYTES (its Content-Length too) in BODY_S seconds: a flat series of
 * BODY_S / 0.1 samples at its avg_mbps. */
static inline void fixture_body(struct run_result *r, double body_s, uint64_t bytes)
{
    r->body_s = body_s;
    r->bytes = bytes;
    r->content_length = (int64_t)bytes;
    r->series_interval_s = 0.1;
    r->nseries = (size_t)(body_s / 0.1 + 0.5);
    r->series = calloc(r->nseries ? r->nseries : 1, sizeof *r->series);
    assert_non_null(r->series);
    for (size_t k = 0; k < r->nseries; k++)
        r->series[k] = r->avg_mbps;
}

/* RS made anew from N ROWS: run 1, seq its row's index + 1, started at 2026-12-06
 * 03:00:00 UTC + the index in seconds, a slow start of 0.3 s; a failed one has an HTTP
 * error. */
static inline void fixture_fill(struct result_set *rs, const struct fixture_run *rows, size_t n)
{
    result_set_init(rs);
    for (size_t i = 0; i < n; i++) {
        const struct fixture_run *w = &rows[i];
        struct run_result *r = result_new();
        assert_non_null(r);
        r->server = strdup(w->server);
        r->url = strdup("http://x/");
        r->scenario = w->scenario ? strdup(w->scenario) : NULL;
        r->variant = w->variant ? strdup(w->variant) : NULL;
        r->ok = w->ok;
        r->run = 1;
        r->seq = (unsigned)i + 1;
        r->started_at = 1796526000.0 + (double)i;
        r->avg_mbps = w->mbps;
        r->total_mbps = w->mbps / 2;
        r->slow_start_s = 0.3;
        if (!r->ok)
            result_fail(r, RESULT_ERR_HTTP, "HTTP 500");
        assert_int_equal(result_set_add(rs, r), 0);
    }
}

#endif
