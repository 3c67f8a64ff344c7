/* writeout: debit's --write-out FORMAT (-w), as curl's: text with %{variable} and
 * backslash escapes, for one-line cron and script use ("%{server} %{median_mbps}\n").
 *
 * A format that names a per-server variable (server, median_mbps, runs_ok, ...) is
 * printed once per summary row (per server, and per scenario cell), with that row's
 * values, in the order of the summary; a format with only measurement-wide variables
 * (json, runs_per_server, interrupted, ...) is printed once. Numbers are plain decimals
 * ("%.3f" for Mb/s, s and ms; "%.6g" for p) without units, "-" where the figure is
 * unknown (no successful run, no comparison). Escapes: \n \t \r \\, and %% for '%'. */
#ifndef DEBIT_WRITEOUT_H
#define DEBIT_WRITEOUT_H

#include <stddef.h>
#include <stdio.h>

#include "report.h"
#include "result.h"
#include "summary.h"

struct writeout;

/* Parse fmt. Returns a new template (writeout_free), or NULL with the reason in err:
 * "'%{foo}': unknown variable (known: ...)", "'%{median': unterminated %{",
 * "'\\q': unknown escape". */
struct writeout *writeout_parse(const char *fmt, char *err, size_t errlen);
void writeout_free(struct writeout *w);

/* Print w for the measurement (rs, s, m: as given to report_write) on out. Returns 0,
 * or -1 when writing failed (errno from stdio, EPIPE when out's reader went away). */
int writeout_print(FILE *out, const struct writeout *w, const struct result_set *rs, const struct summary *s,
                   const struct report_meta *m);

/* The variables a format may name, NULL-terminated (for --help and the docs test). */
extern const char *const writeout_variables[];

#endif
