/* history_by: `debit history --by vantage,server` (docs/store.md "Server effect and path
 * effect"): each (vantage, server) cell's median rate, the median polish of their logs,
 * each effect printed as a factor. */
#ifndef DEBIT_HISTORY_BY_H
#define DEBIT_HISTORY_BY_H

#include "report.h"
#include "store.h"
#include "store_history.h"

/* Print the decomposition of the runs matching f in format fmt. Returns the exit status
 * (0, or 1 after printing why). */
int history_by(struct store *st, const struct store_filter *f, enum report_format fmt);

#endif
