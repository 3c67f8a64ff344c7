/* store: see store.h. The engine-independent half: --db specs, migrations, records to
 * bound parameters. */
#include "store.h"

#include "array.h"
#include "err.h"
#include "store_int.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>
#include <libpq-fe.h>

static int has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

/* An SQLite path is usable when its directory exists: the file itself is created. */
static int check_sqlite_path(const char *path, char *err, size_t errlen)
{
    if (!*path)
        return err_set(err, errlen, "empty path");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return 0;
    if (slash == dir)
        slash[1] = '\0';
    else
        *slash = '\0';
    struct stat sb;
    if (stat(dir, &sb) != 0)
        return err_set(err, errlen, "%s: %s", dir, strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return err_set(err, errlen, "%s: not a directory", dir);
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return err_set(err, errlen, "%s: is a directory", path);
    return 0;
}

int store_spec_parse(const char *arg, struct store_spec *spec, char *err, size_t errlen)
{
    memset(spec, 0, sizeof *spec);
    if (!arg || !*arg)
        return err_set(err, errlen, "empty value (a path, sqlite:PATH, postgresql://... or none)");
    if (strlen(arg) >= sizeof spec->target)
        return err_set(err, errlen, "longer than %zu bytes", sizeof spec->target - 1);
    if (strcmp(arg, "none") == 0) {
        spec->kind = STORE_NONE;
        return 0;
    }
    if (has_prefix(arg, "postgresql://") || has_prefix(arg, "postgres://")) {
        char *perr = NULL;
        PQconninfoOption *o = PQconninfoParse(arg, &perr);
        if (!o) {
            err_set(err, errlen, "'%s': %s", arg, perr ? perr : "not a libpq connection URI");
            PQfreemem(perr);
            return -1;
        }
        PQconninfoFree(o);
        spec->kind = STORE_PG;
        snprintf(spec->target, sizeof spec->target, "%s", arg);
        return 0;
    }
    const char *path = arg;
    if (has_prefix(arg, "sqlite:"))
        path = arg + strlen("sqlite:");
    else if (strchr(arg, ':') && strstr(arg, "://"))
        return err_set(err, errlen, "'%s': unknown kind of store (a path, sqlite:PATH, postgresql://... or none)",
                       arg);
    if (check_sqlite_path(path, err, errlen) != 0)
        return err_prefix(err, errlen, "'%s'", arg);
    spec->kind = STORE_SQLITE;
    snprintf(spec->target, sizeof spec->target, "%s", path);
    return 0;
}

/* $XDG_DATA_HOME/debit, or $HOME/.local/share/debit (the XDG base directory rule: a
 * relative XDG_DATA_HOME is ignored); without HOME (cron, env -i) the account's home. */
static int data_dir(char *buf, size_t len, char *err, size_t errlen)
{
    const char *x = getenv("XDG_DATA_HOME");
    const char *home = getenv("HOME");
    struct passwd *pw = home && *home ? NULL : getpwuid(getuid());
    if (pw)
        home = pw->pw_dir;
    int n;
    if (x && x[0] == '/')
        n = snprintf(buf, len, "%s/debit", x);
    else if (home && *home)
        n = snprintf(buf, len, "%s/.local/share/debit", home);
    else
        return err_set(err, errlen, "no home directory (XDG_DATA_HOME, HOME): give --db");
    if (n < 0 || (size_t)n >= len)
        return err_set(err, errlen, "the data directory's name is too long");
    return 0;
}

int store_spec_default(struct store_spec *spec, char *err, size_t errlen)
{
    const char *env = getenv("DEBIT_DB");
    if (env && *env) {
        if (store_spec_parse(env, spec, err, errlen) != 0)
            return err_prefix(err, errlen, "DEBIT_DB");
        return 0;
    }
    memset(spec, 0, sizeof *spec);
    char dir[4096 - 16];
    if (data_dir(dir, sizeof dir, err, errlen) != 0)
        return -1;
    spec->kind = STORE_SQLITE;
    snprintf(spec->target, sizeof spec->target, "%s/results.db", dir);
    return 0;
}

int store_data_dir(char *buf, size_t len, char *err, size_t errlen)
{
    return data_dir(buf, len, err, errlen);
}

void store_spec_display(const struct store_spec *spec, char *buf, size_t len)
{
    if (spec->kind == STORE_NONE) {
        snprintf(buf, len, "none");
        return;
    }
    if (spec->kind == STORE_SQLITE) {
        snprintf(buf, len, "%s", spec->target);
        return;
    }
    /* postgresql://user:secret@host/db -> postgresql://user:***@host/db */
    const char *s = strstr(spec->target, "://") + 3, *at = strchr(s, '@'), *colon = strchr(s, ':');
    const char *pw = strstr(spec->target, "password=");
    if (at && colon && colon < at)
        snprintf(buf, len, "%.*s***%s", (int)(colon + 1 - spec->target), spec->target, at);
    else
        snprintf(buf, len, "%s", spec->target);
    if (pw) {
        char *p = strstr(buf, "password=");
        if (p) {
            size_t end = strcspn(p, "&");
            memmove(p + 12, p + end, strlen(p + end) + 1);
            memcpy(p, "password=***", 12);
        }
    }
}

int store_mkdirs(const char *path, char *err, size_t errlen)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0700) != 0 && errno != EEXIST)
            return err_set(err, errlen, "%s: %s", buf, strerror(errno));
        *p = '/';
    }
    return 0;
}

/* "PATH: why" for errno E. */
static int path_err(const char *path, int e, char *err, size_t errlen)
{
    return err_set(err, errlen, "%s: %s", path, strerror(e));
}

int store_spec_writable(const struct store_spec *spec, int make, char *err, size_t errlen)
{
    if (spec->kind != STORE_SQLITE)
        return 0;
    /* a failed mkdir names the folder it could not make; the walk below names the cause
     * (a file in a folder's place, a folder not writable) */
    char made[1024] = "";
    int make_failed = make && store_mkdirs(spec->target, made, sizeof made) != 0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", spec->target);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        slash[slash == dir] = '\0';
    /* the nearest folder that exists: every name above it must be a folder */
    char near[4096];
    snprintf(near, sizeof near, "%s", dir);
    struct stat sb;
    for (;;) {
        if (stat(near, &sb) == 0)
            break;
        if (errno != ENOENT && errno != ENOTDIR) /* ENOTDIR: a file above, found next */
            return path_err(near, errno, err, errlen);
        char *up = strrchr(near, '/');
        if (!up) {
            snprintf(near, sizeof near, ".");
            continue;
        }
        up[up == near] = '\0';
    }
    if (!S_ISDIR(sb.st_mode))
        return path_err(near, ENOTDIR, err, errlen);
    if (access(near, W_OK | X_OK) != 0)
        return path_err(near, errno, err, errlen);
    if (access(spec->target, F_OK) == 0 && access(spec->target, R_OK | W_OK) != 0)
        return path_err(spec->target, errno, err, errlen);
    return make_failed ? err_set(err, errlen, "%s", made) : 0;
}

static int version_row(void *ud, int ncols, const char *const *text, const double *num)
{
    (void)text;
    if (ncols > 0 && !isnan(num[0]))
        *(int *)ud = (int)num[0];
    return 0;
}

/* Bring st to version `target` under the engine's migration lock; a concurrent opener
 * waits, then finds the work done. */
static int migrate(struct store *st, int target, char *err, size_t errlen)
{
    if (st->ops->begin_migration(st->db, err, errlen) != 0)
        return -1;
    int v = 0;
    if (st->ops->exec(st->db, "CREATE TABLE IF NOT EXISTS debit_schema (version INTEGER NOT NULL)", err, errlen) != 0 ||
        st->ops->query(st->db, "SELECT max(version) FROM debit_schema", NULL, 0, version_row, &v, err, errlen) != 0)
        goto fail;
    if (v > STORE_SCHEMA_VERSION) {
        err_set(err, errlen, "schema version %d is newer than this debit's (%d)", v, STORE_SCHEMA_VERSION);
        goto fail;
    }
    size_t n;
    const struct store_migration *m = store_schema_migrations(st->kind, &n);
    int changed = 0;
    for (size_t i = 0; i < n; i++) {
        if (m[i].version <= v || m[i].version > target)
            continue;
        if (st->ops->exec(st->db, m[i].sql, err, errlen) != 0) {
            err_prefix(err, errlen, "migration to schema version %d", m[i].version);
            goto fail;
        }
        v = m[i].version;
        changed = 1;
    }
    char sql[96];
    snprintf(sql, sizeof sql, "DELETE FROM debit_schema; INSERT INTO debit_schema (version) VALUES (%d)", v);
    if (changed && st->ops->exec(st->db, sql, err, errlen) != 0)
        goto fail;
    if (st->ops->exec(st->db, "COMMIT", err, errlen) != 0)
        goto fail;
    st->version = v;
    return 0;
fail:
    st->ops->exec(st->db, "ROLLBACK", NULL, 0);
    return -1;
}

struct store *store_open_version(const struct store_spec *spec, int version, char *err, size_t errlen)
{
    if (spec->kind == STORE_NONE) {
        err_set(err, errlen, "no store (--db none)");
        return NULL;
    }
    struct store *st = calloc(1, sizeof *st);
    if (!st) {
        err_set(err, errlen, "out of memory");
        return NULL;
    }
    st->kind = spec->kind;
    st->ops = spec->kind == STORE_PG ? &store_pg_ops : &store_sqlite_ops;
    st->db = st->ops->open(spec->target, err, errlen);
    if (!st->db || migrate(st, version, err, errlen) != 0) {
        store_close(st);
        return NULL;
    }
    return st;
}

struct store *store_open(const struct store_spec *spec, char *err, size_t errlen)
{
    return store_open_version(spec, STORE_SCHEMA_VERSION, err, errlen);
}

void store_close(struct store *st)
{
    if (!st)
        return;
    if (st->db)
        st->ops->close(st->db);
    free(st);
}

int store_version(const struct store *st)
{
    return st->version;
}

enum store_kind store_kind(const struct store *st)
{
    return st->kind;
}

/* The columns a record may fill, per table, in the order of the INSERT's parameters.
 * The first is the primary key. */
static const char *const run_columns[] = {
    "run_id", "invocation_id", "started_at", "vantage", "client_kernel", "client_offloads", "server", "url",
    "remote_ip", "family", "scenario", "variant", "protocol", "direction", "streams", "bytes", "avg_mbps",
    "rtt_ms", "limited_by", "predicted_mbps", "ok", "error_kind", "run",
};
static const char *const invocation_columns[] = {
    "invocation_id", "started_at", "finished_at", "vantage", "client_kernel", "client_offloads",
    "debit_version", "argv", "runs", "runs_ok", "summary",
};

/* A record's member as the text bound for it: NULL for a missing or null member. */
static char *value_text(json_t *v)
{
    char buf[64];
    switch (v ? json_typeof(v) : JSON_NULL) {
    case JSON_STRING:
        return strdup(json_string_value(v));
    case JSON_INTEGER:
        snprintf(buf, sizeof buf, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        return strdup(buf);
    case JSON_REAL:
        snprintf(buf, sizeof buf, "%.17g", json_real_value(v));
        return strdup(buf);
    case JSON_TRUE:
        return strdup("1");
    case JSON_FALSE:
        return strdup("0");
    case JSON_OBJECT:
    case JSON_ARRAY:
        return json_dumps(v, JSON_COMPACT);
    default:
        return NULL;
    }
}

long store_insert(struct store *st, const char *table, json_t *const *records, size_t n, char *err, size_t errlen)
{
    const char *const *cols;
    size_t ncols;
    if (strcmp(table, "runs") == 0) {
        cols = run_columns;
        ncols = ARRAY_SIZE(run_columns);
    } else if (strcmp(table, "invocations") == 0) {
        cols = invocation_columns;
        ncols = ARRAY_SIZE(invocation_columns);
    } else {
        return err_set(err, errlen, "no table %s", table);
    }
    if (n == 0)
        return 0;
    char sql[2048];
    size_t k = (size_t)snprintf(sql, sizeof sql, "INSERT INTO %s (", table);
    for (size_t i = 0; i < ncols; i++)
        k += (size_t)snprintf(sql + k, sizeof sql - k, "%s%s", i ? ", " : "", cols[i]);
    k += (size_t)snprintf(sql + k, sizeof sql - k, ") VALUES (");
    for (size_t i = 0; i < ncols; i++)
        k += (size_t)snprintf(sql + k, sizeof sql - k, "%s$%zu", i ? ", " : "", i + 1);
    snprintf(sql + k, sizeof sql - k, ") ON CONFLICT (%s) DO NOTHING", cols[0]);
    char **vals = calloc(n * ncols, sizeof *vals);
    if (!vals)
        return err_set(err, errlen, "out of memory");
    long rc = 0;
    for (size_t r = 0; r < n && rc == 0; r++) {
        if (!json_is_object(records[r]) || !json_is_string(json_object_get(records[r], cols[0])))
            rc = err_set(err, errlen, "record %zu of %s has no %s", r + 1, table, cols[0]);
        for (size_t c = 0; c < ncols && rc == 0; c++)
            vals[r * ncols + c] = value_text(json_object_get(records[r], cols[c]));
    }
    if (rc == 0 && st->ops->exec(st->db, "BEGIN", err, errlen) != 0)
        rc = -1;
    if (rc == 0) {
        rc = st->ops->insert_many(st->db, sql, (const char *const *)vals, (int)ncols, n, err, errlen);
        if (rc < 0 || st->ops->exec(st->db, "COMMIT", err, errlen) != 0) {
            st->ops->exec(st->db, "ROLLBACK", NULL, 0);
            rc = -1;
        }
    }
    for (size_t i = 0; i < n * ncols; i++)
        free(vals[i]);
    free(vals);
    return rc;
}

int store_query(struct store *st, const char *sql, const char *const *params, int nparams, store_row_fn row,
                void *ud, char *err, size_t errlen)
{
    return st->ops->query(st->db, sql, params, nparams, row, ud, err, errlen);
}

int store_exec(struct store *st, const char *sql, char *err, size_t errlen)
{
    return st->ops->exec(st->db, sql, err, errlen);
}
