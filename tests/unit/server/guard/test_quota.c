/* Unit tests for server/guard/quota.c: per-address budgets over a sliding window, driven by a
 * clock the test sets (every call takes NOW_MS). Each table row is one step: a take (with
 * the verdict and Retry-After it must give), a refund, a reading of what an address used,
 * or new limits (as a configuration reload sets them). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "quota.h"

enum op { TAKE, REFUND, USED, LIMITS, COUNT, TAKEOVERS };

struct step {
    enum op op;
    uint64_t now_ms;
    char who;            /* 'A', 'B', ...: the address (a key per letter) */
    uint64_t bytes;      /* TAKE: charged; REFUND: unused; USED: expected; LIMITS: budget; COUNT: addresses;
                          * TAKEOVERS: quota_stats' overflow */
    int receipt;         /* TAKE: keep the receipt in slot N; REFUND: give back receipt N */
    enum quota_verdict v;
    uint64_t retry_s;    /* TAKE with QUOTA_OVER: expected Retry-After */
    uint64_t window_ms;  /* LIMITS */
};

static void key_of(char who, unsigned char key[QUOTA_KEY_LEN])
{
    memset(key, 0, QUOTA_KEY_LEN);
    key[15] = (unsigned char)who;
}

static void run(const char *name, size_t max, const struct step *steps, size_t n)
{
    struct quota *q = quota_new(max);
    assert_non_null(q);
    struct quota_receipt rc[8];
    memset(rc, 0, sizeof rc);
    for (size_t i = 0; i < n; i++) {
        const struct step *s = &steps[i];
        unsigned char key[QUOTA_KEY_LEN];
        key_of(s->who, key);
        switch (s->op) {
        case TAKE: {
            uint64_t retry = 0;
            enum quota_verdict v = quota_take(q, key, s->bytes, s->now_ms, &rc[s->receipt], &retry);
            if (v != s->v)
                fail_msg("%s step %zu (t=%llu %c take %llu): verdict %d, want %d", name, i,
                         (unsigned long long)s->now_ms, s->who, (unsigned long long)s->bytes, v, s->v);
            if (v == QUOTA_OVER && retry != s->retry_s)
                fail_msg("%s step %zu: Retry-After %llu, want %llu", name, i, (unsigned long long)retry,
                         (unsigned long long)s->retry_s);
            break;
        }
        case REFUND: quota_refund(q, &rc[s->receipt], s->bytes, s->now_ms); break;
        case USED: {
            uint64_t u = quota_used(q, key, s->now_ms);
            if (u != s->bytes)
                fail_msg("%s step %zu (t=%llu %c): used %llu, want %llu", name, i, (unsigned long long)s->now_ms,
                         s->who, (unsigned long long)u, (unsigned long long)s->bytes);
            break;
        }
        case LIMITS: quota_set_limits(q, s->bytes, s->window_ms, s->now_ms); break;
        case COUNT:
            if (quota_addresses(q) != s->bytes)
                fail_msg("%s step %zu: %zu addresses, want %llu", name, i, quota_addresses(q),
                         (unsigned long long)s->bytes);
            break;
        case TAKEOVERS: {
            struct quota_stats st;
            quota_stats(q, &st);
            if (st.overflow != s->bytes || st.entries > st.capacity)
                fail_msg("%s step %zu: %llu takeovers (%zu of %zu entries), want %llu", name, i,
                         (unsigned long long)st.overflow, st.entries, st.capacity, (unsigned long long)s->bytes);
            break;
        }
        }
    }
    quota_free(q);
}

#define RUN(max, steps) run(#steps, max, steps, sizeof steps / sizeof steps[0])

/* 1000 bytes per 16 s: 16 slots of 1 s. */
static void test_budget_and_retry(void **state)
{
    (void)state;
    static const struct step steps[] = {
        {LIMITS, 0, 0, 1000, 0, 0, 0, 16000},
        {TAKE, 0, 'A', 600, 0, QUOTA_OK, 0, 0},
        {USED, 10, 'A', 600, 0, 0, 0, 0},
        {TAKE, 500, 'A', 600, 1, QUOTA_OK, 0, 0}, /* below the budget when it starts: served in full */
        {USED, 600, 'A', 1200, 0, 0, 0, 0},
        /* over: slot 0 (all of it) leaves when slot 16 begins, at 16 s: 15.1 s away, rounded up */
        {TAKE, 900, 'A', 1, 2, QUOTA_OVER, 16, 0},
        {USED, 900, 'A', 1200, 0, 0, 0, 0}, /* a refusal charges nothing */
        {TAKE, 900, 'B', 100, 3, QUOTA_OK, 0, 0}, /* another address is not affected */
        {REFUND, 3000, 'A', 500, 1, 0, 0, 0},     /* the second response ended 500 bytes early */
        {USED, 3000, 'A', 700, 0, 0, 0, 0},
        {TAKE, 3000, 'A', 100, 4, QUOTA_OK, 0, 0},
        {TAKE, 3100, 'A', 300, 5, QUOTA_OK, 0, 0},
        {USED, 3100, 'A', 1100, 0, 0, 0, 0},
        /* slot 0 (700) leaves at 16 s, leaving 400 < 1000: 12.8 s -> 13 */
        {TAKE, 3200, 'A', 1, 6, QUOTA_OVER, 13, 0},
        {TAKE, 15999, 'A', 1, 6, QUOTA_OVER, 1, 0}, /* 1 ms away: never "0" */
        {USED, 16000, 'A', 400, 0, 0, 0, 0},
        {USED, 16000, 'B', 0, 0, 0, 0, 0}, /* slot 0: gone too */
        {TAKE, 16000, 'A', 700, 6, QUOTA_OK, 0, 0},
        {TAKE, 16001, 'A', 1, 7, QUOTA_OVER, 3, 0}, /* 400 in slot 3 leaves at 19 s: 1100 - 400 = 700 */
        {USED, 19000, 'A', 700, 0, 0, 0, 0},
        {REFUND, 19000, 'A', 400, 4, 0, 0, 0}, /* slot 3 aged out: a late refund changes nothing */
        {USED, 19000, 'A', 700, 0, 0, 0, 0},
        {REFUND, 19000, 'A', 5000, 6, 0, 0, 0}, /* more than charged: gives back what it charged */
        {USED, 19000, 'A', 0, 0, 0, 0, 0},
    };
    RUN(0, steps);
}

/* No budget: everything served, nothing tracked. A window shorter than the slots still
 * works (1 ms slots). */
static void test_no_budget(void **state)
{
    (void)state;
    static const struct step steps[] = {
        {TAKE, 0, 'A', 1ULL << 40, 0, QUOTA_OK, 0, 0}, /* before any limits */
        {LIMITS, 0, 0, 0, 0, 0, 0, 86400000},
        {TAKE, 0, 'A', 1ULL << 40, 0, QUOTA_OK, 0, 0},
        {COUNT, 0, 0, 0, 0, 0, 0, 0},
        {LIMITS, 0, 0, 10, 0, 0, 0, 5},
        {TAKE, 0, 'A', 10, 0, QUOTA_OK, 0, 0},
        {TAKE, 0, 'A', 10, 0, QUOTA_OVER, 1, 0},
        {USED, 16, 'A', 0, 0, 0, 0, 0},
    };
    RUN(0, steps);
}

/* A full table (2 addresses; 100 bytes per 1.6 s, 100 ms slots, every take in slot 0): a
 * new address takes over the least-used entry with its use, so it is metered, and refused
 * when that use is already over the budget; aged-out entries are dropped first. */
static void test_table_full(void **state)
{
    (void)state;
    static const struct step steps[] = {
        {LIMITS, 0, 0, 100, 0, 0, 0, 1600},
        {TAKE, 0, 'A', 10, 0, QUOTA_OK, 0, 0},
        {TAKE, 0, 'B', 30, 0, QUOTA_OK, 0, 0},
        {TAKE, 50, 'C', 10, 0, QUOTA_OK, 0, 0}, /* takes over A (10, the least) */
        {USED, 50, 'C', 20, 0, 0, 0, 0},
        {USED, 50, 'A', 0, 0, 0, 0, 0},
        {COUNT, 50, 0, 2, 0, 0, 0, 0},
        {TAKEOVERS, 50, 0, 1, 0, 0, 0, 0},
        {TAKE, 60, 'B', 10, 0, QUOTA_OK, 0, 0}, /* a tracked one still counts: 40 */
        {TAKE, 70, 'A', 5, 0, QUOTA_OK, 0, 0},  /* back: takes over C (20 < 40) */
        {USED, 70, 'A', 25, 0, 0, 0, 0},
        {USED, 70, 'C', 0, 0, 0, 0, 0},
        {TAKE, 80, 'D', 100, 0, QUOTA_OK, 0, 0}, /* takes over A (25): served, now 125 */
        {TAKE, 85, 'D', 1, 0, QUOTA_OVER, 2, 0}, /* over: slot 0 leaves at 1.6 s */
        {TAKE, 90, 'E', 70, 0, QUOTA_OK, 0, 0},  /* takes over B (40 < 125): 110 */
        {TAKEOVERS, 90, 0, 4, 0, 0, 0, 0},
        /* every entry over the budget: a new address is refused, nothing taken over */
        {TAKE, 95, 'F', 1, 0, QUOTA_OVER, 2, 0},
        {USED, 95, 'F', 0, 0, 0, 0, 0},
        {USED, 95, 'E', 110, 0, 0, 0, 0},
        {USED, 95, 'D', 125, 0, 0, 0, 0},
        {TAKEOVERS, 95, 0, 4, 0, 0, 0, 0},
        {COUNT, 95, 0, 2, 0, 0, 0, 0},
        /* all aged out: dropped (on the way or by a sweep), so F gets a new entry */
        {TAKE, 1600, 'F', 10, 0, QUOTA_OK, 0, 0},
        {USED, 1600, 'F', 10, 0, 0, 0, 0},
        {TAKEOVERS, 1600, 0, 4, 0, 0, 0, 0},
    };
    RUN(2, steps);
}

/* A table past its size with the sampled takeover (200 entries, more than QUOTA_SAMPLE): a
 * flood of new addresses (one byte each, as the 110,000 one-byte requests that once left
 * every later address unmetered) neither grows the table nor lets a heavy newcomer through. */
static void test_table_flood(void **state)
{
    (void)state;
    struct quota *q = quota_new(200);
    quota_set_limits(q, 1000, 60000, 0);
    unsigned char key[QUOTA_KEY_LEN] = {0};
    for (uint32_t i = 0; i < 5000; i++) {
        memcpy(key, &i, sizeof i);
        assert_int_equal(quota_take(q, key, 1, 10, NULL, NULL), QUOTA_OK);
    }
    struct quota_stats st;
    quota_stats(q, &st);
    assert_int_equal(st.entries, 200);
    assert_int_equal(st.capacity, 200);
    assert_int_equal(st.overflow, 5000 - 200);
    /* a new address past the table is metered: its budget, then refused */
    uint32_t heavy = 999999;
    memcpy(key, &heavy, sizeof heavy);
    uint64_t retry = 0;
    int served = 0;
    for (int i = 0; i < 20 && quota_take(q, key, 100, 20, NULL, &retry) == QUOTA_OK; i++)
        served++;
    assert_in_range(served, 10, 11); /* 1000 bytes of 100, plus the one or two it took over */
    assert_int_equal(quota_take(q, key, 100, 30, NULL, &retry), QUOTA_OVER);
    assert_int_equal(retry, 60);
    quota_stats(q, &st);
    assert_int_equal(st.entries, 200);
    /* every entry at the budget: any new address is refused at once */
    for (uint32_t i = 0; i < 5000; i++) {
        memcpy(key, &i, sizeof i);
        quota_take(q, key, 1000, 40, NULL, NULL);
    }
    uint32_t fresh = 7777777;
    memcpy(key, &fresh, sizeof fresh);
    assert_int_equal(quota_take(q, key, 1, 50, NULL, NULL), QUOTA_OVER);
    quota_stats(q, &st);
    assert_int_equal(st.entries, 200);
    quota_free(q);
}

/* A reload: the budget changes and what was used is kept; a new window re-counts the use
 * as of now, and refunds from before the change are ignored. */
static void test_reload_keeps_counters(void **state)
{
    (void)state;
    static const struct step steps[] = {
        {LIMITS, 0, 0, 1000, 0, 0, 0, 16000},
        {TAKE, 0, 'A', 900, 0, QUOTA_OK, 0, 0},
        {TAKE, 100, 'A', 200, 1, QUOTA_OK, 0, 0},
        {LIMITS, 1000, 0, 2000, 0, 0, 0, 16000}, /* a larger budget, same window */
        {USED, 1000, 'A', 1100, 0, 0, 0, 0},
        {TAKE, 1000, 'A', 100, 2, QUOTA_OK, 0, 0},
        {LIMITS, 5000, 0, 1000, 0, 0, 0, 32000}, /* window 32 s: 2 s slots; 1200 counted as of 5 s */
        {USED, 5000, 'A', 1200, 0, 0, 0, 0},
        {REFUND, 5000, 'A', 200, 1, 0, 0, 0}, /* from before the change: ignored */
        {USED, 5000, 'A', 1200, 0, 0, 0, 0},
        /* slot 2 (4-6 s) leaves when slot 18 begins, at 36 s */
        {TAKE, 6000, 'A', 1, 3, QUOTA_OVER, 30, 0},
        {USED, 35999, 'A', 1200, 0, 0, 0, 0},
        {USED, 36000, 'A', 0, 0, 0, 0, 0},
    };
    RUN(0, steps);
}

/* Many addresses in a small table's buckets: each keeps its own count. */
static void test_many_keys(void **state)
{
    (void)state;
    struct quota *q = quota_new(5000);
    quota_set_limits(q, 1000, 60000, 0);
    for (int i = 0; i < 4000; i++) {
        unsigned char key[QUOTA_KEY_LEN] = {0};
        memcpy(key, &i, sizeof i);
        assert_int_equal(quota_take(q, key, (uint64_t)i % 1000 + 1, 10, NULL, NULL), QUOTA_OK);
    }
    assert_int_equal(quota_addresses(q), 4000);
    for (int i = 0; i < 4000; i++) {
        unsigned char key[QUOTA_KEY_LEN] = {0};
        memcpy(key, &i, sizeof i);
        assert_int_equal(quota_used(q, key, 20), (uint64_t)i % 1000 + 1);
    }
    quota_free(q);
    quota_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_budget_and_retry),
        cmocka_unit_test(test_no_budget),
        cmocka_unit_test(test_table_full),
        cmocka_unit_test(test_table_flood),
        cmocka_unit_test(test_reload_keeps_counters),
        cmocka_unit_test(test_many_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
