/* store: where every run debit makes is kept (docs/store.md). One schema for two engines,
 * SQLite (a file, the default at $XDG_DATA_HOME/debit/results.db) and PostgreSQL (libpq),
 * versioned by migrations applied on open. A run goes in as a record: a JSON object whose
 * members are the columns of the `runs` table (store_record.h), the run's whole JSON in
 * its "run" member. Values are always bound parameters, never pasted into SQL.
 *
 * Nothing here prints or exits; errors go to the caller's buffer (common/err.h). */
#ifndef DEBIT_STORE_H
#define DEBIT_STORE_H

#include <jansson.h>
#include <stddef.h>

enum store_kind {
    STORE_NONE = 0, /* --db none: nothing is kept */
    STORE_SQLITE,
    STORE_PG,
};

/* What --db (or DEBIT_DB, or the default) names. target is a file path (SQLite) or a
 * libpq connection URI (PostgreSQL), as given. */
struct store_spec {
    enum store_kind kind;
    char target[4096];
};

/* The schema version this build writes; store_open migrates any older store to it. */
#define STORE_SCHEMA_VERSION 2

/* Parse a --db value: "none", "sqlite:PATH", "postgresql://..." or "postgres://...", or a
 * plain PATH (SQLite). An SQLite path's directory must exist. Returns 0, or -1 with err
 * saying why (the caller names the option). */
int store_spec_parse(const char *arg, struct store_spec *spec, char *err, size_t errlen);
/* The store used without --db: $DEBIT_DB when set (parsed as --db), else SQLite at
 * $XDG_DATA_HOME/debit/results.db ($HOME/.local/share when XDG_DATA_HOME is unset or not
 * absolute; the account's home directory when HOME is unset too). Returns 0, or -1 (err;
 * a bad DEBIT_DB is named as such). */
int store_spec_default(struct store_spec *spec, char *err, size_t errlen);
/* The spec as it may be shown: a PostgreSQL URI's password replaced by "***". */
void store_spec_display(const struct store_spec *spec, char *buf, size_t len);
/* debit's data directory: $XDG_DATA_HOME/debit or $HOME/.local/share/debit. 0 or -1 (err). */
int store_data_dir(char *buf, size_t len, char *err, size_t errlen);
/* Create the directories leading to the default SQLite file ($XDG_DATA_HOME/debit). */
int store_mkdirs(const char *path, char *err, size_t errlen);
/* Can an SQLite SPEC be written: its folder exists (made first when MAKE, as
 * store_mkdirs; else the nearest folder that exists must let it be made) and is writable,
 * and the file, when there is one, too. 0, or -1 with "PATH: why" (errno's words) in err.
 * Other kinds: 0 (a server is tried when the store opens). Creates nothing without MAKE. */
int store_spec_writable(const struct store_spec *spec, int make, char *err, size_t errlen);

struct store;

/* Connect and bring the schema to STORE_SCHEMA_VERSION (migrations run in one transaction
 * under a lock, so concurrent writers opening a new store do not race). Returns a handle
 * or NULL (err). spec->kind must not be STORE_NONE. */
struct store *store_open(const struct store_spec *spec, char *err, size_t errlen);
/* store_open that stops at schema version `version` (tests migrate from an older one). */
struct store *store_open_version(const struct store_spec *spec, int version, char *err, size_t errlen);
void store_close(struct store *st);
/* The schema version of an open store. */
int store_version(const struct store *st);
enum store_kind store_kind(const struct store *st);

/* Insert records (each a JSON object, store_record.h) into table "runs" or
 * "invocations", in one transaction. A record whose id is already stored is skipped
 * (ON CONFLICT DO NOTHING): replaying a spool or an import twice adds nothing.
 * Returns the number of rows newly added, or -1 (err; nothing of this call is kept). */
long store_insert(struct store *st, const char *table, json_t *const *records, size_t n, char *err, size_t errlen);

/* Run a read-only query and call row() once per row. A numeric value (an integer or real
 * column) comes in num[i] with text[i] NULL; any other in text[i] with num[i] NAN; SQL
 * NULL is both NULL and NAN. (Numbers are not made text and back: a million rates read by
 * debit history spent half their time in SQLite's number formatting.) params are bound as
 * text ($1, $2, ... in sql). row() returns 0 to go on, non-zero to stop. 0 or -1 (err). */
typedef int (*store_row_fn)(void *ud, int ncols, const char *const *text, const double *num);
int store_query(struct store *st, const char *sql, const char *const *params, int nparams, store_row_fn row,
                void *ud, char *err, size_t errlen);

/* One statement without results (tests, benchmarks). Returns 0 or -1 (err). */
int store_exec(struct store *st, const char *sql, char *err, size_t errlen);

#endif
