/* Unit tests for server/content/speedtest.c: which path is which endpoint, what a query asks
 * (as LibreSpeed's PHP and Cloudflare's clients send it), garbage's length and getIP's notes,
 * table-driven. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "speedtest.h"

static void test_endpoint(void **state)
{
    (void)state;
    static const struct {
        const char *path;
        enum speedtest_endpoint e;
    } rows[] = {
        {"/garbage.php", SPEEDTEST_GARBAGE}, {"/garbage", SPEEDTEST_GARBAGE},
        {"/backend/garbage.php", SPEEDTEST_GARBAGE}, {"/backend/garbage", SPEEDTEST_GARBAGE},
        {"/empty.php", SPEEDTEST_EMPTY}, {"/backend/empty", SPEEDTEST_EMPTY},
        {"/getIP.php", SPEEDTEST_GETIP}, {"/backend/getIP", SPEEDTEST_GETIP},
        {"/__down", SPEEDTEST_DOWN}, {"/__up", SPEEDTEST_UP},
        {"/results/telemetry.php", SPEEDTEST_TELEMETRY}, {"/results/telemetry", SPEEDTEST_TELEMETRY},
        {"/backend/results/telemetry.php", SPEEDTEST_TELEMETRY}, {"/results/json.php", SPEEDTEST_RESULTS},
        {"/backend/results/json", SPEEDTEST_RESULTS}, {"/results/", SPEEDTEST_NONE},
        {"/telemetry.php", SPEEDTEST_NONE},
        /* Cloudflare's have no .php and no /backend/ form */
        {"/__down.php", SPEEDTEST_NONE}, {"/backend/__up", SPEEDTEST_NONE},
        {"/getip.php", SPEEDTEST_NONE}, /* speedtest-go's names are case-sensitive */
        {"/garbage.php/", SPEEDTEST_NONE}, {"/garbage.phpx", SPEEDTEST_NONE}, {"/x/garbage.php", SPEEDTEST_NONE},
        {"/backend/", SPEEDTEST_NONE}, {"/.php", SPEEDTEST_NONE}, {"/", SPEEDTEST_NONE}, {"", SPEEDTEST_NONE},
        {"garbage.php", SPEEDTEST_NONE}, {NULL, SPEEDTEST_NONE},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (speedtest_endpoint(rows[i].path) != rows[i].e)
            fail_msg("%s: endpoint %d, want %d", rows[i].path ? rows[i].path : "(null)",
                     speedtest_endpoint(rows[i].path), rows[i].e);
    assert_string_equal(speedtest_protocol_name(speedtest_protocol_of(SPEEDTEST_DOWN)), "cloudflare");
    assert_string_equal(speedtest_protocol_name(speedtest_protocol_of(SPEEDTEST_EMPTY)), "librespeed");
    assert_string_equal(speedtest_endpoint_name(SPEEDTEST_UP), "up");
    assert_string_equal(speedtest_endpoint_name(SPEEDTEST_TELEMETRY), "telemetry");
    assert_string_equal(speedtest_protocol_name(speedtest_protocol_of(SPEEDTEST_RESULTS)), "librespeed");
    assert_string_equal(speedtest_endpoint_name(SPEEDTEST_N_ENDPOINTS), "");
}

static void test_query(void **state)
{
    (void)state;
    static const struct {
        const char *query;
        int has_cksize;
        int64_t cksize;
        int has_bytes, bytes_ok;
        uint64_t bytes;
        int cors;
    } rows[] = {
        {NULL, 0, 0, 0, 0, 0, 0},
        {"", 0, 0, 0, 0, 0, 0},
        {"r=0.123&ckSize=100", 1, 100, 0, 0, 0, 0},
        {"ckSize=100&cors=true&r=1", 1, 100, 0, 0, 0, 1},
        {"cors", 0, 0, 0, 0, 0, 1},                      /* present without a value */
        {"ckSize=", 1, 0, 0, 0, 0, 0},                   /* intval("") = 0 */
        {"ckSize=abc", 1, 0, 0, 0, 0, 0},
        {"ckSize=12abc", 1, 12, 0, 0, 0, 0},             /* intval reads the leading digits */
        {"ckSize=%2012", 1, 12, 0, 0, 0, 0},             /* leading blank, escaped */
        {"ckSize=-5", 1, -5, 0, 0, 0, 0},
        {"ckSize=1&ckSize=7", 1, 7, 0, 0, 0, 0},         /* PHP keeps the last */
        {"cksize=9", 0, 0, 0, 0, 0, 0},                  /* names are case-sensitive */
        {"ckSize=99999999999999999999999", 1, INT64_MAX, 0, 0, 0, 0},
        {"bytes=0", 0, 0, 1, 1, 0, 0},
        {"bytes=1", 0, 0, 1, 1, 1, 0},
        {"bytes=12345678&measId=42&during=download", 0, 0, 1, 1, 12345678, 0},
        {"bytes=18446744073709551615", 0, 0, 1, 1, UINT64_MAX, 0},
        {"bytes=18446744073709551616", 0, 0, 1, 0, 0, 0}, /* 2^64: not a size */
        {"bytes=1e6", 0, 0, 1, 0, 0, 0},
        {"bytes=-1", 0, 0, 1, 0, 0, 0},
        {"bytes=", 0, 0, 1, 0, 0, 0},
        {"bytes= 5", 0, 0, 1, 0, 0, 0},
        {"bytes=000000000000000000000000000000001", 0, 0, 1, 0, 0, 0}, /* longer than any size */
        {"%62ytes=5", 0, 0, 1, 1, 5, 0},                 /* an escaped name */
        {"&&bytes=5&", 0, 0, 1, 1, 5, 0},
        {"=5&bytes", 0, 0, 1, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct speedtest_query q;
        speedtest_query_parse(rows[i].query, &q);
        if (q.has_cksize != rows[i].has_cksize || q.cksize != rows[i].cksize || q.has_bytes != rows[i].has_bytes ||
            q.bytes_ok != rows[i].bytes_ok || q.bytes != rows[i].bytes || q.cors != rows[i].cors)
            fail_msg("\"%s\": ckSize %d/%lld bytes %d/%d/%llu cors %d", rows[i].query ? rows[i].query : "(null)",
                     q.has_cksize, (long long)q.cksize, q.has_bytes, q.bytes_ok, (unsigned long long)q.bytes, q.cors);
    }
}

/* getIP's isp (PHP's isset: any value) and results/json.php's id (a whole number, else 0) */
static void test_query_isp_id(void **state)
{
    (void)state;
    static const struct {
        const char *query;
        int isp;
        uint64_t id;
    } rows[] = {
        {"isp=true", 1, 0}, {"isp", 1, 0}, {"isp=false&distance=km", 1, 0}, {"r=1", 0, 0},
        {"id=42", 0, 42}, {"id=4x", 0, 0}, {"id=", 0, 0}, {"id=-1", 0, 0}, {"id=%34%32", 0, 42},
        {"id=18446744073709551615", 0, UINT64_MAX}, {"id=18446744073709551616", 0, 0},
        {"id=7&id=8", 0, 8}, {"id=000000000000000000000000000000007", 0, 0}, /* longer than read */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct speedtest_query q;
        speedtest_query_parse(rows[i].query, &q);
        if (q.isp != rows[i].isp || q.id != rows[i].id)
            fail_msg("\"%s\": isp %d id %llu", rows[i].query, q.isp, (unsigned long long)q.id);
    }
}

static void test_garbage_bytes(void **state)
{
    (void)state;
    const uint64_t MiB = SPEEDTEST_MIB;
    static const struct {
        const char *query;
        uint64_t cap, mib;
    } rows[] = {
        {"", 1ULL << 40, 4},            /* LibreSpeed's default */
        {"ckSize=0", 1ULL << 40, 4},    /* empty(0): the default */
        {"ckSize=abc", 1ULL << 40, 4},
        {"ckSize=1", 1ULL << 40, 1},
        {"ckSize=100", 1ULL << 40, 100},
        {"ckSize=1024", 1ULL << 40, 1024},
        {"ckSize=1025", 1ULL << 40, 1024}, /* garbage.php's clamp */
        {"ckSize=99999999999999999999", 1ULL << 40, 1024},
        {"ckSize=-3", 1ULL << 40, 1},   /* PHP would send nothing */
        {"ckSize=100", 10ULL << 20, 10}, /* speedtest.max_bytes */
        {"ckSize=100", (10ULL << 20) + 5, 10},
        {"ckSize=100", 1000, 1},        /* a cap under 1 MiB still gives one */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct speedtest_query q;
        speedtest_query_parse(rows[i].query, &q);
        uint64_t got = speedtest_garbage_bytes(&q, rows[i].cap);
        if (got != rows[i].mib * MiB)
            fail_msg("\"%s\" cap %llu: %llu bytes, want %llu MiB", rows[i].query, (unsigned long long)rows[i].cap,
                     (unsigned long long)got, (unsigned long long)rows[i].mib);
    }
}

static void test_ip_note(void **state)
{
    (void)state;
    static const struct {
        const char *ip, *note;
    } rows[] = {
        {"127.0.0.1", " - localhost IPv4 access"}, {"::1", " - localhost IPv6 access"},
        {"fe80::1", " - link-local IPv6 access"}, {"FE80::1", " - link-local IPv6 access"},
        {"10.1.2.3", " - private IPv4 access"}, {"172.16.0.1", " - private IPv4 access"},
        {"172.31.255.1", " - private IPv4 access"}, {"172.32.0.1", ""}, {"172.15.0.1", ""},
        {"192.168.1.1", " - private IPv4 access"}, {"169.254.0.1", " - link-local IPv4 access"},
        {"100.64.0.1", " - CGNAT IPv4 access"}, {"100.127.0.1", " - CGNAT IPv4 access"},
        {"100.128.0.1", ""}, {"100.63.0.1", ""}, {"100.6.0.1", ""},
        {"198.18.0.1", ""}, {"2001:db8::1", ""}, {"", ""},
        /* getIP.php's ULA pattern: fc00::/7 ending with a group */
        {"fd00::1", " - ULA IPv6 access"}, {"FC12:3456::abcd", " - ULA IPv6 access"}, {"fd00::", ""},
        {"fe00::1", ""}, {"fdab123:1::1", ""}, {"fd", ""},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (strcmp(speedtest_ip_note(rows[i].ip), rows[i].note) != 0)
            fail_msg("%s: \"%s\", want \"%s\"", rows[i].ip, speedtest_ip_note(rows[i].ip), rows[i].note);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_endpoint),
        cmocka_unit_test(test_query),
        cmocka_unit_test(test_query_isp_id),
        cmocka_unit_test(test_garbage_bytes),
        cmocka_unit_test(test_ip_note),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
