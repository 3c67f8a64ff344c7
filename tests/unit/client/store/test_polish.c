/* Unit tests for client/store/polish.c, table-driven: tables built from known effects
 * (overall + row + column, row and column effects each of median 0) must give those
 * effects back, with an outlier cell or empty cells, and the outlier as the residual. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "polish.h"

#define MAXR 4
#define MAXC 5

struct polish_case {
    const char *name;
    size_t nr, nc;
    double overall, row[MAXR], col[MAXC];
    double extra[MAXR][MAXC]; /* added to the additive table: outliers */
    int empty[MAXR][MAXC];    /* 1: the cell has no value */
};

static const struct polish_case cases[] = {
    {"additive 3x3", 3, 3, 4.6, {-0.5, 0, 0.7}, {-0.2, 0, 0.3}, {{0}}, {{0}}},
    {"additive 2x4 (factors of 1/2 and 2)", 3, 4, 6.0, {-0.6931, 0, 0.6931}, {-1, -0.1, 0.1, 2}, {{0}}, {{0}}},
    {"one outlier cell", 3, 3, 5.0, {-1, 0, 1}, {-0.4, 0, 0.4}, {{0, 0, 0}, {0, 3, 0}, {0, 0, 0}}, {{0}}},
    {"empty cells", 4, 5, 3.0, {-0.3, -0.1, 0.1, 0.3}, {-0.5, -0.2, 0, 0.2, 0.9}, {{0}},
     {{0, 1, 0, 0, 0}, {0, 0, 0, 1, 0}, {1, 0, 0, 0, 0}, {0, 0, 1, 0, 0}}},
};

static void test_known_effects(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const struct polish_case *t = &cases[k];
        double y[MAXR * MAXC];
        for (size_t i = 0; i < t->nr; i++)
            for (size_t j = 0; j < t->nc; j++)
                y[i * t->nc + j] = t->empty[i][j] ? NAN : t->overall + t->row[i] + t->col[j] + t->extra[i][j];
        struct polish p;
        char err[128];
        assert_int_equal(polish_fit(y, t->nr, t->nc, &p, err, sizeof err), 0);
        print_message("# %s: %d iterations\n", t->name, p.iterations);
        assert_true(p.converged);
        assert_float_equal(p.overall, t->overall, 1e-9);
        for (size_t i = 0; i < t->nr; i++)
            assert_float_equal(p.row[i], t->row[i], 1e-9);
        for (size_t j = 0; j < t->nc; j++)
            assert_float_equal(p.col[j], t->col[j], 1e-9);
        for (size_t i = 0; i < t->nr; i++)
            for (size_t j = 0; j < t->nc; j++) {
                double r = p.resid[i * t->nc + j];
                if (t->empty[i][j])
                    assert_true(isnan(r));
                else
                    assert_float_equal(r, t->extra[i][j], 1e-9);
            }
        polish_free(&p);
    }
}

/* A table that is not additive, worked by hand: the row medians 2 5 8 leave
 * [[-1 0 1] [-1 0 4] [-1 0 12]]; the column medians -1 0 4 leave [[0 0 -3] [0 0 0] [0 0 8]];
 * the row effects' median 5 becomes the overall value. The second sweep moves nothing
 * (every median 0), so: overall 5, rows -3 0 3, columns -1 0 4, residuals -3 and 8. */
static void test_not_additive(void **state)
{
    (void)state;
    const double y[9] = {1, 2, 3, 4, 5, 9, 7, 8, 20};
    struct polish p;
    assert_int_equal(polish_fit(y, 3, 3, &p, NULL, 0), 0);
    assert_float_equal(p.overall, 5, 1e-9);
    const double row[3] = {-3, 0, 3}, col[3] = {-1, 0, 4};
    const double res[9] = {0, 0, -3, 0, 0, 0, 0, 0, 8};
    for (int i = 0; i < 3; i++) {
        assert_float_equal(p.row[i], row[i], 1e-9);
        assert_float_equal(p.col[i], col[i], 1e-9);
    }
    for (int i = 0; i < 9; i++)
        assert_float_equal(p.resid[i], res[i], 1e-9);
    polish_free(&p);
}

static void test_empty_table(void **state)
{
    (void)state;
    const double y[2] = {NAN, NAN};
    struct polish p;
    char err[128] = "";
    assert_int_equal(polish_fit(y, 1, 2, &p, err, sizeof err), -1);
    assert_string_equal(err, "no cell has a value");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_effects),
        cmocka_unit_test(test_not_additive),
        cmocka_unit_test(test_empty_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
