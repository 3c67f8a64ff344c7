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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_getters),
        cmocka_unit_test(test_keys_and_paths),
        cmocka_unit_test(test_prefix_and_code_built),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
