/* Unit tests for client/output/labels.c: NULL-aware equality, distinct values in order of
 * appearance (with the LABELS_MAX bound), the index of a value and the row of a cell. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "labels.h"

static void test_same(void **state)
{
    (void)state;
    static const struct {
        const char *a, *b;
        int want;
    } rows[] = {
        {NULL, NULL, 1}, {"x", "x", 1}, {"x", NULL, 0}, {NULL, "x", 0}, {"x", "y", 0}, {"", NULL, 0}, {"", "", 1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        assert_int_equal(labels_same(rows[i].a, rows[i].b), rows[i].want);
}

/* Two latency scenarios x two variants x two servers, in the order a scenario run fills
 * them, plus a NULL-labelled row outside any scenario. */
static struct server_summary rows[] = {
    {.server = "A"},
    {.server = "A", .scenario = "+0 ms", .variant = "on"},
    {.server = "B", .scenario = "+0 ms", .variant = "on"},
    {.server = "A", .scenario = "+0 ms", .variant = "off"},
    {.server = "B", .scenario = "+0 ms", .variant = "off"},
    {.server = "A", .scenario = "+30 ms", .variant = "on"},
    {.server = "B", .scenario = "+30 ms", .variant = "off"},
};
static const struct summary sum = {rows, sizeof rows / sizeof rows[0]};

static void test_distinct(void **state)
{
    (void)state;
    static const struct {
        enum labels_axis axis;
        size_t max;
        size_t n;
        const char *want[4];
    } cases[] = {
        {LABELS_SCENARIO, LABELS_MAX, 3, {NULL, "+0 ms", "+30 ms"}},
        {LABELS_VARIANT, LABELS_MAX, 3, {NULL, "on", "off"}},
        {LABELS_SERVER, LABELS_MAX, 2, {"A", "B"}},
        {LABELS_SCENARIO, 2, 2, {NULL, "+0 ms"}}, /* bounded by max */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *vals[LABELS_MAX];
        size_t n = labels_distinct(&sum, cases[c].axis, vals, cases[c].max);
        assert_int_equal(n, cases[c].n);
        for (size_t i = 0; i < n; i++)
            if (!labels_same(vals[i], cases[c].want[i]))
                fail_msg("case %zu, value %zu: %s, want %s", c, i, vals[i] ? vals[i] : "NULL",
                         cases[c].want[i] ? cases[c].want[i] : "NULL");
    }
    const char *vals[LABELS_MAX];
    size_t n = labels_distinct(&sum, LABELS_VARIANT, vals, LABELS_MAX);
    assert_int_equal(labels_index(vals, n, "off"), 2);
    assert_int_equal(labels_index(vals, n, NULL), 0);
    assert_int_equal(labels_index(vals, n, "none"), 0);
}

static void test_find(void **state)
{
    (void)state;
    static const struct {
        const char *scn, *var, *srv;
        int row; /* -1: none */
    } cases[] = {
        {NULL, NULL, "A", 0},      {"+0 ms", "on", "B", 2},  {"+0 ms", "off", "A", 3},
        {"+30 ms", "off", "B", 6}, {"+30 ms", "on", "B", -1}, {NULL, NULL, "B", -1},
        {"+0 ms", NULL, "A", -1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const struct server_summary *g = labels_find(&sum, cases[c].scn, cases[c].var, cases[c].srv);
        if (cases[c].row < 0)
            assert_null(g);
        else
            assert_ptr_equal(g, &rows[cases[c].row]);
    }
}

/* Column titles: what the server's first run with headers reported, then the lab's host
 * settings (its cpu only when the server reported none). */
static void test_server_title(void **state)
{
    (void)state;
    static const struct {
        const char *offload, *cpu, *tcp, *host;
        const char *want;
    } cases[] = {
        {NULL, NULL, NULL, NULL, "S"},
        {"tso=on gso=on gro=off", NULL, "cc=bbr pacing=unlimited sndbuf=auto", NULL, "S (TSO/GSO on)"},
        {"tso=off gso=off gro=on", NULL, NULL, "cpu 1%", "S (TSO/GSO off, cpu 1%)"},
        {"tso=on gso=off gro=on", "quota=3%; throttled=0", NULL, "cpu 1%, mtu 1500", "S (TSO on, GSO off, cpu 3%, mtu 1500)"},
        {NULL, "quota=none", "cc=cubic sndbuf=1572864", "initcwnd 10", "S (sndbuf 1.5 MiB, initcwnd 10)"},
        {NULL, NULL, NULL, "tcp_wmem max 1 MiB, initcwnd 20", "S (tcp_wmem max 1 MiB, initcwnd 20)"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct run_result plain = {.server = "S"}, r = {.server = "S"}, other = {.server = "T"};
        r.server_config = json_object();
        if (cases[c].offload)
            json_object_set_new(r.server_config, "X-Debit-Offload", json_string(cases[c].offload));
        if (cases[c].cpu)
            json_object_set_new(r.server_config, "X-Debit-Cpu", json_string(cases[c].cpu));
        if (cases[c].tcp)
            json_object_set_new(r.server_config, "X-Debit-Tcp", json_string(cases[c].tcp));
        other.server_config = json_pack("{s:s}", "X-Debit-Offload", "tso=off gso=off");
        struct run_result *runs[] = {&other, &plain, &r};
        struct result_set rs = {.runs = runs, .n = 3};
        struct report_server_note notes[] = {{"T", "cpu 50%"}, {"S", cases[c].host}};
        struct report_meta m = {.server_notes = notes, .nserver_notes = 2};
        char buf[256];
        assert_string_equal(labels_server_title(&rs, &m, "S", buf, sizeof buf), cases[c].want);
        json_decref(r.server_config);
        json_decref(other.server_config);
    }
    char small[8];
    struct result_set none = {0};
    assert_string_equal(labels_server_title(&none, NULL, "a long name", small, sizeof small), "a long ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same),
        cmocka_unit_test(test_distinct),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_server_title),
    };
    return cmocka_run_group_tests_name("labels", tests, NULL, NULL);
}
