/* Unit tests for server/config*.c: a table of bad configurations, each with the message it
 * must produce (FILE:LINE: setting: reason), and a table of good ones with the values read. */
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

static char path[64];

static int write_conf(const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs(text, f);
    fclose(f);
    return 0;
}

static int setup(void **state)
{
    (void)state;
    snprintf(path, sizeof path, "/tmp/debit-test-config.%d.conf", (int)getpid());
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(path);
    return 0;
}

static void test_bad(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *msg; /* what follows "PATH:" */
    } rows[] = {
        {"bogus = 1;", "1: bogus: unknown setting (expected one of: listen, threads, seed, ram, files, upload, "
                       "limits, log, transfers, transfers_acked, privacy, offload, http, user, group, seccomp, metrics, speedtest, ndt7)"},
        {"listen = ( { address = \"::\"; port = 65536; } );", "1: listen[0].port: 65536 is out of range [1, 65535]"},
        {"listen = ();", "1: listen: at least one listener is needed"},
        {"listen = ( { port = 80; host = \"x\"; } );", "1: listen[0].host: unknown setting (expected one of: address, port, tcp, tcp_nopush, connection_memory, tls)"},
        {"listen = ( { port = 80; connection_memory = \"4KiB\"; } );",
         "1: listen[0].connection_memory: 4096 bytes is out of range (8KiB to 1MiB)"},
        {"listen = ( { port = 80; },\n{ port = 81; connection_memory = \"2MiB\"; } );",
         "2: listen[1].connection_memory: 2097152 bytes is out of range (8KiB to 1MiB)"},
        {"listen = ( { port = 80; connection_memory = \"8Kbit\"; } );", "1: listen[0].connection_memory: \"8Kbit\": unknown unit (example: \"1GiB\")"},
        {"listen = ( { port = 80; },\n{ port = 81; tcp_nopush = \"off\"; } );", "2: listen[1].tcp_nopush: expected true or false"},
        {"listen = ( { port = 443; tls = \"on\"; } );", "1: listen[0].tls: expected a group { cert = \"FILE\"; key = \"FILE\"; }"},
        {"listen = ( { port = 443; tls = { key = \"k\"; }; } );", "1: listen[0].tls: cert is missing (a TLS listener needs cert and key)"},
        {"listen = ( { port = 443; tls = { cert = \"/nonexistent/c.pem\"; key = \"k\"; }; } );",
         "1: listen[0].tls.cert: cannot read \"/nonexistent/c.pem\": No such file or directory"},
        {"listen = ( { port = 443; tls = { cert = \"c\"; key = \"k\"; sni = 1; }; } );",
         "1: listen[0].tls.sni: unknown setting (expected one of: cert, key, priorities)"},
        {"listen = ( { address = \"1.2.3\"; port = 80; } );",
         "1: listen[0].address: \"1.2.3\" is not a numeric IPv4 or IPv6 address (\"::\" = every address, IPv4 and IPv6)"},
        {"listen = ( { address = \"::1\"; port = 80; },\n{ address = \"::1\"; port = 80; } );",
         "2: listen[1].address: ::1 port 80 is already listed"},
        {"listen = { address = \"::\"; port = 80; };",
         "1: listen: expected a list of groups: ( { address = \"::\"; port = 8080; } )"},
        {"files = ( { path = \"/a\"; size = \"1XB\"; } );", "1: files[0].size: \"1XB\": unknown unit (example: \"1GiB\")"},
        {"files = ( { path = \"/a\"; size = \"20TiB\"; } );", "1: files[0].size: 21990232555520 bytes is larger than the 16 TiB limit"},
        {"files = ( { path = \"/a\"; size = 1; },\n { path = \"/a\"; size = 2; } );", "2: files[1].path: duplicate path \"/a\""},
        {"files = ( { path = \"/a/\"; size = 1; } );", "1: files[0].path: \"/a/\" names a folder, not a file"},
        {"files = ( { path = \"/a b\"; size = 1; } );", "1: files[0].path: \"/a b\": character 0x20 (a space or control character) is not allowed in a path"},
        {"files = ( { path = \"/transfers/x\"; size = 1; } );",
         "1: files[0].path: \"/transfers/x\" is reserved for debitd's own pages (/status, /metrics, /transfers/)"},
        {"files = ( { path = \"/metrics\"; size = 1; } );",
         "1: files[0].path: \"/metrics\" is reserved for debitd's own pages (/status, /metrics, /transfers/)"},
        {"metrics = { enabled = 1; };", "1: metrics.enabled: expected true or false"},
        {"ndt7 = { enabled = 1; };", "1: ndt7.enabled: expected true or false"},
        {"ndt7 = { per_ip = -1; };", "1: ndt7.per_ip: -1 is out of range [0, 1000000]"},
        {"ndt7 = { port = 80; };", "1: ndt7.port: unknown setting (expected one of: enabled, per_ip)"},
        {"metrics = { allow = ( \"127.0.0.1\",\n \"127.0.0.0/7\" ); };",
         "2: metrics.allow[1]: \"127.0.0.0/7\": host bits set beyond the /7 prefix"},
        {"metrics = { allow = ( \"example.org\" ); };",
         "1: metrics.allow[0]: \"example.org\": not a numeric IPv4 or IPv6 address (names are not resolved)"},
        {"metrics = { allow = ( 127 ); };", "1: metrics.allow[0]: expected a string such as \"127.0.0.1\" or \"10.0.0.0/8\""},
        {"metrics = { allow = \"::1\"; };", "1: metrics.allow: expected a list of addresses: ( \"127.0.0.1\", \"10.0.0.0/8\" )"},
        {"metrics = { port = 9100; };", "1: metrics.port: unknown setting (expected one of: enabled, allow)"},
        {"upload = { path = \"/u\"; max = 1; };", "1: upload.max: unknown setting (expected one of: path, max_size)"},
        {"limits = { connections = 0; };", "1: limits.connections: 0 is out of range [1, 1000000]"},
        {"limits = { idle_timeout = \"2 weeks\"; };", "1: limits.idle_timeout: \"2 weeks\": unknown unit (example: \"10ms\")"},
        {"limits = { per_ip_bytes = \"lots\"; };", "1: limits.per_ip_bytes: \"lots\": not a number (example: \"1GiB\")"},
        {"limits = { per_ip_bytes = \"1GiB\";\n per_ip_window = \"500ms\"; };",
         "2: limits.per_ip_window: must be from 1s to 366d"},
        {"limits = { per_ip_window = \"400d\"; };", "1: limits.per_ip_window: must be from 1s to 366d"},
        {"limits = { per_ip_window = \"1.0005s\"; };", "1: limits.per_ip_window: must be whole milliseconds"},
        {"limits = { per_ip_table = 0; };", "1: limits.per_ip_table: 0 is out of range [1, 10000000]"},
        {"limits = {\n drain_timeout = \"2h\"; };", "2: limits.drain_timeout: more than one hour"},
        {"limits = { drain_timeout = \"1.5ms\"; };", "1: limits.drain_timeout: must be whole milliseconds"},
        {"privacy = { details = \"no\"; };", "1: privacy.details: expected true or false"},
        {"privacy = { public = true; };",
         "1: privacy.public: unknown setting (expected one of: details, public_transfers)"},
        {"privacy = true;", "1: privacy: expected a group { details = true; public_transfers = false; }"},
        {"limits = { header_timeout = \"50ms\"; };",
         "1: limits.header_timeout: 50 ms is out of range (0 = none, or 100ms to 1 hour)"},
        {"limits = {\n header_timeout = \"1.0005s\"; };", "2: limits.header_timeout: must be whole milliseconds"},
        {"limits = { body_min_rate = \"fast\"; };",
         "1: limits.body_min_rate: \"fast\": not a number (example: \"1kB/s\"; \"0\" = no floor)"},
        {"limits = { body_min_rate = \"2GB/s\"; };",
         "1: limits.body_min_rate: \"2GB/s\" is above 1GB/s: a floor that high would cut honest uploads"},
        {"limits = { body_min_rate = 1000; };",
         "1: limits.body_min_rate: expected a string such as \"1kB/s\", or 0 for no floor"},
        {"log = { level = \"verbose\"; };", "1: log.level: unknown level \"verbose\" (expected error, warn, info or debug)"},
        {"log = { access = \"\"; };", "1: log.access: empty (use \"-\" for stderr, \"off\", or a file path)"},
        {"log = {\n access_format = \"clf\"; };",
         "2: log.access_format: unknown format \"clf\" (expected json or combined)"},
        {"log = { access_format = 1; };", "1: log.access_format: expected a string in double quotes"},
        {"seed = -1;", "1: seed: -1 is out of range [0, 9223372036854775807]"},
        {"transfers = 0;", "1: transfers: 0 is out of range [1, 1000000]"},
        {"offload = { interface = \"a/b\"; };", "1: offload.interface: \"a/b\" is not a valid interface name"},
        {"offload = { interface = \"lo\"; state_file = \"rel\"; };", "1: offload.state_file: must be an absolute path"},
        {"offload = { interface = \"lo\"; gro = 1; };", "1: offload.gro: expected true or false"},
        {"http = { strict = \"yes\"; };", "1: http.strict: expected true or false"},
        {"http = { strict = true;\n lenient = 1; };", "2: http.lenient: unknown setting (expected one of: strict)"},
        {"http = true;", "1: http: expected a group { strict = true; }"},
        {"threads = 1;\nuser = \"no-such-user-x\";", "2: user: user \"no-such-user-x\" does not exist"},
        {"user = \"nobody\";\ngroup = \"no-such-group-x\";", "2: group: group \"no-such-group-x\" does not exist"},
        {"user = \"a:b\";", "1: user: \"a:b\" is not a valid user name"},
        {"user = \"\";", "1: user: \"\" is not a valid user name"},
        {"group = \"-x\";", "1: group: \"-x\" is not a valid group name"},
        {"seccomp = \"strict\";", "1: seccomp: unknown mode \"strict\" (expected eperm, kill, log or off)"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct config c;
        char err[1024], want[1200];
        assert_int_equal(config_defaults(&c, err, sizeof err), 0);
        assert_int_equal(write_conf(rows[i].text), 0);
        int r = config_load_file(&c, path, err, sizeof err);
        snprintf(want, sizeof want, "%s:%s", path, rows[i].msg);
        if (r != -1 || strcmp(err, want) != 0)
            fail_msg("config %zu: got %d \"%s\"\n  want \"%s\"", i, r, r ? err : "", want);
        config_free(&c);
    }
}

static void test_good(void **state)
{
    (void)state;
    struct config c;
    char err[1024];
    assert_int_equal(config_defaults(&c, err, sizeof err), 0);
    assert_int_equal(write_conf("listen = ( { address = \"0.0.0.0\"; port = 80; }, { address = \"::1\"; port = 81; tcp_nopush = false;\n"
                                "  connection_memory = \"8KiB\"; } );\n"
                                "threads = 3; seed = 12; ram = \"4MiB\";\n"
                                "files = ( { path = \"/x/a.dat\"; size = \"10MiB\"; }, { path = \"/b\"; size = 5; } );\n"
                                "upload = { max_size = \"1kB\"; };\n"
                                "limits = { connections = 5; per_ip = 2; idle_timeout = \"1min\";\n"
                                "  header_timeout = \"2.5s\"; body_min_rate = \"8kbit\";\n"
                                "  per_ip_bytes = \"100GiB\"; per_ip_window = \"12h\"; per_ip_table = 64; drain_timeout = \"2.5s\"; };\n"
                                "privacy = { details = false; public_transfers = true; };\n"
                                "log = { level = \"debug\"; access = \"off\"; access_format = \"combined\"; };\n"
                                "transfers = 7;\n"
                                "http = { strict = false; };\n"
                                "offload = { interface = \"lo\"; tso = false; gro = true; required = false; };\n"),
                     0);
    assert_int_equal(config_load_file(&c, path, err, sizeof err), 0);
    assert_int_equal(config_validate(&c, err, sizeof err), 0);
    assert_int_equal(c.n_listen, 2);
    assert_string_equal(c.listen[1].address, "::1");
    assert_int_equal(c.listen[1].port, 81);
    assert_int_equal(c.listen[0].tcp_nopush, 1); /* the default, as nginx's tcp_nopush on with sendfile */
    assert_int_equal(c.listen[1].tcp_nopush, 0);
    assert_int_equal(c.listen[0].conn_memory, 32 << 10); /* libmicrohttpd's own default */
    assert_int_equal(c.listen[1].conn_memory, 8 << 10);
    assert_int_equal(c.threads, 3);
    assert_int_equal(c.per_ip_table, 64);
    assert_int_equal(config_threads_effective(&c), 3);
    assert_int_equal(c.seed, 12);
    assert_int_equal(c.n_files, 2);
    assert_int_equal(c.files[0].size, 10 << 20);
    assert_int_equal(config_region_size(&c), 4 << 20);
    assert_string_equal(c.upload_path, "/upload"); /* default path kept */
    assert_int_equal(c.upload_max, 1000);
    assert_int_equal(c.max_connections, 5);
    assert_int_equal(c.per_ip, 2);
    assert_int_equal(c.idle_timeout, 60);
    assert_int_equal(c.per_ip_bytes, 100ULL << 30);
    assert_int_equal(c.per_ip_window_ms, 12 * 3600 * 1000);
    assert_int_equal(c.drain_timeout_ms, 2500);
    assert_int_equal(c.details, 0);
    assert_int_equal(c.public_transfers, 1);
    assert_int_equal(c.header_timeout_ms, 2500);
    assert_int_equal(c.body_min_rate, 1000);
    assert_int_equal(c.log_level, LOG_LEVEL_DEBUG);
    assert_string_equal(c.access_log, "off");
    assert_int_equal(c.access_format, ACCESS_FORMAT_COMBINED);
    assert_int_equal(c.transfers_keep, 7);
    assert_int_equal(c.http_strict, 0);
    assert_string_equal(c.offload.interface, "lo");
    assert_int_equal(c.offload.wish.want[OFFLOAD_TSO], OFFLOAD_OFF);
    assert_int_equal(c.offload.wish.want[OFFLOAD_GSO], OFFLOAD_LEAVE);
    assert_int_equal(c.offload.wish.want[OFFLOAD_GRO], OFFLOAD_ON);
    assert_int_equal(c.offload.required, 0);
    assert_int_equal(c.offload.restore, 1);
    assert_null(c.user);
    assert_int_equal(c.seccomp, CONFIG_SECCOMP_EPERM);
    assert_int_equal(c.metrics.enabled, 1); /* default: on, loopback only */
    assert_int_equal(c.metrics.allow.n, 2);
    assert_string_equal(c.metrics.allow.e[1].spec, "::1");
    assert_int_equal(write_conf("metrics = { enabled = false; allow = ( \"10.0.0.0/8\", \"fd00::/8\", \"192.0.2.1\" ); };\n"), 0);
    assert_int_equal(config_load_file(&c, path, err, sizeof err), 0);
    assert_int_equal(c.metrics.enabled, 0);
    assert_int_equal(c.metrics.allow.n, 3); /* the file's list replaces the default */
    assert_string_equal(c.metrics.allow.e[0].spec, "10.0.0.0/8");
    /* user and group: resolved; group overrides the user's primary group in either order */
    assert_int_equal(write_conf("group = \"root\";\nuser = \"nobody\";\nseccomp = \"log\";\n"), 0);
    assert_int_equal(config_load_file(&c, path, err, sizeof err), 0);
    assert_string_equal(c.user, "nobody");
    assert_int_equal(c.uid, 65534);
    assert_int_equal(c.gid, 0);
    assert_int_equal(c.seccomp, CONFIG_SECCOMP_LOG);
    /* the command line's setters, over the file */
    assert_int_equal(config_clear_listeners(&c), 0);
    assert_int_equal(config_add_listener_spec(&c, "[::]:9000", err, sizeof err), 0);
    assert_int_equal(config_add_listener_spec(&c, "9001", err, sizeof err), 0);
    assert_int_equal(config_add_listener_spec(&c, "127.0.0.1:9002", err, sizeof err), 0);
    assert_int_equal(config_add_listener_spec(&c, "::1:9003", err, sizeof err), -1);
    assert_string_equal(err, "\"::1:9003\": write an IPv6 address in brackets: [ADDR]:PORT");
    assert_int_equal(config_add_listener_spec(&c, "127.0.0.1:0", err, sizeof err), -1);
    assert_int_equal(c.n_listen, 3);
    assert_string_equal(c.listen[1].address, "::");
    config_free(&c);
}

static void test_defaults(void **state)
{
    (void)state;
    struct config c;
    char err[256];
    assert_int_equal(config_defaults(&c, err, sizeof err), 0);
    assert_int_equal(c.n_listen, 1);
    assert_int_equal(c.listen[0].port, 8080);
    assert_int_equal(c.n_files, 2);
    assert_string_equal(c.files[0].path, "/ram/1GiB.dat");
    assert_string_equal(c.files[1].path, "/files/1Gio.dat");
    assert_int_equal(config_region_size(&c), 1 << 30);
    assert_int_equal(c.per_ip_bytes, 0); /* no quota */
    assert_int_equal(c.per_ip_window_ms, 86400000);
    assert_int_equal(c.per_ip_table, 100000);
    assert_int_equal(c.drain_timeout_ms, 10000);
    assert_int_equal(c.details, 1);
    assert_int_equal(c.public_transfers, 0);
    /* a public host's defaults: a header deadline, a body rate floor, a per-address cap */
    assert_int_equal(c.header_timeout_ms, 5000);
    assert_int_equal(c.body_min_rate, 1000);
    assert_int_equal(c.per_ip, 100);
    assert_int_equal(config_set_body_min_rate(&c, "0", err, sizeof err), 0);
    assert_int_equal(c.body_min_rate, 0);
    assert_int_equal(config_set_header_timeout(&c, "0", err, sizeof err), 0);
    assert_int_equal(c.header_timeout_ms, 0);
    assert_int_equal(c.http_strict, 1); /* strict HTTP by default */
    /* a file that would repeat a tiny region too often */
    c.ram = 4096;
    assert_int_equal(config_validate(&c, err, sizeof err), -1);
    assert_non_null(strstr(err, "ram: 4096 bytes is too small for \"/ram/1GiB.dat\""));
    c.ram = 0;
    /* a group alone: refused (debitd changes the group only with the user) */
    assert_int_equal(config_set_group(&c, "root", err, sizeof err), 0);
    assert_int_equal(config_validate(&c, err, sizeof err), -1);
    assert_string_equal(err, "(defaults): group: \"root\" without a user (set user too: debitd changes the group "
                             "only when it changes the user)");
    assert_int_equal(config_set_user(&c, "nobody", err, sizeof err), 0);
    assert_int_equal(c.gid, 0); /* the group set first stays */
    assert_int_equal(config_validate(&c, err, sizeof err), 0);
    config_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad),
        cmocka_unit_test(test_good),
        cmocka_unit_test(test_defaults),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
