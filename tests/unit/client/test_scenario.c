/* Unit tests for client/scenario.c: errors name FILE:LINE: setting; the file's settings
 * go through the settings.h setters and yield to the command line's (defaults < file <
 * command line); the axes; the cells a run went through, as C structs and as JSON. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <curl/curl.h>

#include "array.h"
#include "opts.h"
#include "scenario.h"
#include "client/settings_readback.h"

static char g_dir[64];

/* Write text to a new file in the test's folder; returns its path (static buffer). */
static const char *write_conf(const char *text)
{
    static char path[128];
    static int n;
    snprintf(path, sizeof path, "%s/s%d.conf", g_dir, n++);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

#define SERVERS "servers = ( { url = \"http://a/\"; } );\n"

static void test_errors(void **state)
{
    (void)state;
    static const struct {
        const char *conf;
        const char *err; /* after "FILE" */
    } rows[] = {
        {SERVERS "colour = \"blue\";", ":2: colour: unknown setting (expected one of: servers, latency"},
        {SERVERS "runs = 5;\nruns = 6;", ":3: syntax: duplicate setting name"},
        {SERVERS "runs = 0;", ":2: runs: '0': expected an integer from 1 to 100000"},
        {SERVERS "runs = true;", ":2: runs: expected a number or a string"},
        {SERVERS "runs = \"5x\";", ":2: runs: '5x': expected an integer"},
        {SERVERS "order = \"shuffle\";", ":2: order: 'shuffle': expected alternate, sequential or random"},
        {SERVERS "seed = -1;", ":2: seed: '-1': expected an unsigned integer"},
        {SERVERS "pause = \"soon\";", ":2: pause: 'soon': "},
        {SERVERS "stall = 0;", ":2: stall: '0': must be more than 0"},
        {SERVERS "max_time = ( 1 );", ":2: max_time: expected a number or a string"},
        {SERVERS "stall_rate = \"fast\";", ":2: stall_rate: 'fast': "},
        {SERVERS "bottleneck = \"x\";", ":2: bottleneck: 'x': not a number (expected the path's rate"},
        {SERVERS "timeout = \"-1s\";", ":2: timeout: '-1s': "},
        {SERVERS "max_bytes = 0;", ":2: max_bytes: '0': must be at least 1 byte"},
        {SERVERS "max_bytes = \"1Mbit\";", ":2: max_bytes: '1Mbit': "},
        {"runs = 3;", ": servers: missing"},
        {"servers = ();", ":1: servers: expected a non-empty list"},
        {"servers = ( { url = \"ftp://x/\"; } );", ":1: servers[0]: URL: 'ftp://x/': only http:// and https://"},
        {"servers = ( { name = \"a\"; url = \"http://x/\"; },\n { name = \"a\"; url = \"http://y/\"; } );",
         ":2: servers[1]: URL: 'a=http://y/': this NAME is already used"},
        {"servers = ( { name = \"\"; url = \"http://x/\"; } );", ":1: servers[0].name: must be non-empty"},
        {"servers = ( { name = \"x\"; } );", ":1: servers[0]: url: missing"},
        {SERVERS "latency = ( { name = \"+10\"; delay = \"ten\"; device = \"lo\"; } );",
         ":2: latency[0].delay: 'ten': "},
        {SERVERS "latency = ( { name = \"+10\"; delay = true; device = \"lo\"; } );",
         ":2: latency[0].delay: expected a number or a string"},
        {SERVERS "latency = ( { name = \"+10\"; delay = \"10ms\"; } );", ":2: latency[0]: device: missing"},
        {SERVERS "latency = ( { name = \"+10\"; delay = \"10ms\"; device = \"a/b\"; } );",
         ":2: latency[0].device: 'a/b': an interface name has no"},
        {SERVERS "latency = ( { delay = 0; } );", ":2: latency[0]: name: missing"},
        {SERVERS "latency = ( { name = \"x\"; },\n { name = \"x\"; } );", ":3: latency[1]: name: \"x\" is used twice"},
        {SERVERS "latency = ( { name = \"x\"; rate = 1; } );", ":2: latency[0].rate: unknown setting"},
        {SERVERS "latency = ( { name = \"lossy\"; loss = \"150%\"; device = \"lo\"; } );",
         ":2: latency[0].loss: '150%': above 100%"},
        {SERVERS "latency = ( { name = \"lossy\";\n loss = \"-1%\"; device = \"lo\"; } );",
         ":3: latency[0].loss: '-1%': a loss rate cannot be negative"},
        {SERVERS "latency = ( { name = \"lossy\"; loss = \"some\"; device = \"lo\"; } );",
         ":2: latency[0].loss: 'some': not a number"},
        {SERVERS "latency = ( { name = \"lossy\"; loss = 1; device = \"lo\"; } );",
         ":2: latency[0].loss: '1': the % sign is missing"},
        {SERVERS "latency = ( { name = \"lossy\"; loss = true; device = \"lo\"; } );",
         ":2: latency[0].loss: expected a string such as \"1%\""},
        {SERVERS "latency = ( { name = \"lossy\"; loss = \"1%\"; } );", ":2: latency[0]: device: missing (the interface that gets the loss)"},
        {SERVERS "client_offload = ( { name = \"off\"; device = \"lo\"; tso = \"off\"; } );",
         ":2: client_offload[0].tso: expected true or false"},
        {SERVERS "client_offload = ( { name = \"off\"; device = \"lo\"; lro = false; } );",
         ":2: client_offload[0].lro: unknown setting (expected one of: name, device, tso, gso, gro)"},
        {SERVERS "client_offload = ( { name = \"off\"; tso = false; } );", ":2: client_offload[0]: device: missing"},
        {SERVERS "client_offload = ( { name = \"off\"; device = \"0123456789abcdef\"; tso = false; } );",
         ":2: client_offload[0].device: '0123456789abcdef': interface name longer than 15"},
        {SERVERS "client_offload = ( { name = \"a\"; },\n { name = \"a\"; } );",
         ":3: client_offload[1]: name: \"a\" is used twice"},
        {SERVERS "client_offload = 3;", ":2: client_offload: expected a non-empty list"},
        /* servers[].lab (scenario_lab.c): keys, values, the address plan */
        {"servers = ( { url = \"http://198.18.1.2/\"; lab = { gro = false; }; } );",
         ":1: servers[0].lab.gro: unknown setting (expected one of: tso, gso, cc, pacing"},
        {"servers = ( { url = \"http://198.18.1.2/\"; lab = 3; } );", ":1: servers[0].lab: expected a group"},
        {"servers = ( { url = \"http://198.18.1.2/\"; lab = { cpu = \"0.5%\"; }; } );",
         ":1: servers[0].lab.cpu: '0.5%': out of range 1%.."},
        {"servers = ( { url = \"http://198.18.1.2/\"; lab = { cpu = \"3 %\"; }; } );",
         ":1: servers[0].lab.cpu: '3 %': expected a percentage"},
        {"servers = ( { url = \"http://198.18.1.2/\"; lab = { tcp_wmem = \"4096 16384 1MiB 2MiB\"; }; } );",
         ":1: servers[0].lab.tcp_wmem: '4096 16384 1MiB 2MiB': expected \"min default max\""},
        {"servers = ( { url = \"http://198.18.1.2/\"; lab = { tcp_rmem = \"1024 16384 1MiB\"; }; } );",
         ":1: servers[0].lab.tcp_rmem: '1024 16384 1MiB': expected"},
        {"servers = ( { url = \"http://198.18.1.2/\"; lab = { initcwnd = 1001; }; } );",
         ":1: servers[0].lab.initcwnd: 1001 is out of range"},
        {"servers = ( { url = \"http://198.18.1.2/\"; lab = { mtu = 500; }; } );",
         ":1: servers[0].lab.mtu: 500 is out of range [576, 65535]"},
        {"servers = ( { url = \"http://198.18.1.2/\"; lab = { pacing = \"fast\"; }; } );", ":1: servers[0].lab.pacing: "},
        {"servers = ( { url = \"http://198.18.1.2/\"; lab = { notsent_lowat = true; }; } );",
         ":1: servers[0].lab.notsent_lowat: expected a number or a string"},
        {"servers = ( { url = \"http://192.0.2.1/\"; lab = {}; } );",
         ":1: servers[0].url: '192.0.2.1': a lab server's address must be in 198.18.0.0/15"},
        {"servers = ( { url = \"http://198.18.3.5/\"; lab = {}; } );",
         ":1: servers[0].url: '198.18.3.5': 198.18.3.0/24 is the lab's client network"},
        {"servers = ( { url = \"http://198.18.9.255/\"; lab = {}; } );",
         ":1: servers[0].url: '198.18.9.255': the host part must be 2..254"},
        {"servers = ( { name = \"a\"; url = \"http://198.19.9.2/\"; lab = {}; },\n"
         " { url = \"http://198.19.9.3/\"; lab = {}; } );",
         ":2: servers[1].url: '198.19.9.3': in the same /24 as lab server \"a\" (198.19.9.2)"},
        {"servers = ( { url = \"http://[fd00::2]/\"; lab = {}; } );",
         ":1: servers[0].url: '[fd00::2]': a lab server's host must be an IPv4 address"},
    };
    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        const char *path = write_conf(rows[i].conf);
        char want[512], err[512] = "";
        snprintf(want, sizeof want, "%s%s", path, rows[i].err);
        struct settings *s = settings_new();
        struct scenario *scn = scenario_load(path, s, err, sizeof err);
        if (scn || strncmp(err, want, strlen(want)) != 0)
            fail_msg("row %zu: %s, error \"%s\", want \"%s...\"", i, scn ? "loaded" : "refused", err, want);
        scenario_free(scn);
        settings_free(s);
    }
    char err[256];
    struct settings *s = settings_new();
    assert_null(scenario_load("/nonexistent/s.conf", s, err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent/s.conf"));
    settings_free(s);
    scenario_free(NULL);
}

/* defaults < file < command line, setting by setting: the file's value replaces the
 * default, the command line's replaces the file's, whatever the order on the command line. */
static void test_precedence(void **state)
{
    (void)state;
    static const struct {
        const char *file;   /* the file's setting */
        const char *cli[3]; /* the command line's */
        readback_fn rb;
        const char *dflt, *from_file, *from_cli;
    } rows[] = {
        {"runs = 7;", {"-n", "3"}, rb_runs, "5", "7", "3"},
        {"order = \"sequential\";", {"--order", "random"}, rb_order, "alternate", "sequential", "random"},
        {"order = \"random\"; seed = 9;", {"--seed", "11"}, rb_seed_value, "0", "9", "11"},
        {"pause = \"2s\";", {"--pause", "250ms"}, rb_pause, "0", "2", "0.25"},
        {"stall = 3;", {"--stall", "4"}, rb_stall, "0", "3", "4"},
        {"max_time = \"1min\";", {"--max-time", "90"}, rb_max_time, "600", "60", "90"},
        {"max_time = 30;", {"--max-time", "0"}, rb_max_time, "600", "30", "0"},
        {"stall = 5; stall_rate = \"10kB/s\";", {"--stall-rate", "0"}, rb_stall_rate, "1000", "10000", "0"},
        {"bottleneck = \"1Gbit\";", {"--bottleneck", "100Mbit"}, rb_bottleneck, "0", "1e+09", "1e+08"},
        {"timeout = 1.5;", {"--timeout", "2"}, rb_timeout, "0", "1.5", "2"},
        {"max_bytes = 1048576;", {"--max-bytes", "2MiB"}, rb_max_bytes, "0", "1048576", "2097152"},
        /* No file key, but a scenario's output defaults to markdown; --format still wins. */
        {"", {"--format", "csv"}, rb_format, "0", "1", "2"},
    };
    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        char text[256], got[64], err[512] = "";
        snprintf(text, sizeof text, SERVERS "%s\n", rows[i].file);
        const char *path = write_conf(text);
        char *argv[] = {(char *)"debit",        (char *)"--scenario",   (char *)path,
                        (char *)rows[i].cli[0], (char *)rows[i].cli[1], NULL};
        struct client_opts *o = opts_new();
        assert_int_equal(opts_parse(o, 5, argv, err, sizeof err), OPTS_RUN);
        struct settings *s = settings_new();
        rows[i].rb(s, got, sizeof got);
        assert_string_equal(got, rows[i].dflt);
        struct scenario *scn = scenario_load(path, s, err, sizeof err);
        if (!scn)
            fail_msg("row %zu: %s", i, err);
        rows[i].rb(s, got, sizeof got);
        if (strcmp(got, rows[i].from_file) != 0)
            fail_msg("row %zu: after the file %s, want %s", i, got, rows[i].from_file);
        assert_int_equal(opts_apply(o, s, err, sizeof err), 0);
        assert_int_equal(settings_check(s, err, sizeof err), 0);
        rows[i].rb(s, got, sizeof got);
        if (strcmp(got, rows[i].from_cli) != 0)
            fail_msg("row %zu: after the command line %s, want %s", i, got, rows[i].from_cli);
        assert_int_equal(s->nservers, 1);
        scenario_free(scn);
        settings_free(s);
        opts_free(o);
    }
}

/* servers[].lab: every setting parsed, in file order, only for the servers that have one;
 * the words of the column title; the JSON lab/lab.sh reads. */
static void test_lab(void **state)
{
    (void)state;
    const char *path = write_conf(
        "servers = ( { name = \"on\"; url = \"http://198.18.1.2/f\"; lab = { tso = true; gso = false; cpu = 2.5; }; },\n"
        "            { name = \"mirror\"; url = \"http://mirror.example/f\"; },\n"
        "            { url = \"http://198.19.4.20:8080/f\"; lab = { cc = \"reno\"; pacing = \"100Mbit\"; sndbuf = \"1MiB\";\n"
        "              notsent_lowat = 131072; tcp_wmem = \"4096 16384 2MiB\"; tcp_rmem = \"8KiB 64KiB 8MiB\";\n"
        "              initcwnd = 30; mtu = 1280; }; } );\n");
    char err[512];
    struct settings *s = settings_new();
    struct scenario *scn = scenario_load(path, s, err, sizeof err);
    if (!scn)
        fail_msg("%s", err);
    assert_int_equal(scn->nlab, 2);
    const struct scenario_lab *a = &scn->lab[0], *b = &scn->lab[1];
    assert_string_equal(a->server, "on");
    assert_string_equal(a->addr, "198.18.1.2");
    assert_int_equal(a->port, 80);
    assert_int_equal(a->tso, 1);
    assert_int_equal(a->gso, 0);
    assert_true(a->cpu_pct == 2.5);
    assert_int_equal(a->wmem[2], 0);
    assert_string_equal(a->host, "cpu 2.5%");
    assert_string_equal(b->server, "198.19.4.20"); /* the name debit gave it: the host */
    assert_int_equal(b->port, 8080);
    assert_int_equal(b->tso, -1);
    assert_string_equal(b->tcp.congestion, "reno");
    assert_int_equal(b->tcp.pacing_rate_bps, 100000000);
    assert_int_equal(b->tcp.sndbuf, 1048576);
    assert_int_equal(b->tcp.notsent_lowat, 131072);
    assert_int_equal(b->wmem[0], 4096);
    assert_int_equal(b->wmem[2], 2097152);
    assert_int_equal(b->rmem[0], 8192);
    assert_int_equal(b->rmem[1], 65536);
    assert_int_equal(b->initcwnd, 30);
    assert_int_equal(b->mtu, 1280);
    assert_string_equal(b->host, "tcp_wmem max 2 MiB, tcp_rmem max 8 MiB, initcwnd 30, mtu 1280");
    json_t *j = scenario_lab_to_json(b);
    char *txt = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(txt, "{\"address\":\"198.19.4.20\",\"cc\":\"reno\",\"cpu_pct\":null,\"gso\":null,\"initcwnd\":30,"
                             "\"mtu\":1280,\"name\":\"198.19.4.20\",\"notsent_lowat\":131072,\"pacing_bps\":100000000,"
                             "\"port\":8080,\"sndbuf\":1048576,\"tcp_rmem\":\"8192 65536 8388608\","
                             "\"tcp_wmem\":\"4096 16384 2097152\",\"tso\":null}");
    free(txt);
    json_decref(j);
    scenario_free(scn);
    settings_free(s);
}

static void test_axes(void **state)
{
    (void)state;
    const char *path = write_conf(
        "servers = ( { name = \"A\"; url = \"http://a/\"; }, { url = \"http://b:81/\"; } );\n"
        "latency = ( { name = \"natural\"; delay = 0; }, { name = \"+10\"; delay = \"10ms\"; device = \"veth0\"; },\n"
        "            { name = \"+1.5\"; delay = 0.0015; device = \"veth0\"; },\n"
        "            { name = \"1% loss\"; loss = \"1%\"; device = \"veth0\"; },\n"
        "            { name = \"+30, 0.5%\"; delay = \"30ms\"; loss = \"0.5%\"; device = \"veth0\"; } );\n"
        "client_offload = ( { name = \"on\"; device = \"veth0\"; tso = true; gso = true; },\n"
        "                   { name = \"off\"; device = \"veth0\"; tso = false; gso = false; gro = false; },\n"
        "                   { name = \"as is\"; device = \"veth0\"; } );\n");
    char err[512];
    struct settings *s = settings_new();
    struct scenario *scn = scenario_load(path, s, err, sizeof err);
    if (!scn)
        fail_msg("%s", err);
    assert_string_equal(scn->path, path);
    assert_int_equal(s->nservers, 2);
    assert_string_equal(s->servers[0].name, "A");
    assert_string_equal(s->servers[1].name, "b");
    assert_int_equal(scn->nlat, 5);
    assert_true(scn->lat[0].delay_us == 0 && scn->lat[0].loss_ppm == 0 && scn->lat[0].device == NULL);
    assert_true(scn->lat[1].delay_us == 10000);
    assert_string_equal(scn->lat[1].device, "veth0");
    assert_true(scn->lat[2].delay_us == 1500 && scn->lat[2].loss_ppm == 0);
    assert_true(scn->lat[3].delay_us == 0 && scn->lat[3].loss_ppm == 10000); /* a loss-only path */
    assert_string_equal(scn->lat[3].device, "veth0");
    assert_true(scn->lat[4].delay_us == 30000 && scn->lat[4].loss_ppm == 5000);
    assert_int_equal(scn->nvar, 3);
    char w[64];
    offload_wish_format(&scn->var[0].wish, w, sizeof w);
    assert_string_equal(w, "tso=on gso=on");
    offload_wish_format(&scn->var[1].wish, w, sizeof w);
    assert_string_equal(w, "tso=off gso=off gro=off");
    assert_string_equal(scn->var[1].device, "veth0");
    assert_null(scn->var[2].device); /* nothing to change: nothing applied */
    scenario_free(scn);
    settings_free(s);
}

static void on_run_done(const struct plan *p, const struct run_result *r, size_t step, size_t total, void *ud)
{
    (void)p, (void)r, (void)step, (void)total;
    ++*(int *)ud;
}

/* A run against a closed loopback port: every download fails at once, which is data;
 * what matters here is the cells and their order, as structs and as JSON. */
static void test_run_cells(void **state)
{
    (void)state;
    const char *path = write_conf("servers = ( { url = \"http://127.0.0.1:9/x\"; } );\nruns = 1;\n"
                                  "latency = ( { name = \"L1\"; }, { name = \"L2\"; } );\n"
                                  "client_offload = ( { name = \"V1\"; }, { name = \"V2\"; } );\n");
    char err[512] = "";
    struct settings *s = settings_new();
    struct scenario *scn = scenario_load(path, s, err, sizeof err);
    assert_non_null(scn);
    struct scenario_cells *cells = scenario_cells_new();
    struct result_set rs;
    result_set_init(&rs);
    int runs = 0;
    volatile sig_atomic_t stop = 0;
    struct scenario_hooks h = {.plan = {.run_done = on_run_done, .ud = &runs, .stop = &stop}};
    assert_int_equal(scenario_run(scn, s, &rs, &h, cells, err, sizeof err), SCENARIO_DONE);
    assert_int_equal(runs, 4);
    assert_int_equal(cells->n, 4);
    static const char *const want[][2] = {{"L1", "V1"}, {"L1", "V2"}, {"L2", "V1"}, {"L2", "V2"}};
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(cells->cell[i].latency, want[i][0]);
        assert_string_equal(cells->cell[i].variant, want[i][1]);
        assert_string_equal(cells->cell[i].description, "");
    }
    json_t *j = scenario_cells_to_json(cells);
    char *dump = json_dumps(j, JSON_COMPACT);
    assert_string_equal(
        dump, "[{\"scenario\":\"L1\",\"variant\":\"V1\",\"delay_ms\":0.0,\"loss_pct\":0.0,\"settings\":{},\"description\":\"\"},"
              "{\"scenario\":\"L1\",\"variant\":\"V2\",\"delay_ms\":0.0,\"loss_pct\":0.0,\"settings\":{},\"description\":\"\"},"
              "{\"scenario\":\"L2\",\"variant\":\"V1\",\"delay_ms\":0.0,\"loss_pct\":0.0,\"settings\":{},\"description\":\"\"},"
              "{\"scenario\":\"L2\",\"variant\":\"V2\",\"delay_ms\":0.0,\"loss_pct\":0.0,\"settings\":{},\"description\":\"\"}]");
    free(dump);
    json_decref(j);
    scenario_cells_free(cells);
    /* A stop before a cell: no more cells, status "stopped". */
    cells = scenario_cells_new();
    stop = 1;
    assert_int_equal(scenario_run(scn, s, &rs, &h, cells, err, sizeof err), SCENARIO_STOPPED);
    assert_int_equal(cells->n, 0);
    scenario_cells_free(cells);
    scenario_cells_free(NULL);
    result_set_clear(&rs);
    scenario_free(scn);
    settings_free(s);
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/test_scenario.XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_precedence),
        cmocka_unit_test(test_axes),
        cmocka_unit_test(test_lab),
        cmocka_unit_test(test_run_cells),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    curl_global_cleanup();
    return rc;
}
