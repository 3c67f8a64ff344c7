/* store_pg: the PostgreSQL engine (libpq). Many vantage points write to one database at
 * once: each insert is its own short transaction, migrations hold an advisory lock. The
 * connection URI is libpq's, so PGHOST, PGUSER, PGPASSWORD, PGSERVICE (pg_service.conf)
 * and ~/.pgpass apply as for psql. */
#include "store_int.h"

#include "err.h"

#include <libpq-fe.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The advisory lock key of debit's migrations: "debit" in ASCII. */
#define PG_MIGRATION_LOCK "6464613667700"
/* Rows fetched per round trip of a large read (debit history over a million runs). */
#define PG_FETCH_ROWS "20000"

static int fail(PGconn *c, const char *what, char *err, size_t errlen)
{
    const char *m = PQerrorMessage(c);
    size_t n = strlen(m);
    while (n && (m[n - 1] == '\n' || m[n - 1] == ' '))
        n--;
    /* libpq's message spans lines ("...failed: refused\n\tIs the server running..."): one line here */
    char one[512];
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < sizeof one; i++)
        if (m[i] != '\n' && m[i] != '\t')
            one[k++] = m[i];
        else if (k && one[k - 1] != ' ')
            one[k++] = ' ';
    one[k] = '\0';
    return err_set(err, errlen, "postgresql: %s%s%s", what ? what : "", what ? ": " : "", one);
}

static void *pg_open(const char *target, char *err, size_t errlen)
{
    /* connect_timeout first: the URI's own value overrides it (later keywords win). */
    const char *const keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
    const char *const vals[] = {"10", "debit", target, NULL};
    PGconn *c = PQconnectdbParams(keys, vals, 1);
    if (!c || PQstatus(c) != CONNECTION_OK) {
        if (c)
            fail(c, NULL, err, errlen);
        else
            err_set(err, errlen, "postgresql: out of memory");
        PQfinish(c);
        return NULL;
    }
    PGresult *r = PQexec(c, "SET client_min_messages = warning");
    PQclear(r);
    return c;
}

static void pg_close(void *c)
{
    PQfinish(c);
}

static int pg_exec(void *vc, const char *sql, char *err, size_t errlen)
{
    PGresult *r = PQexec(vc, sql);
    int ok = r && (PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK);
    PQclear(r);
    return ok ? 0 : fail(vc, NULL, err, errlen);
}

static int pg_begin_migration(void *c, char *err, size_t errlen)
{
    if (pg_exec(c, "BEGIN", err, errlen) != 0)
        return -1;
    if (pg_exec(c, "SELECT pg_advisory_xact_lock(" PG_MIGRATION_LOCK ")", err, errlen) != 0) {
        pg_exec(c, "ROLLBACK", NULL, 0);
        return -1;
    }
    return 0;
}

static long pg_insert_many(void *vc, const char *sql, const char *const *vals, int nparams, size_t nrows, char *err,
                           size_t errlen)
{
    PGconn *c = vc;
    PGresult *r = PQprepare(c, "", sql, nparams, NULL);
    int ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
    PQclear(r);
    if (!ok)
        return fail(c, "prepare", err, errlen);
    long changed = 0;
    for (size_t i = 0; i < nrows; i++) {
        r = PQexecPrepared(c, "", nparams, vals + i * (size_t)nparams, NULL, NULL, 0);
        ok = r && PQresultStatus(r) == PGRES_COMMAND_OK;
        if (ok)
            changed += atol(PQcmdTuples(r));
        PQclear(r);
        if (!ok)
            return fail(c, NULL, err, errlen);
    }
    return changed;
}

/* The numeric types' OIDs (pg_type.h): int2, int4, int8, float4, float8, numeric. */
static int numeric_type(Oid t)
{
    return t == 21 || t == 23 || t == 20 || t == 700 || t == 701 || t == 1700;
}

/* Rows of res to row() (store.h's split of text and numbers); 1 when row() asked to stop. */
static int deliver(PGresult *res, store_row_fn row, void *ud, const char **text, double *num)
{
    int ncols = PQnfields(res), nrows = PQntuples(res);
    for (int i = 0; i < nrows; i++) {
        for (int j = 0; j < ncols; j++) {
            int null = PQgetisnull(res, i, j), numeric = numeric_type(PQftype(res, j));
            num[j] = !null && numeric ? strtod(PQgetvalue(res, i, j), NULL) : NAN;
            text[j] = null || numeric ? NULL : PQgetvalue(res, i, j);
        }
        if (row(ud, ncols, text, num) != 0)
            return 1;
    }
    return 0;
}

/* A read goes through a cursor fetched in blocks: a million rows never sit in memory
 * at once, and each block is one round trip. */
static int pg_query(void *vc, const char *sql, const char *const *params, int nparams, store_row_fn row, void *ud,
                    char *err, size_t errlen)
{
    PGconn *c = vc;
    int own_tx = PQtransactionStatus(c) == PQTRANS_IDLE;
    if (own_tx && pg_exec(c, "BEGIN", err, errlen) != 0)
        return -1;
    size_t len = strlen(sql) + 64;
    char *decl = malloc(len);
    if (!decl)
        return err_set(err, errlen, "out of memory");
    snprintf(decl, len, "DECLARE debit_cur NO SCROLL CURSOR FOR %s", sql);
    PGresult *r = PQexecParams(c, decl, nparams, NULL, params, NULL, NULL, 0);
    free(decl);
    int rc = r && PQresultStatus(r) == PGRES_COMMAND_OK ? 0 : fail(c, NULL, err, errlen);
    PQclear(r);
    const char **text = NULL;
    double *num = NULL;
    while (rc == 0) {
        r = PQexec(c, "FETCH " PG_FETCH_ROWS " FROM debit_cur");
        if (!r || PQresultStatus(r) != PGRES_TUPLES_OK) {
            rc = fail(c, NULL, err, errlen);
            PQclear(r);
            break;
        }
        if (!text && (!(text = calloc((size_t)PQnfields(r) + 1, sizeof *text)) ||
                      !(num = calloc((size_t)PQnfields(r) + 1, sizeof *num)))) {
            rc = err_set(err, errlen, "out of memory");
            PQclear(r);
            break;
        }
        int n = PQntuples(r), stop = deliver(r, row, ud, text, num);
        PQclear(r);
        if (stop || n == 0)
            break;
    }
    free(text);
    free(num);
    if (own_tx)
        pg_exec(c, rc == 0 ? "COMMIT" : "ROLLBACK", NULL, 0);
    else
        pg_exec(c, "CLOSE debit_cur", NULL, 0);
    return rc;
}

const struct store_ops store_pg_ops = {
    .open = pg_open,
    .close = pg_close,
    .exec = pg_exec,
    .begin_migration = pg_begin_migration,
    .insert_many = pg_insert_many,
    .query = pg_query,
};
