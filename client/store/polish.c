/* polish: see polish.h. */
#include "polish.h"

#include "err.h"
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Median of the finite values among x[0], x[stride], ... (n of them), 0 when none:
 * an empty row or column moves nothing. buf holds n doubles. */
static double median_finite(const double *x, size_t n, size_t stride, double *buf)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i * stride]))
            buf[k++] = x[i * stride];
    return k ? stats_median(buf, k) : 0;
}

/* One half-sweep: take each line's median out of z into eff, then the median of the
 * other margin's effects into the overall value. */
static void sweep(double *z, size_t nlines, size_t len, size_t line_step, size_t elem_step, double *eff,
                  double *other, size_t nother, double *overall, double *buf)
{
    for (size_t i = 0; i < nlines; i++) {
        double *line = z + i * line_step;
        double d = median_finite(line, len, elem_step, buf);
        for (size_t j = 0; j < len; j++)
            line[j * elem_step] -= d;
        eff[i] += d;
    }
    double d = median_finite(other, nother, 1, buf);
    for (size_t i = 0; i < nother; i++)
        other[i] -= d;
    *overall += d;
}

static double abs_sum(const double *z, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(z[i]))
            s += fabs(z[i]);
    return s;
}

int polish_fit(const double *y, size_t nr, size_t nc, struct polish *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    size_t n = nr * nc, have = 0;
    for (size_t i = 0; i < n; i++)
        have += isfinite(y[i]) != 0;
    if (!have)
        return err_set(err, errlen, "no cell has a value");
    out->nr = nr;
    out->nc = nc;
    out->row = calloc(nr, sizeof *out->row);
    out->col = calloc(nc, sizeof *out->col);
    out->resid = malloc(n * sizeof *out->resid);
    double *buf = malloc((nr > nc ? nr : nc) * sizeof *buf);
    if (!out->row || !out->col || !out->resid || !buf) {
        free(buf);
        polish_free(out);
        return err_set(err, errlen, "out of memory");
    }
    for (size_t i = 0; i < n; i++)
        out->resid[i] = isfinite(y[i]) ? y[i] : NAN;
    double old = 0;
    /* R's medpolish: rows first, the column effects' median into the overall value, then
     * columns, the row effects' median; stop when the sum of |residuals| settles. */
    for (int it = 1; it <= POLISH_MAX_ITER; it++) {
        sweep(out->resid, nr, nc, nc, 1, out->row, out->col, nc, &out->overall, buf);
        sweep(out->resid, nc, nr, 1, nc, out->col, out->row, nr, &out->overall, buf);
        double s = abs_sum(out->resid, n);
        out->iterations = it;
        /* R's test, and an absolute one: an additive table with empty cells approaches
         * its exact fit geometrically, never within 1 % of the last sum. */
        if (s <= 1e-12 * (double)have * (1 + fabs(out->overall)) || fabs(s - old) < 0.01 * s) {
            out->converged = 1;
            break;
        }
        old = s;
    }
    free(buf);
    return 0;
}

void polish_free(struct polish *p)
{
    if (!p)
        return;
    free(p->row);
    free(p->col);
    free(p->resid);
    memset(p, 0, sizeof *p);
}
