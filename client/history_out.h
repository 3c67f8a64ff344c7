/* history_out: `debit history`'s tables in debit's four formats (table, Markdown, CSV,
 * JSON) and its plot over time. A table is a header and rows of strings; a column marked
 * numeric becomes a JSON number. */
#ifndef DEBIT_HISTORY_OUT_H
#define DEBIT_HISTORY_OUT_H

#include <jansson.h>
#include <stdio.h>

#include "report.h"

struct htable {
    size_t ncols, nrows, cap;
    const char *const *head; /* borrowed */
    const int *numeric;      /* borrowed; per column */
    char **cells;            /* nrows * ncols, owned */
};

void htable_init(struct htable *t, size_t ncols, const char *const *head, const int *numeric);
/* Add a row of ncols strings (copied; NULL prints empty, JSON null). 0 or -1. */
int htable_add(struct htable *t, const char *const *row);
void htable_free(struct htable *t);
/* The rows as a JSON array of objects keyed by the header (new reference). */
json_t *htable_json(const struct htable *t);
/* Print in format f (JSON: the array). Returns 0 or -1 (write error). */
int htable_print(FILE *out, enum report_format f, const struct htable *t);

/* One point of the plot: a run's time and rate under a series name. */
struct hpoint {
    const char *series;
    double t, mbps;
};
/* Render points (sorted by series) into path (.png or .svg) with gnuplot: Mb/s against
 * time, one colour per series. 0 or -1 (err). */
int history_plot(const char *path, const struct hpoint *p, size_t n, char *err, size_t errlen);

#endif
