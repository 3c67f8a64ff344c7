/* Unit tests for common/units.c: table-driven, every row one parse. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "units.h"

struct row {
    const char *in;
    enum units_err err;
    uint64_t want;
};

static void run_rows(const struct row *rows, size_t n, enum units_err (*parse)(const char *, uint64_t *))
{
    for (size_t i = 0; i < n; i++) {
        uint64_t v = 12345;
        enum units_err e = parse(rows[i].in, &v);
        if (e != rows[i].err)
            fail_msg("\"%s\": got error %s, want %s", rows[i].in, units_strerror(e), units_strerror(rows[i].err));
        if (e == UNITS_OK && v != rows[i].want)
            fail_msg("\"%s\": got %llu, want %llu", rows[i].in, (unsigned long long)v, (unsigned long long)rows[i].want);
    }
}

static void test_sizes(void **state)
{
    (void)state;
    static const struct row rows[] = {
        {"0", UNITS_OK, 0},
        {"4096", UNITS_OK, 4096},
        {"1B", UNITS_OK, 1},
        {"1KiB", UNITS_OK, 1024},
        {"1MiB", UNITS_OK, 1048576},
        {"1GiB", UNITS_OK, 1073741824ULL},
        {"1TiB", UNITS_OK, 1099511627776ULL},
        {"1Gio", UNITS_OK, 1073741824ULL},
        {"100Mio", UNITS_OK, 104857600ULL},
        {"10Gio", UNITS_OK, 10737418240ULL},
        {"1Kio", UNITS_OK, 1024},
        {"1kB", UNITS_OK, 1000},
        {"1MB", UNITS_OK, 1000000},
        {"1GB", UNITS_OK, 1000000000ULL},
        {"1M", UNITS_OK, 1048576},
        {"1.5GiB", UNITS_OK, 1610612736ULL},
        {"1 GiB", UNITS_OK, 1073741824ULL},
        {"18446744073709551615", UNITS_OK, UINT64_MAX},
        {"18446744073709551616", UNITS_OVERFLOW, 0},
        {"20000000TiB", UNITS_OVERFLOW, 0},
        {"", UNITS_EMPTY, 0},
        {"GiB", UNITS_NOT_NUMBER, 0},
        {"-1", UNITS_NEGATIVE, 0},
        {"-0.5", UNITS_NEGATIVE, 0},
        {"-x", UNITS_NOT_NUMBER, 0},
        {"1.GiB", UNITS_NOT_NUMBER, 0},
        {"1GiBx", UNITS_BAD_SUFFIX, 0},
        {"1gib", UNITS_BAD_SUFFIX, 0},
        {"1Mbit", UNITS_BAD_SUFFIX, 0},
    };
    run_rows(rows, sizeof rows / sizeof rows[0], units_parse_size);
}

static void test_rates(void **state)
{
    (void)state;
    static const struct row rows[] = {
        {"500Mbit", UNITS_OK, 500000000ULL},
        {"500mbit", UNITS_OK, 500000000ULL},
        {"500Mb/s", UNITS_OK, 500000000ULL},
        {"500Mbps", UNITS_OK, 500000000ULL},
        {"500M", UNITS_OK, 500000000ULL},
        {"1Gbit", UNITS_OK, 1000000000ULL},
        {"1gbit", UNITS_OK, 1000000000ULL},
        {"0.5Gbit/s", UNITS_OK, 500000000ULL},
        {"722", UNITS_OK, 722},
        {"100kbit", UNITS_OK, 100000},
        {"100MB/s", UNITS_OK, 800000000ULL},
        {"1MiB", UNITS_BAD_SUFFIX, 0},
        {"fast", UNITS_NOT_NUMBER, 0},
    };
    run_rows(rows, sizeof rows / sizeof rows[0], units_parse_rate);
}

static void test_durations(void **state)
{
    (void)state;
    static const struct row rows[] = {
        {"10ms", UNITS_OK, 10000},
        {"30ms", UNITS_OK, 30000},
        {"1.5s", UNITS_OK, 1500000},
        {"2", UNITS_OK, 2000000},
        {"250us", UNITS_OK, 250},
        {"1min", UNITS_OK, 60000000},
        {"0.3ms", UNITS_OK, 300},
        {"10 ms", UNITS_OK, 10000},
        {"10h", UNITS_OK, 36000000000ULL},
        {"1d", UNITS_OK, 86400000000ULL},
        {"10y", UNITS_BAD_SUFFIX, 0},
    };
    run_rows(rows, sizeof rows / sizeof rows[0], units_parse_duration);
}

static void test_uint(void **state)
{
    (void)state;
    uint64_t v;
    assert_int_equal(units_parse_uint("8080", 1, 65535, &v), UNITS_OK);
    assert_int_equal(v, 8080);
    assert_int_equal(units_parse_uint("0", 1, 65535, &v), UNITS_RANGE);
    assert_int_equal(units_parse_uint("65536", 1, 65535, &v), UNITS_RANGE);
    assert_int_equal(units_parse_uint("80x", 1, 65535, &v), UNITS_NOT_NUMBER);
    assert_int_equal(units_parse_uint(" 80", 1, 65535, &v), UNITS_NOT_NUMBER);
    assert_int_equal(units_parse_uint("-80", 1, 65535, &v), UNITS_NEGATIVE);
    assert_string_equal(units_strerror(UNITS_NEGATIVE), "negative");
    assert_int_equal(units_parse_uint("", 1, 65535, &v), UNITS_EMPTY);
}

/* Percentages in ppm: exact decimals, the sign required or not, the caller's ceiling. */
static void test_percent(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        int sign;
        uint64_t max;
        enum units_err want;
        uint64_t ppm;
    } rows[] = {
        {"5%", 1, 1000000, UNITS_OK, 50000},
        {"0.0001%", 1, 1000000, UNITS_OK, 1},
        {"100%", 1, 1000000, UNITS_OK, 1000000},
        {"0", 1, 1000000, UNITS_OK, 0},
        {"0.0", 1, 1000000, UNITS_OK, 0},
        {"2.5", 0, 2000000, UNITS_OK, 25000},          /* a bare number where allowed */
        {"150%", 0, 2000000, UNITS_OK, 1500000},       /* 1.5 CPUs of 2 */
        {"5", 1, 1000000, UNITS_BAD_SUFFIX, 0},
        {"5ppm", 1, 1000000, UNITS_BAD_SUFFIX, 0},
        {"5%%", 1, 1000000, UNITS_BAD_SUFFIX, 0},
        {"100.00001%", 1, 1000000, UNITS_RANGE, 0},
        {"101%", 1, 1000000, UNITS_RANGE, 0},
        {"99999999999999999999%", 1, 1000000, UNITS_RANGE, 0}, /* no 64-bit overflow */
        {"0.00001%", 1, 1000000, UNITS_TOO_FINE, 0},
        {"1.%", 1, 1000000, UNITS_NOT_NUMBER, 0},
        {"-1%", 1, 1000000, UNITS_NOT_NUMBER, 0},
        {"", 1, 1000000, UNITS_EMPTY, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        uint64_t v = 0;
        enum units_err e = units_parse_percent(rows[i].in, rows[i].sign, rows[i].max, &v);
        if (e != rows[i].want || (e == UNITS_OK && v != rows[i].ppm))
            fail_msg("%s: got %s %llu, want %s %llu", rows[i].in, units_strerror(e), (unsigned long long)v,
                     units_strerror(rows[i].want), (unsigned long long)rows[i].ppm);
    }
}

static void test_format(void **state)
{
    (void)state;
    static const struct { uint64_t bytes; const char *want; } sizes[] = {
        {0, "0 B"}, {512, "512 B"}, {1024, "1 KiB"}, {1073741824ULL, "1 GiB"},
        {104857600ULL, "100 MiB"}, {1610612736ULL, "1.5 GiB"}, {10737418240ULL, "10 GiB"},
        {1048000ULL, "1023 KiB"}, {1047552000ULL, "999 MiB"}, {157810688ULL, "150 MiB"},
        {1536ULL, "1.5 KiB"},
    };
    char buf[64];
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        units_format_size(sizes[i].bytes, buf, sizeof buf);
        assert_string_equal(buf, sizes[i].want);
    }
    /* The seed's Mb/s figures: whole from 99.5 up, 3 significant digits below. */
    static const struct { double mbps; const char *want; } rates[] = {
        {722.4, "722"}, {956.4, "956"}, {99.5, "100"}, {42.25, "42.2"}, {9.5, "9.50"},
        {0.123, "0.12"}, {NAN, "-"}, {INFINITY, "-"},
    };
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        units_format_mbps(rates[i].mbps, buf, sizeof buf);
        assert_string_equal(buf, rates[i].want);
    }
    units_format_rate_tc(500000000ULL, buf, sizeof buf);
    assert_string_equal(buf, "500Mbit");
    units_format_rate_tc(1000000000ULL, buf, sizeof buf);
    assert_string_equal(buf, "1Gbit");
    units_format_rate_tc(1500, buf, sizeof buf);
    assert_string_equal(buf, "1500bit");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_rates),
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_uint),
        cmocka_unit_test(test_percent),
        cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests_name("units", tests, NULL, NULL);
}
