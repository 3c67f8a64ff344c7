/* Unit tests for common/tcp_profile.c: the config table (with exact messages), the header
 * form, JSON, and the options really set on an accepted loopback socket, read back with
 * getsockopt. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cfg.h"
#include "tcp_profile.h"
#include "testlib.h"

#ifndef SO_MAX_PACING_RATE
#define SO_MAX_PACING_RATE 47
#endif

static char available[512];

/* Is NAME an available algorithm? Through the setter, the one check production uses. */
static int cc_available(const char *name)
{
    struct tcp_profile q;
    char e[600];
    tcp_profile_defaults(&q);
    return tcp_profile_set_congestion(&q, name, e, sizeof e) == 0;
}

static int setup(void **state)
{
    (void)state;
    char err[256];
    if (tcp_cc_available(available, sizeof available, err, sizeof err) < 0) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    return 0;
}

/* Parse "listen = ( { port = 8080; tcp = { BODY }; } );" from a real file so that errors
 * carry FILE:LINE. Returns tcp_profile_from_cfg's result; ERR gets the message with the
 * file name replaced by "F". */
static char tcp_path[128]; /* cfg_setting_path of the tcp group, for '@' in expectations */

static int parse_body(const char *body, struct tcp_profile *p, char *err, size_t errlen)
{
    char path[] = "/tmp/debit-test-tcp-profile.XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "# test\nlisten = (\n  { port = 8080; tcp = %s; }\n);\n", body);
    fclose(f);
    config_t cfg;
    config_init(&cfg);
    char e[600];
    int r = cfg_load(&cfg, path, e, sizeof e);
    if (r == 0) {
        const config_setting_t *tcp = config_lookup(&cfg, "listen.[0].tcp");
        assert_non_null(tcp);
        cfg_setting_path(tcp, tcp_path, sizeof tcp_path);
        /* whatever the separator style of cfg.c, it names list element 0 of listen */
        assert_true(strcmp(tcp_path, "listen.[0].tcp") == 0 || strcmp(tcp_path, "listen[0].tcp") == 0);
        tcp_profile_defaults(p);
        r = tcp_profile_from_cfg(tcp, p, e, sizeof e);
    }
    config_destroy(&cfg);
    unlink(path);
    if (r < 0) {
        size_t n = strlen(path);
        if (strncmp(e, path, n) == 0)
            snprintf(err, errlen, "F%s", e + n);
        else
            snprintf(err, errlen, "%s", e);
    }
    return r;
}

static void test_config_table(void **state)
{
    (void)state;
    static const struct {
        const char *body;
        const char *err; /* NULL: must parse */
        const char *cc;
        uint64_t pacing, sndbuf, lowat;
    } rows[] = {
        {"{ congestion = \"cubic\"; pacing_rate = \"500Mbit\"; sndbuf = \"4MiB\"; notsent_lowat = \"128KiB\"; }", NULL,
         "cubic", 500000000ULL, 4194304, 131072},
        {"{ }", NULL, "", 0, 0, 0},
        {"{ congestion = \"reno\"; }", NULL, "reno", 0, 0, 0},
        {"{ congestion = \"\"; }", NULL, "", 0, 0, 0},
        {"{ pacing_rate = 1000000; }", NULL, "", 1000000, 0, 0},
        {"{ pacing_rate = \"1.5Gbit\"; }", NULL, "", 1500000000ULL, 0, 0},
        {"{ pacing_rate = \"100MB/s\"; }", NULL, "", 800000000ULL, 0, 0},
        {"{ pacing_rate = 0; sndbuf = 0; notsent_lowat = 0; }", NULL, "", 0, 0, 0},
        {"{ sndbuf = 65536; notsent_lowat = 16384; }", NULL, "", 0, 65536, 16384},
        {"{ sndbuf = \"1Gio\"; }", "F:3: @.sndbuf: '1Gio' is out of range (0 for the kernel default, or 4096 to 1073741823)",
         NULL, 0, 0, 0},
        {"{ congestion = \"foo\"; }", "F:3: @.congestion: 'foo' is not available (available: %s)", NULL,
         0, 0, 0},
        {"{ congestion = \"averyveryverylongname\"; }",
         "F:3: @.congestion: 'averyveryverylongname' is too long for a congestion control name (max 15 characters)",
         NULL, 0, 0, 0},
        {"{ congestion = 5; }", "F:3: @.congestion: expected a string in double quotes", NULL, 0, 0, 0},
        {"{ pacing_rate = \"fast\"; }",
         "F:3: @.pacing_rate: 'fast' is not a rate (not a number; e.g. \"500Mbit\")", NULL, 0, 0, 0},
        {"{ pacing_rate = \"500MiB\"; }",
         "F:3: @.pacing_rate: '500MiB' is not a rate (unknown unit; e.g. \"500Mbit\")", NULL, 0, 0, 0},
        {"{ pacing_rate = \"1bit\"; }",
         "F:3: @.pacing_rate: '1bit' is out of range (0 for the kernel default, or 8 to 18446744073709551615)",
         NULL, 0, 0, 0},
        {"{ pacing_rate = true; }", "F:3: @.pacing_rate: expected a number or a string with a unit", NULL,
         0, 0, 0},
        {"{ sndbuf = \"4Mbit\"; }", "F:3: @.sndbuf: '4Mbit' is not a size (unknown unit; e.g. \"4MiB\")",
         NULL, 0, 0, 0},
        {"{ sndbuf = \"1KiB\"; }",
         "F:3: @.sndbuf: '1KiB' is out of range (0 for the kernel default, or 4096 to 1073741823)", NULL,
         0, 0, 0},
        {"{ notsent_lowat = -1; }", "F:3: @.notsent_lowat: -1 is negative", NULL, 0, 0, 0},
        {"{ notsent_lowat = \"4GiB\"; }",
         "F:3: @.notsent_lowat: '4GiB' is out of range (0 for the kernel default, or 1 to 2147483647)",
         NULL, 0, 0, 0},
        {"{ cwnd = 10; }",
         "F:3: @.cwnd: unknown setting (expected one of: congestion, pacing_rate, sndbuf, notsent_lowat)",
         NULL, 0, 0, 0},
        {"{ sndbuf = \"4MiB\"; sndbuf = \"8MiB\"; }", "F:3: syntax: duplicate setting name", NULL, 0, 0, 0},
        {"\"cubic\"", "F:3: @: expected a group { congestion = ...; pacing_rate = ...; }", NULL, 0, 0, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct tcp_profile p;
        char err[700] = "", want[700];
        int r = parse_body(rows[i].body, &p, err, sizeof err);
        if (!rows[i].err) {
            if (r != 0)
                fail_msg("%s: unexpected error: %s", rows[i].body, err);
            assert_string_equal(p.congestion, rows[i].cc);
            assert_int_equal(p.pacing_rate_bps, rows[i].pacing);
            assert_int_equal(p.sndbuf, rows[i].sndbuf);
            assert_int_equal(p.notsent_lowat, rows[i].lowat);
            continue;
        }
        char fmt[700];
        const char *at = strchr(rows[i].err, '@');
        if (at)
            snprintf(fmt, sizeof fmt, "%.*s%s%s", (int)(at - rows[i].err), rows[i].err, tcp_path, at + 1);
        else
            snprintf(fmt, sizeof fmt, "%s", rows[i].err);
        snprintf(want, sizeof want, fmt, available);
        if (r != -1 || strcmp(err, want) != 0)
            fail_msg("%s:\n  got (%d):  %s\n  want: %s", rows[i].body, r, err, want);
    }
}

static void test_group_absent_and_setters(void **state)
{
    (void)state;
    struct tcp_profile p;
    char err[300];
    tcp_profile_defaults(&p);
    assert_true(tcp_profile_is_default(&p));
    assert_int_equal(tcp_profile_from_cfg(NULL, &p, err, sizeof err), 0);
    assert_true(tcp_profile_is_default(&p));
    /* setters are what a command line would use: messages without a setting name */
    assert_int_equal(tcp_profile_set_congestion(&p, "nope", err, sizeof err), -1);
    char want[600];
    snprintf(want, sizeof want, "'nope' is not available (available: %s)", available);
    assert_string_equal(err, want);
    assert_int_equal(tcp_profile_set_pacing_rate(&p, "", err, sizeof err), -1);
    assert_string_equal(err, "'' is not a rate (empty value; e.g. \"500Mbit\")");
    assert_int_equal(tcp_profile_set_sndbuf(&p, "8MiB", err, sizeof err), 0);
    assert_int_equal(p.sndbuf, 8388608);
    assert_false(tcp_profile_is_default(&p));
    /* a whole word of the available list, never a prefix of one */
    assert_true(cc_available("reno"));
    assert_false(cc_available("ren"));
    char def[32];
    assert_int_equal(tcp_cc_default(def, sizeof def, err, sizeof err), 0);
    assert_true(cc_available(def));
}

static void test_format_and_json(void **state)
{
    (void)state;
    static const struct {
        const char *cc;
        uint64_t pacing, sndbuf, lowat;
        const char *header, *json;
    } rows[] = {
        {"cubic", 500000000ULL, 4194304, 131072, "cc=cubic pacing=500Mbit sndbuf=4194304",
         "{\"congestion\":\"cubic\",\"pacing_rate_bps\":500000000,\"sndbuf_bytes\":4194304,\"notsent_lowat_bytes\":131072}"},
        {"", 0, 0, 0, "cc=default pacing=unlimited sndbuf=auto",
         "{\"congestion\":null,\"pacing_rate_bps\":null,\"sndbuf_bytes\":null,\"notsent_lowat_bytes\":null}"},
        {"bbr", 1500000000ULL, 0, 0, "cc=bbr pacing=1500Mbit sndbuf=auto",
         "{\"congestion\":\"bbr\",\"pacing_rate_bps\":1500000000,\"sndbuf_bytes\":null,\"notsent_lowat_bytes\":null}"},
        {"reno", 1000000000ULL, 65536, 0, "cc=reno pacing=1Gbit sndbuf=65536", NULL},
        {"", 1234567, 0, 0, "cc=default pacing=1234567bit sndbuf=auto", NULL},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct tcp_profile p;
        tcp_profile_defaults(&p);
        snprintf(p.congestion, sizeof p.congestion, "%s", rows[i].cc);
        p.pacing_rate_bps = rows[i].pacing;
        p.sndbuf = rows[i].sndbuf;
        p.notsent_lowat = rows[i].lowat;
        char buf[128];
        int n = tcp_profile_format(&p, buf, sizeof buf);
        assert_string_equal(buf, rows[i].header);
        assert_int_equal(n, (int)strlen(rows[i].header));
        if (rows[i].json) {
            json_t *j = tcp_profile_to_json(&p);
            char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
            assert_string_equal(s, rows[i].json);
            free(s);
            json_decref(j);
        }
    }
}

static void read_back(int fd, char *cc, uint64_t *pacing, int *sndbuf, int *lowat)
{
    socklen_t l = TCP_PROFILE_CC_LEN;
    memset(cc, 0, TCP_PROFILE_CC_LEN + 1);
    assert_int_equal(getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, &l), 0);
    l = sizeof *pacing;
    assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, pacing, &l), 0);
    l = sizeof *sndbuf;
    assert_int_equal(getsockopt(fd, SOL_SOCKET, SO_SNDBUF, sndbuf, &l), 0);
    l = sizeof *lowat;
    assert_int_equal(getsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, lowat, &l), 0);
}

/* tcp_wmem_max and tcp_rmem_max: the third number of their sysctl, as the file says */
static void test_mem_max(void **state)
{
    (void)state;
    static const struct {
        const char *path;
        int (*read)(uint64_t *, char *, size_t);
    } rows[] = {{"/proc/sys/net/ipv4/tcp_wmem", tcp_wmem_max}, {"/proc/sys/net/ipv4/tcp_rmem", tcp_rmem_max}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        FILE *f = fopen(rows[i].path, "r");
        if (!f)
            skip();
        unsigned long long a, b, want;
        assert_int_equal(fscanf(f, "%llu %llu %llu", &a, &b, &want), 3);
        fclose(f);
        uint64_t got = 0;
        char err[160] = "";
        assert_int_equal(rows[i].read(&got, err, sizeof err), 0);
        assert_true(got == want);
        assert_true(got >= b && b >= a); /* min <= default <= max: the right field */
    }
}

static void test_apply_loopback(void **state)
{
    (void)state;
    char err[400], cc[TCP_PROFILE_CC_LEN + 1], def[32];
    uint64_t pacing;
    int sndbuf, lowat, cli, srv;
    assert_int_equal(tcp_cc_default(def, sizeof def, err, sizeof err), 0);
    /* an algorithm other than the default, so that the change is visible */
    const char *want_cc = strcmp(def, "reno") ? "reno" : "cubic";
    if (geteuid() == 0 && cc_available("cubic") && strcmp(def, "cubic"))
        want_cc = "cubic"; /* root may use any available one, allowed list or not */

    struct tcp_profile p;
    tcp_profile_defaults(&p);
    assert_int_equal(tcp_profile_set_congestion(&p, want_cc, err, sizeof err), 0);
    assert_int_equal(tcp_profile_set_pacing_rate(&p, "500Mbit", err, sizeof err), 0);
    assert_int_equal(tcp_profile_set_sndbuf(&p, "1MiB", err, sizeof err), 0);
    assert_int_equal(tcp_profile_set_notsent_lowat(&p, "128KiB", err, sizeof err), 0);

    testlib_loopback_pair(&cli, &srv);
    if (tcp_profile_apply(srv, &p, err, sizeof err) < 0)
        fail_msg("apply: %s", err);
    read_back(srv, cc, &pacing, &sndbuf, &lowat);
    assert_string_equal(cc, want_cc);
    assert_int_equal(pacing, 500000000ULL / 8);
    assert_int_equal(sndbuf, 2 * 1048576); /* the kernel doubles it */
    assert_int_equal(lowat, 131072);
    /* the other end is untouched */
    read_back(cli, cc, &pacing, &sndbuf, &lowat);
    assert_string_equal(cc, def);
    assert_true(pacing == UINT64_MAX || pacing == UINT32_MAX);
    close(cli);
    close(srv);

    /* a default profile changes nothing */
    tcp_profile_defaults(&p);
    testlib_loopback_pair(&cli, &srv);
    assert_int_equal(tcp_profile_apply(srv, &p, err, sizeof err), 0);
    read_back(srv, cc, &pacing, &sndbuf, &lowat);
    assert_string_equal(cc, def);
    close(cli);
    close(srv);

    assert_int_equal(tcp_profile_probe(&p, AF_INET, err, sizeof err), 0);
    assert_int_equal(tcp_profile_set_congestion(&p, want_cc, err, sizeof err), 0);
    assert_int_equal(tcp_profile_probe(&p, AF_INET6, err, sizeof err) == 0 ||
                         strstr(err, "cannot create a TCP socket") != NULL, 1);

    /* an algorithm the kernel lacks (bypassing the parse-time check) */
    snprintf(p.congestion, sizeof p.congestion, "nosuchcc");
    assert_int_equal(tcp_profile_probe(&p, AF_INET, err, sizeof err), -1);
    assert_string_equal(err, "TCP_CONGESTION nosuchcc: the kernel has no such algorithm");
    assert_int_equal(tcp_profile_apply(-1, &p, err, sizeof err), -1);
    assert_string_equal(err, "TCP_CONGESTION nosuchcc: Bad file descriptor");
}

/* tcp_profile_read on a real accepted loopback socket: table-driven profiles applied with
 * tcp_profile_apply read back equal (the congestion control named even when the profile
 * leaves it to the default, a fixed send buffer halved back, an autotuned one not claimed),
 * and in the header's words; a socket that is not one fails with the option named. */
static void test_read(void **state)
{
    (void)state;
    char err[400], def[32];
    assert_int_equal(tcp_cc_default(def, sizeof def, err, sizeof err), 0);
    const char *other = strcmp(def, "reno") ? "reno" : "cubic";
    static const struct {
        const char *cc, *pacing, *sndbuf, *lowat; /* NULL: left to the kernel */
        const char *header;                       /* tcp_profile_format of the read-back; %s: the default cc */
    } rows[] = {
        {NULL, NULL, NULL, NULL, "cc=%s pacing=unlimited sndbuf=auto"},
        {"OTHER", "500Mbit", "1MiB", "128KiB", "cc=OTHER pacing=500Mbit sndbuf=1048576"},
        {NULL, "8Kbit", NULL, "16KiB", "cc=%s pacing=8Kbit sndbuf=auto"},
        {NULL, NULL, "256KiB", NULL, "cc=%s pacing=unlimited sndbuf=262144"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct tcp_profile p, got;
        tcp_profile_defaults(&p);
        if (rows[i].cc)
            assert_int_equal(tcp_profile_set_congestion(&p, other, err, sizeof err), 0);
        if (rows[i].pacing)
            assert_int_equal(tcp_profile_set_pacing_rate(&p, rows[i].pacing, err, sizeof err), 0);
        if (rows[i].sndbuf)
            assert_int_equal(tcp_profile_set_sndbuf(&p, rows[i].sndbuf, err, sizeof err), 0);
        if (rows[i].lowat)
            assert_int_equal(tcp_profile_set_notsent_lowat(&p, rows[i].lowat, err, sizeof err), 0);
        int cli, srv;
        testlib_loopback_pair(&cli, &srv);
        if (tcp_profile_apply(srv, &p, err, sizeof err) < 0)
            fail_msg("row %zu: apply: %s", i, err);
        if (tcp_profile_read(srv, &p, &got, err, sizeof err) < 0)
            fail_msg("row %zu: read: %s", i, err);
        assert_string_equal(got.congestion, rows[i].cc ? other : def);
        assert_int_equal(got.pacing_rate_bps, p.pacing_rate_bps);
        assert_int_equal(got.sndbuf, p.sndbuf);
        assert_int_equal(got.notsent_lowat, p.notsent_lowat);
        char want[160], hdr[160], fmt[160];
        snprintf(fmt, sizeof fmt, "%s", rows[i].header);
        char *o = strstr(fmt, "OTHER");
        if (o) /* the algorithm this kernel has besides its default */
            snprintf(want, sizeof want, "cc=%s%s", other, o + 5);
        else
            snprintf(want, sizeof want, fmt, def);
        tcp_profile_format(&got, hdr, sizeof hdr);
        assert_string_equal(hdr, want);
        /* the other end: the kernel's defaults, the autotuned buffer not claimed */
        assert_int_equal(tcp_profile_read(cli, NULL, &got, err, sizeof err), 0);
        assert_string_equal(got.congestion, def);
        assert_int_equal(got.pacing_rate_bps, 0);
        assert_int_equal(got.sndbuf, 0);
        assert_int_equal(got.notsent_lowat, 0);
        close(cli);
        close(srv);
    }
    struct tcp_profile got;
    assert_int_equal(tcp_profile_read(-1, NULL, &got, err, sizeof err), -1);
    assert_string_equal(err, "TCP_CONGESTION: read back: Bad file descriptor");
    assert_string_equal(got.congestion, ""); /* nothing read: defaults */
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    assert_int_equal(tcp_profile_read(fds[0], NULL, &got, err, sizeof err), -1);
    assert_string_equal(err, "TCP_CONGESTION: read back: Socket operation on non-socket");
    close(fds[0]);
    close(fds[1]);
}

/* The words of X-Debit-Tcp and /metrics' debitd_tcp_profile_info, from one function. */
static void test_words(void **state)
{
    (void)state;
    char err[200];
    struct tcp_profile p;
    struct tcp_profile_words w;
    tcp_profile_defaults(&p);
    tcp_profile_words(&p, &w);
    assert_string_equal(w.cc, "default");
    assert_string_equal(w.pacing, "unlimited");
    assert_string_equal(w.sndbuf, "auto");
    assert_string_equal(w.notsent_lowat, "off");
    assert_int_equal(tcp_profile_set_pacing_rate(&p, "2.5Gbit", err, sizeof err), 0);
    assert_int_equal(tcp_profile_set_sndbuf(&p, "4MiB", err, sizeof err), 0);
    assert_int_equal(tcp_profile_set_notsent_lowat(&p, "128KiB", err, sizeof err), 0);
    snprintf(p.congestion, sizeof p.congestion, "bbr");
    tcp_profile_words(&p, &w);
    assert_string_equal(w.cc, "bbr");
    assert_string_equal(w.sndbuf, "4194304");
    assert_string_equal(w.notsent_lowat, "131072");
    char hdr[160];
    tcp_profile_format(&p, hdr, sizeof hdr);
    char want[160];
    snprintf(want, sizeof want, "cc=bbr pacing=%s sndbuf=4194304", w.pacing);
    assert_string_equal(hdr, want);
}

/* As root, sndbuf beyond net.core.wmem_max still takes effect (SO_SNDBUFFORCE); without
 * privilege the clamp is an error that says why; and a congestion control outside the
 * netns' allowed list is refused with the list. */
static void test_apply_privileges(void **state)
{
    (void)state;
    char err[400], wmax_s[32];
    FILE *f = fopen("/proc/sys/net/core/wmem_max", "r");
    assert_non_null(f);
    assert_non_null(fgets(wmax_s, sizeof wmax_s, f));
    fclose(f);
    char *end;
    long wmax = strtol(wmax_s, &end, 10);
    assert_true(end != wmax_s);
    struct tcp_profile p;
    tcp_profile_defaults(&p);
    p.sndbuf = (uint64_t)wmax * 2 > 4096 ? (uint64_t)wmax * 2 : 8192; /* beyond the sysctl */
    if (p.sndbuf > 1073741823)
        p.sndbuf = 1073741823;
    int cli, srv, sndbuf;
    socklen_t l = sizeof sndbuf;
    if (geteuid() == 0) {
        testlib_loopback_pair(&cli, &srv);
        if (tcp_profile_apply(srv, &p, err, sizeof err) < 0)
            fail_msg("root apply sndbuf %llu: %s", (unsigned long long)p.sndbuf, err);
        assert_int_equal(getsockopt(srv, SOL_SOCKET, SO_SNDBUF, &sndbuf, &l), 0);
        assert_int_equal((uint64_t)sndbuf, 2 * p.sndbuf);
        close(cli);
        close(srv);
    }
    char allowed[256] = "";
    f = fopen("/proc/sys/net/ipv4/tcp_allowed_congestion_control", "r");
    if (f) {
        if (!fgets(allowed, sizeof allowed, f))
            allowed[0] = 0;
        fclose(f);
        allowed[strcspn(allowed, "\n")] = 0;
    }
    /* an available algorithm that is not in the allowed list, if any */
    const char *outside = NULL;
    static const char *const cands[] = {"cubic", "bbr", "reno", "htcp", "vegas"};
    for (size_t i = 0; i < sizeof cands / sizeof cands[0]; i++) {
        char padded[300];
        snprintf(padded, sizeof padded, " %s ", allowed);
        char w[32];
        snprintf(w, sizeof w, " %s ", cands[i]);
        if (cc_available(cands[i]) && !strstr(padded, w)) {
            outside = cands[i];
            break;
        }
    }
    int pfd[2];
    pid_t pid = testlib_fork_pipe(pfd);
    if (pid == 0) {
        char out[1000] = "", e2[400];
        if (geteuid() == 0 && setresuid(65534, 65534, 65534) < 0)
            _exit(3);
        int c, s;
        testlib_loopback_pair(&c, &s);
        if (tcp_profile_apply(s, &p, e2, sizeof e2) < 0)
            strcat(out, e2);
        strcat(out, "|");
        if (outside) {
            struct tcp_profile q;
            tcp_profile_defaults(&q);
            snprintf(q.congestion, sizeof q.congestion, "%s", outside);
            if (tcp_profile_apply(s, &q, e2, sizeof e2) < 0)
                strcat(out, e2);
        }
        if (write(pfd[1], out, strlen(out)) < 0)
            _exit(4);
        _exit(0);
    }
    char got[1000] = "";
    int status = testlib_child_report(pid, pfd[0], got, sizeof got);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    char want[1000];
    snprintf(want, sizeof want,
             "SO_SNDBUF %d: clamped to %ld by net.core.wmem_max=%ld (run as root for SO_SNDBUFFORCE, or raise the sysctl)|",
             (int)p.sndbuf, wmax, wmax);
    if (outside) {
        size_t k = strlen(want);
        snprintf(want + k, sizeof want - k,
                 "TCP_CONGESTION %s: not permitted: without CAP_NET_ADMIN only "
                 "net.ipv4.tcp_allowed_congestion_control (%s) may be used; run as root",
                 outside, allowed);
    }
    assert_string_equal(got, want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_table),
        cmocka_unit_test(test_group_absent_and_setters),
        cmocka_unit_test(test_format_and_json),
        cmocka_unit_test(test_mem_max),
        cmocka_unit_test(test_apply_loopback),
        cmocka_unit_test(test_apply_privileges),
        cmocka_unit_test(test_read),
        cmocka_unit_test(test_words),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
