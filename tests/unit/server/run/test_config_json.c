/* Unit tests for server/run/config_json.c: /status's "limits" object made from the
 * settings table. The exact object of the defaults and of set values (the keys and values
 * /status had when it was written by hand), one row per shown limit of the table, and the
 * list of fields docs/server.md gives for /status. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "config.h"
#include "config_json.h"
#include "config_table.h"

/* GROUP's object of C, compact, keys in the table's order (malloc'd). */
static char *group_text(const struct config *c, const char *group)
{
    json_t *o = config_json_group(c, group);
    assert_non_null(o);
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    assert_non_null(s);
    return s;
}

/* Settings (NAME, the file's spelling) and the "limits" object they give. */
static const struct {
    const char *set[4][2];
    const char *want;
} cases[] = {
    {{{NULL, NULL}},
     "{\"connections\":10000,\"per_ip\":100,\"idle_timeout_s\":30,\"per_ip_bytes\":0,"
     "\"per_ip_window_s\":86400.0,\"drain_timeout_s\":10.0}"},
    {{{"limits.per_ip_bytes", "100GiB"}, {"limits.per_ip_window", "2.5s"}, {"limits.drain_timeout", "0"},
      {"limits.idle_timeout", "0"}},
     "{\"connections\":10000,\"per_ip\":100,\"idle_timeout_s\":0,\"per_ip_bytes\":107374182400,"
     "\"per_ip_window_s\":2.5,\"drain_timeout_s\":0.0}"},
    /* the hidden rows change nothing */
    {{{"limits.connections", "7"}, {"limits.per_ip", "0"}, {"limits.header_timeout", "1s"},
      {"limits.per_ip_table", "5"}},
     "{\"connections\":7,\"per_ip\":0,\"idle_timeout_s\":30,\"per_ip_bytes\":0,"
     "\"per_ip_window_s\":86400.0,\"drain_timeout_s\":10.0}"},
};

static void test_limits_object(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct config c;
        char err[256];
        assert_int_equal(config_defaults(&c, err, sizeof err), 0);
        for (size_t k = 0; k < 4 && cases[i].set[k][0]; k++) {
            const struct config_entry *e = config_table_find(cases[i].set[k][0]);
            assert_non_null(e);
            if (config_table_set_text(&c, e, cases[i].set[k][1], err, sizeof err) != 0)
                fail_msg("%s = %s: %s", e->name, cases[i].set[k][1], err);
        }
        char *got = group_text(&c, "limits");
        if (strcmp(got, cases[i].want) != 0)
            fail_msg("case %zu:\n got  %s\n want %s", i, got, cases[i].want);
        free(got);
        config_free(&c);
    }
}

/* Each row of the "limits" group: shown under its key, with its own value, unless marked
 * hidden; a row added to the table is shown without a line of /status code. */
static void test_rows(void **state)
{
    (void)state;
    struct config c;
    char err[256], key[64];
    assert_int_equal(config_defaults(&c, err, sizeof err), 0);
    json_t *o = config_json_group(&c, "limits");
    assert_non_null(o);
    size_t shown = 0;
    for (size_t i = 0; i < config_table_len; i++) {
        const struct config_entry *e = &config_table[i];
        if (!config_entry_in(e, "limits"))
            continue;
        json_t *v = json_object_get(o, config_json_key(e, key, sizeof key));
        if (e->status_hidden) {
            assert_null(v);
            continue;
        }
        shown++;
        assert_non_null(v);
        json_t *want = config_json_value(&c, e);
        if (!json_equal(v, want))
            fail_msg("%s: /status key %s differs from its value", e->name, key);
        json_decref(want);
    }
    assert_int_equal(json_object_size(o), shown);
    json_decref(o);
    config_free(&c);
}

/* The value of each kind of row. */
static void test_kinds(void **state)
{
    (void)state;
    struct config c;
    char err[256], key[64];
    assert_int_equal(config_defaults(&c, err, sizeof err), 0);
    static const struct {
        const char *name, *key, *json;
    } rows[] = {
        {"limits.idle_timeout", "idle_timeout_s", "30"},          /* SEC: whole seconds */
        {"limits.drain_timeout", "drain_timeout_s", "10.0"},      /* MSEC: seconds, real */
        {"limits.body_min_rate", "body_min_rate", "1000"},        /* RATE: bytes/s */
        {"upload.max_size", "max_size", "10737418240"},           /* SIZE: bytes */
        {"privacy.details", "details", "true"},                   /* BOOL */
        {"log.level", "level", "\"info\""},                       /* ENUM: its name */
        {"log.access", "access", "\"-\""},                        /* STRING */
        {"offload.interface", "interface", "null"},               /* an unset STRING */
        {"offload.tso", "tso", "null"},                           /* an untouched TRISTATE */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const struct config_entry *e = config_table_find(rows[i].name);
        assert_non_null(e);
        assert_string_equal(config_json_key(e, key, sizeof key), rows[i].key);
        json_t *v = config_json_value(&c, e);
        assert_non_null(v);
        char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        if (strcmp(s, rows[i].json) != 0)
            fail_msg("%s: %s, want %s", rows[i].name, s, rows[i].json);
        free(s);
        json_decref(v);
    }
    assert_null(config_json_value(&c, config_table_find("listen"))); /* a list: hand code */
    config_free(&c);
}

/* docs/server.md lists /status's limits as "limits (KEY, KEY, ...: or )": the table's keys, in
 * its order. */
static void test_documented(void **state)
{
    (void)state;
    const char *top = getenv("DEBIT_TOP");
    char p[512];
    snprintf(p, sizeof p, "%s/docs/server.md", top ? top : ".");
    FILE *f = fopen(p, "r");
    if (!f)
        fail_msg("cannot read %s (DEBIT_TOP=%s)", p, top ? top : "unset");
    static char text[1 << 20];
    text[fread(text, 1, sizeof text - 1, f)] = 0;
    fclose(f);
    const char *at = strstr(text, "\n  limits (");
    assert_non_null(at);
    at += strlen("\n  limits (");
    char doc[512] = "";
    size_t n = 0;
    for (int space = 0; *at && *at != ')' && *at != ':' && n + 1 < sizeof doc; at++) {
        if (*at == ' ' || *at == '\n') {
            space = 1;
            continue;
        }
        if (space && doc[0] && doc[n - 1] == ',')
            doc[n++] = ' ';
        space = 0;
        doc[n++] = *at;
    }
    doc[n] = 0;
    struct config c;
    char err[256], key[64], want[512] = "";
    assert_int_equal(config_defaults(&c, err, sizeof err), 0);
    for (size_t i = 0; i < config_table_len; i++) {
        const struct config_entry *e = &config_table[i];
        if (!config_entry_in(e, "limits") || e->status_hidden)
            continue;
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", want[0] ? ", " : "",
                 config_json_key(e, key, sizeof key));
    }
    config_free(&c);
    assert_string_equal(doc, want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limits_object),
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_kinds),
        cmocka_unit_test(test_documented),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
