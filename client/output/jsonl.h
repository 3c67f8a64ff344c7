/* jsonl: the measurement's journal. Each finished run is appended to FILE as one JSON
 * line and fsynced at once, so an interrupted or crashed measurement loses nothing. */
#ifndef DEBIT_JSONL_H
#define DEBIT_JSONL_H

#include <stddef.h>

#include "result.h"

struct jsonl;

/* Open (create or append) path. Returns a new handle (caller frees with jsonl_close), or
 * NULL with err filled. */
struct jsonl *jsonl_open(const char *path, char *err, size_t errlen);
/* Append one run as a line; write + fsync. Returns 0 or -1 (err filled). */
int jsonl_append(struct jsonl *j, const struct run_result *r, char *err, size_t errlen);
void jsonl_close(struct jsonl *j);

#endif
