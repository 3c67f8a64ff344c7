/* store_sqlite: the SQLite engine. WAL, so readers (debit history) never block a writer;
 * synchronous=FULL, so a committed run survives a power cut; a busy timeout, so
 * concurrent debit processes on one file wait for each other instead of failing. */
#include "store_int.h"

#include "err.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>

/* How long a writer waits for another's transaction (several debit processes at once). */
#define SQLITE_BUSY_MS 30000

static int fail(sqlite3 *db, char *err, size_t errlen)
{
    return err_set(err, errlen, "sqlite: %s", sqlite3_errmsg(db));
}

static void *sq_open(const char *target, char *err, size_t errlen)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(target, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
        SQLITE_OK) {
        err_set(err, errlen, "sqlite: %s: %s", target, db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return NULL;
    }
    sqlite3_busy_timeout(db, SQLITE_BUSY_MS);
    char *msg = NULL;
    if (sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;", NULL, NULL, &msg) != SQLITE_OK) {
        err_set(err, errlen, "sqlite: %s: %s", target, msg ? msg : sqlite3_errmsg(db));
        sqlite3_free(msg);
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

static void sq_close(void *db)
{
    sqlite3_close(db);
}

static int sq_exec(void *vdb, const char *sql, char *err, size_t errlen)
{
    char *msg = NULL;
    if (sqlite3_exec(vdb, sql, NULL, NULL, &msg) != SQLITE_OK) {
        err_set(err, errlen, "sqlite: %s", msg ? msg : sqlite3_errmsg(vdb));
        sqlite3_free(msg);
        return -1;
    }
    return 0;
}

/* IMMEDIATE takes the write lock at once: two openers of a new file cannot both decide
 * to create the tables. */
static int sq_begin_migration(void *db, char *err, size_t errlen)
{
    return sq_exec(db, "BEGIN IMMEDIATE", err, errlen);
}

static int bind_all(sqlite3_stmt *s, const char *const *vals, int n)
{
    for (int i = 0; i < n; i++) {
        int rc = vals && vals[i] ? sqlite3_bind_text(s, i + 1, vals[i], -1, SQLITE_STATIC)
                                 : sqlite3_bind_null(s, i + 1);
        if (rc != SQLITE_OK)
            return -1;
    }
    return 0;
}

static long sq_insert_many(void *vdb, const char *sql, const char *const *vals, int nparams, size_t nrows, char *err,
                           size_t errlen)
{
    sqlite3 *db = vdb;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        return fail(db, err, errlen);
    long changed = 0;
    for (size_t r = 0; r < nrows; r++) {
        /* Text bound to a REAL or INTEGER column is converted by its type affinity. */
        if (bind_all(s, vals + r * (size_t)nparams, nparams) != 0 || sqlite3_step(s) != SQLITE_DONE) {
            changed = fail(db, err, errlen);
            break;
        }
        changed += sqlite3_changes(db);
        sqlite3_reset(s);
        sqlite3_clear_bindings(s);
    }
    sqlite3_finalize(s);
    return changed;
}

static int sq_query(void *vdb, const char *sql, const char *const *params, int nparams, store_row_fn row, void *ud,
                    char *err, size_t errlen)
{
    sqlite3 *db = vdb;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        return fail(db, err, errlen);
    if (bind_all(s, params, nparams) != 0) {
        sqlite3_finalize(s);
        return fail(db, err, errlen);
    }
    int ncols = sqlite3_column_count(s), rc;
    const char **text = calloc((size_t)ncols + 1, sizeof *text);
    double *num = calloc((size_t)ncols + 1, sizeof *num);
    if (!text || !num) {
        free(text);
        free(num);
        sqlite3_finalize(s);
        return err_set(err, errlen, "out of memory");
    }
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        for (int i = 0; i < ncols; i++) {
            int t = sqlite3_column_type(s, i);
            int numeric = t == SQLITE_INTEGER || t == SQLITE_FLOAT;
            num[i] = numeric ? sqlite3_column_double(s, i) : NAN;
            text[i] = numeric || t == SQLITE_NULL ? NULL : (const char *)sqlite3_column_text(s, i);
        }
        if (row(ud, ncols, text, num) != 0) {
            rc = SQLITE_DONE;
            break;
        }
    }
    free(text);
    free(num);
    int ret = rc == SQLITE_DONE ? 0 : fail(db, err, errlen);
    sqlite3_finalize(s);
    return ret;
}

const struct store_ops store_sqlite_ops = {
    .open = sq_open,
    .close = sq_close,
    .exec = sq_exec,
    .begin_migration = sq_begin_migration,
    .insert_many = sq_insert_many,
    .query = sq_query,
};
