/* progress: the live progress line on stderr, as wget and curl draw it: one line
 * rewritten in place ("\r" + erase), never scrolling, cleared before any other output. */
#ifndef DEBIT_PROGRESS_H
#define DEBIT_PROGRESS_H

#include <stddef.h>
#include <stdio.h>

#include "download.h"

struct progress {
    FILE *out;
    int enabled;
    size_t step, total;   /* current download, 1-based, of total */
    const char *server;
    const char *cell;     /* scenario label, or NULL */
    int drawn;
};

/* dl_progress_fn: draws the line ("\r", erase to the end of line, the text) on ud->out
 * when ud->enabled; ud is a struct progress. */
void progress_draw(const struct dl_progress *p, void *ud);
/* Erase the line if one is drawn. */
void progress_clear(struct progress *pr);

#endif
