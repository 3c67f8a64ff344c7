/* Unit tests for lab/delayline/hold.c: the FIFO that decides which packets a batched
 * verdict releases. Table-driven: each row is an event (push or pop at a time). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "hold.h"

enum op { PUSH, POP, FLUSH, NEXT };
struct ev {
    enum op op;
    uint64_t t_ns;
    uint32_t id;     /* PUSH: id; POP/FLUSH: expected last id */
    int64_t want;    /* PUSH: return; POP/FLUSH: count popped; NEXT: ns to next due */
};

static void run(uint32_t cap, uint64_t delay, const struct ev *evs, size_t n)
{
    struct hold *h = hold_new(cap, delay);
    assert_non_null(h);
    for (size_t i = 0; i < n; i++) {
        const struct ev *e = &evs[i];
        uint32_t last = 0xdeadbeef;
        switch (e->op) {
        case PUSH:
            if (hold_push(h, e->id, 100, e->t_ns) != e->want) fail_msg("row %zu: push %u", i, e->id);
            break;
        case POP:
        case FLUSH: {
            uint32_t got = hold_pop_due(h, e->t_ns, e->op == FLUSH, &last);
            if ((int64_t)got != e->want) fail_msg("row %zu: popped %u, want %lld", i, got, (long long)e->want);
            if (got && last != e->id) fail_msg("row %zu: last id %u, want %u", i, last, e->id);
            break;
        }
        case NEXT:
            if (hold_next_due(h, e->t_ns) != e->want)
                fail_msg("row %zu: next due %lld, want %lld", i, (long long)hold_next_due(h, e->t_ns),
                         (long long)e->want);
            break;
        }
    }
    hold_free(h);
}

static void test_fifo_release(void **state)
{
    (void)state;
    static const struct ev evs[] = {
        { NEXT, 0, 0, -1 },            /* empty: no deadline */
        { PUSH, 0, 10, 0 },
        { PUSH, 1000, 11, 0 },
        { PUSH, 5000, 12, 0 },
        { NEXT, 0, 0, 10000 },         /* delay 10 us from t=0 */
        { POP, 9999, 0, 0 },           /* nothing due yet: never early */
        { POP, 11000, 11, 2 },         /* 10 and 11 due: one batch, last id 11 */
        { NEXT, 11000, 0, 4000 },
        { POP, 20000, 12, 1 },
        { NEXT, 20000, 0, -1 },
    };
    run(8, 10000, evs, sizeof evs / sizeof *evs);
}

static void test_order_and_capacity(void **state)
{
    (void)state;
    static const struct ev evs[] = {
        { PUSH, 0, 5, 0 },
        { PUSH, 0, 5, -1 },            /* same id again: refused (accept at once) */
        { PUSH, 0, 4, -1 },            /* going back: refused */
        { PUSH, 0, 6, 0 },
        { PUSH, 0, 7, -1 },            /* capacity 2: full */
        { FLUSH, 0, 6, 2 },            /* shutdown: everything, regardless of time */
        { PUSH, 0, 8, 0 },
        { POP, 10, 8, 1 },
    };
    run(2, 10, evs, sizeof evs / sizeof *evs);
}

static void test_id_wraparound(void **state)
{
    (void)state;
    static const struct ev evs[] = {
        { PUSH, 0, 0xfffffffeu, 0 },
        { PUSH, 0, 0xffffffffu, 0 },
        { PUSH, 0, 0, 0 },             /* 2^32 wraps to 0: still newer */
        { PUSH, 0, 1, 0 },
        { POP, 100, 1, 4 },
    };
    run(16, 100, evs, sizeof evs / sizeof *evs);
}

static void test_stats(void **state)
{
    (void)state;
    struct hold *h = hold_new(4, 1000);
    assert_non_null(h);
    uint32_t last;
    assert_int_equal(hold_push(h, 1, 1500, 0), 0);
    assert_int_equal(hold_push(h, 2, 64000, 0), 0);
    assert_int_equal(hold_pop_due(h, 1250, 0, &last), 2); /* 250 ns late each */
    const struct hold_stats *st = hold_stats(h);
    assert_int_equal(st->packets, 2);
    assert_int_equal(st->bytes, 65500);
    assert_int_equal(st->batches, 1);
    assert_int_equal(st->max_held, 2);
    assert_int_equal(st->late_sum_ns, 500);
    assert_int_equal(st->late_max_ns, 250);
    assert_int_equal(hold_next_due(h, 0), -1); /* empty */
    hold_free(h);
    hold_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_release),
        cmocka_unit_test(test_order_and_capacity),
        cmocka_unit_test(test_id_wraparound),
        cmocka_unit_test(test_stats),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
