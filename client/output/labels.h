/* labels: the three labels of a summary row — latency scenario, client variant, server —
 * as the tables and the plot lay them out: which distinct values there are (in order of
 * appearance) and which row holds a given combination. A NULL label (no scenario, no
 * variant) is a value of its own, equal only to NULL. */
#ifndef DEBIT_LABELS_H
#define DEBIT_LABELS_H

#include <stddef.h>

#include "report.h"
#include "result.h"
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

/* A server's column title: "NAME (TSO/GSO on, cpu 1%, sndbuf 1.5 MiB, mtu 1500)" — what
 * its first run with X-Debit-* headers reported (X-Debit-Offload's tso/gso, X-Debit-Cpu's
 * quota, a fixed sndbuf of X-Debit-Tcp), then the host settings of m's server_notes (a
 * cpu there only when the server did not report one); just NAME when nothing is known.
 * Raw text (from the server): the caller escapes it. Returns buf. */
const char *labels_server_title(const struct result_set *rs, const struct report_meta *m, const char *server,
                                char *buf, size_t len);

#endif
