/* Unit tests for common/stats.c, table-driven. Expected p-values were computed
 * independently in Python (exact: enumeration of every rank arrangement; normal: the
 * tie-corrected formula with continuity correction, as scipy.stats.mannwhitneyu). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "stats.h"

#define MAXN 64

struct sample_row {
    size_t n;
    double x[8];
    double median, min, max, q25;
};

static void test_median_min_max(void **state)
{
    (void)state;
    static const struct sample_row rows[] = {
        {1, {5}, 5, 5, 5, 5},
        {2, {1, 3}, 2, 1, 3, 1.5},
        {5, {722, 597, 312, 723, 726}, 722, 312, 726, 597},
        {4, {4, 1, 3, 2}, 2.5, 1, 4, 1.75},
        {6, {10, 10, 10, 20, 20, 30}, 15, 10, 30, 10},
        {7, {-1, 0.5, 9, 3, 3, 3, 2}, 3, -1, 9, 1.25},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct sample_row *r = &rows[i];
        double copy[8];
        memcpy(copy, r->x, sizeof copy);
        assert_float_equal(stats_median(r->x, r->n), r->median, 1e-12);
        assert_float_equal(stats_min(r->x, r->n), r->min, 1e-12);
        assert_float_equal(stats_max(r->x, r->n), r->max, 1e-12);
        assert_float_equal(stats_quantile(r->x, r->n, 0.25), r->q25, 1e-12);
        assert_memory_equal(copy, r->x, sizeof copy); /* input untouched */
    }
    assert_true(isnan(stats_median(NULL, 0)));
    assert_true(isnan(stats_min(NULL, 0)));
    assert_true(isnan(stats_max(NULL, 0)));
}

struct mw_row {
    size_t na, nb;
    double a[8], b[8];
    double u1, p;
    enum stats_mw_method method;
};

static void test_mann_whitney(void **state)
{
    (void)state;
    static const struct mw_row rows[] = {
        {5, 5, {1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}, 0, 0.0079365079365079361, STATS_MW_EXACT},
        {5, 5, {722, 723, 726, 720, 719}, {404, 476, 452, 392, 410}, 25, 0.0079365079365079361, STATS_MW_EXACT},
        {4, 5, {1.1, 2.3, 3.5, 4.2}, {2.0, 3.0, 5.0, 6.0, 7.1}, 5, 0.2857142857142857, STATS_MW_EXACT},
        {6, 7, {10.5, 11.2, 9.8, 10.1, 12.0, 9.0}, {10.7, 11.9, 12.4, 10.9, 13.1, 11.5, 12.8}, 6,
         0.034965034965034968, STATS_MW_EXACT},
        {1, 2, {3.0}, {1.0, 2.0}, 2, 0.66666666666666663, STATS_MW_EXACT},
        {5, 5, {1, 2, 2, 3, 4}, {2, 3, 3, 5, 6}, 6, 0.19882894401644238, STATS_MW_NORMAL},
        {6, 6, {1, 1, 2, 2, 3, 3}, {3, 3, 4, 4, 5, 5}, 2, 0.010925908404662279, STATS_MW_NORMAL},
        {3, 4, {5, 5, 5}, {5, 5, 5, 5}, 6, 1.0, STATS_MW_NORMAL}, /* all tied */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct mw_row *r = &rows[i];
        struct stats_mw mw;
        assert_int_equal(stats_mann_whitney(r->a, r->na, r->b, r->nb, &mw), 0);
        assert_float_equal(mw.u1, r->u1, 1e-12);
        assert_float_equal(mw.u1 + mw.u2, (double)(r->na * r->nb), 1e-12);
        if (fabs(mw.p - r->p) > 1e-9)
            fail_msg("row %zu: p = %.17g, want %.17g", i, mw.p, r->p);
        assert_int_equal(mw.method, r->method);
        /* Symmetric in the order of the samples. */
        struct stats_mw sw;
        assert_int_equal(stats_mann_whitney(r->b, r->nb, r->a, r->na, &sw), 0);
        assert_float_equal(sw.p, mw.p, 1e-12);
        assert_float_equal(sw.u1, mw.u2, 1e-12);
    }
    struct stats_mw mw;
    assert_int_equal(stats_mann_whitney(NULL, 0, (double[]){1}, 1, &mw), -1);
}

/* More than STATS_MW_EXACT_MAX per sample, no ties: the normal approximation. */
/* The smallest p the exact test can give: 2 / C(na+nb, na). 3 + 3 cannot reach 0.05
 * whatever the data, and the test itself agrees (fully separated samples give it). */
static void test_mw_min_p(void **state)
{
    (void)state;
    static const struct {
        size_t na, nb;
        double p;
    } rows[] = {
        {1, 1, 1.0}, {2, 2, 2.0 / 6}, {3, 3, 0.1}, {4, 3, 2.0 / 35}, {3, 4, 2.0 / 35},
        {4, 4, 2.0 / 70}, {5, 3, 2.0 / 56}, {5, 5, 2.0 / 252}, {10, 10, 2.0 / 184756},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_float_equal(stats_mw_min_p(rows[i].na, rows[i].nb), rows[i].p, 1e-12);
    assert_true(isnan(stats_mw_min_p(0, 3)));
    struct stats_mw mw;
    assert_int_equal(stats_mann_whitney((double[]){1, 2, 3}, 3, (double[]){4, 5, 6}, 3, &mw), 0);
    assert_float_equal(mw.p, 0.1, 1e-12);
    assert_float_equal(mw.p_min, 0.1, 1e-12);
    assert_true(mw.p_min >= STATS_ALPHA);
    assert_int_equal(stats_mann_whitney((double[]){1, 2, 3, 4}, 4, (double[]){5, 6, 7, 8}, 4, &mw), 0);
    assert_float_equal(mw.p, mw.p_min, 1e-12);
    assert_true(mw.p_min < STATS_ALPHA);
}

static void test_mann_whitney_large(void **state)
{
    (void)state;
    double a[60], b[60];
    for (int i = 0; i < 60; i++) {
        a[i] = i * 2.0;
        b[i] = i * 2.0 + 1.5;
    }
    struct stats_mw mw;
    assert_int_equal(stats_mann_whitney(a, 60, b, 60, &mw), 0);
    assert_int_equal(mw.method, STATS_MW_NORMAL);
    assert_float_equal(mw.u1, 1770, 1e-9);
    assert_float_equal(mw.p, 0.87695152018682465, 1e-9);
}

struct ci_row {
    size_t na, nb;
    double a[8], b[8];
    double level, lo, hi;
};

static void test_bootstrap_ci(void **state)
{
    (void)state;
    /* Expected values: quantiles of the exact bootstrap distribution (all 16 equally likely
     * resample pairs for n = 2, enumerated in Python); 20000 resamples land on them. */
    static const struct ci_row rows[] = {
        {2, 2, {1, 3}, {2, 6}, 0.95, 2.0 / 3.0, 6.0},
        {2, 2, {1, 3}, {2, 6}, 0.50, 4.0 / 3.0, 3.0},
        {3, 3, {10, 10, 10}, {20, 20, 20}, 0.95, 2.0, 2.0},
        {5, 5, {700, 700, 700, 700, 700}, {350, 350, 350, 350, 350}, 0.95, 0.5, 0.5},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct ci_row *r = &rows[i];
        double lo, hi;
        assert_int_equal(stats_bootstrap_ratio_ci(r->a, r->na, r->b, r->nb, 20000, r->level, 42, &lo, &hi), 0);
        if (fabs(lo - r->lo) > 1e-9 || fabs(hi - r->hi) > 1e-9)
            fail_msg("row %zu: [%g, %g], want [%g, %g]", i, lo, hi, r->lo, r->hi);
    }
}

static void test_bootstrap_properties(void **state)
{
    (void)state;
    double a[] = {722, 597, 712, 730, 705}, b[] = {404, 372, 476, 390, 420};
    double lo, hi, lo2, hi2;
    assert_int_equal(stats_bootstrap_ratio_ci(a, 5, b, 5, 5000, 0.95, 7, &lo, &hi), 0);
    double ratio = stats_median(b, 5) / stats_median(a, 5);
    assert_true(lo <= ratio && ratio <= hi);
    assert_true(lo >= 372.0 / 730 && hi <= 476.0 / 597);
    /* Same seed, same interval; another seed may differ but stays inside the bounds. */
    assert_int_equal(stats_bootstrap_ratio_ci(a, 5, b, 5, 5000, 0.95, 7, &lo2, &hi2), 0);
    assert_float_equal(lo, lo2, 0);
    assert_float_equal(hi, hi2, 0);
    /* Bad arguments. */
    assert_int_equal(stats_bootstrap_ratio_ci(a, 0, b, 5, 100, 0.95, 1, &lo, &hi), -1);
    assert_int_equal(stats_bootstrap_ratio_ci(a, 5, b, 5, 0, 0.95, 1, &lo, &hi), -1);
    assert_int_equal(stats_bootstrap_ratio_ci(a, 5, b, 5, 100, 1.0, 1, &lo, &hi), -1);
    double zero[] = {0, 0};
    assert_int_equal(stats_bootstrap_ratio_ci(zero, 2, b, 5, 100, 0.95, 1, &lo, &hi), -1);
}

static void test_rand(void **state)
{
    (void)state;
    /* splitmix64 reference outputs for seed 0 (Vigna's splitmix64.c). */
    uint64_t s = 0;
    assert_true(stats_rand_next(&s) == 0xe220a8397b1dcdafULL);
    assert_true(stats_rand_next(&s) == 0x6e789e6aa1b965f4ULL);
    uint64_t counts[3] = {0};
    s = 99;
    for (int i = 0; i < 3000; i++)
        counts[stats_rand_below(&s, 3)]++;
    for (int i = 0; i < 3; i++)
        assert_true(counts[i] > 850 && counts[i] < 1150);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_median_min_max),
        cmocka_unit_test(test_mann_whitney),
        cmocka_unit_test(test_mw_min_p),
        cmocka_unit_test(test_mann_whitney_large),
        cmocka_unit_test(test_bootstrap_ci),
        cmocka_unit_test(test_bootstrap_properties),
        cmocka_unit_test(test_rand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
