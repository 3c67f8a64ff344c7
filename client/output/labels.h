/* labels: the three labels of a summary row — latency scenario, client variant, server —
 * as the tables and the plot lay them out: which distinct values there are (in order of
 * appearance) and which row holds a given combination. A NULL label (no scenario, no
 * variant) is a value of its own, equal only to NULL. */
#ifndef DEBIT_LABELS_H
#define DEBIT_LABELS_H

#include <stddef.h>

#include "summary.h"

/* The most distinct values of one label an output lays out; more are left out. */
#define LABELS_MAX 64

enum labels_axis {
    LABELS_SCENARIO = 0,
    LABELS_VARIANT,
    LABELS_SERVER,
};

/* 1 when a and b are both NULL or equal strings, else 0. */
int labels_same(const char *a, const char *b);

/* The distinct values of label `axis` over s's rows, in order of first appearance, into
 * vals (borrowed from s; at most max). Returns how many. */
size_t labels_distinct(const struct summary *s, enum labels_axis axis, const char **vals, size_t max);

/* The position of v in vals[0..n), or 0 when it is not there. */
size_t labels_index(const char *const *vals, size_t n, const char *v);

/* The row of s with these labels (server non-NULL), or NULL. */
const struct server_summary *labels_find(const struct summary *s, const char *scenario, const char *variant,
                                         const char *server);

#endif
