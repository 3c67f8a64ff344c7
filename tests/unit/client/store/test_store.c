/* Unit tests for client/store/ on SQLite: --db specs and the default location, migration
 * from schema version 1, idempotent inserts of odd names, the spool, history reads. The
 * PostgreSQL engine is tested against a real server by tests/e2e/store_pg.sh. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "testlib.h"

#include "store.h"
#include "store_history.h"
#include "store_record.h"
#include "store_session.h"
#include "store_spool.h"

static char g_dir[256];

static int setup(void **state)
{
    (void)state;
    g_dir[0] = '\0';
    if (testlib_mkdtemp(g_dir, sizeof g_dir, "/tmp/debit-store-test.XXXXXX") != 0)
        return -1;
    setenv("XDG_DATA_HOME", g_dir, 1);
    unsetenv("DEBIT_DB");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    testlib_sh("rm -rf '%s'", g_dir);
    return 0;
}

struct spec_case {
    const char *arg;
    int ok;
    enum store_kind kind;
    const char *target; /* NULL: not checked; "@" : g_dir-relative */
    const char *err;    /* substring of the error */
};

static void test_spec_parse(void **state)
{
    (void)state;
    static const struct spec_case cases[] = {
        {"none", 1, STORE_NONE, NULL, NULL},
        {"sqlite:/tmp/x.db", 1, STORE_SQLITE, "/tmp/x.db", NULL},
        {"/tmp/y.db", 1, STORE_SQLITE, "/tmp/y.db", NULL},
        {"rel.db", 1, STORE_SQLITE, "rel.db", NULL},
        {"postgresql://u@127.0.0.1:5999/db", 1, STORE_PG, "postgresql://u@127.0.0.1:5999/db", NULL},
        {"postgres:///debit?service=fleet", 1, STORE_PG, NULL, NULL},
        {"", 0, 0, NULL, "empty value"},
        {"mysql://h/db", 0, 0, NULL, "unknown kind of store"},
        {"/nonexistent-dir/x.db", 0, 0, NULL, "/nonexistent-dir: No such file or directory"},
        {"sqlite:", 0, 0, NULL, "empty path"},
        {"/tmp", 0, 0, NULL, "is a directory"},
        {"postgresql://h/db?bogus_option=1", 0, 0, NULL, "bogus_option"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct store_spec sp;
        char err[256] = "";
        int rc = store_spec_parse(cases[i].arg, &sp, err, sizeof err);
        print_message("# '%s': %d %s\n", cases[i].arg, rc, err);
        assert_int_equal(rc, cases[i].ok ? 0 : -1);
        if (cases[i].ok) {
            assert_int_equal(sp.kind, cases[i].kind);
            if (cases[i].target)
                assert_string_equal(sp.target, cases[i].target);
        } else {
            assert_non_null(strstr(err, cases[i].err));
        }
    }
}

static void test_spec_default(void **state)
{
    (void)state;
    struct store_spec sp;
    char err[256], want[512];
    assert_int_equal(store_spec_default(&sp, err, sizeof err), 0);
    snprintf(want, sizeof want, "%s/debit/results.db", g_dir);
    assert_int_equal(sp.kind, STORE_SQLITE);
    assert_string_equal(sp.target, want);
    /* relative XDG_DATA_HOME: ignored, HOME's .local/share */
    setenv("XDG_DATA_HOME", "relative", 1);
    setenv("HOME", g_dir, 1);
    assert_int_equal(store_spec_default(&sp, err, sizeof err), 0);
    snprintf(want, sizeof want, "%s/.local/share/debit/results.db", g_dir);
    assert_string_equal(sp.target, want);
    setenv("DEBIT_DB", "none", 1);
    assert_int_equal(store_spec_default(&sp, err, sizeof err), 0);
    assert_int_equal(sp.kind, STORE_NONE);
    setenv("DEBIT_DB", "mysql://x/y", 1);
    assert_int_equal(store_spec_default(&sp, err, sizeof err), -1);
    assert_non_null(strstr(err, "DEBIT_DB: "));
    unsetenv("DEBIT_DB");
    setenv("XDG_DATA_HOME", g_dir, 1);
}

static void test_spec_display(void **state)
{
    (void)state;
    struct store_spec sp = {.kind = STORE_PG};
    char buf[512];
    snprintf(sp.target, sizeof sp.target, "postgresql://debit:s3cret@db.example/results");
    store_spec_display(&sp, buf, sizeof buf);
    assert_string_equal(buf, "postgresql://debit:***@db.example/results");
    snprintf(sp.target, sizeof sp.target, "postgresql://h/db?password=s3cret&sslmode=require");
    store_spec_display(&sp, buf, sizeof buf);
    assert_string_equal(buf, "postgresql://h/db?password=***&sslmode=require");
}

/* A run's JSON as result_to_json writes it (the members a row takes). */
static json_t *run_json(const char *server, const char *when, double mbps, int ok)
{
    return json_pack("{s:s, s:s, s:s, s:b, s:s, s:i, s:s, s:I, s:f, s:f, s:s, s:f, s:s?, s:s?}", "server", server,
                     "url", "https://[fd00::1]:8443/1G", "started_at", when, "ok", ok, "direction", "download",
                     "parallel", 2, "remote_ip", "fd00::1", "bytes", (json_int_t)123456789, "avg_mbps", mbps,
                     "rtt_ms", 1.5, "limited_by", "receiver", "predicted_mbps", 900.0, "scenario", "wan",
                     "variant", "tso-off");
}

static int count_row(void *ud, int ncols, const char *const *text, const double *num)
{
    (void)ncols;
    (void)text;
    *(long *)ud = (long)num[0];
    return 0;
}

static long count(struct store *st, const char *sql)
{
    long n = -1;
    char err[256];
    assert_int_equal(store_query(st, sql, NULL, 0, count_row, &n, err, sizeof err), 0);
    return n;
}

static void spec_in_dir(struct store_spec *sp, const char *name)
{
    char arg[512];
    snprintf(arg, sizeof arg, "sqlite:%s/%s", g_dir, name);
    assert_int_equal(store_spec_parse(arg, sp, NULL, 0), 0);
}

static void test_migrate_from_v1(void **state)
{
    (void)state;
    struct store_spec sp;
    spec_in_dir(&sp, "v1.db");
    char err[256] = "";
    struct store *st = store_open_version(&sp, 1, err, sizeof err);
    assert_non_null(st);
    assert_int_equal(store_version(st), 1);
    assert_int_equal(count(st, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'runs_cells'"), 0);
    struct store_context ctx = {.invocation_id = "inv1", .vantage = "lab-a", .kernel = "Linux 6.1 x86_64"};
    json_t *run = run_json("nginx", "2026-12-01T10:00:00.250Z", 941.5, 1);
    json_t *rec = store_record_run(run, &ctx, "run-1", "eth0 tso=on gso=on gro=on", err, sizeof err);
    assert_non_null(rec);
    assert_int_equal(store_insert(st, "runs", &rec, 1, err, sizeof err), 1);
    store_close(st);
    st = store_open(&sp, err, sizeof err);
    assert_non_null(st);
    assert_int_equal(store_version(st), STORE_SCHEMA_VERSION);
    assert_int_equal(count(st, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'runs_cells'"), 1);
    assert_int_equal(count(st, "SELECT count(*) FROM runs WHERE run_id = 'run-1' AND family = 6 AND streams = 2"
                               " AND protocol = 'https' AND started_at = 1796119200.25"),
                     1);
    assert_int_equal(count(st, "SELECT max(version) FROM debit_schema"), STORE_SCHEMA_VERSION);
    /* a second open changes nothing */
    store_close(st);
    st = store_open(&sp, err, sizeof err);
    assert_int_equal(count(st, "SELECT count(*) FROM debit_schema"), 1);
    store_close(st);
    json_decref(rec);
    json_decref(run);
}

struct seen {
    int n;
    char server[128], vantage[128];
    double at;
};

static int seen_run(void *ud, const struct store_run_row *r)
{
    struct seen *s = ud;
    s->n++;
    snprintf(s->server, sizeof s->server, "%s", r->server);
    snprintf(s->vantage, sizeof s->vantage, "%s", r->vantage);
    s->at = r->started_at;
    return 0;
}

static void test_odd_names_idempotent(void **state)
{
    (void)state;
    static const char *const names[] = {"o'brien \"lab\"; DROP TABLE runs; --", "Zürich ümlaut", "$1 ?", "a\\b"};
    struct store_spec sp;
    spec_in_dir(&sp, "odd.db");
    char err[256] = "";
    struct store *st = store_open(&sp, err, sizeof err);
    assert_non_null(st);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        struct store_context ctx = {.vantage = names[i]};
        json_t *run = run_json(names[i], "2026-12-01T10:00:00.000Z", 100, 1);
        json_t *rec = store_record_run(run, &ctx, names[i], NULL, err, sizeof err);
        assert_int_equal(store_insert(st, "runs", &rec, 1, err, sizeof err), 1);
        assert_int_equal(store_insert(st, "runs", &rec, 1, err, sizeof err), 0); /* the same id again */
        struct store_filter f = {.server = names[i], .since = NAN, .until = NAN};
        struct seen s = {0};
        assert_int_equal(store_history_runs(st, &f, seen_run, &s, err, sizeof err), 0);
        assert_int_equal(s.n, 1);
        assert_string_equal(s.server, names[i]);
        assert_string_equal(s.vantage, names[i]);
        json_decref(rec);
        json_decref(run);
    }
    assert_int_equal(count(st, "SELECT count(*) FROM runs"), 4);
    store_close(st);
}

static int cell_seen(void *ud, const char *vantage, const char *server, const double *v, size_t n)
{
    char *out = ud;
    size_t k = strlen(out);
    snprintf(out + k, 512 - k, "%s/%s:%zu:%g-%g ", vantage, server, n, v[0], v[n - 1]);
    return 0;
}

static void test_spool_and_cells(void **state)
{
    (void)state;
    struct store_spec sp;
    spec_in_dir(&sp, "spool.db");
    char err[256] = "", path[512];
    assert_int_equal(store_spool_path(&sp, path, sizeof path, err, sizeof err), 0);
    assert_non_null(strstr(path, "/debit/spool/"));
    const struct {
        const char *vantage, *server, *when;
        double mbps;
        int ok;
    } rows[] = {
        {"a", "s1", "2026-12-01T00:00:00.000Z", 10, 1}, {"a", "s1", "2026-12-02T00:00:00.000Z", 30, 1},
        {"a", "s2", "2026-12-03T00:00:00.000Z", 20, 1}, {"b", "s1", "2026-12-04T00:00:00.000Z", 40, 1},
        {"b", "s1", "2026-12-05T00:00:00.000Z", 0, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char id[33];
        assert_int_equal(store_new_id(id, err, sizeof err), 0);
        struct store_context ctx = {.vantage = rows[i].vantage};
        json_t *run = run_json(rows[i].server, rows[i].when, rows[i].mbps, rows[i].ok);
        json_t *rec = store_record_run(run, &ctx, id, NULL, err, sizeof err);
        assert_int_equal(store_spool_append(path, "runs", rec, err, sizeof err), 0);
        json_decref(rec);
        json_decref(run);
    }
    struct store *st = store_open(&sp, err, sizeof err);
    assert_int_equal(store_spool_flush(path, st, err, sizeof err), 5);
    assert_int_equal(store_spool_flush(path, st, err, sizeof err), 0);
    assert_int_equal(count(st, "SELECT count(*) FROM runs"), 5);
    char out[512] = "";
    struct store_filter f = {.since = NAN, .until = NAN};
    assert_int_equal(store_history_cells(st, &f, cell_seen, out, err, sizeof err), 0);
    assert_string_equal(out, "a/s1:2:10-30 a/s2:1:20-20 b/s1:1:40-40 ");
    /* since/until bound the time: 2026-12-02 .. 2026-12-04 (exclusive) */
    out[0] = '\0';
    f.since = 1796169600; /* 2026-12-02T00:00:00Z */
    f.until = 1796342400; /* 2026-12-04T00:00:00Z */
    assert_int_equal(store_history_cells(st, &f, cell_seen, out, err, sizeof err), 0);
    assert_string_equal(out, "a/s1:1:30-30 a/s2:1:20-20 ");
    out[0] = '\0';
    struct store_filter g = {.scenario = "wan / tso-off", .vantage = "b", .since = NAN, .until = NAN};
    assert_int_equal(store_history_cells(st, &g, cell_seen, out, err, sizeof err), 0);
    assert_string_equal(out, "b/s1:1:40-40 ");
    store_close(st);
}

/* A session whose store cannot be opened spools, and the next session writes the spool. */
static void test_session_spools(void **state)
{
    (void)state;
    struct store_spec bad = {.kind = STORE_PG};
    /* port 1 on loopback: refused at once */
    snprintf(bad.target, sizeof bad.target, "postgresql://127.0.0.1:1/none?connect_timeout=2");
    char err[256] = "";
    char *argv[] = {"debit", "--db", bad.target};
    struct store_session *s = store_session_begin(&bad, "v", 3, argv, err, sizeof err);
    assert_non_null(s);
    assert_true(strlen(store_session_error(s)) > 0);
    json_t *run = run_json("srv", "2026-12-01T00:00:00.000Z", 5, 1);
    assert_int_equal(store_session_run(s, run, err, sizeof err), STORE_PUT_SPOOLED);
    assert_int_equal(store_session_end(s, NULL, err, sizeof err), STORE_PUT_SPOOLED);
    assert_int_equal(store_session_spooled(s), 2);
    char spool[512];
    snprintf(spool, sizeof spool, "%s", store_session_spool_path(s));
    store_session_free(s);
    /* the same records into an SQLite store, as if the PostgreSQL one came back */
    struct store_spec good;
    spec_in_dir(&good, "after.db");
    struct store *st = store_open(&good, err, sizeof err);
    assert_int_equal(store_spool_flush(spool, st, err, sizeof err), 2);
    assert_int_equal(count(st, "SELECT count(*) FROM runs"), 1);
    assert_int_equal(count(st, "SELECT count(*) FROM invocations WHERE runs = 1 AND runs_ok = 1 AND vantage = 'v'"), 1);
    assert_int_equal(count(st, "SELECT count(*) FROM runs r JOIN invocations i USING (invocation_id)"), 1);
    store_close(st);
    json_decref(run);
}

/* store_spec_writable: the cause named (the file in a folder's place, not the folder
 * that could not be made), nothing created without MAKE, the folders made with it. */
static void test_spec_writable(void **state)
{
    (void)state;
    assert_int_equal(testlib_sh("mkdir -p '%s/ok' && : > '%s/file'", g_dir, g_dir), 0);
    static const struct {
        const char *rel; /* under g_dir */
        int make, rc;
        const char *why;    /* the error's end after g_dir ("" when rc is 0) */
        const char *exists; /* under g_dir, after the call; NULL: nothing to check */
        const char *absent; /* under g_dir, after the call; NULL: nothing to check */
    } cases[] = {
        {"ok/r.db", 0, 0, "", "ok", NULL},
        {"new/deeper/r.db", 0, 0, "", NULL, "new"},               /* -t: makes nothing */
        {"new/deeper/r.db", 1, 0, "", "new/deeper", NULL},        /* the run makes the folders */
        {"file/debit/r.db", 0, -1, "/file: Not a directory", NULL, NULL},
        {"file/debit/r.db", 1, -1, "/file: Not a directory", NULL, NULL},
        {"file/r.db", 1, -1, "/file: Not a directory", NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct store_spec sp = {.kind = STORE_SQLITE};
        snprintf(sp.target, sizeof sp.target, "%s/%s", g_dir, cases[i].rel);
        char err[512] = "", want[512], p[512];
        int rc = store_spec_writable(&sp, cases[i].make, err, sizeof err);
        if (rc != cases[i].rc)
            fail_msg("case %zu (%s, make %d): rc %d, err \"%s\"", i, cases[i].rel, cases[i].make, rc, err);
        snprintf(want, sizeof want, "%s%s", rc ? g_dir : "", cases[i].why);
        assert_string_equal(err, want);
        if (cases[i].exists) {
            snprintf(p, sizeof p, "%s/%s", g_dir, cases[i].exists);
            assert_int_equal(access(p, F_OK), 0);
        }
        if (cases[i].absent) {
            snprintf(p, sizeof p, "%s/%s", g_dir, cases[i].absent);
            assert_int_not_equal(access(p, F_OK), 0);
        }
    }
    struct store_spec pg = {.kind = STORE_PG};
    snprintf(pg.target, sizeof pg.target, "postgresql://127.0.0.1/x");
    assert_int_equal(store_spec_writable(&pg, 1, NULL, 0), 0); /* a server: tried on open */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_spec_parse, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spec_default, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spec_display, setup, teardown),
        cmocka_unit_test_setup_teardown(test_migrate_from_v1, setup, teardown),
        cmocka_unit_test_setup_teardown(test_odd_names_idempotent, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spool_and_cells, setup, teardown),
        cmocka_unit_test_setup_teardown(test_session_spools, setup, teardown),
        cmocka_unit_test_setup_teardown(test_spec_writable, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
