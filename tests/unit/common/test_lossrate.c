/* Unit tests for common/lossrate.c: the loss-rate syntax every program shares. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "lossrate.h"

static void test_parse(void **state)
{
    (void)state;
    static const struct { const char *in; uint32_t want; const char *err; } rows[] = {
        { "5%", 50000, NULL },
        { "0.5%", 5000, NULL },
        { "1.25%", 12500, NULL },
        { "0.0001%", 1, NULL },
        { "100%", 1000000, NULL },
        { "100.0000%", 1000000, NULL },
        { "0%", 0, NULL },
        { "0", 0, NULL },
        { "0.0", 0, NULL },
        { "007%", 70000, NULL },
        { "101%", 0, "'101%': above 100%" },
        { "150%", 0, "above 100%" },
        { "100.0001%", 0, "above 100%" },
        { "100.00001%", 0, "above 100%" },
        { "1000000000000000000000%", 0, "above 100%" },
        { "-1%", 0, "'-1%': a loss rate cannot be negative" },
        { "5", 0, "'5': the % sign is missing" },
        { "0.005", 0, "the % sign is missing" },
        { "0.00001%", 0, "'0.00001%': finer than 0.0001%" },
        { "1.23456%", 0, "finer than 0.0001%" },
        { "", 0, "empty value" },
        { "lots", 0, "'lots': not a number" },
        { " 5%", 0, "not a number" },
        { "5%%", 0, "unknown unit" },
        { "5 %", 0, "unknown unit" },
        { "5ppm", 0, "unknown unit" },
        { "1e2%", 0, "unknown unit" },
        { ".5%", 0, "not a number" },
        { "5.%", 0, "not a number" },
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        char err[256] = "";
        uint32_t v = 12345;
        int rc = lossrate_parse(rows[i].in, &v, err, sizeof err);
        if (rows[i].err) {
            if (rc != -1 || !strstr(err, rows[i].err))
                fail_msg("\"%s\": rc %d, error '%s', want '%s'", rows[i].in, rc, err, rows[i].err);
            if (v != 12345)
                fail_msg("\"%s\": output written on error", rows[i].in);
        } else if (rc != 0 || v != rows[i].want) {
            fail_msg("\"%s\": rc %d, %u ppm (%s), want %u", rows[i].in, rc, v, err, rows[i].want);
        }
    }
}

static void test_format(void **state)
{
    (void)state;
    static const struct { uint32_t ppm; const char *want; } rows[] = {
        { 0, "0%" }, { 1, "0.0001%" }, { 5000, "0.5%" }, { 12500, "1.25%" }, { 50000, "5%" }, { 1000000, "100%" },
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        char buf[16], err[128];
        uint32_t back;
        lossrate_format(rows[i].ppm, buf, sizeof buf);
        assert_string_equal(buf, rows[i].want);
        assert_int_equal(lossrate_parse(buf, &back, err, sizeof err), 0); /* round trip */
        assert_int_equal(back, rows[i].ppm);
    }
    assert_true(lossrate_pct(5000) == 0.5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
