/* Unit tests for client/settings.c: every setter with good and bad values (a bad value
 * leaves the setting as it was and says "'VALUE': why"), the cross-checks, and the two
 * helpers the scenario file shares. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <curl/curl.h>

#include "array.h"
#include "client/settings_readback.h"

struct row {
    const char *what;
    settings_setter set;
    readback_fn readback;
    const char *value;
    const char *want; /* good value: readback; bad value: the start of the error */
    int ok;
};

#define GOOD(set, rb, v, want)                                                                                         \
    {                                                                                                                  \
#set, set, rb, v, want, 1                                                                                      \
    }
#define BAD(set, rb, v, want)                                                                                          \
    {                                                                                                                  \
#set, set, rb, v, want, 0                                                                                      \
    }

static const struct row rows[] = {
    GOOD(settings_set_runs, rb_runs, "1", "1"),
    GOOD(settings_set_runs, rb_runs, "100000", "100000"),
    BAD(settings_set_runs, rb_runs, "0", "'0': expected an integer from 1 to 100000"),
    BAD(settings_set_runs, rb_runs, "100001", "'100001': expected an integer"),
    BAD(settings_set_runs, rb_runs, "5x", "'5x': expected an integer"),
    BAD(settings_set_runs, rb_runs, "", "'': expected an integer"),
    GOOD(settings_set_order, rb_order, "random", "random"),
    GOOD(settings_set_order, rb_order, "sequential", "sequential"),
    BAD(settings_set_order, rb_order, "shuffle", "'shuffle': expected alternate, sequential or random"),
    GOOD(settings_set_seed, rb_seed, "18446744073709551615", "18446744073709551615/1"),
    BAD(settings_set_seed, rb_seed, "-1", "'-1': expected an unsigned integer"),
    BAD(settings_set_seed, rb_seed, "18446744073709551616", "'18446744073709551616': expected an unsigned"),
    GOOD(settings_set_pause, rb_pause, "0", "0"),
    GOOD(settings_set_pause, rb_pause, "250ms", "0.25"),
    BAD(settings_set_pause, rb_pause, "soon", "'soon': "),
    GOOD(settings_set_stall, rb_stall, "1.5", "1.5"),
    BAD(settings_set_stall, rb_stall, "0", "'0': must be more than 0"),
    GOOD(settings_set_max_time, rb_max_time, "1min", "60"),
    GOOD(settings_set_max_time, rb_max_time, "0", "0"),
    GOOD(settings_set_stall_rate, rb_stall_rate, "1kB/s", "1000"),
    GOOD(settings_set_stall_rate, rb_stall_rate, "64kbit", "8000"),
    GOOD(settings_set_stall_rate, rb_stall_rate, "1MB/s", "1e+06"),
    GOOD(settings_set_stall_rate, rb_stall_rate, "0", "0"),
    BAD(settings_set_stall_rate, rb_stall_rate, "1KiB", "'1KiB': "),
    BAD(settings_set_stall_rate, rb_stall_rate, "slow", "'slow': "),
    BAD(settings_set_max_time, rb_max_time, "1parsec", "'1parsec': "),
    GOOD(settings_set_timeout, rb_timeout, "2s", "2"),
    BAD(settings_set_timeout, rb_timeout, "-3", "'-3': "),
    BAD(settings_set_timeout, rb_timeout, "0ms", "'0ms': must be more than 0"),
    GOOD(settings_set_max_bytes, rb_max_bytes, "1MiB", "1048576"),
    GOOD(settings_set_max_bytes, rb_max_bytes, "1", "1"),
    BAD(settings_set_max_bytes, rb_max_bytes, "0", "'0': must be at least 1 byte"),
    BAD(settings_set_max_bytes, rb_max_bytes, "1Mbit", "'1Mbit': "),
    GOOD(settings_set_rcvbuf, rb_rcvbuf, "4KiB", "4096"),
    GOOD(settings_set_bottleneck, rb_bottleneck, "1Gbit", "1e+09"),
    GOOD(settings_set_bottleneck, rb_bottleneck, "940Mbit", "9.4e+08"),
    GOOD(settings_set_bottleneck, rb_bottleneck, "12.5MB/s", "1e+08"),
    BAD(settings_set_bottleneck, rb_bottleneck, "0", "'0': must be more than 0 (leave it out when unknown)"),
    BAD(settings_set_bottleneck, rb_bottleneck, "fast", "'fast': not a number (expected the path's rate, such as 1Gbit"),
    BAD(settings_set_bottleneck, rb_bottleneck, "1GiB", "'1GiB': "),
    BAD(settings_set_rcvbuf, rb_rcvbuf, "2GiB", "'2GiB': expected a size from 4KiB to 1GiB"),
    GOOD(settings_set_ip_version, rb_ip, "6", "6"),
    BAD(settings_set_ip_version, rb_ip, "5", "'5': expected 4 or 6"),
    GOOD(settings_add_resolve, rb_resolve, "[::1]:80:[::1]", "[::1]:80:[::1]"),
    BAD(settings_add_resolve, rb_resolve, "a:0:1.2.3.4", "'a:0:1.2.3.4': bad port"),
    BAD(settings_add_resolve, rb_resolve, ":80:1.2.3.4", "':80:1.2.3.4': expected HOST:PORT:ADDR"),
    GOOD(settings_add_connect_to, rb_connect_to, "::127.0.0.1:8081", "::127.0.0.1:8081"),
    BAD(settings_add_connect_to, rb_connect_to, "a:80:b", "'a:80:b': expected HOST:PORT:CONNECT-TO-HOST"),
    GOOD(settings_set_interface, rb_interface, "if!eth0", "if!eth0"),
    GOOD(settings_set_interface, rb_interface, "192.0.2.1", "192.0.2.1"),
    BAD(settings_set_interface, rb_interface, "", "empty interface name"),
    BAD(settings_set_interface, rb_interface, "if!a/b", "'if!a/b': 'a/b': an interface name has no"),
    GOOD(settings_set_local_address, rb_local, "127.0.0.1", "127.0.0.1"),
    BAD(settings_set_local_address, rb_local, "", "empty address"),
    BAD(settings_set_local_address, rb_local, "1.2.3.4 5", "'1.2.3.4 5': expected an address"),
    GOOD(settings_set_user_agent, rb_ua, "ua/1", "ua/1"),
    BAD(settings_set_user_agent, rb_ua, "a\nb", "'a\\nb': must not contain a line break"), /* the value escaped */
    GOOD(settings_set_insecure, rb_insecure, "on", "1"),
    BAD(settings_set_insecure, rb_insecure, "yes", "'yes': expected on or off"),
    GOOD(settings_set_cacert, rb_cacert, "/dev/null", "/dev/null"),
    BAD(settings_set_cacert, rb_cacert, "", "empty file name"),
    BAD(settings_set_cacert, rb_cacert, "/nonexistent/ca.pem", "'/nonexistent/ca.pem': No such file or directory"),
    GOOD(settings_add_header, rb_header, "X-Debit-Test: 1", "X-Debit-Test: 1"),
    GOOD(settings_add_header, rb_header, "Accept:", "Accept:"),
    GOOD(settings_add_header, rb_header, "X-Empty;", "X-Empty;"),
    BAD(settings_add_header, rb_header, "NoColon", "'NoColon': expected \"Name: value\""),
    BAD(settings_add_header, rb_header, ": v", "': v': expected \"Name: value\""),
    BAD(settings_add_header, rb_header, "Bad Name: v", "'Bad Name: v': the header name must not contain white space"),
    BAD(settings_add_header, rb_header, "X-A: b\r\nX-B: c", "'X-A: b\\r\\nX-B: c': must not contain a line break"),
    GOOD(settings_set_format, rb_format, "json", "3"),
    BAD(settings_set_format, rb_format, "xml", "'xml': expected table, markdown, csv or json"),
    GOOD(settings_set_output, rb_output, "out.csv", "out.csv"),
    BAD(settings_set_output, rb_output, "", "empty file name"),
    GOOD(settings_set_jsonl, rb_jsonl, "r.jsonl", "r.jsonl"),
    BAD(settings_set_jsonl, rb_jsonl, "", "empty file name"),
    GOOD(settings_set_plot, rb_plot, "p.svg", "p.svg"),
    BAD(settings_set_plot, rb_plot, "p.jpg", "'p.jpg': expected a file name ending in .png or .svg"),
    GOOD(settings_set_progress, rb_progress, "off", "0"),
    BAD(settings_set_progress, rb_progress, "yes", "'yes': expected on or off"),
    GOOD(settings_set_quiet, rb_quiet, "on", "1"),
    BAD(settings_set_quiet, rb_quiet, "1", "'1': expected on or off"),
    GOOD(settings_add_offload, rb_offload, "veth0:tso=off,gso=off,gro=on", "1 veth0 tso=off gso=off gro=on"),
    BAD(settings_add_offload, rb_offload, "eth0:tso=maybe", "'eth0:tso=maybe': tso: 'maybe' is not on or off"),
    BAD(settings_add_offload, rb_offload, "eth0:lro=off", "'eth0:lro=off': lro is reported only"),
    BAD(settings_add_offload, rb_offload, "eth0:foo=on", "'eth0:foo=on': unknown feature 'foo'"),
    BAD(settings_add_offload, rb_offload, "eth0", "'eth0': expected DEV:"),
    BAD(settings_add_offload, rb_offload, "0123456789abcdef:tso=off",
        "'0123456789abcdef:tso=off': interface name longer"),
    GOOD(settings_set_delay, rb_delay, "10ms", "10000"),
    GOOD(settings_set_delay, rb_delay, "0", "0"),
    BAD(settings_set_delay, rb_delay, "ten", "'ten': "),
    GOOD(settings_set_loss, rb_loss, "1%", "10000"),
    GOOD(settings_set_loss, rb_loss, "0.5%", "5000"),
    GOOD(settings_set_loss, rb_loss, "100%", "1000000"),
    GOOD(settings_set_loss, rb_loss, "0", "0"),
    BAD(settings_set_loss, rb_loss, "101%", "'101%': above 100%"),
    BAD(settings_set_loss, rb_loss, "150%", "'150%': above 100%"),
    BAD(settings_set_loss, rb_loss, "-1%", "'-1%': a loss rate cannot be negative"),
    BAD(settings_set_loss, rb_loss, "0.005", "'0.005': the % sign is missing"),
    BAD(settings_set_loss, rb_loss, "lots", "'lots': not a number"),
    BAD(settings_set_loss, rb_loss, "1%x", "'1%x': unknown unit"),
    BAD(settings_set_loss, rb_loss, "", "empty value"),
    GOOD(settings_set_delay_dev, rb_delay_dev, "veth-c", "veth-c"),
    BAD(settings_set_delay_dev, rb_delay_dev, "", "empty interface name"),
    BAD(settings_set_delay_dev, rb_delay_dev, "..", "'..': not an interface name"),
    BAD(settings_set_delay_dev, rb_delay_dev, "eth0:1", "'eth0:1': an interface name has no"),
    BAD(settings_set_delay_dev, rb_delay_dev, "0123456789abcdef", "'0123456789abcdef': interface name longer than 15"),
    GOOD(settings_set_parallel, rb_parallel, "4", "4"),
    GOOD(settings_set_parallel, rb_parallel, "128", "128"),
    BAD(settings_set_parallel, rb_parallel, "0", "'0': expected an integer from 1 to 128"),
    BAD(settings_set_parallel, rb_parallel, "129", "'129': expected an integer from 1 to 128"),
    GOOD(settings_set_split, rb_split, "on", "1"),
    BAD(settings_set_split, rb_split, "yes", "'yes': expected on or off"),
    GOOD(settings_set_upload, rb_upload, "100MiB", "104857600"),
    GOOD(settings_set_upload, rb_upload, "0", "0"),
    BAD(settings_set_upload, rb_upload, "1Mbit", "'1Mbit': "),
    GOOD(settings_set_upload_method, rb_upload_method, "PUT", "PUT"),
    GOOD(settings_set_upload_method, rb_upload_method, "POST", "POST"),
    BAD(settings_set_upload_method, rb_upload_method, "put", "'put': expected POST or PUT"),
    GOOD(settings_set_duration, rb_duration, "10s", "10"),
    BAD(settings_set_duration, rb_duration, "0", "'0': must be more than 0"),
    GOOD(settings_set_interval, rb_interval, "250ms", "0.25"),
    BAD(settings_set_interval, rb_interval, "5ms", "'5ms': must be at least 10ms"),
    BAD(settings_set_interval, rb_interval, "0", "'0': must be more than 0"),
    GOOD(settings_set_min_bytes, rb_min_bytes, "0", "0"),
    GOOD(settings_set_min_bytes, rb_min_bytes, "2MiB", "2097152"),
    BAD(settings_set_min_bytes, rb_min_bytes, "lots", "'lots': "),
    BAD(settings_set_server_upload, rb_server_upload, "8MiB", "no server to upload to"),
    GOOD(settings_add_server, rb_server, "OVH=http://proof.example/f", "1 OVH http://proof.example/f"),
    GOOD(settings_add_server, rb_server, "https://m.test:8443/x?a=b", "1 m.test https://m.test:8443/x?a=b"),
    BAD(settings_add_server, rb_server, "ftp://a/f", "'ftp://a/f': only http:// and https://"),
    BAD(settings_add_server, rb_server, "a.example/f", "'a.example/f': not a URL"),
    BAD(settings_add_server, rb_server, "=http://a/", "'=http://a/': empty or too long NAME"),
    BAD(settings_add_server, rb_server, "http://a b/", "'http://a b/': not a valid URL"),
};

static void test_setters(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        const struct row *r = &rows[i];
        struct settings *s = settings_new(), *fresh = settings_new();
        assert_non_null(s);
        assert_non_null(fresh);
        char err[512] = "", got[512], before[512];
        r->readback(fresh, before, sizeof before);
        int rc = r->set(s, r->value, err, sizeof err);
        r->readback(s, got, sizeof got);
        if (r->ok && (rc != 0 || strcmp(got, r->want) != 0))
            fail_msg("row %zu %s(\"%s\"): rc %d (%s), got \"%s\", want \"%s\"", i, r->what, r->value, rc, err, got,
                     r->want);
        /* A refused value changes nothing. */
        if (!r->ok && (rc != -1 || strncmp(err, r->want, strlen(r->want)) != 0 || strcmp(got, before) != 0))
            fail_msg("row %zu %s(\"%s\"): rc %d, error \"%s\", want \"%s...\"; value \"%s\" (was \"%s\")", i, r->what,
                     r->value, rc, err, r->want, got, before);
        settings_free(s);
        settings_free(fresh);
    }
    settings_free(NULL);
}

static void test_defaults_and_last_wins(void **state)
{
    (void)state;
    struct settings *s = settings_new();
    char err[256];
    assert_int_equal(s->runs, 5);
    assert_int_equal(s->order, PLAN_ORDER_ALTERNATE);
    assert_int_equal(s->format, REPORT_TABLE);
    assert_int_equal(s->progress, -1);
    assert_true(s->dl.max_redirects == 20 && s->nservers == 0 && s->noffloads == 0);
    /* A setting given twice keeps the second value (and frees the first). */
    assert_int_equal(settings_set_user_agent(s, "a/1", err, sizeof err), 0);
    assert_int_equal(settings_set_user_agent(s, "b/2", err, sizeof err), 0);
    assert_string_equal(s->dl.user_agent, "b/2");
    assert_int_equal(settings_set_output(s, "x", err, sizeof err), 0);
    assert_int_equal(settings_set_output(s, "y", err, sizeof err), 0);
    assert_string_equal(s->output, "y");
    /* Lists grow: --resolve, --offload, servers. */
    assert_int_equal(settings_add_resolve(s, "a:80:1.2.3.4", err, sizeof err), 0);
    assert_int_equal(settings_add_resolve(s, "b:80:1.2.3.5", err, sizeof err), 0);
    assert_string_equal(s->dl.resolve->next->data, "b:80:1.2.3.5");
    for (int i = 0; i < SETTINGS_MAX_OFFLOADS; i++)
        assert_int_equal(settings_add_offload(s, "lo:gro=on", err, sizeof err), 0);
    assert_int_equal(settings_add_offload(s, "lo:gro=on", err, sizeof err), -1);
    assert_string_equal(err, "'lo:gro=on': too many --offload options");
    /* Default names: host, host:port, host:port/FILE when host and port repeat; a NAME
     * given twice is refused. */
    assert_int_equal(settings_add_server(s, "http://m.test/a", err, sizeof err), 0);
    assert_int_equal(settings_add_server(s, "http://m.test:81/a", err, sizeof err), 0);
    assert_int_equal(settings_add_server(s, "http://m.test:81/b", err, sizeof err), 0);
    assert_string_equal(s->servers[0].name, "m.test");
    assert_string_equal(s->servers[1].name, "m.test:81/a");
    assert_string_equal(s->servers[2].name, "m.test:81/b");
    assert_int_equal(settings_add_server(s, "m.test=http://x/", err, sizeof err), -1);
    assert_string_equal(err, "'m.test=http://x/': this NAME is already used by another server");
    /* A per-server upload size goes to the last server added. */
    assert_int_equal(settings_set_server_upload(s, "8MiB", err, sizeof err), 0);
    assert_true(s->servers[2].upload == 8388608 && s->servers[1].upload == 0);
    settings_free(s);
}

/* --families: every server, added before or after it, becomes two (IPv4, IPv6) with the
 * family in its name and plan entry; a speed-test endpoint's default name says its kind. */
static void test_families(void **state)
{
    (void)state;
    char err[256];
    struct settings *s = settings_new();
    assert_non_null(s);
    assert_int_equal(settings_add_server(s, "A=http://m.test/f.dat", err, sizeof err), 0);
    assert_int_equal(settings_set_families(s, NULL, err, sizeof err), 0);
    assert_int_equal(settings_add_server(s, "http://m.test:81/garbage.php?ckSize=100", err, sizeof err), 0);
    assert_int_equal(settings_set_server_upload(s, "1MiB", err, sizeof err), 0);
    static const struct {
        const char *name;
        int family;
        uint64_t upload;
    } want[] = {
        {"A IPv4", 4, 0}, {"A IPv6", 6, 0},
        {"m.test librespeed IPv4", 4, 1048576}, {"m.test librespeed IPv6", 6, 1048576},
    };
    assert_int_equal(s->nservers, 4);
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(s->servers[i].name, want[i].name);
        assert_int_equal(s->servers[i].family, want[i].family);
        assert_true(s->servers[i].upload == want[i].upload);
    }
    assert_int_equal(settings_check(s, err, sizeof err), 0);
    assert_int_equal(settings_set_ip_version(s, "4", err, sizeof err), 0);
    assert_int_equal(settings_check(s, err, sizeof err), -1);
    assert_string_equal(err, "--families: measures over both IPv4 and IPv6; -4 and -6 pick one");
    settings_free(s);
}

static void test_check(void **state)
{
    (void)state;
    static const struct {
        const char *const set[6]; /* setter name, value, ... */
        const char *err;          /* NULL: valid */
    } rows[] = {
        {{"seed", "3"}, "--seed: only meaningful with --order random"},
        {{"seed", "3", "order", "random"}, NULL},
        {{"delay", "10ms"}, "--delay: needs --delay-dev DEV"},
        {{"delay_dev", "lo"}, "--delay-dev: needs --delay or --loss"},
        {{"delay", "10ms", "delay_dev", "lo"}, NULL},
        {{"delay", "0", "delay_dev", "lo"}, "--delay-dev: needs --delay or --loss"},
        {{"loss", "1%"}, "--loss: needs --delay-dev DEV"},
        {{"loss", "1%", "delay_dev", "lo"}, NULL}, /* loss only */
        {{"loss", "1%", "delay", "10ms", "delay_dev", "lo"}, NULL},
        {{"loss", "0%", "delay_dev", "lo"}, "--delay-dev: needs --delay or --loss"},
        {{"interface", "lo", "local_address", "127.0.0.1"}, "--local-address: cannot be combined with --interface"},
        {{"interface", "lo"}, NULL},
        {{"split", "on"}, "--split: needs --parallel N with N >= 2"},
        {{"split", "on", "parallel", "2"}, NULL},
        {{"upload", "1MiB", "max_bytes", "1"}, "--max-bytes: downloads only (--upload SIZE is the upload's size)"},
    };
    static const struct {
        const char *name;
        settings_setter set;
    } by_name[] = {
        {"seed", settings_set_seed},           {"order", settings_set_order},
        {"delay", settings_set_delay},         {"delay_dev", settings_set_delay_dev},
        {"loss", settings_set_loss},
        {"interface", settings_set_interface}, {"local_address", settings_set_local_address},
        {"split", settings_set_split},         {"parallel", settings_set_parallel},
        {"upload", settings_set_upload},       {"max_bytes", settings_set_max_bytes},
    };
    for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
        struct settings *s = settings_new();
        char err[256] = "";
        for (size_t k = 0; k < 6 && rows[i].set[k]; k += 2)
            for (size_t j = 0; j < ARRAY_SIZE(by_name); j++)
                if (strcmp(by_name[j].name, rows[i].set[k]) == 0)
                    assert_int_equal(by_name[j].set(s, rows[i].set[k + 1], err, sizeof err), 0);
        int rc = settings_check(s, err, sizeof err);
        if (rows[i].err ? rc != -1 || strcmp(err, rows[i].err) != 0 : rc != 0)
            fail_msg("row %zu: rc %d, \"%s\", want %s", i, rc, err, rows[i].err ? rows[i].err : "valid");
        settings_free(s);
    }
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_setters),
        cmocka_unit_test(test_defaults_and_last_wins),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_families),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    curl_global_cleanup();
    return rc;
}
