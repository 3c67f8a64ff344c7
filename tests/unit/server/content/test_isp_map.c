/* Unit tests for server/content/isp_map.c: the longest prefix wins (IPv4, IPv6, mapped
 * IPv4), quoted fields, comments, and every malformed line refused with its line number,
 * table-driven. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "isp_map.h"

static const char map_text[] = "# prefix,isp name,asn,country[,city]\n"
                               "\n"
                               "198.51.100.0/24,Example Net,AS64500,FR,Paris\n"
                               "198.51.100.128/25,Example Business,64501,FR\r\n"
                               "198.51.100.7,One Host,,,\n"
                               "0.0.0.0/0,Anywhere,,\n"
                               "  2001:db8::/32 , \"Doc, Inc.\" , as64502 , DE , Berlin \n"
                               "2001:db8:1::/48,\"Say \"\"hi\"\"\",4200000000,NL\n";

static void test_lookup(void **state)
{
    (void)state;
    char err[256] = "";
    struct isp_map *m = isp_map_parse(map_text, sizeof map_text - 1, "isp.csv", err, sizeof err);
    if (!m)
        fail_msg("%s", err);
    assert_int_equal(isp_map_count(m), 6);
    static const struct {
        const char *ip, *isp;
        uint32_t asn;
        const char *country, *city;
    } rows[] = {
        {"198.51.100.1", "Example Net", 64500, "FR", "Paris"},
        {"198.51.100.200", "Example Business", 64501, "FR", ""},
        {"198.51.100.7", "One Host", 0, "", ""},
        {"::ffff:198.51.100.7", "One Host", 0, "", ""},
        {"198.51.101.1", "Anywhere", 0, "", ""},
        {"2001:db8::1", "Doc, Inc.", 64502, "DE", "Berlin"},
        {"2001:db8:1:2::3", "Say \"hi\"", 4200000000u, "NL", ""},
        {"2001:db9::1", NULL, 0, NULL, NULL},
        {"not an address", NULL, 0, NULL, NULL},
        {"", NULL, 0, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct isp_entry *e = isp_map_lookup(m, rows[i].ip);
        if (!rows[i].isp) {
            if (e)
                fail_msg("%s: found \"%s\", want none", rows[i].ip, e->isp);
            continue;
        }
        if (!e)
            fail_msg("%s: none, want \"%s\"", rows[i].ip, rows[i].isp);
        if (strcmp(e->isp, rows[i].isp) || e->asn != rows[i].asn || strcmp(e->country, rows[i].country) ||
            strcmp(e->city, rows[i].city))
            fail_msg("%s: \"%s\" %u \"%s\" \"%s\"", rows[i].ip, e->isp, e->asn, e->country, e->city);
    }
    assert_null(isp_map_lookup(NULL, "198.51.100.1"));
    isp_map_free(m);
    isp_map_free(NULL);
}

/* A map of comments and blank lines only is an empty map (UBSan caught a qsort of its NULL
 * rows, found by fuzz_isp_map), and finds nothing. */
static void test_empty(void **state)
{
    (void)state;
    static const char text[] = "# nothing yet\n\n";
    char err[256] = "";
    struct isp_map *m = isp_map_parse(text, sizeof text - 1, "isp.csv", err, sizeof err);
    if (!m)
        fail_msg("%s", err);
    assert_int_equal(isp_map_count(m), 0);
    assert_null(isp_map_lookup(m, "198.51.100.7"));
    isp_map_free(m);
}

static void test_errors(void **state)
{
    (void)state;
    static const struct {
        const char *text, *err;
    } rows[] = {
        {"10.0.0.0/8,A,1,FR\nnonsense,B,2,DE\n", "m.csv:2: \"nonsense\" is not an IPv4 or IPv6 prefix"},
        {"10.0.0.0/33,A,1,FR\n", "m.csv:1: \"10.0.0.0/33\": the prefix length must be 0..32"},
        {"10.0.0.0/,A,1,FR\n", "m.csv:1: \"10.0.0.0/\": the prefix length must be 0..32"},
        {"10.0.0.1/8,A,1,FR\n", "m.csv:1: \"10.0.0.1/8\": bits set after the first 8 (the network is 10.0.0.0)"},
        {"2001:db8::/129,A,,\n", "m.csv:1: \"2001:db8::/129\": the prefix length must be 0..128"},
        {"10.0.0.0/8,A,1\n", "m.csv:1: 3 fields (expected prefix,isp name,asn,country[,city])"},
        {"10.0.0.0/8,A,1,FR,Paris,x\n", "m.csv:1: 6 fields (expected prefix,isp name,asn,country[,city])"},
        {"10.0.0.0/8,,1,FR\n", "m.csv:1: the isp name is empty"},
        {"10.0.0.0/8,A,ASx,FR\n", "m.csv:1: \"ASx\" is not an AS number (\"64500\", \"AS64500\" or empty)"},
        {"10.0.0.0/8,A,4294967296,FR\n", "m.csv:1: \"4294967296\" is not an AS number"},
        {"10.0.0.0/8,\"A,1,FR\n", "m.csv:1: a quote is not closed"},
        {"10.0.0.0/8,A\tB,1,FR\n", "m.csv:1: the isp name is not UTF-8 text without control characters"},
        {"10.0.0.0/8,A\xff,1,FR\n", "m.csv:1: the isp name is not UTF-8"},
        {"10.0.0.0/8,A,1,\"F,R\"\n", "m.csv:1: the country has a ','"},
        {"# x\n10.0.0.0/8,A,1,FR\n\n10.0.0.0/8,B,2,DE\n", "m.csv:4: the prefix of line 2 again"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char err[256] = "";
        struct isp_map *m = isp_map_parse(rows[i].text, strlen(rows[i].text), "m.csv", err, sizeof err);
        if (m)
            fail_msg("row %zu: accepted", i);
        if (strncmp(err, rows[i].err, strlen(rows[i].err)) != 0)
            fail_msg("row %zu: \"%s\", want \"%s...\"", i, err, rows[i].err);
    }
    char err[256] = "";
    assert_null(isp_map_load("/nonexistent/isp.csv", err, sizeof err));
    assert_string_equal(err, "/nonexistent/isp.csv: No such file or directory");
    struct isp_map *m = isp_map_parse("", 0, "empty", err, sizeof err);
    assert_non_null(m);
    assert_int_equal(isp_map_count(m), 0);
    assert_null(isp_map_lookup(m, "10.0.0.1"));
    isp_map_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lookup),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
