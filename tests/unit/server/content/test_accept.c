/* Unit tests for server/content/accept.c: weights of Accept headers as browsers, curl and
 * scripts send them, specificity, q values, malformed members; table-driven. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "accept.h"

#define FIREFOX "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
#define CHROME                                                                                                  \
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,"         \
    "application/signed-exchange;v=b3;q=0.7"

static void test_weight(void **state)
{
    (void)state;
    static const struct {
        const char *accept, *type;
        int weight;
    } rows[] = {
        {NULL, "application/json", 1000},
        {"", "text/html", 1000},
        {"*/*", "text/html", 1000},
        {"*/*", "application/json", 1000},
        {FIREFOX, "text/html", 1000},
        {FIREFOX, "application/json", 800},
        {CHROME, "application/json", 800},
        {"application/json", "text/html", 0},
        {"text/*;q=0.3, text/html;q=0.7, */*;q=0.5", "text/html", 700},
        {"text/*;q=0.3, text/html;q=0.7, */*;q=0.5", "text/plain", 300},
        {"text/*;q=0.3, text/html;q=0.7, */*;q=0.5", "application/json", 500},
        {"TEXT/HTML;Q=0.5", "text/html", 500},
        {"text/html ; level=1 ; q=0.25 ", "text/html", 250},
        {"text/html;q=1.0", "text/html", 1000},
        {"text/html;q=0", "text/html", 0},
        {"text/html;q=0.0001", "text/html", 0},  /* more than 3 decimals: malformed, skipped */
        {"text/html;q=2", "text/html", 0},       /* malformed */
        {"text/html;q=2, */*;q=0.1", "text/html", 100},
        {"text/html;q=1.5", "text/html", 0},
        {"text, /html, /, text/, */json", "text/html", 0},
        {"application/json;q=0.9, text/html", "application/json", 900},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int w = accept_weight(rows[i].accept, rows[i].type);
        if (w != rows[i].weight)
            fail_msg("row %zu: Accept: %s: %s weighs %d, not %d", i, rows[i].accept ? rows[i].accept : "(none)",
                     rows[i].type, w, rows[i].weight);
    }
}

/* /status's choice: HTML only when text/html weighs more than application/json. */
static void test_prefers(void **state)
{
    (void)state;
    static const struct {
        const char *accept;
        int html;
    } rows[] = {
        {NULL, 0},          {"*/*", 0},
        {FIREFOX, 1},       {CHROME, 1},
        {"text/html", 1},   {"application/json", 0},
        {"text/html, application/json", 0}, /* a tie: JSON, as before */
        {"text/html;q=0.5, application/json", 0},
        {"application/json;q=0.5, text/html", 1},
        {"text/*", 1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (accept_prefers(rows[i].accept, "text/html", "application/json") != rows[i].html)
            fail_msg("row %zu: Accept: %s", i, rows[i].accept ? rows[i].accept : "(none)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weight),
        cmocka_unit_test(test_prefers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
