/* history_by: see history_by.h. */
#include "history_by.h"

#include "history_out.h"
#include "polish.h"
#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct names {
    char **v;
    size_t n;
};

/* Index of s in ns, added when new; -1 when out of memory. */
static long name_index(struct names *ns, const char *s)
{
    for (size_t i = 0; i < ns->n; i++)
        if (strcmp(ns->v[i], s) == 0)
            return (long)i;
    char **p = realloc(ns->v, (ns->n + 1) * sizeof *p);
    if (!p)
        return -1;
    ns->v = p;
    if (!(ns->v[ns->n] = strdup(s)))
        return -1;
    return (long)ns->n++;
}

struct cell {
    size_t r, c, runs;
    double median;
};

struct cells {
    struct names rows, cols; /* vantages, servers */
    struct cell *v;
    size_t n;
    int failed;
};

static int on_cell(void *ud, const char *vantage, const char *server, const double *mbps, size_t n)
{
    struct cells *cs = ud;
    long r = name_index(&cs->rows, vantage), c = name_index(&cs->cols, server);
    struct cell *p = realloc(cs->v, (cs->n + 1) * sizeof *p);
    if (r < 0 || c < 0 || !p)
        return cs->failed = 1;
    cs->v = p;
    cs->v[cs->n++] = (struct cell){(size_t)r, (size_t)c, n, stats_median(mbps, n)};
    return 0;
}

/* Are all rows and columns one connected design (through filled cells)? Effects of two
 * unconnected parts cannot be compared. */
static int connected(const struct cells *cs)
{
    size_t nr = cs->rows.n, nc = cs->cols.n;
    int *seen = calloc(nr + nc, sizeof *seen);
    if (!seen)
        return 0;
    seen[0] = 1;
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t i = 0; i < cs->n; i++) {
            size_t a = cs->v[i].r, b = nr + cs->v[i].c;
            if (seen[a] != seen[b]) {
                seen[a] = seen[b] = 1;
                changed = 1;
            }
        }
    }
    int all = 1;
    for (size_t i = 0; i < nr + nc; i++)
        all &= seen[i];
    free(seen);
    return all;
}

static void fmt(char *buf, size_t len, double v)
{
    snprintf(buf, len, "%.4f", v);
}

static json_t *effects_json(const struct names *ns, const double *eff, const size_t *ncell, const size_t *nruns,
                            const char *key)
{
    json_t *o = json_object();
    for (size_t i = 0; i < ns->n; i++)
        json_object_set_new(o, ns->v[i], json_pack("{s:f, s:I, s:I}", key, exp(eff[i]), "cells",
                                                   (json_int_t)ncell[i], "runs", (json_int_t)nruns[i]));
    return o;
}

static int print_fit(const struct cells *cs, const struct polish *p, enum report_format f)
{
    size_t nr = cs->rows.n, nc = cs->cols.n;
    size_t *rc = calloc(nr, sizeof *rc), *cc = calloc(nc, sizeof *cc), *rr = calloc(nr, sizeof *rr),
           *cr = calloc(nc, sizeof *cr);
    for (size_t i = 0; rc && cc && rr && cr && i < cs->n; i++) {
        rc[cs->v[i].r]++;
        cc[cs->v[i].c]++;
        rr[cs->v[i].r] += cs->v[i].runs;
        cr[cs->v[i].c] += cs->v[i].runs;
    }
    static const char *const rh[] = {"vantage", "server", "runs", "median_mbps", "fitted_mbps", "residual"};
    static const int rn[] = {0, 0, 1, 1, 1, 1};
    struct htable res;
    htable_init(&res, 6, rh, rn);
    for (size_t i = 0; i < cs->n; i++) {
        const struct cell *c = &cs->v[i];
        char runs[16], med[32], fit[32], resid[32];
        snprintf(runs, sizeof runs, "%zu", c->runs);
        fmt(med, sizeof med, c->median);
        fmt(fit, sizeof fit, exp(p->overall + p->row[c->r] + p->col[c->c]));
        fmt(resid, sizeof resid, exp(p->resid[c->r * nc + c->c]));
        const char *row[] = {cs->rows.v[c->r], cs->cols.v[c->c], runs, med, fit, resid};
        htable_add(&res, row);
    }
    int rcode = 0;
    if (f == REPORT_JSON) {
        json_t *o = json_pack("{s:f, s:o, s:o, s:o, s:i, s:b, s:I, s:I}", "overall_mbps", exp(p->overall), "servers",
                              effects_json(&cs->cols, p->col, cc, cr, "server_effect"), "vantages",
                              effects_json(&cs->rows, p->row, rc, rr, "vantage_effect"), "residuals",
                              htable_json(&res), "iterations", p->iterations, "converged", p->converged, "cells",
                              (json_int_t)cs->n, "cells_needed", (json_int_t)(nr + nc - 1));
        rcode = o && json_dumpf(o, stdout, JSON_INDENT(2)) == 0 ? 0 : 1;
        fputc('\n', stdout);
        json_decref(o);
    } else {
        static const char *const eh[] = {"kind", "name", "effect", "cells", "runs"};
        static const int en[] = {0, 0, 1, 1, 1};
        struct htable eff;
        htable_init(&eff, 5, eh, en);
        for (size_t k = 0; k < 2; k++) {
            const struct names *ns = k ? &cs->rows : &cs->cols;
            const double *e = k ? p->row : p->col;
            for (size_t i = 0; i < ns->n; i++) {
                char v[32], c[16], r[16];
                fmt(v, sizeof v, exp(e[i]));
                snprintf(c, sizeof c, "%zu", k ? rc[i] : cc[i]);
                snprintf(r, sizeof r, "%zu", k ? rr[i] : cr[i]);
                const char *row[] = {k ? "vantage" : "server", ns->v[i], v, c, r};
                htable_add(&eff, row);
            }
        }
        if (f != REPORT_CSV)
            printf("overall median %.3f Mb/s; effects as factors of it (%zu of %zu cells filled)\n\n",
                   exp(p->overall), cs->n, nr * nc);
        rcode |= htable_print(stdout, f, &eff) != 0;
        fputc('\n', stdout);
        rcode |= htable_print(stdout, f, &res) != 0;
        htable_free(&eff);
    }
    htable_free(&res);
    free(rc);
    free(cc);
    free(rr);
    free(cr);
    return rcode;
}

int history_by(struct store *st, const struct store_filter *f, enum report_format fmt)
{
    char err[1024];
    struct cells cs = {0};
    int code = 0;
    if (store_history_cells(st, f, on_cell, &cs, err, sizeof err) != 0 || cs.failed) {
        fprintf(stderr, "debit: history: %s\n", cs.failed ? "out of memory" : err);
        code = 1;
    }
    size_t nr = cs.rows.n, nc = cs.cols.n;
    double *y = code ? NULL : malloc((nr * nc > 0 ? nr * nc : 1) * sizeof *y);
    if (!code && !y) {
        fprintf(stderr, "debit: out of memory\n");
        code = 1;
    }
    if (!code && cs.n == 0) {
        fprintf(stderr, "debit: history --by: no successful run matches\n");
        code = 1;
    }
    if (!code) {
        for (size_t i = 0; i < nr * nc; i++)
            y[i] = NAN;
        for (size_t i = 0; i < cs.n; i++)
            y[cs.v[i].r * nc + cs.v[i].c] = cs.v[i].median > 0 ? log(cs.v[i].median) : NAN;
        /* What the fit can say: docs/store.md. */
        if (nr < 2 || nc < 2 || cs.n < nr + nc - 1 || !connected(&cs))
            fprintf(stderr,
                    "debit: history --by: %zu vantage%s x %zu server%s with %zu filled cell%s: the effects are not "
                    "separable (it needs 2 or more of each, at least %zu cells, all connected through shared "
                    "servers or vantages)\n",
                    nr, nr == 1 ? "" : "s", nc, nc == 1 ? "" : "s", cs.n, cs.n == 1 ? "" : "s", nr + nc - 1);
        struct polish p;
        if (polish_fit(y, nr, nc, &p, err, sizeof err) != 0) {
            fprintf(stderr, "debit: history --by: %s\n", err);
            code = 1;
        } else {
            code = print_fit(&cs, &p, fmt);
            polish_free(&p);
        }
    }
    free(y);
    for (size_t i = 0; i < cs.rows.n; i++)
        free(cs.rows.v[i]);
    for (size_t i = 0; i < cs.cols.n; i++)
        free(cs.cols.v[i]);
    free(cs.rows.v);
    free(cs.cols.v);
    free(cs.v);
    return code;
}
