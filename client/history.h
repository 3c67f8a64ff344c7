/* history: `debit history`, the store read back (docs/store.md): runs, per-server
 * summaries per time window, the vantage x server decomposition, plots, and --import of
 * --jsonl files written before the store existed. */
#ifndef DEBIT_HISTORY_H
#define DEBIT_HISTORY_H

#include <stdio.h>

/* The subcommand: argv[0] is "history". Returns the exit status (0, 1 failed, 2 usage);
 * prints its own messages. */
int history_main(int argc, char **argv);
/* Its --help text. */
void history_usage(FILE *out);

#endif
