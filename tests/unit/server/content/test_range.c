/* Unit tests for server/content/range.c: Range and If-Range interpretation (dates in the three
 * HTTP-date formats), table-driven. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "range.h"

struct row {
    const char *header;
    uint64_t size;
    enum range_kind kind;
    uint64_t first, last;
};

static const char *kind_name(enum range_kind k)
{
    static const char *const n[] = {"NONE", "ONE", "MULTI", "UNSATISFIABLE"};
    return n[k];
}

static void test_parse(void **state)
{
    (void)state;
    static const struct row rows[] = {
        {NULL, 100, RANGE_NONE, 0, 0},
        {"bytes=0-9", 100, RANGE_ONE, 0, 9},
        {"bytes=10-", 100, RANGE_ONE, 10, 99},
        {"bytes=-10", 100, RANGE_ONE, 90, 99},
        {"bytes=-1000", 100, RANGE_ONE, 0, 99},       /* suffix longer than the file: all */
        {"bytes=50-5000", 100, RANGE_ONE, 50, 99},    /* clamped */
        {"bytes=99-99", 100, RANGE_ONE, 99, 99},
        {"bytes=0-0", 1, RANGE_ONE, 0, 0},
        {"Bytes = 1-2", 100, RANGE_ONE, 1, 2},        /* unit is case-insensitive, spaces ok */
        {"bytes=1-2, ", 100, RANGE_ONE, 1, 2},        /* empty list element */
        {"bytes=100-", 100, RANGE_UNSATISFIABLE, 0, 0},
        {"bytes=100-200", 100, RANGE_UNSATISFIABLE, 0, 0},
        {"bytes=-0", 100, RANGE_UNSATISFIABLE, 0, 0},
        {"bytes=0-", 0, RANGE_UNSATISFIABLE, 0, 0},   /* nothing is inside an empty file */
        {"bytes=-5", 0, RANGE_UNSATISFIABLE, 0, 0},
        {"bytes=0-1,5-6", 100, RANGE_MULTI, 0, 0},
        {"bytes=0-1,500-600", 100, RANGE_MULTI, 0, 0}, /* one satisfiable among several */
        {"bytes=500-600,700-", 100, RANGE_UNSATISFIABLE, 0, 0},
        {"bytes=5-1", 100, RANGE_NONE, 0, 0},         /* last < first: invalid, ignored */
        {"bytes=a-b", 100, RANGE_NONE, 0, 0},
        {"bytes=1-2x", 100, RANGE_NONE, 0, 0},
        {"bytes=", 100, RANGE_NONE, 0, 0},
        {"bytes 0-1", 100, RANGE_NONE, 0, 0},
        {"items=0-1", 100, RANGE_NONE, 0, 0},
        {"bytes=--1", 100, RANGE_NONE, 0, 0},
        {"bytes=+1-2", 100, RANGE_NONE, 0, 0},
        /* more digits than 64 bits: still a position beyond any file (RFC 9110 14.1.1: 1*DIGIT),
         * as nginx answers: a first beyond the end is 416, a last or suffix past it clamps */
        {"bytes=99999999999999999999-", 100, RANGE_UNSATISFIABLE, 0, 0},
        {"bytes=99999999999999999999-99999999999999999999", 100, RANGE_UNSATISFIABLE, 0, 0},
        {"bytes=5-99999999999999999999", 100, RANGE_ONE, 5, 99},
        {"bytes=-99999999999999999999", 100, RANGE_ONE, 0, 99},
        {"bytes=0-18446744073709551615", 100, RANGE_ONE, 0, 99},
        {"bytes=1073741823-", 1073741824, RANGE_ONE, 1073741823, 1073741823},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct range r = {12345, 12345};
        enum range_kind k = range_parse(rows[i].header, rows[i].size, &r);
        if (k != rows[i].kind)
            fail_msg("\"%s\" (size %llu): got %s, want %s", rows[i].header ? rows[i].header : "(null)",
                     (unsigned long long)rows[i].size, kind_name(k), kind_name(rows[i].kind));
        if (k == RANGE_ONE && (r.first != rows[i].first || r.last != rows[i].last))
            fail_msg("\"%s\": got %llu-%llu, want %llu-%llu", rows[i].header, (unsigned long long)r.first,
                     (unsigned long long)r.last, (unsigned long long)rows[i].first,
                     (unsigned long long)rows[i].last);
    }
}

static void test_if_range(void **state)
{
    (void)state;
    const char *etag = "\"1-0-400\"", *lm = "Mon, 30 Nov 2026 03:14:29 GMT";
    static const struct {
        const char *if_range;
        int ok;
    } rows[] = {
        {NULL, 1},
        {"\"1-0-400\"", 1},
        {" \"1-0-400\" ", 1},
        {"\"1-0-401\"", 0},
        {"W/\"1-0-400\"", 0}, /* weak never matches */
        {"Mon, 30 Nov 2026 03:14:29 GMT", 1},
        {"Mon, 30 Nov 2026 03:14:30 GMT", 0},
        /* the same second in the other two HTTP-date formats (conditional.c's parser) */
        {"Mon Nov 30 03:14:29 2026", 1},
        {"Monday, 30-Nov-26 03:14:29 GMT", 1},
        {"Mon Nov 30 03:14:28 2026", 0},
        {"Mon, 30 Nov 2026 03:14:29 GMT x", 0}, /* not one date */
        {"Mon, 30 Nov 2026 03:14:29", 0},
        {"", 0},
        {"garbage", 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (range_if_range_ok(rows[i].if_range, etag, lm) != rows[i].ok)
            fail_msg("If-Range \"%s\": want %d", rows[i].if_range ? rows[i].if_range : "(null)", rows[i].ok);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_if_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
