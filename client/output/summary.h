/* summary: per-server figures of a measurement, from its finished runs. Runs are grouped
 * by (scenario, variant, server) in order of first appearance; within a (scenario,
 * variant) cell, every server after the first is compared to the first: ratio of medians
 * with a seeded bootstrap percentile 95% CI and a two-sided Mann-Whitney U p-value, both
 * over the runs' wget-style averages (avg_mbps). Failed runs are counted, never averaged. */
#ifndef DEBIT_SUMMARY_H
#define DEBIT_SUMMARY_H

#include <jansson.h>
#include <stddef.h>

#include "plan.h"
#include "result.h"
#include "stats.h"
#include "verdict.h"

#define SUMMARY_BOOTSTRAP_RESAMPLES 10000
#define SUMMARY_BOOTSTRAP_SEED 1
#define SUMMARY_CI_LEVEL 0.95

struct server_summary {
    const char *server;   /* borrowed from the first run of the group */
    const char *url;
    const char *scenario; /* NULL outside a scenario */
    const char *variant;
    unsigned runs_ok, runs_failed;
    unsigned duration_short_runs; /* successful runs that ended with the file before --duration */
    double median_mbps, min_mbps, max_mbps; /* NAN when no run succeeded */
    double q1_mbps, q3_mbps; /* quartiles (stats_quantile: R type 7), the spread around the median */
    double median_total_mbps;
    double median_slow_start_s;
    double median_rtt_ms, median_min_rtt_ms;
    size_t median_run;      /* index in the result set of the run closest to the median, or SIZE_MAX */
    int is_reference;       /* first server of its cell */
    int has_comparison;     /* ratio, CI and p below are set */
    double ratio, ci_lo, ci_hi; /* ci NAN when either side has fewer than 2 runs */
    struct stats_mw mw;
    /* The verdict of most successful runs (verdict.h); a tie goes to the median run's
     * verdict when it is one of the tied, else to the first tied in verdict order
     * (network, receiver_window, sender_buffer, sender_cpu, congestion, unknown). NULL
     * without a successful run. */
    const char *limited_by;
    unsigned limited_by_runs;     /* runs with that verdict */
    int limited_by_tie;           /* another verdict had as many runs */
    size_t verdict_run;           /* the run with that verdict closest to the median (its evidence), or SIZE_MAX */
    unsigned verdict_runs[VERDICT_UNKNOWN + 1]; /* successful runs per verdict (enum verdict_kind) */
    double median_predicted_mbps; /* median of the runs' predicted_mbps (NAN: none) */
};

struct summary {
    struct server_summary *rows; /* owned */
    size_t n;
};

/* Compute the summary of rs (which must outlive it, as must `names`). The first `nnames`
 * rows are the servers `names` outside any scenario, in that order, even without a
 * finished run (an early Ctrl-C still lists every server); then the groups as they
 * appear in rs. Returns 0 or -1 (allocation). */
int summary_compute(const struct result_set *rs, const struct plan_server *names, size_t nnames, struct summary *out);
void summary_free(struct summary *s);

/* Why the figures a table shows as "-" or "n/a" are not numbers, for the rows of s: a
 * footnote per reason present, joined by "\n" into buf (empty when every figure is a
 * number). Returns buf. */
const char *summary_footnotes(const struct summary *s, char *buf, size_t len);

#define SUMMARY_CI_NOTE "n/a: no confidence interval from a single run on either side (n = 1)"
#define SUMMARY_SLOW_START_NOTE \
    "slow start -: no successful run had 10 series intervals (too short for a peak; see figures_note)"
#define SUMMARY_DURATION_NOTE \
    "(short): the file ended before --duration in some runs: those runs are shorter than asked " \
    "(duration_short), so the ratio compares unequal runs"

/* How a row's limited_by was chosen, for every output format. */
#define SUMMARY_VERDICT_NOTE \
    "the verdict of most successful runs, a tie going to the median run's; rules in docs/verdict.md"

/* One line describing the methods, for every output format: how an average is taken for
 * the directions present (DOWNLOADS, UPLOADS: whether any run was one; neither: as
 * downloads). A static string. */
const char *summary_method_note(int downloads, int uploads);

/* The summary rows as a JSON array (new reference). */
json_t *summary_to_json(const struct summary *s);

#endif
