/* polish: Tukey's median polish of a two-way table, the fit behind
 * `debit history --by vantage,server` (docs/store.md):
 *     y[r][c] = overall + row[r] + col[c] + resid[r][c]
 * fitted by alternately sweeping row and column medians out of the table (as R's
 * medpolish with na.rm = TRUE). Empty cells are NAN and take no part. Pure: no I/O. */
#ifndef DEBIT_POLISH_H
#define DEBIT_POLISH_H

#include <stddef.h>

/* R's default is 10; tables with empty cells may need more to settle. */
#define POLISH_MAX_ITER 100

struct polish {
    size_t nr, nc;
    double overall;
    double *row;   /* nr row effects, their median 0 */
    double *col;   /* nc column effects, their median 0 */
    double *resid; /* nr * nc, row-major; NAN where y was empty */
    int iterations;
    int converged;
};

/* Fit y (nr * nc, row-major, NAN = empty). Returns 0, or -1 (err) when the table has no
 * value or memory runs out. The result is freed with polish_free. */
int polish_fit(const double *y, size_t nr, size_t nc, struct polish *out, char *err, size_t errlen);
void polish_free(struct polish *p);

#endif
