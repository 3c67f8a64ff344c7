/* Unit tests for client/delay.c (+ delay_netem.c, delay_nl.c). The pure parts are
 * table-driven; the system parts run as root inside a private network namespace that
 * this test process unshares at start (so it vanishes with the process, whatever
 * happens), with a veth pair as the delayed device. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/pkt_sched.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "delay.h"
#include "delay_nl.h"

static int in_netns; /* 1 when running as root in our own netns with dlt0/dlt1 */
static char delayline[4096];

/* Run a shell command, return its stdout (static buffer) and exit status. */
static int sh(const char *cmd, char *out, size_t outlen)
{
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t used = 0;
    if (out) {
        size_t n;
        while (used + 1 < outlen && (n = fread(out + used, 1, outlen - 1 - used, p)) > 0) used += n;
        out[used] = '\0';
    } else {
        char sink[256];
        while (fread(sink, 1, sizeof sink, p) > 0) {}
    }
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int count_rules(void)
{
    char out[64];
    sh("iptables -w -t mangle -S | grep -c debit-delayline:q7301", out, sizeof out);
    char *end;
    long n = strtol(out, &end, 10);
    return end == out ? -1 : (int)n;
}

static void test_names(void **state)
{
    (void)state;
    static const struct { const char *name; int ok; enum delay_mechanism m; } mrows[] = {
        { "auto", 1, DELAY_MECH_AUTO }, { "netem", 1, DELAY_MECH_NETEM },
        { "delayline", 1, DELAY_MECH_DELAYLINE }, { "NETEM", 0, 0 }, { "", 0, 0 }, { NULL, 0, 0 },
    };
    for (size_t i = 0; i < sizeof mrows / sizeof *mrows; i++) {
        enum delay_mechanism m = 99;
        int rc = delay_mechanism_parse(mrows[i].name, &m);
        assert_int_equal(rc, mrows[i].ok ? 0 : -1);
        if (mrows[i].ok) {
            assert_int_equal(m, mrows[i].m);
            assert_string_equal(delay_mechanism_name(m), mrows[i].name);
        }
    }
    assert_string_equal(delay_mechanism_name((enum delay_mechanism)42), "?");
    static const struct { const char *name; int ok; enum delay_dir d; } drows[] = {
        { "both", 1, DELAY_DIR_BOTH }, { "out", 1, DELAY_DIR_OUT }, { "in", 1, DELAY_DIR_IN },
        { "egress", 0, 0 },
    };
    for (size_t i = 0; i < sizeof drows / sizeof *drows; i++) {
        enum delay_dir d = 99;
        assert_int_equal(delay_dir_parse(drows[i].name, &d), drows[i].ok ? 0 : -1);
        if (drows[i].ok) assert_string_equal(delay_dir_name(d), drows[i].name);
    }
}

static void test_new_validation(void **state)
{
    (void)state;
    static const struct { const char *dev; uint64_t us; const char *err; } rows[] = {
        { "eth0", 10000, NULL },
        { "eth0", 1, NULL },
        { "eth0", 10000000, NULL },
        { "eth0", 0, NULL },  /* a loss-only path: delay_apply() wants a loss then */
        { "eth0", 10000001, "between 1 us and 10 s" },
        { "", 10000, "not a valid interface name" },
        { "averyveryverylongname", 10000, "not a valid interface name" },
        { "a/b", 10000, "not a valid interface name" },
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        char err[256] = "";
        struct delay *d = delay_new(rows[i].dev, rows[i].us, err, sizeof err);
        if (rows[i].err) {
            assert_null(d);
            if (!strstr(err, rows[i].err)) fail_msg("row %zu: error '%s'", i, err);
        } else {
            assert_non_null(d);
            assert_int_equal(delay_mechanism_used(d), DELAY_MECH_AUTO);
            assert_int_equal(delay_output_fd(d), -1);
            assert_int_equal(delay_remove(d, err, sizeof err), 0); /* before apply: no-op */
            delay_free(d);
        }
    }
    delay_free(NULL);
}

static void test_setters_and_describe(void **state)
{
    (void)state;
    char err[256], buf[256];
    struct delay *d = delay_new("eth0", 10000, err, sizeof err);
    assert_non_null(d);
    delay_describe(d, buf, sizeof buf);
    assert_string_equal(buf, "+10 ms round trip on eth0 (split between both directions), not applied");
    assert_int_equal(delay_set_direction(d, DELAY_DIR_IN, err, sizeof err), 0);
    assert_int_equal(delay_set_direction(d, (enum delay_dir)7, err, sizeof err), -1);
    assert_int_equal(delay_set_rate_hint(d, 10, err, sizeof err), -1);
    assert_int_equal(delay_set_rate_hint(d, 1000000000, err, sizeof err), 0);
    assert_int_equal(delay_set_queue_num(d, 70000, err, sizeof err), -1);
    assert_int_equal(delay_set_mechanism(d, (enum delay_mechanism)9, err, sizeof err), -1);
    delay_free(d);
    d = delay_new("eth1", 1500, err, sizeof err);
    delay_set_direction(d, DELAY_DIR_OUT, err, sizeof err);
    delay_describe(d, buf, sizeof buf);
    assert_string_equal(buf, "+1.500 ms round trip on eth1 (on outgoing packets), not applied");
    delay_free(d);
}

/* Loss: validated, frozen while applied, described per direction; a delay of 0 needs one. */
static void test_loss_setter_and_describe(void **state)
{
    (void)state;
    static const struct { uint64_t rtt; enum delay_dir dir; uint32_t ppm; const char *want; } rows[] = {
        { 10000, DELAY_DIR_BOTH, 0, "+10 ms round trip on eth0 (split between both directions), not applied" },
        { 10000, DELAY_DIR_BOTH, 10000,
          "+10 ms round trip on eth0 (split between both directions), 1% loss per direction, not applied" },
        { 30000, DELAY_DIR_IN, 5000, "+30 ms round trip on eth0 (on incoming packets), 0.5% loss incoming, not applied" },
        { 30000, DELAY_DIR_OUT, 5000, "+30 ms round trip on eth0 (on outgoing packets), 0.5% loss outgoing, not applied" },
        { 0, DELAY_DIR_BOTH, 50000, "5% loss on eth0 (each direction), not applied" },
        { 0, DELAY_DIR_IN, 1000000, "100% loss on eth0 (incoming packets), not applied" },
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        char err[256] = "", buf[256];
        struct delay *d = delay_new("eth0", rows[i].rtt, err, sizeof err);
        assert_non_null(d);
        assert_int_equal(delay_set_direction(d, rows[i].dir, err, sizeof err), 0);
        assert_int_equal(delay_set_loss(d, rows[i].ppm, err, sizeof err), 0);
        assert_int_equal(delay_loss(d), rows[i].ppm);
        delay_describe(d, buf, sizeof buf);
        if (strcmp(buf, rows[i].want)) fail_msg("row %zu: '%s'", i, buf);
        delay_free(d);
    }
    char err[256] = "";
    struct delay *d = delay_new("eth0", 0, err, sizeof err);
    assert_int_equal(delay_set_loss(d, 1000001, err, sizeof err), -1);
    assert_non_null(strstr(err, "above 100%"));
    assert_int_equal(delay_loss(d), 0);
    /* Neither delay nor loss: nothing to apply, refused before touching anything. */
    assert_int_equal(delay_apply(d, err, sizeof err), -1);
    assert_non_null(strstr(err, "no delay and no loss"));
    uint64_t seed = 0;
    assert_int_equal(delay_seed(d, &seed), 0); /* none chosen yet */
    delay_set_seed(d, 42);
    assert_int_equal(delay_seed(d, &seed), 1);
    assert_int_equal(seed, 42);
    delay_free(d);
}

static void test_split(void **state)
{
    (void)state;
    static const struct { uint64_t rtt; enum delay_dir dir; uint64_t out, in; } rows[] = {
        { 10000, DELAY_DIR_BOTH, 5000, 5000 },
        { 10001, DELAY_DIR_BOTH, 5000, 5001 },  /* the odd microsecond goes in */
        { 1, DELAY_DIR_BOTH, 0, 1 },
        { 30000, DELAY_DIR_OUT, 30000, 0 },
        { 30000, DELAY_DIR_IN, 0, 30000 },
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        char err[256];
        struct delay *d = delay_new("eth0", rows[i].rtt, err, sizeof err);
        assert_non_null(d);
        assert_int_equal(delay_set_direction(d, rows[i].dir, err, sizeof err), 0);
        uint64_t out = 99, in = 99;
        delay_split(d, &out, &in);
        if (out != rows[i].out || in != rows[i].in)
            fail_msg("row %zu: out %llu in %llu", i, (unsigned long long)out, (unsigned long long)in);
        delay_free(d);
    }
}

static void test_ipv6_and_path_setters(void **state)
{
    (void)state;
    char err[256] = "";
    struct delay *d = delay_new("eth0", 1000, err, sizeof err);
    assert_int_equal(delay_set_ipv6(d, 0, err, sizeof err), 0);
    assert_int_equal(delay_set_ipv6(d, 1, err, sizeof err), 0);
    assert_int_equal(delay_set_delayline_path(d, "", err, sizeof err), -1);
    assert_non_null(strstr(err, "empty or too long"));
    assert_int_equal(delay_set_delayline_path(d, "/usr/sbin/debit-delayline", err, sizeof err), 0);
    delay_free(d);
}

static void test_ticks(void **state)
{
    (void)state;
    /* tc: 1 ms = 15625 ticks with /proc/net/psched "3e8 40 f4240 ..." */
    uint32_t t = delay_nl_us_to_ticks(1000);
    assert_true(t >= 1000); /* at least 1 tick per us on any clock */
    char psched[128] = "";
    FILE *f = fopen("/proc/net/psched", "r");
    if (f) {
        if (!fgets(psched, sizeof psched, f)) psched[0] = '\0';
        fclose(f);
    }
    if (!strncmp(psched, "000003e8 00000040 000f4240", 26)) assert_int_equal(t, 15625);
}

/* ---- as root, in our own netns ---- */

static void need_netns(void)
{
    if (!in_netns) skip();
}

static void test_probe_matches_tc(void **state)
{
    (void)state;
    need_netns();
    char err[256] = "";
    int have = delay_netem_available(err, sizeof err);
    assert_true(have == 0 || have == 1);
    int tc = sh("tc qdisc add dev lo root netem delay 1ms 2>&1", NULL, 0);
    sh("tc qdisc del dev lo root 2>/dev/null", NULL, 0);
    assert_int_equal(have, tc == 0);
    /* cached, same answer */
    assert_int_equal(delay_netem_available(err, sizeof err), have);
}

static void test_delayline_apply_remove(void **state)
{
    (void)state;
    need_netns();
    char err[512] = "", buf[256];
    struct delay *d = delay_new("dlt0", 20000, err, sizeof err);
    assert_non_null(d);
    assert_int_equal(delay_set_mechanism(d, DELAY_MECH_DELAYLINE, err, sizeof err), 0);
    assert_int_equal(delay_set_delayline_path(d, delayline, err, sizeof err), 0);
    if (delay_apply(d, err, sizeof err) != 0) fail_msg("apply: %s", err);
    assert_int_equal(delay_mechanism_used(d), DELAY_MECH_DELAYLINE);
    assert_true(delay_output_fd(d) >= 0);
    assert_int_equal(delay_set_queue_num(d, 5, err, sizeof err), -1); /* frozen while applied */
    assert_int_equal(delay_apply(d, err, sizeof err), -1);
    delay_describe(d, buf, sizeof buf);
    assert_string_equal(buf, "+20 ms round trip on dlt0 (split between both directions) via delayline");
    assert_int_equal(count_rules(), 2); /* PREROUTING -i and POSTROUTING -o */
    char out[512];
    sh("iptables -w -t mangle -S", out, sizeof out);
    assert_non_null(strstr(out, "-A PREROUTING -i dlt0"));
    assert_non_null(strstr(out, "-A POSTROUTING -o dlt0"));
    assert_non_null(strstr(out, "--queue-bypass"));
    assert_int_equal(sh("pgrep -x debit-delayline >/dev/null", NULL, 0), 0);
    assert_int_equal(delay_remove(d, err, sizeof err), 0);
    assert_int_equal(delay_mechanism_used(d), DELAY_MECH_AUTO); /* nothing in force */
    assert_int_equal(count_rules(), 0);
    /* Its stdout after the ready line: the stats line it prints at exit, then EOF. */
    char said[1024] = "";
    size_t got = 0;
    ssize_t n;
    while (got + 1 < sizeof said && (n = read(delay_output_fd(d), said + got, sizeof said - 1 - got)) > 0) got += (size_t)n;
    said[got] = '\0';
    if (!strstr(said, "debit-delayline: stats packets=")) fail_msg("delay line said: '%s'", said);
    assert_int_equal(delay_remove(d, err, sizeof err), 0); /* idempotent */
    delay_free(d);
}

/* A loss-only delay line: applied with delay 0, the seed it drew is known, the
 * description says loss, and its stats line counts drops. */
static void test_delayline_loss_only(void **state)
{
    (void)state;
    need_netns();
    char err[512] = "", buf[256];
    struct delay *d = delay_new("dlt0", 0, err, sizeof err);
    assert_non_null(d);
    delay_set_mechanism(d, DELAY_MECH_DELAYLINE, err, sizeof err);
    delay_set_delayline_path(d, delayline, err, sizeof err);
    assert_int_equal(delay_set_loss(d, 20000, err, sizeof err), 0);
    if (delay_apply(d, err, sizeof err) != 0) fail_msg("apply: %s", err);
    assert_int_equal(delay_set_loss(d, 0, err, sizeof err), -1); /* frozen while applied */
    uint64_t seed;
    assert_int_equal(delay_seed(d, &seed), 1); /* read from its ready line */
    delay_describe(d, buf, sizeof buf);
    assert_string_equal(buf, "2% loss on dlt0 (each direction) via delayline");
    assert_int_equal(count_rules(), 2);
    assert_int_equal(delay_remove(d, err, sizeof err), 0);
    char said[1024] = "";
    size_t got = 0;
    ssize_t n;
    while (got + 1 < sizeof said && (n = read(delay_output_fd(d), said + got, sizeof said - 1 - got)) > 0) got += (size_t)n;
    said[got] = '\0';
    char want[64];
    snprintf(want, sizeof want, "loss=2%% seed=%llu", (unsigned long long)seed);
    if (!strstr(said, " dropped=") || !strstr(said, want)) fail_msg("delay line said: '%s'", said);
    delay_free(d);
}

/* delay_set_ipv6(0) reaches the delay line: IPv4 rules, none in ip6tables. */
static void test_delayline_no_ipv6(void **state)
{
    (void)state;
    need_netns();
    char err[512] = "", out[64];
    struct delay *d = delay_new("dlt0", 2000, err, sizeof err);
    delay_set_mechanism(d, DELAY_MECH_DELAYLINE, err, sizeof err);
    delay_set_delayline_path(d, delayline, err, sizeof err);
    assert_int_equal(delay_set_ipv6(d, 0, err, sizeof err), 0);
    if (delay_apply(d, err, sizeof err) != 0) fail_msg("apply: %s", err);
    assert_int_equal(delay_set_ipv6(d, 1, err, sizeof err), -1); /* frozen while applied */
    assert_int_equal(count_rules(), 2);
    sh("ip6tables -w -t mangle -S 2>/dev/null | grep -c debit-delayline:q7301", out, sizeof out);
    assert_int_equal(strtol(out, NULL, 10), 0);
    assert_int_equal(delay_remove(d, err, sizeof err), 0);
    assert_int_equal(count_rules(), 0);
    delay_free(d);
}

static void test_delayline_bad_device(void **state)
{
    (void)state;
    need_netns();
    char err[512] = "";
    struct delay *d = delay_new("nosuchdev0", 10000, err, sizeof err);
    assert_non_null(d);
    delay_set_mechanism(d, DELAY_MECH_DELAYLINE, err, sizeof err);
    delay_set_delayline_path(d, delayline, err, sizeof err);
    assert_int_equal(delay_apply(d, err, sizeof err), -1);
    assert_non_null(strstr(err, "nosuchdev0: no such network interface"));
    delay_set_delayline_path(d, "/nonexistent/debit-delayline", err, sizeof err);
    delay_free(d);
    d = delay_new("dlt0", 10000, err, sizeof err);
    delay_set_mechanism(d, DELAY_MECH_DELAYLINE, err, sizeof err);
    delay_set_delayline_path(d, "/nonexistent/debit-delayline", err, sizeof err);
    assert_int_equal(delay_apply(d, err, sizeof err), -1);
    assert_non_null(strstr(err, "not executable"));
    delay_free(d);
    assert_int_equal(count_rules(), 0);
}

static struct delay *sig_delay;
static volatile int sig_rc = 99;
static void on_usr1(int sig)
{
    (void)sig;
    sig_rc = delay_remove(sig_delay, NULL, 0);
}

static void test_remove_from_signal_handler(void **state)
{
    (void)state;
    need_netns();
    char err[512] = "";
    sig_delay = delay_new("dlt0", 10000, err, sizeof err);
    delay_set_mechanism(sig_delay, DELAY_MECH_DELAYLINE, err, sizeof err);
    delay_set_delayline_path(sig_delay, delayline, err, sizeof err);
    if (delay_apply(sig_delay, err, sizeof err) != 0) fail_msg("apply: %s", err);
    assert_int_equal(count_rules(), 2);
    signal(SIGUSR1, on_usr1);
    raise(SIGUSR1);
    signal(SIGUSR1, SIG_DFL);
    assert_int_equal(sig_rc, 0);
    assert_int_equal(delay_mechanism_used(sig_delay), DELAY_MECH_AUTO);
    assert_int_equal(count_rules(), 0);
    delay_free(sig_delay);
}

static void test_netem_forced(void **state)
{
    (void)state;
    need_netns();
    char err[512] = "", out[1024];
    int have = delay_netem_available(err, sizeof err);
    struct delay *d = delay_new("dlt0", 10000, err, sizeof err);
    delay_set_mechanism(d, DELAY_MECH_NETEM, err, sizeof err);
    int rc = delay_apply(d, err, sizeof err);
    if (!have) {
        /* No fallback when netem is forced, and the partial work (IFB) is undone. */
        assert_int_equal(rc, -1);
        /* The IFB, the ingress qdisc and the u32 + mirred redirect came first and worked
         * (else the error would name them); only netem on the IFB failed. */
        if (!strstr(err, "netem on dbifb") || !strstr(err, "no sch_netem")) fail_msg("error: %s", err);
    } else {
        if (rc != 0) fail_msg("apply: %s", err);
        sh("tc qdisc show dev dlt0", out, sizeof out);
        assert_non_null(strstr(out, "netem"));
        assert_non_null(strstr(out, "ingress"));
        assert_int_equal(delay_remove(d, err, sizeof err), 0);
    }
    sh("ip -o link show", out, sizeof out);
    assert_null(strstr(out, "dbifb"));
    sh("tc qdisc show dev dlt0", out, sizeof out);
    assert_null(strstr(out, "netem"));
    assert_null(strstr(out, "ingress"));
    delay_free(d);
}

static void test_classful_root_refused(void **state)
{
    (void)state;
    need_netns();
    char err[512] = "", out[1024];
    assert_int_equal(sh("tc qdisc add dev dlt1 root handle 1: htb default 10 && "
                        "tc class add dev dlt1 parent 1: classid 1:10 htb rate 1gbit quantum 60000", NULL, 0), 0);
    struct delay *d = delay_new("dlt1", 10000, err, sizeof err);
    delay_set_mechanism(d, DELAY_MECH_NETEM, err, sizeof err);
    delay_set_direction(d, DELAY_DIR_OUT, err, sizeof err);
    assert_int_equal(delay_apply(d, err, sizeof err), -1);
    if (!strstr(err, "classful root qdisc (htb, 1 classes)")) fail_msg("error: %s", err);
    sh("tc qdisc show dev dlt1", out, sizeof out);
    assert_non_null(strstr(out, "qdisc htb 1: root"));
    sh("tc qdisc del dev dlt1 root", NULL, 0);
    delay_free(d);
}

static void test_root_qdisc_saved_and_restored(void **state)
{
    (void)state;
    need_netns();
    char out[1024], before[1024];
    int idx = (int)if_nametoindex("dlt1");
    struct delay_nl_qdiscs q;
    struct delay_nlmsg restore;
    /* The kernel default (noqueue on veth, handle 0): nothing to save. */
    assert_int_equal(delay_nl_inspect(idx, &q, &restore), 0);
    assert_int_equal(q.root_custom, 0);
    assert_int_equal(restore.len, 0);
    /* A configured tbf: saved as a replayable request, options included. */
    assert_int_equal(sh("tc qdisc add dev dlt1 root handle 5: tbf rate 1gbit burst 256kb latency 20ms", NULL, 0), 0);
    sh("tc qdisc show dev dlt1 | grep tbf", before, sizeof before);
    assert_int_equal(delay_nl_inspect(idx, &q, &restore), 0);
    assert_int_equal(q.root_custom, 1);
    assert_string_equal(q.root_kind, "tbf");
    assert_int_equal(q.root_handle, TC_H_MAKE(5u << 16, 0));
    assert_true(restore.len > 0);
    assert_int_equal(sh("tc qdisc replace dev dlt1 root handle 7: pfifo limit 10", NULL, 0), 0);
    assert_int_equal(delay_nl_exec(&restore), 0);
    sh("tc qdisc show dev dlt1 | grep tbf", out, sizeof out);
    assert_string_equal(out, before);
    /* Deleting what is not there is reported, not fatal. */
    struct delay_nlmsg del;
    delay_nl_build_qdisc_del(&del, idx, TC_H_INGRESS, TC_H_MAKE(0xffffu << 16, 0));
    assert_true(delay_nl_exec(&del) < 0);
    sh("tc qdisc del dev dlt1 root", NULL, 0);
}

static int setup_netns(void **state)
{
    (void)state;
    const char *b = getenv("DEBIT_BUILD");
    snprintf(delayline, sizeof delayline, "%s/debit-delayline", b ? b : "build");
    if (geteuid() != 0 || access(delayline, X_OK) != 0) return 0;
    if (unshare(CLONE_NEWNET) < 0) return 0;
    if (sh("ip link set lo up && ip link add dlt0 type veth peer name dlt1 && "
           "ip link set dlt0 up && ip link set dlt1 up", NULL, 0) != 0) return 0;
    in_netns = 1;
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_new_validation),
        cmocka_unit_test(test_setters_and_describe),
        cmocka_unit_test(test_loss_setter_and_describe),
        cmocka_unit_test(test_split),
        cmocka_unit_test(test_ipv6_and_path_setters),
        cmocka_unit_test(test_ticks),
        cmocka_unit_test(test_probe_matches_tc),
        cmocka_unit_test(test_delayline_apply_remove),
        cmocka_unit_test(test_delayline_loss_only),
        cmocka_unit_test(test_delayline_no_ipv6),
        cmocka_unit_test(test_delayline_bad_device),
        cmocka_unit_test(test_remove_from_signal_handler),
        cmocka_unit_test(test_netem_forced),
        cmocka_unit_test(test_classful_root_refused),
        cmocka_unit_test(test_root_qdisc_saved_and_restored),
    };
    return cmocka_run_group_tests(tests, setup_netns, NULL);
}
