/* store_spool: where runs wait while their store is unreachable. One file per store
 * ($XDG_DATA_HOME/debit/spool/<hash of the --db value>.jsonl), one line per record:
 * {"table": "runs", "record": {...}}. Appends are locked (flock) and fsynced; the next
 * debit that reaches the store writes the spool first and empties it under the same lock.
 * Records carry their ids, so a spool written twice (a crash between the insert and the
 * truncation) adds nothing the second time. */
#ifndef DEBIT_STORE_SPOOL_H
#define DEBIT_STORE_SPOOL_H

#include <jansson.h>
#include <stddef.h>

#include "store.h"

/* The spool file of spec (its folder is made by store_spool_append). 0 or -1 (err). */
int store_spool_path(const struct store_spec *spec, char *buf, size_t len, char *err, size_t errlen);
/* Append one record for table. 0 or -1 (err). */
int store_spool_append(const char *path, const char *table, json_t *record, char *err, size_t errlen);
/* Write every spooled record into st, then empty the file. Returns the number of records
 * the spool held (0 when there is none), or -1 (err; the spool is left as it was). */
long store_spool_flush(const char *path, struct store *st, char *err, size_t errlen);

#endif
