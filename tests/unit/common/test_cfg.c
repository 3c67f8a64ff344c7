/* Unit tests for common/cfg.c: every error carries "FILE:LINE: setting.path: reason";
 * table-driven over getters and key checks. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cfg.h"

/* Each row: a config text, the getter to run on group "g" member "m", and the expected
 * result (1 found, 0 absent, -1 error) with its message and value. */
static char path[64];

/* libconfig records the file of each setting only when it reads a file: load from one. */
static int load(config_t *c, const char *text, char *err, size_t errlen)
{
    snprintf(path, sizeof path, "/tmp/debit-test-cfg.%d", (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    fclose(f);
    int r = cfg_load(c, path, err, errlen);
    unlink(path);
    return r;
}

/* expected messages are written with "t:" for the file */
static void expect_msg(const char *got, const char *want_t)
{
    char want[600];
    snprintf(want, sizeof want, "%s%s", path, want_t + 1);
    if (strcmp(got, want) != 0)
        fail_msg("message \"%s\", want \"%s\"", got, want);
}

enum getter { G_BOOL, G_STRING, G_UINT, G_SIZE, G_DURATION };

struct row {
    const char *text;
    enum getter get;
    int want;
    const char *msg;  /* for want == -1 */
    uint64_t value;   /* for want == 1 (numbers; bool as 0/1) */
};

static int run_getter(const struct row *r, const config_setting_t *g, uint64_t *v, char *err, size_t errlen)
{
    const char *s;
    int b, ret = 0;
    switch (r->get) {
    case G_BOOL: ret = cfg_get_bool(g, "m", &b, err, errlen); *v = (uint64_t)b; break;
    case G_STRING: ret = cfg_get_string(g, "m", &s, err, errlen); *v = ret == 1 ? strlen(s) : 0; break;
    case G_UINT: ret = cfg_get_uint(g, "m", 1, 100, v, err, errlen); break;
    case G_SIZE: ret = cfg_get_size(g, "m", v, err, errlen); break;
    case G_DURATION: ret = cfg_get_duration(g, "m", v, err, errlen); break;
    }
    return ret;
}

static void test_getters(void **state)
{
    (void)state;
    static const struct row rows[] = {
        {"g = { m = true; };", G_BOOL, 1, NULL, 1},
        {"g = { };", G_BOOL, 0, NULL, 0},
        {"g = { m = 1; };", G_BOOL, -1, "t:1: g.m: expected true or false", 0},
        {"g = { m = \"abc\"; };", G_STRING, 1, NULL, 3},
        {"g = { m = 3; };", G_STRING, -1, "t:1: g.m: expected a string in double quotes", 0},
        {"g = { m = 42; };", G_UINT, 1, NULL, 42},
        {"g = {\n m = 420; };", G_UINT, -1, "t:2: g.m: 420 is out of range [1, 100]", 0},
        {"g = { m = 0; };", G_UINT, -1, "t:1: g.m: 0 is out of range [1, 100]", 0},
        {"g = { m = 4.5; };", G_UINT, -1, "t:1: g.m: expected an integer", 0},
        {"g = { m = \"1GiB\"; };", G_SIZE, 1, NULL, 1073741824ULL},
        {"g = { m = 4096; };", G_SIZE, 1, NULL, 4096},
        {"g = { m = 10737418240L; };", G_SIZE, 1, NULL, 10737418240ULL},
        {"g = { m = \"1 GiBs\"; };", G_SIZE, -1, "t:1: g.m: \"1 GiBs\": unknown unit (example: \"1GiB\")", 0},
        {"g = { m = -1; };", G_SIZE, -1, "t:1: g.m: must not be negative", 0},
        {"g = { m = true; };", G_SIZE, -1, "t:1: g.m: expected a number or a string such as \"1GiB\"", 0},
        {"g = { m = \"10ms\"; };", G_DURATION, 1, NULL, 10000},
        {"g = { m = 30; };", G_DURATION, 1, NULL, 30000000ULL}, /* bare number: seconds */
        {"g = { m = 18446744073710L; };", G_DURATION, -1, "t:1: g.m: too large", 0}, /* s -> us overflows */
        {"g = { m = \"99999999999999999999\"; };", G_SIZE, -1,
         "t:1: g.m: \"99999999999999999999\": too large (example: \"1GiB\")", 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        config_t c;
        char err[512] = "";
        config_init(&c);
        if (load(&c, rows[i].text, err, sizeof err) < 0)
            fail_msg("row %zu: does not parse: %s", i, err);
        const config_setting_t *g = config_lookup(&c, "g");
        assert_non_null(g);
        uint64_t v = 0;
        int r = run_getter(&rows[i], g, &v, err, sizeof err);
        if (r != rows[i].want)
            fail_msg("row %zu \"%s\": got %d (%s), want %d", i, rows[i].text, r, err, rows[i].want);
        if (r == -1)
            expect_msg(err, rows[i].msg);
        if (r == 1 && v != rows[i].value)
            fail_msg("row %zu: value %llu, want %llu", i, (unsigned long long)v, (unsigned long long)rows[i].value);
        config_destroy(&c);
    }
}

static void test_keys_and_paths(void **state)
{
    (void)state;
    static const char *const allowed[] = {"a", "b", NULL};
    static const struct {
        const char *text;
        int want;
        const char *msg;
    } rows[] = {
        {"g = { a = 1; b = 2; };", 0, ""},
        {"g = { a = 1;\n c = 2; };", -1, "t:2: g.c: unknown setting (expected one of: a, b)"},
        {"g = ( { x = 1; }, { l = ( { a = 1; zz = 2; } ); } );", -2, ""},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        config_t c;
        char err[512] = "";
        config_init(&c);
        assert_int_equal(load(&c, rows[i].text, err, sizeof err), 0);
        if (rows[i].want == -2) { /* path of a nested setting */
            char buf[128];
            const config_setting_t *s = config_lookup(&c, "g.[1].l.[0].zz");
            assert_non_null(s);
            assert_string_equal(cfg_setting_path(s, buf, sizeof buf), "g[1].l[0].zz");
            assert_int_equal(cfg_error(err, sizeof err, s, "bad %d", 7), -1);
            expect_msg(err, "t:1: g[1].l[0].zz: bad 7");
        } else {
            int r = cfg_check_keys(config_lookup(&c, "g"), allowed, err, sizeof err);
            assert_int_equal(r, rows[i].want);
            if (r < 0)
                expect_msg(err, rows[i].msg);
        }
        config_destroy(&c);
    }
    /* a syntax error names the line */
    config_t c;
    char err[512];
    config_init(&c);
    assert_int_equal(load(&c, "a = 1;\nb = = 2;", err, sizeof err), -1);
    assert_non_null(strstr(err, ":2: syntax: "));
    assert_non_null(strstr(err, path));
    config_destroy(&c);
    config_init(&c);
    assert_int_equal(cfg_load(&c, "/nonexistent/debit.conf", err, sizeof err), -1);
    assert_string_equal(err, "/nonexistent/debit.conf: cannot read: No such file or directory");
    config_destroy(&c);
}

/* A setter's plain reason gets its place in front (cfg_error_prefix); a configuration
 * built in code, never read from a file, says "(config)". */
static void test_prefix_and_code_built(void **state)
{
    (void)state;
    config_t c;
    char err[512];
    config_init(&c);
    assert_int_equal(load(&c, "g = {\n  a = 1;\n};", err, sizeof err), 0);
    const config_setting_t *a = config_lookup(&c, "g.a");
    assert_non_null(a);
    snprintf(err, sizeof err, "port 0 is out of range");
    assert_int_equal(cfg_error_prefix(err, sizeof err, a), -1);
    expect_msg(err, "t:2: g.a: port 0 is out of range");
    /* too small a buffer keeps the place and cuts the reason */
    char small[8];
    snprintf(small, sizeof small, "reason");
    cfg_error_prefix(small, sizeof small, a);
    assert_int_equal(strlen(small), sizeof small - 1);
    assert_memory_equal(small, path, sizeof small - 1);
    config_destroy(&c);

    config_init(&c);
    config_setting_t *m = config_setting_add(config_root_setting(&c), "m", CONFIG_TYPE_INT);
    assert_non_null(m);
    cfg_error(err, sizeof err, m, "bad");
    assert_string_equal(err, "(config):0: m: bad");
    config_destroy(&c);
}

/* Each literal of libconfig 1.5's integer grammar beyond 32 bits, bare and with L, as
 * the one setting g.m: its value through cfg_int_value, or the load's error. Debian 12's
 * libconfig 1.5 keeps a bare literal in 32 bits (4294967296 reads as INT 0, 4294986497 as
 * INT 19201, 10737418240 as INT -2147483648, beyond 63 bits INT -1) and saturates past 63
 * bits with L (9223372036854775808L reads as INT64 INT64_MAX). */
#define FIT32 " does not fit a libconfig integer (32 bits): write it with the L suffix "
static void test_int_literals(void **state)
{
    (void)state;
    static const struct {
        const char *lit;
        const char *msg; /* NULL: loads, with value */
        long long value;
    } rows[] = {
        {"2147483647", NULL, 2147483647LL},
        {"-2147483648", NULL, -2147483648LL},
        {"2147483648", "t:2: g.m: 2147483648" FIT32 "(2147483648L) or, for a size, as a string (\"2GiB\")", 0},
        {"4294967296", "t:2: g.m: 4294967296" FIT32 "(4294967296L) or, for a size, as a string (\"4GiB\")", 0},
        {"4294986497", "t:2: g.m: 4294986497" FIT32 "(4294986497L)", 0},
        {"10737418240", "t:2: g.m: 10737418240" FIT32 "(10737418240L) or, for a size, as a string (\"10GiB\")", 0},
        {"9223372036854775807", "t:2: g.m: 9223372036854775807" FIT32 "(9223372036854775807L)", 0},
        {"9223372036854775808", "t:2: g.m: 9223372036854775808 does not fit a 64-bit integer", 0},
        {"-2147483649", "t:2: g.m: -2147483649" FIT32 "(-2147483649L)", 0},
        {"-4294967296", "t:2: g.m: -4294967296" FIT32 "(-4294967296L)", 0},
        {"0x100000000", "t:2: g.m: 0x100000000" FIT32 "(0x100000000L) or, for a size, as a string (\"4GiB\")", 0},
        {"0x7FFFFFFF", NULL, 2147483647LL},
        {"0xFFFFFFFF", "t:2: g.m: 0xFFFFFFFF" FIT32 "(0xFFFFFFFFL)", 0}, /* 1.5 reads -1 */
        {"99999999999999999999", "t:2: g.m: 99999999999999999999 does not fit a 64-bit integer", 0},
        {"2147483647L", NULL, 2147483647LL},
        {"2147483648L", NULL, 2147483648LL},
        {"4294967296L", NULL, 4294967296LL},
        {"4294986497L", NULL, 4294986497LL},
        {"10737418240L", NULL, 10737418240LL},
        {"10737418240LL", NULL, 10737418240LL},
        {"9223372036854775807L", NULL, INT64_MAX},
        {"9223372036854775808L", "t:2: g.m: 9223372036854775808L does not fit a 64-bit integer", 0},
        {"-2147483649L", NULL, -2147483649LL},
        {"-9223372036854775809L", "t:2: g.m: -9223372036854775809L does not fit a 64-bit integer", 0},
        {"0x100000000L", NULL, 4294967296LL},
        {"0x7FFFFFFFFFFFFFFFL", NULL, INT64_MAX},
        {"0x8000000000000000L", "t:2: g.m: 0x8000000000000000L does not fit a 64-bit integer", 0}, /* 1.5: negative */
        {"0x1FFFFFFFFFFFFFFFFL", "t:2: g.m: 0x1FFFFFFFFFFFFFFFFL does not fit a 64-bit integer", 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char text[128], err[512] = "";
        snprintf(text, sizeof text, "g = {\n m = %s; };\n", rows[i].lit);
        config_t c;
        config_init(&c);
        int r = load(&c, text, err, sizeof err);
        if (rows[i].msg) {
            if (r != -1)
                fail_msg("row %zu %s: loads, want \"%s\"", i, rows[i].lit, rows[i].msg);
            expect_msg(err, rows[i].msg);
        } else {
            if (r != 0)
                fail_msg("row %zu %s: %s", i, rows[i].lit, err);
            long long v = 0;
            assert_int_equal(cfg_int_value(config_lookup(&c, "g.m"), &v), 1);
            if (v != rows[i].value)
                fail_msg("row %zu %s: value %lld, want %lld", i, rows[i].lit, v, rows[i].value);
        }
        config_destroy(&c);
    }
}

/* The literal is paired with its own setting, whatever shares its line or looks like a
 * number around it: the error names the setting that holds it, and nothing else fails. */
static void test_int_literal_places(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *msg; /* NULL: loads */
    } rows[] = {
        /* the audit's cases: settings on one line, the wrapped value equal to a neighbour's */
        {"limits = { per_ip = 0; idle_timeout = 4294967296; };",
         "t:1: limits.idle_timeout: 4294967296" FIT32 "(4294967296L) or, for a size, as a string (\"4GiB\")"},
        {"limits = { per_ip = 4294967396; idle_timeout = 30; };", "t:1: limits.per_ip: 4294967396" FIT32 "(4294967396L)"},
        {"files = ( { path = \"/ram/a.dat\"; size = 10737418240; } );",
         "t:1: files[0].size: 10737418240" FIT32 "(10737418240L) or, for a size, as a string (\"10GiB\")"},
        {"listen = ( { address = \"127.0.0.1\"; port = 80; },\n  { address = \"::1\"; port = 4294986497; } );",
         "t:2: listen[1].port: 4294986497" FIT32 "(4294986497L)"},
        /* array and list elements: an element's place is its own line */
        {"a = [ 1, 2,\n 3, 4294967296 ];", "t:2: a[3]: 4294967296" FIT32 "(4294967296L) or, for a size, as a string (\"4GiB\")"},
        {"a = ( 1, 2.5, \"x\", [ 5, 6 ],\n { b = 7; c = 9223372036854775808L; } );",
         "t:2: a[4].c: 9223372036854775808L does not fit a 64-bit integer"},
        /* a value on the lines after its name */
        {"a =\n\n  4294967296;", "t:1: a: 4294967296" FIT32 "(4294967296L) or, for a size, as a string (\"4GiB\")"},
        /* digits that are no integer literal: in strings, comments, names, floats */
        {"s = \"4294967296\"; t = \"a\\\"4294967296\\\\\"; u = 1;", NULL},
        {"# 4294967296\n// 4294967296\n/* 4294967296\n 4294967296 */ a = 1; b = 2;", NULL},
        {"n-4294967296 = 1; x4294967296_ = 2;", NULL},
        {"f = 4294967296.0; g = 1e40; h = .5; i = -4294967296e3; j = 2;", NULL},
        {"a = 1; b = 4294967296L; c = \"4GiB\"; d = 0x10; e = -5;", NULL},
        /* after a string with an escaped quote and a comment, the count still holds */
        {"s = \"x\\\" 7; # \"; a = 4294967296; // 1\n", "t:1: a: 4294967296" FIT32 "(4294967296L) or, for a size, as a string (\"4GiB\")"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char err[512] = "";
        config_t c;
        config_init(&c);
        int r = load(&c, rows[i].text, err, sizeof err);
        if (rows[i].msg) {
            if (r != -1)
                fail_msg("row %zu \"%s\": loads, want \"%s\"", i, rows[i].text, rows[i].msg);
            expect_msg(err, rows[i].msg);
        } else if (r != 0) {
            fail_msg("row %zu \"%s\": %s", i, rows[i].text, err);
        }
        config_destroy(&c);
    }
}

/* The getters on 64-bit values: the range check sees the true value; sizes and durations
 * scale it. */
static void test_int64_getters(void **state)
{
    (void)state;
    config_t c;
    char err[512] = "";
    uint64_t v = 0;
    config_init(&c);
    assert_int_equal(load(&c, "g = { port = 4294986497L; size = 10737418240L; d = 4294967326L; z = 0L; };", err,
                          sizeof err), 0);
    const config_setting_t *g = config_lookup(&c, "g");
    assert_int_equal(cfg_get_uint(g, "port", 1, 65535, &v, err, sizeof err), -1);
    expect_msg(err, "t:1: g.port: 4294986497 is out of range [1, 65535]");
    assert_int_equal(cfg_get_size(g, "size", &v, err, sizeof err), 1);
    assert_true(v == 10737418240ULL);
    assert_int_equal(cfg_get_duration(g, "d", &v, err, sizeof err), 1);
    assert_true(v == 4294967326ULL * 1000000);
    assert_int_equal(cfg_get_uint(g, "z", 0, 5, &v, err, sizeof err), 1);
    assert_true(v == 0);
    long long ll = 7;
    assert_int_equal(cfg_int_value(config_lookup(&c, "g"), &ll), 0); /* a group: no integer */
    assert_int_equal(cfg_int_value(NULL, &ll), 0);
    assert_true(ll == 7);
    config_destroy(&c);
}

/* An @include'd file is checked too and named; a pipe (read once) keeps its name. */
static void test_int_literal_include_and_pipe(void **state)
{
    (void)state;
    char inc[80], text[200], err[512] = "";
    snprintf(inc, sizeof inc, "/tmp/debit-test-cfg-inc.%d", (int)getpid());
    FILE *f = fopen(inc, "w");
    assert_non_null(f);
    fputs("b = 1; c = 2;\nd = 4294967296;\n", f);
    fclose(f);
    snprintf(text, sizeof text, "a = 4294967296L;\n@include \"%s\"\ne = 5;\n", inc);
    config_t c;
    config_init(&c);
    assert_int_equal(load(&c, text, err, sizeof err), -1);
    char want[600];
    snprintf(want, sizeof want, "%s:2: d: 4294967296" FIT32 "(4294967296L) or, for a size, as a string (\"4GiB\")", inc);
    assert_string_equal(err, want);
    config_destroy(&c);
    f = fopen(inc, "w");
    assert_non_null(f);
    fputs("b = 1; c = 2;\nd = 4294967296L;\n", f);
    fclose(f);
    config_init(&c);
    assert_int_equal(load(&c, text, err, sizeof err), 0);
    config_destroy(&c);
    unlink(inc);

    int fd[2];
    assert_int_equal(pipe(fd), 0);
    static const char piped[] = "x = 1;\ng = { m = 4294986497; };\n";
    assert_int_equal(write(fd[1], piped, sizeof piped - 1), (ssize_t)(sizeof piped - 1));
    close(fd[1]);
    char name[32];
    snprintf(name, sizeof name, "/dev/fd/%d", fd[0]);
    config_init(&c);
    assert_int_equal(cfg_load(&c, name, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s:2: g.m: 4294986497" FIT32 "(4294986497L)", name);
    assert_string_equal(err, want);
    config_destroy(&c);
    close(fd[0]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_getters),
        cmocka_unit_test(test_keys_and_paths),
        cmocka_unit_test(test_prefix_and_code_built),
        cmocka_unit_test(test_int_literals),
        cmocka_unit_test(test_int_literal_places),
        cmocka_unit_test(test_int64_getters),
        cmocka_unit_test(test_int_literal_include_and_pipe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
