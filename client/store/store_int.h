/* store_int: what store.c shares with its two engines (store_sqlite.c, store_pg.c). Each
 * engine is one table of functions, chosen once on open (lwan's get_funcs), so no other
 * function asks which engine it talks to. */
#ifndef DEBIT_STORE_INT_H
#define DEBIT_STORE_INT_H

#include "store.h"

struct store_ops {
    /* Open the connection (db is the engine's handle). NULL with err. */
    void *(*open)(const char *target, char *err, size_t errlen);
    void (*close)(void *db);
    int (*exec)(void *db, const char *sql, char *err, size_t errlen);
    /* BEGIN taking the lock that serialises migrations. */
    int (*begin_migration)(void *db, char *err, size_t errlen);
    /* Prepare sql once, bind and run it per row of text params (n each); values NULL are
     * SQL NULL. Returns the rows changed in total, or -1. */
    long (*insert_many)(void *db, const char *sql, const char *const *vals, int nparams, size_t nrows, char *err,
                        size_t errlen);
    int (*query)(void *db, const char *sql, const char *const *params, int nparams, store_row_fn row, void *ud,
                 char *err, size_t errlen);
};

extern const struct store_ops store_sqlite_ops;
extern const struct store_ops store_pg_ops;

/* The migration steps of one engine: migration i brings version i to i+1 (store_schema.c). */
struct store_migration {
    int version; /* the version it produces */
    const char *sql;
};
/* The migrations for kind, in order, and their count. */
const struct store_migration *store_schema_migrations(enum store_kind kind, size_t *n);

struct store {
    enum store_kind kind;
    int version;
    const struct store_ops *ops;
    void *db;
};

#endif
