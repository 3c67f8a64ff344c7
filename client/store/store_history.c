/* store_history: see store_history.h. */
#include "store_history.h"

#include "err.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct where {
    char sql[512];
    const char *params[8];
    char num[2][32];
    int n;
};

/* " AND ..." for each filter set in f, parameters from $1. */
static void where_build(const struct store_filter *f, struct where *w)
{
    memset(w, 0, sizeof *w);
    size_t k = 0;
#define ADD(fmt, val)                                                                                                  \
    do {                                                                                                               \
        w->params[w->n++] = (val);                                                                                     \
        k += (size_t)snprintf(w->sql + k, sizeof w->sql - k, fmt, w->n);                                               \
    } while (0)
    if (f->server)
        ADD(" AND server = $%d", f->server);
    if (f->vantage)
        ADD(" AND vantage = $%d", f->vantage);
    if (f->scenario)
        ADD(" AND $%d IN (scenario, variant, scenario || ' / ' || variant)", f->scenario);
    if (!isnan(f->since)) {
        snprintf(w->num[0], sizeof w->num[0], "%.6f", f->since);
        ADD(" AND started_at >= $%d", w->num[0]);
    }
    if (!isnan(f->until)) {
        snprintf(w->num[1], sizeof w->num[1], "%.6f", f->until);
        ADD(" AND started_at < $%d", w->num[1]);
    }
#undef ADD
}

struct runs_ud {
    store_run_fn fn;
    void *ud;
};

static int run_row(void *vud, int ncols, const char *const *v, const double *x)
{
    struct runs_ud *u = vud;
    if (ncols < 16)
        return 1;
    struct store_run_row r = {
        .run_id = v[0], .vantage = v[1], .server = v[2], .url = v[3], .scenario = v[4], .variant = v[5],
        .direction = v[6], .limited_by = v[7], .error_kind = v[8], .started_at = x[9], .avg_mbps = x[10],
        .rtt_ms = x[11], .predicted_mbps = x[12], .bytes = x[13], .ok = x[14] == 1,
        .streams = isnan(x[15]) ? 1 : (int)x[15],
    };
    return u->fn(u->ud, &r);
}

int store_history_runs(struct store *st, const struct store_filter *f, store_run_fn fn, void *ud, char *err,
                       size_t errlen)
{
    struct where w;
    where_build(f, &w);
    char sql[1024];
    snprintf(sql, sizeof sql,
             "SELECT run_id, vantage, server, url, scenario, variant, direction, limited_by, error_kind, started_at,"
             " avg_mbps, rtt_ms, predicted_mbps, bytes, ok, streams FROM runs WHERE 1 = 1%s"
             " ORDER BY started_at, run_id",
             w.sql);
    struct runs_ud u = {fn, ud};
    return store_query(st, sql, w.params, w.n, run_row, &u, err, errlen);
}

/* Rows arrive ordered by (vantage, server): a cell is a run of equal keys. */
struct cells_ud {
    store_cell_fn fn;
    void *ud;
    char *vantage, *server;
    double *v;
    size_t n, cap;
    int failed, stopped;
};

static int cell_flush(struct cells_ud *c)
{
    if (!c->n)
        return 0;
    int r = c->fn(c->ud, c->vantage, c->server, c->v, c->n);
    c->n = 0;
    return r;
}

static int cell_row(void *vud, int ncols, const char *const *v, const double *x)
{
    struct cells_ud *c = vud;
    if (ncols < 3 || !v[0] || !v[1] || isnan(x[2]))
        return 0;
    if (!c->vantage || strcmp(c->vantage, v[0]) != 0 || strcmp(c->server, v[1]) != 0) {
        if (cell_flush(c) != 0)
            return c->stopped = 1;
        free(c->vantage);
        free(c->server);
        c->vantage = strdup(v[0]);
        c->server = strdup(v[1]);
        if (!c->vantage || !c->server)
            return c->failed = 1;
    }
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        double *p = realloc(c->v, cap * sizeof *p);
        if (!p)
            return c->failed = 1;
        c->v = p;
        c->cap = cap;
    }
    c->v[c->n++] = x[2];
    return 0;
}

int store_history_cells(struct store *st, const struct store_filter *f, store_cell_fn fn, void *ud, char *err,
                        size_t errlen)
{
    struct where w;
    where_build(f, &w);
    char sql[1024];
    /* "ok = 1" as the partial index runs_cells states it, so both engines use it. */
    snprintf(sql, sizeof sql,
             "SELECT vantage, server, avg_mbps FROM runs WHERE ok = 1 AND avg_mbps > 0%s"
             " ORDER BY vantage, server, avg_mbps",
             w.sql);
    struct cells_ud c = {.fn = fn, .ud = ud};
    int rc = store_query(st, sql, w.params, w.n, cell_row, &c, err, errlen);
    if (rc == 0 && c.failed)
        rc = err_set(err, errlen, "out of memory");
    if (rc == 0 && !c.stopped)
        cell_flush(&c);
    free(c.vantage);
    free(c.server);
    free(c.v);
    return rc;
}
