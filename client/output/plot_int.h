/* plot_int: what plot.c (the main picture) and plot_rtt.c (throughput against RTT)
 * share: gnuplot quoting, the axes of a measurement, one look per (server, variant), and
 * the bounded gnuplot run. Internal to client/output. */
#ifndef DEBIT_PLOT_INT_H
#define DEBIT_PLOT_INT_H

#include <stdio.h>

#include "labels.h"
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
/* Run gnuplot on script, stderr into errfile, bounded in time. Returns the exit status,
 * -1 when it could not start, was killed by a signal or ran out of time. */
int plot_run_gnuplot(const char *script, const char *errfile);

#endif
