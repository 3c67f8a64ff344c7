/* Unit tests for client/measure/testfile.c: which finished bodies are test files (a
 * wrong URL is not a result, issue 12). Table-driven. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "array.h"
#include "testfile.h"

static void test_table(void **state)
{
    (void)state;
    static const struct {
        const char *type;
        uint64_t bytes;
        int64_t cl;
        int cut;
        uint64_t min;
        int want;
        const char *why; /* start of the reason when want == 0 */
    } rows[] = {
        {"application/octet-stream", 1048576, 1048576, 0, 1048576, 1, NULL},
        {NULL, 10485760, -1, 0, 1048576, 1, NULL},
        {"", 1048575, 1048575, 0, 1048576, 0, "not a test file: 1048575 bytes, under --min-bytes 1048576"},
        {"text/html", 509, 509, 0, 1048576, 0, "not a test file: a text/html body (509 bytes)"},
        {"text/html; charset=utf-8", 9000000, -1, 0, 1048576, 0, "not a test file: a text/html body"},
        {"TEXT/HTML", 9000000, -1, 0, 1048576, 0, "not a test file: a text/html body"},
        {"text/htmlx", 9000000, -1, 0, 1048576, 1, NULL},
        {"text/plain", 9000000, -1, 0, 1048576, 1, NULL},
        /* --min-bytes 0 accepts anything. */
        {"text/html", 509, 509, 0, 0, 1, NULL},
        {NULL, 0, 0, 0, 0, 1, NULL},
        /* Cut short on purpose (--duration, --max-bytes): the file's size decides. */
        {NULL, 1000, 1073741824, 1, 1048576, 1, NULL},
        {NULL, 1000, 5000, 1, 1048576, 0, "not a test file: 5000 bytes, under"},
        {NULL, 1000, -1, 1, 1048576, 1, NULL},
        {"text/html", 1000, 1073741824, 1, 1048576, 0, "not a test file: a text/html body"},
    };
    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        char why[256] = "";
        int got = testfile_check(rows[i].type, rows[i].bytes, rows[i].cl, rows[i].cut, rows[i].min, why, sizeof why);
        if (got != rows[i].want)
            fail_msg("row %zu: got %d, want %d (%s)", i, got, rows[i].want, why);
        if (!got && strncmp(why, rows[i].why, strlen(rows[i].why)) != 0)
            fail_msg("row %zu: why \"%s\", want \"%s...\"", i, why, rows[i].why);
        if (!got && !strstr(why, "--min-bytes 0 accepts it"))
            fail_msg("row %zu: why \"%s\" does not say how to accept it", i, why);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
