/* Unit tests for server/run/config_table.c, row by row of the table itself: every
 * default is the one docs/server.md and man/debitd.conf.5 state; every bounded number is
 * refused one past each bound, with FILE:LINE and the setting's name, and accepted at the
 * bound; every setting a reload cannot change is refused by config_diff under its own
 * name, and every other one is taken over; and -t's memory warning. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "config.h"
#include "config_diff.h"
#include "config_table.h"

static char path[64];

static int setup(void **state)
{
    (void)state;
    snprintf(path, sizeof path, "/tmp/debit-test-config-table.%d.conf", (int)getpid());
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(path);
    return 0;
}

/* A file of the repository, whole, with the man page's \(dq as '"' and \- as '-'. */
static char *read_doc(const char *rel)
{
    const char *top = getenv("DEBIT_TOP");
    char p[512];
    snprintf(p, sizeof p, "%s/%s", top ? top : ".", rel);
    FILE *f = fopen(p, "r");
    if (!f)
        fail_msg("cannot read %s (DEBIT_TOP=%s)", p, top ? top : "unset");
    char *buf = calloc(1, 1 << 20);
    size_t n = fread(buf, 1, (1 << 20) - 1, f);
    fclose(f);
    buf[n] = 0;
    char *w = buf;
    for (const char *r = buf; *r;) {
        if (strncmp(r, "\\(dq", 4) == 0) {
            *w++ = '"';
            r += 4;
        } else if (strncmp(r, "\\-", 2) == 0) {
            *w++ = '-';
            r += 2;
        } else {
            *w++ = *r++;
        }
    }
    *w = 0;
    return buf;
}

static void test_defaults_documented(void **state)
{
    (void)state;
    static const char *const docs[] = {"docs/server.md", "man/debitd.conf.5"};
    struct config c;
    char err[256], v[256], want[320];
    int missing = 0;
    assert_int_equal(config_defaults(&c, err, sizeof err), 0);
    for (size_t d = 0; d < sizeof docs / sizeof docs[0]; d++) {
        char *text = read_doc(docs[d]);
        for (size_t i = 0; i < config_table_len; i++) {
            const struct config_entry *e = &config_table[i];
            if (e->kind == CONFIG_HAND || !config_table_format(&c, e, v, sizeof v)[0])
                continue; /* lists, and settings unset by default (user, offload.interface...) */
            snprintf(want, sizeof want, "%s = %s", config_entry_leaf(e), v);
            if (!strstr(text, want)) {
                print_error("%s: %s's default \"%s\" is not stated there\n", docs[d], e->name, want);
                missing++;
            }
        }
        free(text);
    }
    config_free(&c);
    assert_int_equal(missing, 0);
}

/* "NAME = VALUE;" or "GROUP = { LEAF = VALUE; };" into the test file. */
static void write_setting(const struct config_entry *e, const char *value)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    const char *dot = strchr(e->name, '.');
    if (dot)
        fprintf(f, "%.*s = { %s = %s; };\n", (int)(dot - e->name), e->name, dot + 1, value);
    else
        fprintf(f, "%s = %s;\n", e->name, value);
    fclose(f);
}

/* V in E's own unit (bytes, ms, s) as the file writes it. */
static void spell(const struct config_entry *e, uint64_t v, char *buf, size_t len)
{
    switch (e->kind) {
    case CONFIG_UINT: snprintf(buf, len, "%llu%s", (unsigned long long)v, v > INT32_MAX ? "L" : ""); break;
    case CONFIG_SIZE: snprintf(buf, len, "\"%llu\"", (unsigned long long)v); break;
    case CONFIG_MSEC: snprintf(buf, len, "\"%llums\"", (unsigned long long)v); break;
    default: snprintf(buf, len, "\"%llus\"", (unsigned long long)v); break;
    }
}

static void expect_load(const struct config_entry *e, uint64_t v, int ok)
{
    struct config c;
    char err[1024], text[64], want[300];
    spell(e, v, text, sizeof text);
    write_setting(e, text);
    assert_int_equal(config_defaults(&c, err, sizeof err), 0);
    int r = config_load_file(&c, path, err, sizeof err);
    snprintf(want, sizeof want, "%s:1: %s: ", path, e->name);
    if (ok && r != 0)
        fail_msg("%s = %s (a bound) refused: %s", e->name, text, err);
    if (!ok && (r != -1 || strncmp(err, want, strlen(want)) != 0))
        fail_msg("%s = %s (out of range): got %d \"%s\", want \"%s...\"", e->name, text, r, r ? err : "", want);
    config_free(&c);
}

static void test_bounds(void **state)
{
    (void)state;
    size_t checked = 0;
    for (size_t i = 0; i < config_table_len; i++) {
        const struct config_entry *e = &config_table[i];
        if (e->kind != CONFIG_UINT && e->kind != CONFIG_SIZE && e->kind != CONFIG_MSEC && e->kind != CONFIG_SEC)
            continue;
        /* the field holds every value in range */
        assert_true(e->width == 4 || e->width == 8);
        assert_true(e->width == 8 || e->max <= UINT32_MAX);
        if (e->max < (e->kind == CONFIG_UINT ? (uint64_t)INT64_MAX : UINT64_MAX / 1000000)) {
            expect_load(e, e->max, 1);
            expect_load(e, e->max + 1, 0);
            checked++;
        }
        if (e->min > 0) {
            expect_load(e, e->min, 1);
            expect_load(e, e->min - 1, 0);
            checked++;
        }
        if (e->zero_ok)
            expect_load(e, 0, 1);
    }
    assert_true(checked >= 10); /* threads, connections, per_ip, the timeouts, transfers, ram... */
}

/* Another valid value for E than C's, as set_text takes it. */
static void other_value(const struct config *c, const struct config_entry *e, char *buf, size_t len)
{
    char cur[256];
    config_table_format(c, e, cur, sizeof cur);
    switch (e->kind) {
    case CONFIG_BOOL: snprintf(buf, len, "%s", strcmp(cur, "true") == 0 ? "false" : "true"); break;
    case CONFIG_TRISTATE: snprintf(buf, len, "false"); break; /* the default: untouched */
    case CONFIG_ENUM: { /* cur is the name in quotes */
        size_t n0 = strlen(e->names[0]);
        int is0 = strncmp(cur + 1, e->names[0], n0) == 0 && cur[1 + n0] == '"';
        snprintf(buf, len, "%s", is0 ? e->names[1] : e->names[0]);
        break;
    }
    case CONFIG_RATE: snprintf(buf, len, "8kB/s"); break;
    case CONFIG_STRING:
        if (strcmp(e->name, "user") == 0 || strcmp(e->name, "group") == 0)
            snprintf(buf, len, "root"); /* looked up: a name every system has */
        else if (strcmp(e->name, "offload.interface") == 0)
            snprintf(buf, len, "lo");
        else if (strcmp(e->name, "speedtest.isp_map") == 0)
            snprintf(buf, len, "/dev/null"); /* read now: an empty map */
        else
            snprintf(buf, len, "/other/value");
        break;
    default: { /* a number: the smallest valid one (the max, in test_reload, when that is the default) */
        uint64_t v = e->min == 0 && !e->zero_ok ? 1 : e->min;
        snprintf(buf, len, "%llu%s", (unsigned long long)v,
                 e->kind == CONFIG_MSEC ? "ms" : e->kind == CONFIG_SEC ? "s" : "");
        break;
    }
    }
}

static void test_reload(void **state)
{
    (void)state;
    size_t restart = 0, reloadable = 0;
    for (size_t i = 0; i < config_table_len; i++) {
        const struct config_entry *e = &config_table[i];
        if (e->kind == CONFIG_HAND)
            continue;
        struct config a, b;
        struct config_diff d;
        char err[1024], v[256], before[256], after[256];
        assert_int_equal(config_defaults(&a, err, sizeof err), 0);
        assert_int_equal(config_defaults(&b, err, sizeof err), 0);
        other_value(&b, e, v, sizeof v);
        if (config_table_set_text(&b, e, v, err, sizeof err) < 0)
            fail_msg("%s = %s: %s", e->name, v, err);
        config_table_format(&a, e, before, sizeof before);
        config_table_format(&b, e, after, sizeof after);
        if (strcmp(before, after) == 0) { /* the min was the default: take the max */
            char t[64];
            snprintf(t, sizeof t, "%llu%s", (unsigned long long)e->max,
                     e->kind == CONFIG_MSEC ? "ms" : e->kind == CONFIG_SEC ? "s" : "");
            assert_int_equal(config_table_set_text(&b, e, t, err, sizeof err), 0);
        }
        assert_int_equal(config_table_equal(&a, &b, e), 0);
        config_diff(&a, &b, &d);
        if (e->reload == CONFIG_RESTART) {
            if (!d.restart || strcmp(d.restart, e->name) != 0)
                fail_msg("%s changed: restart \"%s\", want \"%s\"", e->name, d.restart ? d.restart : "(none)",
                         e->name);
            restart++;
        } else {
            if (d.restart)
                fail_msg("%s changed: a reload refused it (%s)", e->name, d.restart);
            /* ram above the largest file changes nothing served: the region stays */
            if (e->reload != CONFIG_RELOAD_REGION && !config_diff_any(&d))
                fail_msg("%s changed: the reload saw no change", e->name);
            reloadable++;
        }
        config_free(&a);
        config_free(&b);
    }
    assert_int_equal(restart, 12); /* threads, connections, idle_timeout, per_ip_table, transfers, offload x3, user,
                                      group, seccomp, speedtest.telemetry_keep */
    assert_true(reloadable >= 20);
}

static void test_set_text(void **state)
{
    (void)state;
    struct config c;
    char err[256];
    assert_int_equal(config_defaults(&c, err, sizeof err), 0);
    static const struct {
        const char *name, *text, *msg; /* msg NULL: accepted */
    } rows[] = {
        {"log.level", "debug", NULL},
        {"log.level", "loud", "unknown level \"loud\" (expected error, warn, info or debug)"},
        {"seccomp", "strict", "unknown mode \"strict\" (expected eperm, kill, log or off)"},
        {"log.access_format", "clf", "unknown format \"clf\" (expected json or combined)"},
        {"limits.header_timeout", "50ms", "50 ms is out of range (0 = none, or 100ms to 1 hour)"},
        {"limits.header_timeout", "0", NULL},
        {"limits.per_ip_window", "1.5ms", "must be whole milliseconds"},
        {"limits.idle_timeout", "1.5s", "must be whole seconds (libmicrohttpd's resolution)"},
        {"limits.idle_timeout", "2d", "more than one day"},
        {"limits.body_min_rate", "2GB/s", "\"2GB/s\" is above 1GB/s: a floor that high would cut honest uploads"},
        {"ram", "4095", "4095 bytes is too small (at least 4KiB, or 0 for no cap)"},
        {"threads", "1025", "1025 is out of range [0, 1024]"},
        {"privacy.details", "yes", "expected true or false"},
        {"offload.state_file", "rel", "must be an absolute path"},
        {"log.access", "", "empty (use \"-\" for stderr, \"off\", or a file path)"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct config_entry *e = config_table_find(rows[i].name);
        assert_non_null(e);
        int r = config_table_set_text(&c, e, rows[i].text, err, sizeof err);
        if (rows[i].msg ? r != -1 || strcmp(err, rows[i].msg) != 0 : r != 0)
            fail_msg("%s = \"%s\": got %d \"%s\", want %s", rows[i].name, rows[i].text, r, r ? err : "",
                     rows[i].msg ? rows[i].msg : "accepted");
    }
    assert_int_equal(c.log_level, LOG_LEVEL_DEBUG);
    assert_null(config_table_find("limits.nonexistent"));
    config_free(&c);
}

static void test_region_warning(void **state)
{
    (void)state;
    struct config c;
    char err[256], warn[512];
    assert_int_equal(config_defaults(&c, err, sizeof err), 0); /* region: 1 GiB, the largest file */
    assert_int_equal(config_region_warning(&c, 4ULL << 30, warn, sizeof warn), 0);
    assert_int_equal(config_region_warning(&c, 0, warn, sizeof warn), 0); /* MemTotal unknown */
    assert_int_equal(config_region_warning(&c, 512ULL << 20, warn, sizeof warn), 1);
    assert_non_null(strstr(warn, "(defaults): ram: the content region (1 GiB, the largest file: ram not set) is "
                                 "larger than this host's memory (MemTotal 512 MiB)"));
    c.ram = 256ULL << 20;
    assert_int_equal(config_region_warning(&c, 512ULL << 20, warn, sizeof warn), 0);
    config_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults_documented), cmocka_unit_test(test_bounds), cmocka_unit_test(test_reload),
        cmocka_unit_test(test_set_text), cmocka_unit_test(test_region_warning),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
