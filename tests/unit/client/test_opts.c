/* Unit tests for client/opts.c: every row is one command line and what must come of it
 * (the setters themselves: test_settings.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <curl/curl.h>

#include "array.h"
#include "opts.h"

struct err_row {
    const char *argv[8];
    const char *err; /* expected start of the error message */
};

/* Parse args (NULL-terminated) into *o (new); on OPTS_RUN also apply them to *s (new, or
 * NULL when s is NULL). */
static enum opts_result parse(const char *const *args, struct client_opts **o, struct settings **s, char *err,
                              size_t errlen)
{
    char *argv[64];
    int argc = 0;
    argv[argc++] = (char *)"debit";
    for (; args[argc - 1] && argc < 63; argc++)
        argv[argc] = (char *)args[argc - 1];
    argv[argc] = NULL;
    *o = opts_new();
    assert_non_null(*o);
    enum opts_result r = opts_parse(*o, argc, argv, err, errlen);
    if (s) {
        *s = settings_new();
        assert_non_null(*s);
        if (r == OPTS_RUN && opts_apply(*o, *s, err, errlen) != 0)
            fail_msg("opts_apply: %s", err);
    }
    return r;
}

static void test_errors(void **state)
{
    (void)state;
    static const struct err_row rows[] = {
        {{NULL}, "URL: at least one URL"},
        {{"-n", "0", "http://a/"}, "-n: '0': expected an integer from 1 to 100000"},
        {{"--runs", "5x", "http://a/"}, "--runs: '5x': expected an integer"},
        {{"--runs=-1", "http://a/"}, "--runs: '-1'"},
        {{"--runs"}, "--runs: missing argument"},
        {{"--order", "zigzag", "http://a/"}, "--order: 'zigzag': expected alternate, sequential or random"},
        {{"--seed", "3", "http://a/"}, "--seed: only meaningful with --order random"},
        {{"--seed", "x", "--order", "random", "http://a/"}, "--seed: 'x': expected an unsigned integer"},
        {{"--pause", "soon", "http://a/"}, "--pause: 'soon':"},
        {{"--stall", "0", "http://a/"}, "--stall: '0': must be more than 0"},
        {{"--max-time", "1parsec", "http://a/"}, "--max-time: '1parsec':"},
        {{"--stall-rate", "1GiB", "http://a/"}, "--stall-rate: '1GiB':"},
        {{"--timeout", "-3", "http://a/"}, "--timeout: '-3':"},
        {{"--max-bytes", "1Mbit", "http://a/"}, "--max-bytes: '1Mbit':"},
        {{"--max-bytes", "0", "http://a/"}, "--max-bytes: '0': must be at least 1 byte"},
        {{"--resolve", "a.test:80", "http://a/"}, "--resolve: 'a.test:80': expected HOST:PORT:ADDR"},
        {{"--resolve", "a.test:99999:1.2.3.4", "http://a/"}, "--resolve: 'a.test:99999:1.2.3.4': bad port"},
        {{"--connect-to", "a:80:b", "http://a/"}, "--connect-to: 'a:80:b': expected HOST:PORT:CONNECT-TO-HOST"},
        {{"--format", "xml", "http://a/"}, "--format: 'xml': expected table, markdown, csv or json"},
        {{"--plot", "x.jpg", "http://a/"}, "--plot: 'x.jpg': expected a file name ending in .png or .svg"},
        {{"-w", "%{speed}", "http://a/"}, "-w: '%{speed}': unknown variable (known: server url"},
        {{"--write-out", "%{server", "http://a/"}, "--write-out: '%{server': unterminated %{"},
        {{"--offload", "eth0", "http://a/"}, "--offload: 'eth0': expected DEV:"},
        /* Fully checked where parsed, not when applied: -t must catch these. */
        {{"--offload", "eth0:tso=maybe", "http://a/"}, "--offload: 'eth0:tso=maybe': tso: 'maybe' is not on or off"},
        {{"--offload", "eth0:tso=off,sg=off", "http://a/"}, "--offload: 'eth0:tso=off,sg=off': sg is reported only"},
        {{"--offload", "eth0:", "http://a/"}, "--offload: 'eth0:': no feature after ':'"},
        {{"--delay", "10", "--delay-dev", "a/b", "http://a/"}, "--delay-dev: 'a/b': an interface name has no"},
        {{"--delay", "soon", "--delay-dev", "lo", "http://a/"}, "--delay: 'soon':"},
        {{"--delay-dev", "lo", "http://a/"}, "--delay-dev: needs --delay"},
        {{"--loss", "101%", "--delay-dev", "lo", "http://a/"}, "--loss: '101%': above 100%"},
        {{"--loss", "0.5", "--delay-dev", "lo", "http://a/"}, "--loss: '0.5': the % sign is missing"},
        {{"--loss", "1%", "http://a/"}, "--loss: needs --delay-dev DEV"},
        {{"--interface", "", "http://a/"}, "--interface: empty interface name"},
        {{"--interface", "eth 0", "http://a/"}, "--interface: 'eth 0': expected an interface name"},
        {{"--interface", "if!0123456789abcdef", "http://a/"}, "--interface: 'if!0123456789abcdef': '0123456789abcdef': interface name longer"},
        {{"--user-agent", "a\r\nX-Evil: 1", "http://a/"}, "--user-agent: 'a\\r\\nX-Evil: 1': must not contain a line break"}, /* escaped */
        {{"--rcvbuf", "1KiB", "http://a/"}, "--rcvbuf: '1KiB': expected a size from 4KiB to 1GiB"},
        {{"--bottleneck", "x", "http://a/"}, "--bottleneck: 'x': not a number (expected the path's rate"},
        {{"-o", "", "http://a/"}, "-o: empty file name"},
        {{"--jsonl", "", "http://a/"}, "--jsonl: empty file name"},
        {{"--scenario", ""}, "--scenario: empty file name"},
        {{"--delay", "10ms", "http://a/"}, "--delay: needs --delay-dev DEV"},
        {{"--interface", "lo", "--local-address", "127.0.0.1", "http://a/"}, "--local-address: cannot be combined"},
        {{"--bogus", "http://a/"}, "--bogus: unknown option"},
        {{"-x", "http://a/"}, "-x: unknown option"},
        {{"ftp://a/f"}, "URL: 'ftp://a/f': only http:// and https://"},
        {{"a.example/f"}, "URL: 'a.example/f': not a URL"},
        {{"=http://a/"}, "URL: '=http://a/': empty or too long NAME"},
        {{"x=http://a/", "x=http://b/"}, "URL: 'x=http://b/': this NAME is already used"},
        {{"--scenario", "s.conf", "http://a/"}, "--scenario: servers come from the scenario file"},
    };
    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        struct client_opts *o;
        char err[512] = "";
        enum opts_result r = parse(rows[i].argv, &o, NULL, err, sizeof err);
        if (r != OPTS_ERROR || strncmp(err, rows[i].err, strlen(rows[i].err)) != 0)
            fail_msg("row %zu (%s): result %d, error \"%s\", want \"%s...\"", i,
                     rows[i].argv[0] ? rows[i].argv[0] : "(none)", r, err, rows[i].err);
        opts_free(o);
    }
}

static void test_values(void **state)
{
    (void)state;
    struct client_opts *o;
    struct settings *s;
    char err[512] = "";
    const char *args[] = {"-n", "7", "--order", "random", "--seed", "42", "--pause", "250ms", "--max-bytes", "100MiB",
                          "--stall", "3", "--max-time", "1min", "--timeout", "1.5", "--resolve", "m.test:8080:127.0.0.1",
                          "--resolve", "[::1]:80:[::1]", "--connect-to", "::127.0.0.1:8081", "-6", "--format", "csv",
                          "-o", "out.csv", "--jsonl", "r.jsonl", "-q", "--no-progress", "--user-agent", "ua/1",
                          "OVH=http://proof.example/files/1Gio.dat", "http://m.test:8080/ram/1GiB.dat",
                          "http://m.test:8081/ram/1GiB.dat", "http://m.test:8082/x?a=b", NULL};
    if (parse(args, &o, &s, err, sizeof err) != OPTS_RUN)
        fail_msg("%s", err);
    assert_int_equal(s->runs, 7);
    assert_int_equal(s->order, PLAN_ORDER_RANDOM);
    assert_true(s->seed == 42 && s->seed_given);
    assert_float_equal(s->pause_s, 0.25, 1e-9);
    assert_true(s->dl.max_bytes == 100ULL << 20);
    assert_float_equal(s->dl.stall_s, 3, 1e-9);
    assert_float_equal(s->dl.max_time_s, 60, 1e-9);
    assert_float_equal(s->dl.connect_timeout_s, 1.5, 1e-9);
    assert_string_equal(s->dl.resolve->data, "m.test:8080:127.0.0.1");
    assert_string_equal(s->dl.resolve->next->data, "[::1]:80:[::1]");
    assert_string_equal(s->dl.connect_to->data, "::127.0.0.1:8081");
    assert_int_equal(s->dl.ip_version, 6);
    assert_int_equal(s->format, REPORT_CSV);
    assert_string_equal(s->output, "out.csv");
    assert_string_equal(s->jsonl, "r.jsonl");
    assert_true(s->quiet && s->progress == 0);
    assert_string_equal(s->dl.user_agent, "ua/1");
    assert_int_equal(s->nservers, 4);
    /* NAME=URL; default names: host:port for every server of a repeated host (not only
     * the later ones), and "=" in a query is not a name. */
    assert_string_equal(s->servers[0].name, "OVH");
    assert_string_equal(s->servers[0].url, "http://proof.example/files/1Gio.dat");
    assert_string_equal(s->servers[1].name, "m.test:8080");
    assert_string_equal(s->servers[2].name, "m.test:8081");
    assert_string_equal(s->servers[3].name, "m.test:8082");
    assert_string_equal(s->servers[3].url, "http://m.test:8082/x?a=b");
    opts_free(o);
    settings_free(s);
}

static void test_defaults_help_version(void **state)
{
    (void)state;
    struct client_opts *o;
    struct settings *s;
    char err[256];
    const char *a1[] = {"http://a/", NULL};
    assert_int_equal(parse(a1, &o, &s, err, sizeof err), OPTS_RUN);
    assert_int_equal(s->runs, 5);
    assert_int_equal(s->order, PLAN_ORDER_ALTERNATE);
    assert_int_equal(s->format, REPORT_TABLE);
    assert_int_equal(s->progress, -1);
    assert_true(s->dl.max_bytes == 0 && s->dl.stall_s == 0 && s->dl.max_redirects == 20);
    /* unattended runs are bounded by default (download.h) */
    assert_float_equal(s->dl.max_time_s, DL_DEFAULT_MAX_TIME_S, 1e-9);
    assert_float_equal(s->dl.stall_rate_Bps, DL_DEFAULT_STALL_RATE_BPS, 1e-9);
    assert_false(o->check);
    opts_free(o);
    settings_free(s);
    const char *a2[] = {"--help", NULL};
    assert_int_equal(parse(a2, &o, NULL, err, sizeof err), OPTS_HELP);
    opts_free(o);
    const char *a3[] = {"-V", NULL};
    assert_int_equal(parse(a3, &o, NULL, err, sizeof err), OPTS_VERSION);
    opts_free(o);
    const char *a4[] = {"http://a/", "http://a/", "http://a/", NULL};
    assert_int_equal(parse(a4, &o, &s, err, sizeof err), OPTS_RUN);
    assert_string_equal(s->servers[1].name, "a#2");
    assert_string_equal(s->servers[2].name, "a#3");
    opts_free(o);
    settings_free(s);
    opts_free(NULL);
}

/* -t, --scenario and the flags; the offload spec arrives parsed; a repeated option: the
 * last one wins, as the file's value yields to the command line's. */
static void test_check_flags_offload(void **state)
{
    (void)state;
    struct client_opts *o;
    struct settings *s;
    char err[256];
    const char *a1[] = {"-t", "--offload", "lo:tso=off,gso=on", "--progress", "-4", "--delay", "10ms",
                        "--delay-dev", "lo", "-n", "2", "--runs", "3", "http://a/", NULL};
    assert_int_equal(parse(a1, &o, &s, err, sizeof err), OPTS_RUN);
    assert_true(o->check);
    assert_null(o->scenario);
    assert_int_equal(s->noffloads, 1);
    assert_string_equal(s->offloads[0].ifname, "lo");
    assert_int_equal(s->offloads[0].wish.want[OFFLOAD_TSO], OFFLOAD_OFF);
    assert_int_equal(s->offloads[0].wish.want[OFFLOAD_GSO], OFFLOAD_ON);
    assert_int_equal(s->offloads[0].wish.want[OFFLOAD_GRO], OFFLOAD_LEAVE);
    assert_int_equal(s->progress, 1);
    assert_int_equal(s->dl.ip_version, 4);
    assert_true(s->delay_us == 10000);
    assert_string_equal(s->delay_dev, "lo");
    assert_int_equal(s->runs, 3);
    opts_free(o);
    settings_free(s);
    /* With a scenario, the cross-checks wait for the file (main runs settings_check). */
    const char *a2[] = {"--scenario", "s.conf", "--seed", "7", NULL};
    assert_int_equal(parse(a2, &o, &s, err, sizeof err), OPTS_RUN);
    assert_string_equal(o->scenario, "s.conf");
    assert_true(s->seed == 7 && s->seed_given);
    assert_int_equal(settings_check(s, err, sizeof err), -1);
    assert_string_equal(err, "--seed: only meaningful with --order random");
    opts_free(o);
    settings_free(s);
}

/* --help comes from the same table as parsing: rows sharing a line, a synopsis too wide
 * for the text column, continuation lines, and every section. */
static void test_usage_layout(void **state)
{
    (void)state;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    opts_usage(f);
    fclose(f);
    static const char *const want[] = {
        "\nMeasurement:\n  -n, --runs N              downloads per server (default 5)\n",
        "\n  -4, -6                    IPv4 or IPv6 only\n",
        "\n      --progress, --no-progress  live progress line on stderr (default: if a TTY)\n",
        "\n      --offload DEV:tso=on|off,gso=on|off[,gro=on|off]\n                            set client offloads",
        "fail a download that receives less than --stall-rate\n                            over the last SECONDS",
        "\nNetwork:\n", "\nOutput:\n", "\nExperiments:\n",
        "\n  -h, --help                this help\n  -V, --version             version\n\nExit status:",
    };
    for (size_t i = 0; i < ARRAY_SIZE(want); i++)
        if (!strstr(buf, want[i]))
            fail_msg("--help lacks [%s]:\n%s", want[i], buf);
    free(buf);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_defaults_help_version),
        cmocka_unit_test(test_check_flags_offload),
        cmocka_unit_test(test_usage_layout),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
