/* plot_int: what plot.c (the main picture) and plot_rtt.c (throughput against RTT)
 * share: gnuplot quoting, the axes of a measurement, one look per (server, variant). The
 * run itself: gnuplot_run.h. Internal to client/output. */
#ifndef DEBIT_PLOT_INT_H
#define DEBIT_PLOT_INT_H

#include <stdio.h>

#include "labels.h"
#include "result.h"
#include "summary.h"

/* The axes of the measurement: latency scenarios (panels of the time plot, groups of
 * bars), client variants and servers. */
struct plot_axes {
    const char *scn[LABELS_MAX], *var[LABELS_MAX], *srv[LABELS_MAX];
    size_t ns, nv, nr;
};

void plot_axes_init(struct plot_axes *a, const struct summary *s);
/* s as a gnuplot string literal: double quotes, backslash-escaped. */
void plot_qstr(FILE *fp, const char *s);
/* Server r's colour, and the dash type of client variant v of server r. */
const char *plot_colour(size_t r);
unsigned plot_dash(size_t v, size_t r);
/* "server[, variant]" as a gnuplot title. */
void plot_key_title(FILE *fp, const struct plot_axes *a, size_t v, size_t r);
/* How many runs of (variant v, server r) succeeded, of how many, over every cell. */
void plot_runs_ok(const struct summary *s, const struct plot_axes *a, size_t v, size_t r, unsigned *ok,
                  unsigned *all);
/* The key title of (v, r), with "(OK/ALL ok)" when a run failed: "C (0/3 ok)". */
void plot_key_title_runs(FILE *fp, const struct summary *s, const struct plot_axes *a, size_t v, size_t r);
/* What the pictures' titles say of the measurement: "3 runs per server, file 2.9 MiB,
 * 2026-12-06 02:16 UTC" (the largest run number, the successful runs' file sizes, the
 * first run's start). */
void plot_measurement_line(const struct result_set *rs, char *buf, size_t len);
/* The time and rate ranges of one latency panel (scenario, NULL outside a scenario):
 * each panel on its own scale. 0 when nothing is drawn there. */
void plot_panel_ranges(const struct result_set *rs, const struct summary *s, const char *scenario, double *tmax,
                       double *ymax);

#endif
