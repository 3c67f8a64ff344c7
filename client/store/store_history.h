/* store_history: what `debit history` reads back from a store, filtered. Every filter
 * value is a bound parameter. */
#ifndef DEBIT_STORE_HISTORY_H
#define DEBIT_STORE_HISTORY_H

#include <stddef.h>

#include "store.h"

/* NULL / NAN: no filter. scenario matches a run's latency name, its variant name, or
 * "LATENCY / VARIANT". */
struct store_filter {
    const char *server, *vantage, *scenario;
    double since, until; /* seconds since the epoch: since <= started_at < until */
};

/* One stored run as read back (strings valid during the callback only; NULL when the
 * column is NULL; numbers NAN when NULL). */
struct store_run_row {
    const char *run_id, *vantage, *server, *url, *scenario, *variant, *direction, *limited_by, *error_kind;
    double started_at, avg_mbps, rtt_ms, predicted_mbps, bytes;
    int ok, streams;
};
typedef int (*store_run_fn)(void *ud, const struct store_run_row *r);

/* Every run matching f, oldest first. fn returns non-zero to stop. 0 or -1 (err). */
int store_history_runs(struct store *st, const struct store_filter *f, store_run_fn fn, void *ud, char *err,
                       size_t errlen);

/* The successful runs' rates matching f, cell by cell: fn is called once per
 * (vantage, server) with that cell's avg_mbps values, ascending. 0 or -1 (err). */
typedef int (*store_cell_fn)(void *ud, const char *vantage, const char *server, const double *mbps, size_t n);
int store_history_cells(struct store *st, const struct store_filter *f, store_cell_fn fn, void *ud, char *err,
                        size_t errlen);

#endif
