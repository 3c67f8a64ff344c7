/* stats: the few statistics a throughput comparison needs, on small samples of doubles.
 * Medians are the seed's figure; a ratio of medians gets a seeded bootstrap percentile
 * confidence interval, and two samples a two-sided Mann-Whitney U test. Every function is
 * pure (no globals, no printing): the same input and seed always give the same output. */
#ifndef DEBIT_STATS_H
#define DEBIT_STATS_H

#include <stddef.h>
#include <stdint.h>

/* Median of x[0..n) (mean of the two middle values when n is even, as R and numpy).
 * x is not modified. Returns NAN when n == 0. */
double stats_median(const double *x, size_t n);
/* Smallest / largest of x[0..n); NAN when n == 0. */
double stats_min(const double *x, size_t n);
double stats_max(const double *x, size_t n);
/* Quantile q in [0,1] of x[0..n), linear interpolation between order statistics (R's
 * type 7, numpy's default). NAN when n == 0. */
double stats_quantile(const double *x, size_t n, double q);

enum stats_mw_method {
    STATS_MW_EXACT = 0,  /* exact null distribution of U (no ties, both n <= STATS_MW_EXACT_MAX) */
    STATS_MW_NORMAL,     /* normal approximation, tie-corrected variance, continuity correction */
};
#define STATS_MW_EXACT_MAX 50

struct stats_mw {
    double u1;       /* U statistic of sample a: pairs (a_i, b_j) with a_i > b_j, ties count 1/2 */
    double u2;       /* the same for b; u1 + u2 == na * nb */
    double p;        /* two-sided p-value */
    enum stats_mw_method method;
    double p_min;    /* the smallest two-sided p any data of these sizes can give (exact test) */
};

/* The smallest two-sided p-value the exact Mann-Whitney test can reach with samples of
 * na and nb: 2 / C(na+nb, na), the two most extreme rank arrangements (capped at 1).
 * At or above the significance level no outcome can be significant, so a p-value is
 * no evidence either way: 3 + 3 runs give 0.1 (4 + 3: 0.057, 4 + 4: 0.029). NAN when a
 * sample is empty. */
double stats_mw_min_p(size_t na, size_t nb);
/* The level below which debit calls a difference significant. */
#define STATS_ALPHA 0.05

/* Two-sided Mann-Whitney U test of a[0..na) against b[0..nb) (the same as scipy's
 * mannwhitneyu(a, b, alternative="two-sided", method="auto" with our exact limit)).
 * Exact when there are no ties and na, nb <= STATS_MW_EXACT_MAX, else normal approximation
 * with tie correction and continuity correction. Returns 0, or -1 when na or nb is 0. */
int stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb, struct stats_mw *out);
/* "exact" or "normal approximation (tie-corrected)". */
const char *stats_mw_method_name(enum stats_mw_method m);

/* Percentile-bootstrap confidence interval for median(b) / median(a): `resamples`
 * resamples of each sample with replacement (seeded; same seed, same interval), the
 * (1-level)/2 and (1+level)/2 quantiles of the resampled ratios. Resamples whose
 * median(a) is 0 are skipped. Returns 0, or -1 when a sample is empty, resamples is 0,
 * level is not in (0,1) or no resample had a non-zero median(a). */
int stats_bootstrap_ratio_ci(const double *a, size_t na, const double *b, size_t nb,
                             unsigned resamples, double level, uint64_t seed,
                             double *lo, double *hi);

/* Deterministic PRNG (splitmix64) shared by the bootstrap and random run orders, so a
 * printed seed reproduces both. */
uint64_t stats_rand_next(uint64_t *state);
/* Uniform integer in [0, n), n > 0, without modulo bias. */
uint64_t stats_rand_below(uint64_t *state, uint64_t n);

#endif
