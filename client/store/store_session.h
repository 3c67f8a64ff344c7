/* store_session: one debit invocation's writes to its store. Opened before the first
 * run (writing any spool of an earlier invocation first), fed each run as it ends, closed
 * with the invocation's summary. When the store cannot be reached or fails part-way,
 * what follows goes to the spool (store_spool.h) and nothing is lost; the caller says so
 * and exits 1. */
#ifndef DEBIT_STORE_SESSION_H
#define DEBIT_STORE_SESSION_H

#include <jansson.h>
#include <stddef.h>

#include "store.h"

struct store_session;

/* Where a record went. */
enum store_put {
    STORE_PUT_STORED = 0,
    STORE_PUT_SPOOLED, /* the store failed: kept in the spool */
    STORE_PUT_LOST,    /* neither the store nor the spool took it (err says why) */
};

/* Begin: vantage (borrowed for the session's life) names the client; argv is joined for
 * the invocation's row. Never fails for an unreachable store (see the accessors); NULL
 * only when out of memory or the spool cannot even be named (err). */
struct store_session *store_session_begin(const struct store_spec *spec, const char *vantage, int argc,
                                          char *const *argv, char *err, size_t errlen);
/* One finished run (its result_to_json object, borrowed). */
enum store_put store_session_run(struct store_session *s, json_t *run, char *err, size_t errlen);
/* The invocation's row, with runs counted and summary (borrowed, may be NULL). */
enum store_put store_session_end(struct store_session *s, json_t *summary, char *err, size_t errlen);
void store_session_free(struct store_session *s);

/* Records of an earlier invocation's spool written at begin (0: none). */
long store_session_flushed(const struct store_session *s);
/* Records of this session spooled so far. */
long store_session_spooled(const struct store_session *s);
/* The spool file's path. */
const char *store_session_spool_path(const struct store_session *s);
/* Why the store is not in use ("" while it is). */
const char *store_session_error(const struct store_session *s);
/* This invocation's id. */
const char *store_session_id(const struct store_session *s);

#endif
