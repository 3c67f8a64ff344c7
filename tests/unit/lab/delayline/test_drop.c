/* Unit tests for lab/delayline/drop.c: the delay line's loss decision. With a fixed seed
 * a drop count is deterministic; it must be within 10 % of the asked rate (the issue's
 * bound) for 1 %, 5 % and 50 %, and 0 % / 100 % must be exact. Over 10,000 draws that
 * bound is 2.3 standard deviations at 5 % and 10 at 50 %, but only 1 at 1 % (a fair
 * dropper misses it one time in three), so 1 % is drawn 100,000 times (3.2 sd). And the
 * spread must be a random one: over 1,000 seeds of 10,000 draws at 5 %, about 97.8 % of
 * the counts fall within 10 % — not all of them (that would be a pattern, not loss). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "drop.h"

#define DRAWS 10000

static uint64_t count(uint32_t ppm, uint64_t seed, unsigned n)
{
    struct drop d;
    drop_init(&d, ppm, seed);
    uint64_t k = 0;
    for (unsigned i = 0; i < n; i++)
        k += (uint64_t)drop_decide(&d);
    assert_int_equal(d.decided, n);
    assert_int_equal(d.dropped, k);
    return k;
}

static void test_rates(void **state)
{
    (void)state;
    static const struct { uint32_t ppm; uint64_t seed; unsigned n; } rows[] = {
        { 10000, 42, 10 * DRAWS }, { 50000, 42, DRAWS }, { 500000, 42, DRAWS },
        { 10000, 1, 10 * DRAWS }, { 50000, 1, DRAWS }, { 500000, 1, DRAWS },
        { 50000, 0, DRAWS }, /* seed 0 is a seed like any other (splitmix64 fills the state) */
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        uint64_t want = (uint64_t)rows[i].ppm * rows[i].n / 1000000u;
        uint64_t got = count(rows[i].ppm, rows[i].seed, rows[i].n);
        print_message("# %.1f %% seed %llu: %llu of %u dropped\n", rows[i].ppm / 1e4,
                      (unsigned long long)rows[i].seed, (unsigned long long)got, rows[i].n);
        if (got * 10 < want * 9 || got * 10 > want * 11)
            fail_msg("row %zu: %llu dropped, want %llu +- 10 %%", i, (unsigned long long)got,
                     (unsigned long long)want);
    }
}

static void test_spread(void **state)
{
    (void)state;
    unsigned within = 0;
    uint64_t total = 0;
    for (uint64_t seed = 1; seed <= 1000; seed++) {
        uint64_t k = count(50000, seed, DRAWS);
        total += k;
        within += k >= 450 && k <= 550;
    }
    print_message("# 5 %%, 1000 seeds x %d draws: %u within 10 %%, overall %.4f %%\n", DRAWS, within,
                  (double)total / (1000.0 * DRAWS) * 100.0);
    assert_in_range(within, 950, 995);
    assert_in_range(total, 4950000 / 10, 5050000 / 10); /* 10^7 draws: within 1 % of 5 % */
}

static void test_extremes(void **state)
{
    (void)state;
    assert_int_equal(count(0, 42, DRAWS), 0);
    assert_int_equal(count(1000000, 42, DRAWS), DRAWS);
    assert_int_equal(count(2000000, 42, DRAWS), DRAWS); /* clamped to 100 % */
    /* One in a million: over 10^4 draws, almost surely none, never more than a few. */
    assert_true(count(1, 42, DRAWS) <= 2);
}

/* The same seed replays the same decisions; another seed gives other ones. */
static void test_replay(void **state)
{
    (void)state;
    struct drop a, b, c;
    drop_init(&a, 50000, 7);
    drop_init(&b, 50000, 7);
    drop_init(&c, 50000, 8);
    int differ = 0;
    for (int i = 0; i < DRAWS; i++) {
        int x = drop_decide(&a), y = drop_decide(&b), z = drop_decide(&c);
        if (x != y)
            fail_msg("draw %d: same seed, different decision", i);
        differ |= x != z;
    }
    assert_true(differ);
    assert_int_not_equal(drop_seed_default(), drop_seed_default());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rates),
        cmocka_unit_test(test_spread),
        cmocka_unit_test(test_extremes),
        cmocka_unit_test(test_replay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
