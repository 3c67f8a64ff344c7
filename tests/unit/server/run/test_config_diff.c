/* Unit tests for server/run/config_diff.c (what a SIGHUP reload changes) and server/run/snapshot.c:
 * a table of (old configuration, new configuration) pairs, each with the setting that needs
 * a restart (or none), the diff's fields and the line debitd logs; and a snapshot's life
 * (references, retirement, reaping, shared region). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "array.h"
#include "config.h"
#include "config_diff.h"
#include "snapshot.h"

static char path[64];

/* TEXT (a configuration file's contents) into *C, over the defaults. */
static void load(struct config *c, const char *text)
{
    char err[512];
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(config_defaults(c, err, sizeof err), 0);
    if (config_load_file(c, path, err, sizeof err) < 0 || config_validate(c, err, sizeof err) < 0)
        fail_msg("%s: %s", text, err);
}

#define L1 "listen = ( { address = \"127.0.0.1\"; port = 8080; } );\n"
#define L2 "listen = ( { address = \"127.0.0.1\"; port = 8080; }, { address = \"::1\"; port = 8081; } );\n"
#define L2TCP                                                                                                      \
    "listen = ( { address = \"127.0.0.1\"; port = 8080; }, { address = \"::1\"; port = 8081; tcp = { congestion = " \
    "\"reno\"; }; } );\n"
#define F2 "files = ( { path = \"/a\"; size = \"1MiB\"; }, { path = \"/b\"; size = \"2MiB\"; } );\n"

static void test_diff_table(void **state)
{
    (void)state;
    static const struct {
        const char *name, *old, *new;
        const char *restart; /* NULL: reloadable */
        size_t added, removed, resized;
        int content, sizes, limits, offload, log_level, access_log, other;
        uint64_t tcp;
        const char *line; /* config_diff_format, when reloadable */
    } rows[] = {
        {"same", L1 F2, L1 F2, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "nothing changed"},
        {"file added", L1 F2, L1 "files = ( { path = \"/a\"; size = \"1MiB\"; }, { path = \"/b\"; size = \"2MiB\"; },"
                                 " { path = \"/c\"; size = \"1MiB\"; } );",
         NULL, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "+1 file, -0, 0 resized"},
        {"file removed, new size", L1 F2,
         L1 "files = ( { path = \"/b\"; size = \"2MiB\"; }, { path = \"/c\"; size = 10; } );", NULL, 1, 1, 0, 0,
         1, 0, 0, 0, 0, 0, 0, "+1 file, -1, 0 resized"},
        {"the largest file removed: a smaller region", L1 F2, L1 "files = ( { path = \"/a\"; size = \"1MiB\"; } );",
         NULL, 0, 1, 0, 1, 1, 0, 0, 0, 0, 0, 0, "+0 files, -1, 0 resized, new content region"},
        {"file resized (largest shrinks: new region)", L1 F2,
         L1 "files = ( { path = \"/a\"; size = \"1MiB\"; }, { path = \"/b\"; size = \"1MiB\"; } );", NULL, 0, 0, 1,
         1, 1, 0, 0, 0, 0, 0, 0, "+0 files, -0, 1 resized, new content region"},
        {"seed", L1 F2, L1 F2 "seed = 9;", NULL, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, "new content region"},
        {"ram cap", L1 F2, L1 F2 "ram = \"1MiB\";", NULL, 0, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, "new content region"},
        {"ram above the largest file: same region", L1 F2 "ram = \"4MiB\";", L1 F2 "ram = \"8MiB\";", NULL, 0, 0, 0,
         0, 0, 0, 0, 0, 0, 0, 0, "nothing changed"},
        {"per_ip", L1 F2, L1 F2 "limits = { per_ip = 3; };", NULL, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0,
         "limits changed"},
        {"quota", L1 F2, L1 F2 "limits = { per_ip_bytes = \"1GiB\"; per_ip_window = \"1h\"; };", NULL, 0, 0, 0, 0, 0,
         1, 0, 0, 0, 0, 0, "limits changed"},
        {"header timeout", L1 F2, L1 F2 "limits = { header_timeout = \"2s\"; };", NULL, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
         0, "limits changed"},
        {"upload", L1 F2, L1 F2 "upload = { path = \"/up\"; max_size = \"1MiB\"; };", NULL, 0, 0, 0, 0, 0, 1, 0, 0,
         0, 0, 0, "limits changed"},
        {"tcp profile of the second listener", L2 F2, L2TCP F2, NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2,
         "tcp profile of [::1]:8081 changed"},
        {"log level and access log", L1 F2, L1 F2 "log = { level = \"debug\"; access = \"off\"; };", NULL, 0, 0, 0, 0,
         0, 0, 0, 1, 1, 0, 0, "log level changed, access log changed"},
        {"privacy", L1 F2, L1 F2 "privacy = { details = false; };", NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0,
         "privacy/strict/metrics changed"},
        {"metrics allow", L1 F2, L1 F2 "metrics = { allow = ( \"10.0.0.0/8\" ); };", NULL, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
         0, "privacy/strict/metrics changed"},
        {"offload wish", L1 F2 "offload = { interface = \"lo\"; tso = false; };",
         L1 F2 "offload = { interface = \"lo\"; tso = true; };", NULL, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0,
         "offloads changed"},
        /* what only a restart changes */
        {"a listener added", L1 F2, L2 F2, "listen", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
        {"a port changed", L1 F2, "listen = ( { address = \"127.0.0.1\"; port = 8090; } );\n" F2, "listen", 0, 0, 0, 0,
         0, 0, 0, 0, 0, 0, 0, NULL},
        {"an address changed", L1 F2, "listen = ( { address = \"127.0.0.2\"; port = 8080; } );\n" F2, "listen", 0, 0,
         0, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
        {"connection memory of a listener", L1 F2,
         "listen = ( { address = \"127.0.0.1\"; port = 8080; connection_memory = \"8KiB\"; } );\n" F2,
         "listen.connection_memory", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
        {"connection memory written as its default", L1 F2,
         "listen = ( { address = \"127.0.0.1\"; port = 8080; connection_memory = \"32KiB\"; } );\n" F2, NULL, 0, 0,
         0, 0, 0, 0, 0, 0, 0, 0, 0, "nothing changed"},
        {"threads", L1 F2, L1 F2 "threads = 3;", "threads", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
        {"connections", L1 F2, L1 F2 "limits = { connections = 10; };", "limits.connections", 0, 0, 0, 0, 0, 0, 0, 0,
         0, 0, 0, NULL},
        {"idle timeout", L1 F2, L1 F2 "limits = { idle_timeout = 5; };", "limits.idle_timeout", 0, 0, 0, 0, 0, 0, 0,
         0, 0, 0, 0, NULL},
        {"transfers ring", L1 F2, L1 F2 "transfers = 10;", "transfers", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
        {"quota table size", L1 F2, L1 F2 "limits = { per_ip_table = 10; };", "limits.per_ip_table", 0, 0, 0, 0, 0, 0,
         0, 0, 0, 0, 0, NULL},
        {"seccomp", L1 F2, L1 F2 "seccomp = \"log\";", "seccomp", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, NULL},
        {"offload interface", L1 F2, L1 F2 "offload = { interface = \"lo\"; tso = false; };", "offload.interface", 0,
         0, 0, 0, 0, 0, 1, 0, 0, 0, 0, NULL},
    };
    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        struct config o, n;
        struct config_diff d;
        load(&o, rows[i].old);
        load(&n, rows[i].new);
        config_diff(&o, &n, &d);
        const char *name = rows[i].name;
        if (!rows[i].restart != !d.restart || (d.restart && strcmp(d.restart, rows[i].restart) != 0))
            fail_msg("%s: restart %s, expected %s", name, d.restart ? d.restart : "(none)",
                     rows[i].restart ? rows[i].restart : "(none)");
        if (d.files_added != rows[i].added || d.files_removed != rows[i].removed || d.files_resized != rows[i].resized)
            fail_msg("%s: files +%zu -%zu ~%zu", name, d.files_added, d.files_removed, d.files_resized);
        if (d.content != rows[i].content || d.sizes != rows[i].sizes || d.limits != rows[i].limits ||
            d.offload != rows[i].offload || d.log_level != rows[i].log_level ||
            d.access_log != rows[i].access_log || d.other != rows[i].other || d.tcp != rows[i].tcp)
            fail_msg("%s: content %d sizes %d limits %d offload %d log %d access %d other %d tcp %llx", name,
                     d.content, d.sizes, d.limits, d.offload, d.log_level, d.access_log, d.other,
                     (unsigned long long)d.tcp);
        if (rows[i].line) {
            char line[256];
            config_diff_format(&d, &n, line, sizeof line);
            if (strcmp(line, rows[i].line) != 0)
                fail_msg("%s: logged \"%s\", expected \"%s\"", name, line, rows[i].line);
            assert_int_equal(config_diff_any(&d), strcmp(rows[i].line, "nothing changed") != 0);
        }
        config_free(&o);
        config_free(&n);
    }
}

/* The life of snapshots: the first borrows its configuration; the next shares the region
 * and digest until one of its own replaces them; a retired snapshot is freed by the reap
 * only once nobody holds it. (No content is made: shares of NULL objects are freed with
 * content_free(NULL)/digest_free(NULL), which accept it.) */
static void test_snapshot_life(void **state)
{
    (void)state;
    struct config first;
    load(&first, L1 F2);
    struct snapshot *s1 = snapshot_first(&first, NULL, NULL);
    assert_non_null(s1);
    assert_int_equal(s1->generation, 1);
    struct config *c2 = calloc(1, sizeof *c2);
    assert_non_null(c2);
    load(c2, L1 F2 "seed = 3;");
    struct snapshot *s2 = snapshot_next(s1, c2, NULL, NULL);
    assert_non_null(s2);
    assert_int_equal(s2->generation, 2);
    assert_ptr_equal(s2->content_share, s1->content_share); /* shared region */

    struct snapshot *retired = NULL;
    struct snapshot *held = snapshot_get(s1); /* a response under way */
    snapshot_retire(&retired, s1);            /* the reload replaced it */
    assert_int_equal(snapshot_reap(&retired), 1);
    assert_ptr_equal(retired, s1);
    snapshot_put(held); /* the response ended */
    assert_int_equal(snapshot_reap(&retired), 0);
    assert_null(retired);

    struct config *c3 = calloc(1, sizeof *c3);
    assert_non_null(c3);
    load(c3, L1 F2);
    struct snapshot *s3 = snapshot_next(s2, c3, NULL, NULL);
    assert_non_null(s3);
    snapshot_retire(&retired, s2);
    snapshot_get(s2); /* held at the stop: freed all the same */
    snapshot_free_all(s3, &retired);
    assert_null(retired);
    config_free(&first); /* borrowed by s1 */
}

static int setup(void **state)
{
    (void)state;
    snprintf(path, sizeof path, "/tmp/debit-test-config-diff.%d.conf", (int)getpid());
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(path);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diff_table),
        cmocka_unit_test(test_snapshot_life),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
