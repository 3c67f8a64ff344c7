/* Unit tests for common/err.c, the one error convention: err_set formats and truncates,
 * err_prefix puts context in front in place (keeping the context, cutting the old tail),
 * both accept a NULL or empty buffer and always return -1. Table-driven. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "err.h"

static int via_vset(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int via_vset(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = err_vset(err, errlen, fmt, ap);
    va_end(ap);
    return r;
}

static void test_set(void **state)
{
    (void)state;
    static const struct {
        const char *arg;
        size_t len; /* buffer size handed to err_set */
        const char *want;
    } rows[] = {
        {"eth0: no such device", 64, "msg eth0: no such device"},
        {"", 64, "msg "},
        {"abcdef", 8, "msg abc"},   /* truncated to len - 1, terminated */
        {"abcdef", 1, ""},          /* room for the terminator only */
        {"x", 6, "msg x"},          /* exactly fits */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        for (int v = 0; v < 2; v++) { /* err_set and err_vset alike */
            char buf[80]; /* larger than every len: the byte after it is checked */
            memset(buf, '#', sizeof buf);
            int r = v ? via_vset(buf, rows[i].len, "msg %s", rows[i].arg)
                      : err_set(buf, rows[i].len, "msg %s", rows[i].arg);
            assert_int_equal(r, -1);
            if (strcmp(buf, rows[i].want) != 0)
                fail_msg("row %zu (%s): \"%s\", want \"%s\"", i, v ? "vset" : "set", buf, rows[i].want);
            assert_int_equal(buf[rows[i].len], '#'); /* nothing written past len */
        }
    }
    /* an empty format is an empty message */
    char buf[8] = "old";
    assert_int_equal(err_set(buf, sizeof buf, "%s", ""), -1);
    assert_string_equal(buf, "");
}

static void test_prefix(void **state)
{
    (void)state;
    static const struct {
        const char *old, *ctx;
        size_t len;
        const char *want;
    } rows[] = {
        {"eth0: no such device", "--offload", 64, "--offload: eth0: no such device"},
        {"", "--listen", 64, "--listen"},                      /* empty: just the context */
        {"abc", "ctx", 9, "ctx: abc"},                          /* exactly fits */
        {"abcdef", "ctx", 8, "ctx: ab"},                        /* the old tail is cut */
        {"abc", "ctx", 6, "ctx: "},                             /* no room for the old one */
        {"abc", "a long context", 6, "a lon"},                  /* the context wins */
        {"x", "f.conf:3: listen[0].port", 64, "f.conf:3: listen[0].port: x"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char buf[80]; /* larger than every len: the byte after it is checked */
        memset(buf, '#', sizeof buf);
        snprintf(buf, rows[i].len, "%s", rows[i].old);
        assert_int_equal(err_prefix(buf, rows[i].len, "%s", rows[i].ctx), -1);
        if (strcmp(buf, rows[i].want) != 0)
            fail_msg("row %zu: \"%s\", want \"%s\"", i, buf, rows[i].want);
        assert_int_equal(buf[rows[i].len], '#');
    }
    /* the context is formatted, and prefixes stack outward */
    char buf[64] = "bad value";
    err_prefix(buf, sizeof buf, "listen[%d]", 2);
    err_prefix(buf, sizeof buf, "%s:%d", "x.conf", 7);
    assert_string_equal(buf, "x.conf:7: listen[2]: bad value");
}

static void test_null_and_empty_buffers(void **state)
{
    (void)state;
    char one[1] = {'z'};
    assert_int_equal(err_set(NULL, 0, "x"), -1);
    assert_int_equal(err_set(NULL, 64, "x"), -1);
    assert_int_equal(err_prefix(NULL, 0, "x"), -1);
    assert_int_equal(err_prefix(NULL, 64, "x"), -1);
    assert_int_equal(err_set(one, 0, "x"), -1);
    assert_int_equal(one[0], 'z'); /* errlen 0: nothing written */
    assert_int_equal(err_prefix(one, 0, "x"), -1);
    assert_int_equal(one[0], 'z');
    assert_int_equal(err_prefix(one, 1, "x"), -1);
    assert_int_equal(one[0], '\0');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set),
        cmocka_unit_test(test_prefix),
        cmocka_unit_test(test_null_and_empty_buffers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
