/* Unit tests for server/observe/counters.c: status classes, the duration histogram's
 * buckets (inclusive bounds, +Inf) and the totals, table-driven. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "counters.h"

static void test_responses(void **state)
{
    (void)state;
    struct counters c = {0};
    static const struct {
        unsigned status;
        unsigned class_digit; /* 0: not counted */
    } cases[] = {
        {200, 2}, {206, 2}, {304, 3}, {301, 3}, {404, 4}, {429, 4}, {503, 5}, {101, 1}, {99, 0}, {600, 0}, {0, 0},
    };
    uint64_t want[6] = {0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        counters_response(&c, cases[i].status);
        want[cases[i].class_digit]++;
    }
    for (unsigned k = 1; k <= 5; k++)
        assert_int_equal(counters_responses(&c, k), want[k]);
    assert_int_equal(counters_responses(&c, 0), 0);
    assert_int_equal(counters_responses(&c, 6), 0);
    counters_response(NULL, 200); /* ignored */
}

static void test_transfers(void **state)
{
    (void)state;
    struct counters c = {0};
    static const struct {
        uint64_t bytes;
        double seconds;
        size_t bucket; /* index in counters_bucket_le; COUNTERS_N_BUCKETS = +Inf */
    } cases[] = {
        {1000, 0.005, 0}, {24, 0.01, 0}, {7, 3.0, 7}, {5, 1000.0, COUNTERS_N_BUCKETS}, {1, -1.0, 0},
        {0, 600.0, COUNTERS_N_BUCKETS - 1},
    };
    uint64_t bytes = 0, ns = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t before = c.transfer_buckets[cases[i].bucket];
        counters_transfer(&c, cases[i].bytes, cases[i].seconds);
        assert_int_equal(c.transfer_buckets[cases[i].bucket], before + 1);
        bytes += cases[i].bytes;
        ns += cases[i].seconds > 0 ? (uint64_t)(cases[i].seconds * 1e9) : 0;
    }
    assert_int_equal(c.bytes_sent, bytes);
    assert_int_equal(counters_transfers(&c), sizeof cases / sizeof cases[0]);
    assert_int_equal(c.transfer_ns, ns); /* a negative duration counts as 0 */
    assert_true(counters_bucket_le[COUNTERS_N_BUCKETS - 1] == 600);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_responses),
        cmocka_unit_test(test_transfers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
