/* stats: see stats.h. */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

/* Sorted copy (caller frees), or NULL. */
static double *sorted_copy(const double *x, size_t n)
{
    double *s = malloc(n * sizeof *s);
    if (!s)
        return NULL;
    memcpy(s, x, n * sizeof *s);
    qsort(s, n, sizeof *s, cmp_double);
    return s;
}

static double quantile_sorted(const double *s, size_t n, double q)
{
    if (q <= 0)
        return s[0];
    if (q >= 1)
        return s[n - 1];
    double h = (double)(n - 1) * q;
    size_t i = (size_t)floor(h);
    if (i + 1 >= n)
        return s[n - 1];
    return s[i] + (h - (double)i) * (s[i + 1] - s[i]);
}

double stats_quantile(const double *x, size_t n, double q)
{
    if (n == 0)
        return NAN;
    double *s = sorted_copy(x, n);
    if (!s)
        return NAN;
    double v = quantile_sorted(s, n, q);
    free(s);
    return v;
}

static double median_sorted(const double *s, size_t n)
{
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

double stats_median(const double *x, size_t n)
{
    if (n == 0)
        return NAN;
    double *s = sorted_copy(x, n);
    if (!s)
        return NAN;
    double m = median_sorted(s, n);
    free(s);
    return m;
}

/* The smallest (max == 0) or largest element of x[0..n); NAN when n == 0. */
static double extreme(const double *x, size_t n, int max)
{
    if (n == 0)
        return NAN;
    double m = x[0];
    for (size_t i = 1; i < n; i++)
        if (max ? x[i] > m : x[i] < m)
            m = x[i];
    return m;
}

double stats_min(const double *x, size_t n)
{
    return extreme(x, n, 0);
}

double stats_max(const double *x, size_t n)
{
    return extreme(x, n, 1);
}

const char *stats_mw_method_name(enum stats_mw_method m)
{
    return m == STATS_MW_EXACT ? "exact" : "normal approximation (tie-corrected)";
}

/* P(U <= u) under H0 for sample sizes m, n: counts of rank arrangements, by the
 * recurrence c(m,n,k) = c(m-1,n,k-n) + c(m,n-1,k) over one table per m. Doubles hold the
 * counts (C(100,50) ~ 1e29 fits with enough precision for a p-value). */
static double mw_exact_cdf(size_t m, size_t n, double u)
{
    size_t maxu = m * n;
    /* c[i][j][k] flattened would be large; iterate over j with a rolling array per i. */
    double *prev = calloc((n + 1) * (maxu + 1), sizeof *prev); /* row for i-1: [j][k] */
    double *cur = calloc((n + 1) * (maxu + 1), sizeof *cur);
    if (!prev || !cur) {
        free(prev);
        free(cur);
        return NAN;
    }
#define C(a, j, k) (a)[(j) * (maxu + 1) + (k)]
    for (size_t j = 0; j <= n; j++)
        C(prev, j, 0) = 1; /* i = 0: only U = 0 */
    for (size_t i = 1; i <= m; i++) {
        memset(cur, 0, (n + 1) * (maxu + 1) * sizeof *cur);
        C(cur, 0, 0) = 1;
        for (size_t j = 1; j <= n; j++)
            for (size_t k = 0; k <= i * j; k++)
                C(cur, j, k) = (k >= j ? C(prev, j, k - j) : 0) + C(cur, j - 1, k);
        double *t = prev;
        prev = cur;
        cur = t;
    }
    double total = 0, below = 0;
    for (size_t k = 0; k <= maxu; k++) {
        total += C(prev, n, k);
        if ((double)k <= u + 1e-9)
            below += C(prev, n, k);
    }
#undef C
    free(prev);
    free(cur);
    return below / total;
}

double stats_mw_min_p(size_t na, size_t nb)
{
    if (na == 0 || nb == 0)
        return NAN;
    /* C(na+nb, k) with k the smaller size, as a product of ratios (exact for small sizes,
     * within double precision beyond) */
    size_t k = na < nb ? na : nb, n = na + nb;
    double c = 1;
    for (size_t i = 1; i <= k; i++)
        c = c * (double)(n - k + i) / (double)i;
    double p = 2 / c;
    return p > 1 ? 1 : p;
}

int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct stats_mw *out)
{
    if (na == 0 || nb == 0)
        return -1;
    out->p_min = stats_mw_min_p(na, nb);
    double u1 = 0;
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++)
            u1 += a[i] > b[j] ? 1.0 : a[i] == b[j] ? 0.5 : 0.0;
    double nn = (double)na * (double)nb;
    out->u1 = u1;
    out->u2 = nn - u1;

    /* Tie groups over the pooled sample, for the variance correction. */
    size_t n = na + nb;
    double *pool = malloc(n * sizeof *pool);
    if (!pool)
        return -1;
    memcpy(pool, a, na * sizeof *pool);
    memcpy(pool + na, b, nb * sizeof *pool);
    qsort(pool, n, sizeof *pool, cmp_double);
    double tie_sum = 0;
    int ties = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && pool[j] == pool[i])
            j++;
        double t = (double)(j - i);
        if (t > 1) {
            ties = 1;
            tie_sum += t * t * t - t;
        }
        i = j;
    }
    free(pool);

    if (!ties && na <= STATS_MW_EXACT_MAX && nb <= STATS_MW_EXACT_MAX) {
        /* Two-sided: twice the smaller tail, as scipy. The distribution is symmetric, so
         * P(U >= u_big) = P(U <= nn - u_big) = P(U <= u_small). */
        double us = u1 < nn - u1 ? u1 : nn - u1;
        double p = 2 * mw_exact_cdf(na, nb, us);
        out->p = p > 1 ? 1 : p;
        out->method = STATS_MW_EXACT;
        return 0;
    }
    double mu = nn / 2;
    double dn = (double)n;
    double var = nn / 12.0 * ((dn + 1) - tie_sum / (dn * (dn - 1)));
    out->method = STATS_MW_NORMAL;
    if (var <= 0) {
        out->p = 1; /* every value tied: no evidence of a difference */
        return 0;
    }
    double ubig = u1 > nn - u1 ? u1 : nn - u1;
    double z = (ubig - mu - 0.5) / sqrt(var);
    double p = erfc(z / sqrt(2.0));
    out->p = p > 1 ? 1 : p;
    return 0;
}

uint64_t stats_rand_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t stats_rand_below(uint64_t *state, uint64_t n)
{
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t r;
    do
        r = stats_rand_next(state);
    while (r >= limit);
    return r % n;
}

static double resampled_median(const double *x, size_t n, double *scratch, uint64_t *rng)
{
    for (size_t i = 0; i < n; i++)
        scratch[i] = x[stats_rand_below(rng, n)];
    qsort(scratch, n, sizeof *scratch, cmp_double);
    return median_sorted(scratch, n);
}

int stats_bootstrap_ratio_ci(const double *a, size_t na, const double *b, size_t nb,
                             unsigned resamples, double level, uint64_t seed,
                             double *lo, double *hi)
{
    if (na == 0 || nb == 0 || resamples == 0 || !(level > 0 && level < 1))
        return -1;
    double *ratios = malloc(resamples * sizeof *ratios);
    double *scratch = malloc((na > nb ? na : nb) * sizeof *scratch);
    if (!ratios || !scratch) {
        free(ratios);
        free(scratch);
        return -1;
    }
    uint64_t rng = seed;
    size_t k = 0;
    for (unsigned r = 0; r < resamples; r++) {
        double ma = resampled_median(a, na, scratch, &rng);
        double mb = resampled_median(b, nb, scratch, &rng);
        if (ma != 0)
            ratios[k++] = mb / ma;
    }
    int rc = -1;
    if (k > 0) {
        qsort(ratios, k, sizeof *ratios, cmp_double);
        *lo = quantile_sorted(ratios, k, (1 - level) / 2);
        *hi = quantile_sorted(ratios, k, (1 + level) / 2);
        rc = 0;
    }
    free(ratios);
    free(scratch);
    return rc;
}
