/* plot: `--plot FILE.png|FILE.svg` — the measurement as a picture, rendered by gnuplot
 * (Debian: gnuplot-nox), 1200x1000. Top: grouped bars of the median throughput per
 * latency scenario (groups) and server x client variant (bars), the value on each bar,
 * min-max whiskers, like the table. Below: throughput over time (100 ms samples) of each
 * group's median run, where slow start shows, one panel per latency scenario with common
 * scales. One look per (server, variant) in both: colour = server (colour-blind-safe
 * palette), fill (solid, hatched, ...) of a bar and dash type of a line = client variant;
 * one shared key under the panels. */
#ifndef DEBIT_PLOT_H
#define DEBIT_PLOT_H

#include <stddef.h>

#include "result.h"
#include "summary.h"

/* Is gnuplot there? Returns 0, or -1 with a message saying how to install it. */
int plot_check(char *err, size_t errlen);

/* Render rs/s into path (.png or .svg, chosen by the extension), replaced atomically. The
 * gnuplot script and data are written to a temporary directory that is removed
 * afterwards. Returns 0, or -1 with err filled (gnuplot missing or failed: its first
 * error line is quoted). */
int plot_write(const char *path, const struct result_set *rs, const struct summary *s, char *err, size_t errlen);

/* The second picture of --plot: throughput against RTT (plot_rtt.c), 1200x700, next to
 * the first one as plot_rtt_path names it: "-rtt" before the extension (plot.png ->
 * plot-rtt.png). plot_rtt_path returns 0, or -1 when buf is too small. plot_rtt_write
 * renders it as plot_write does (atomically; 0, or -1 with err filled). */
int plot_rtt_path(const char *plot, char *buf, size_t len);
int plot_rtt_write(const char *path, const struct result_set *rs, const struct summary *s, char *err, size_t errlen);

#endif
