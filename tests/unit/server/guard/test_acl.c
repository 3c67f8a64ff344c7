/* Unit tests for server/guard/acl.c: parsing address lists and matching clients, table-driven. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <arpa/inet.h>
#include <cmocka.h>

#include "acl.h"

static void test_parse(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        int ok;
        const char *msg; /* part of the error */
    } rows[] = {
        {"127.0.0.1", 1, NULL},
        {"::1", 1, NULL},
        {"10.0.0.0/8", 1, NULL},
        {"0.0.0.0/0", 1, NULL},
        {"::/0", 1, NULL},
        {"fd00::/8", 1, NULL},
        {"192.0.2.128/25", 1, NULL},
        {"10.0.0.1/8", 0, "host bits set"},
        {"10.0.0.0/33", 0, "expected 0 to 32"},
        {"::1/129", 0, "expected 0 to 128"},
        {"10.0.0.0/", 0, "prefix"},
        {"10.0.0.0/x", 0, "prefix"},
        {"localhost", 0, "not a numeric"},
        {"", 0, "expected a numeric address"},
        {"/8", 0, "expected a numeric address"},
        {"1.2.3", 0, "not a numeric"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct acl a = {0};
        char err[256] = "";
        int r = acl_add(&a, rows[i].spec, err, sizeof err);
        if ((r == 0) != rows[i].ok || (!rows[i].ok && !strstr(err, rows[i].msg)))
            fail_msg("\"%s\": got %d \"%s\"", rows[i].spec, r, err);
        assert_int_equal(a.n, rows[i].ok ? 1 : 0);
        if (rows[i].ok)
            assert_string_equal(a.e[0].spec, rows[i].spec);
        acl_clear(&a);
    }
}

static int match(const struct acl *a, const char *addr)
{
    struct sockaddr_in s4 = {.sin_family = AF_INET};
    struct sockaddr_in6 s6 = {.sin6_family = AF_INET6};
    if (inet_pton(AF_INET, addr, &s4.sin_addr) == 1)
        return acl_match(a, (struct sockaddr *)&s4);
    assert_int_equal(inet_pton(AF_INET6, addr, &s6.sin6_addr), 1);
    return acl_match(a, (struct sockaddr *)&s6);
}

static void test_match(void **state)
{
    (void)state;
    struct acl a = {0};
    char err[256];
    static const char *const specs[] = {"127.0.0.1", "::1", "10.0.0.0/8", "192.0.2.128/25", "fd00::/8"};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        assert_int_equal(acl_add(&a, specs[i], err, sizeof err), 0);
    static const struct {
        const char *addr;
        int in;
    } rows[] = {
        {"127.0.0.1", 1},       {"127.0.0.2", 0},        {"::1", 1},
        {"::ffff:127.0.0.1", 1}, /* IPv4 client on a dual-stack listener */
        {"::ffff:127.0.0.2", 0}, {"10.255.1.2", 1},       {"11.0.0.0", 0},
        {"192.0.2.128", 1},      {"192.0.2.255", 1},      {"192.0.2.127", 0},
        {"fd12::5", 1},          {"fe80::1", 0},          {"::2", 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (match(&a, rows[i].addr) != rows[i].in)
            fail_msg("%s: expected %d", rows[i].addr, rows[i].in);
    assert_int_equal(acl_match(&a, NULL), 0);
    acl_clear(&a);
    assert_int_equal(match(&a, "127.0.0.1"), 0); /* empty: nobody */
    struct acl all = {0};
    assert_int_equal(acl_add(&all, "0.0.0.0/0", err, sizeof err), 0);
    assert_int_equal(match(&all, "203.0.113.9"), 1);
    assert_int_equal(match(&all, "2001:db8::1"), 0); /* an IPv4 network holds no IPv6 client */
    acl_clear(&all);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_match),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
