/* Unit tests for common/escape.c: table-driven, every row one string as a hostile server
 * could send it, and what reaches the terminal. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "array.h"
#include "escape.h"

struct row {
    const char *in;
    const char *want;
};

static const struct row rows[] = {
    {"", ""},
    {"tso=off gso=off gro=on", "tso=off gso=off gro=on"},
    {"HTTP 404 Not Found", "HTTP 404 Not Found"},
    /* C0 controls: the ones a terminal acts on */
    {"\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"},                     /* clear the screen */
    {"\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07"},                  /* set the window title, BEL */
    {"\x1b]52;c;ZWNobyBoaQ==\x07", "\\x1b]52;c;ZWNobyBoaQ==\\x07"}, /* OSC 52: write the clipboard */
    {"ok\rFAKE", "ok\\rFAKE"},                                  /* CR: overwrite the line */
    {"a\nb", "a\\nb"},
    {"a\tb", "a\\tb"},
    {"\x01\x08\x0b\x0c\x1f", "\\x01\\x08\\x0b\\x0c\\x1f"},
    {"del\x7f", "del\\x7f"},
    /* the escape character itself, so that "\x1b" in the output is never the server's text */
    {"a\\x1b", "a\\\\x1b"},
    {"\\", "\\\\"},
    /* valid UTF-8 passes */
    {"d\xc3\xa9" "bit \xe2\x86\x92 \xf0\x9f\x9a\x80", "d\xc3\xa9" "bit \xe2\x86\x92 \xf0\x9f\x9a\x80"},
    {"\xc2\xa0", "\xc2\xa0"},                                 /* U+00A0, first after C1 */
    {"\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf"},                 /* U+10FFFF */
    /* C1 controls, in UTF-8 (U+009B is CSI) and as raw 8-bit bytes */
    {"\xc2\x9b" "2J", "\\xc2\\x9b2J"},
    {"\xc2\x80", "\\xc2\\x80"},
    {"\x9b" "31m", "\\x9b31m"},
    {"\x90q\x9c", "\\x90q\\x9c"},
    /* not UTF-8: Latin-1, overlong forms, surrogates, beyond U+10FFFF, cut sequences */
    {"caf\xe9", "caf\\xe9"},
    {"\xc0\x80", "\\xc0\\x80"},
    {"\xc1\xbf", "\\xc1\\xbf"},
    {"\xe0\x80\xaf", "\\xe0\\x80\\xaf"},
    {"\xed\xa0\x80", "\\xed\\xa0\\x80"},
    {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},
    {"\xf5\x80\x80\x80", "\\xf5\\x80\\x80\\x80"},
    {"\xe2\x86", "\\xe2\\x86"},
    {"\xe2\x86X", "\\xe2\\x86X"},
    {"\xff\xfe", "\\xff\\xfe"},
};

static void test_table(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        char buf[256];
        size_t n = escape_text(buf, sizeof buf, rows[i].in);
        if (strcmp(buf, rows[i].want) != 0)
            fail_msg("row %zu: got \"%s\", want \"%s\"", i, buf, rows[i].want);
        assert_int_equal(n, strlen(rows[i].want));
        assert_int_equal(escape_needed(rows[i].in), strcmp(rows[i].in, rows[i].want) != 0);
        char *d = escape_dup(rows[i].in);
        assert_non_null(d);
        assert_string_equal(d, rows[i].want);
        free(d);
        /* escape_fputs writes the same bytes */
        char *mem = NULL;
        size_t memlen = 0;
        FILE *f = open_memstream(&mem, &memlen);
        assert_non_null(f);
        assert_int_equal(escape_fputs(rows[i].in, f), 0);
        fclose(f);
        assert_string_equal(mem, rows[i].want);
        free(mem);
    }
}

/* Every byte value alone: the output is printable ASCII or UTF-8 of U+00A0 and above,
 * and holds no byte below 0x20, no DEL. */
static void test_every_byte(void **state)
{
    (void)state;
    for (int c = 1; c < 256; c++) {
        char in[2] = {(char)c, 0}, out[16];
        escape_text(out, sizeof out, in);
        for (const unsigned char *p = (const unsigned char *)out; *p; p++)
            if (*p < 0x20 || *p >= 0x7f)
                fail_msg("byte 0x%02x: output byte 0x%02x", c, *p);
        if (c >= 0x20 && c < 0x7f && c != '\\')
            assert_string_equal(out, in);
    }
}

/* Truncation as snprintf: the needed length is returned, the text is NUL-terminated and
 * never cut inside an escape or a UTF-8 character. */
static void test_truncation(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        size_t len;
        const char *want;
        size_t need;
    } cuts[] = {
        {"ab\x1b" "cd", 3, "ab", 8},      /* "ab\x1bcd": the escape does not fit in 2 bytes */
        {"ab\x1b" "cd", 6, "ab", 8},      /* room for "ab" + 3 of the 4 escape bytes: cut before */
        {"ab\x1b" "cd", 7, "ab\\x1b", 8},
        {"ab\x1b" "cd", 9, "ab\\x1bcd", 8},
        {"\xe2\x86\x92x", 3, "", 4},      /* the arrow is 3 bytes: not split */
        {"\xe2\x86\x92x", 4, "\xe2\x86\x92", 4},
        {"xyz", 1, "", 3},
    };
    for (size_t i = 0; i < ARRAY_SIZE(cuts); i++) {
        char buf[32];
        memset(buf, 'Z', sizeof buf);
        size_t n = escape_text(buf, cuts[i].len, cuts[i].in);
        if (strcmp(buf, cuts[i].want) != 0)
            fail_msg("cut %zu: got \"%s\", want \"%s\"", i, buf, cuts[i].want);
        assert_int_equal(n, cuts[i].need);
        assert_true(buf[cuts[i].len] == 'Z'); /* nothing written past len */
    }
    assert_int_equal(escape_text(NULL, 0, "a\x07"), 5);
    char b[4] = "xyz";
    assert_int_equal(escape_text(b, sizeof b, NULL), 0);
    assert_string_equal(b, "");
    assert_null(escape_dup(NULL));
    assert_int_equal(escape_needed(NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
        cmocka_unit_test(test_every_byte),
        cmocka_unit_test(test_truncation),
    };
    return cmocka_run_group_tests_name("escape", tests, NULL, NULL);
}
