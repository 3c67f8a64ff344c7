/* Unit tests for common/offload.c and common/offload_state.c on real devices.
 *
 * The test process moves into a private network namespace (unshare(CLONE_NEWNET)) and
 * creates veth/tun devices there: it never touches the machine's real interfaces, and
 * everything it creates dies with the process. Without root the tests are skipped with the
 * reason printed. `ethtool -k` cross-checks every kernel bit we read or set, and the
 * packet sizes on a veth prove that the toggle takes effect. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "offload.h"
#include "testlib.h"

/* --- helpers -------------------------------------------------------------------------- */

static char tmpdir[256];

static void make_tmpdir(void)
{
    if (testlib_mkdtemp(tmpdir, sizeof tmpdir, "/tmp/debit-test-offload.XXXXXX") < 0)
        fail_msg("mkdtemp: %s", strerror(errno));
}

/* --- real devices in a private network namespace --------------------------------------- */

/* NULL, or why the device tests are skipped. */
static const char *netns_setup(void)
{
    const char *why = testlib_private_netns();
    if (why)
        return why;
    /* From here on nothing can reach the host's interfaces. */
    if (testlib_sh("ip link set lo up && ip link add dbo0 type veth peer name dbo1 && ip link set dbo0 up && "
                   "ip link set dbo1 up") != 0)
        return "cannot create a veth pair in the private namespace";
    return NULL;
}

/* ethtool -k prints a legacy flag that stands for exactly one kernel bit under the
 * flag's long name instead of the bit's name. */
static const char *ethtool_alias(const char *bit)
{
    static const char *const map[][2] = {
        {"tx-generic-segmentation", "generic-segmentation-offload"},
        {"rx-gro", "generic-receive-offload"},
        {"rx-lro", "large-receive-offload"},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strcmp(bit, map[i][0]) == 0)
            return map[i][1];
    return bit;
}

/* Every bit we report equals ethtool's view. */
static void cross_check(const struct offload_state *st)
{
    unsigned checked = 0;
    for (int f = 0; f < OFFLOAD_NFEATURES; f++)
        for (unsigned b = 0; b < st->f[f].nbits; b++) {
            const struct offload_bit *bit = &st->f[f].bits[b];
            int fixed = -1;
            int v = testlib_ethtool_bit(st->ifname, bit->name, &fixed);
            if (v < 0)
                v = testlib_ethtool_bit(st->ifname, ethtool_alias(bit->name), &fixed);
            if (v != bit->active || fixed != bit->fixed)
                fail_msg("%s %s: we read active=%d fixed=%d, ethtool -k says %d fixed=%d", st->ifname, bit->name,
                         bit->active, bit->fixed, v, fixed);
            checked++;
        }
    assert_true(checked >= 10);
}

static void assert_all_bits(const struct offload_state *st, enum offload_feature f, int on)
{
    const struct offload_feature_state *fs = &st->f[f];
    assert_true(fs->nbits > 0);
    for (unsigned b = 0; b < fs->nbits; b++)
        if (fs->bits[b].active != on && !(on && fs->bits[b].fixed))
            fail_msg("%s: %s is %s, want %s", st->ifname, fs->bits[b].name, fs->bits[b].active ? "on" : "off",
                     on ? "on" : "off");
}

static void test_real_get(void **state)
{
    (void)state;
    struct offload_state st;
    char err[256], buf[64];
    enum offload_err e = offload_get("dbo0", &st, err, sizeof err);
    if (e)
        fail_msg("offload_get: %s", err);
    assert_string_equal(st.ifname, "dbo0");
    assert_int_equal(st.ifindex, (int)if_nametoindex("dbo0"));
    /* tso covers every tx-tcp*-segmentation bit ethtool lists, accecn included on 6.18 */
    FILE *p = popen("ethtool -k dbo0 | grep -cE '^\\s+tx-tcp.*-segmentation:'", "r");
    unsigned n = 0;
    assert_int_equal(fscanf(p, "%u", &n), 1);
    pclose(p);
    assert_int_equal(st.f[OFFLOAD_TSO].nbits, n);
    assert_true(n >= 4);
    assert_int_equal(st.f[OFFLOAD_GSO].nbits, 1);
    assert_string_equal(st.f[OFFLOAD_GSO].bits[0].name, "tx-generic-segmentation");
    assert_string_equal(st.f[OFFLOAD_GRO].bits[0].name, "rx-gro");
    assert_string_equal(st.f[OFFLOAD_LRO].bits[0].name, "rx-lro");
    assert_true(st.f[OFFLOAD_LRO].fixed); /* veth has no LRO */
    assert_true(st.f[OFFLOAD_TXCSUM].nbits >= 3);
    cross_check(&st);
    /* a fresh veth: tso and gso on */
    offload_format(&st, buf, sizeof buf);
    assert_int_equal(strncmp(buf, "tso=on gso=on gro=", 18), 0);
}

static void test_real_tso_gso_off_and_restore(void **state)
{
    (void)state;
    char err[256], buf[64], ifname[IF_NAMESIZE];
    struct offload_wish w;
    struct offload_state before, after, restored;
    assert_int_equal(offload_parse_spec("dbo0:tso=off,gso=off", ifname, &w, err, sizeof err), OFFLOAD_OK);
    enum offload_err e = offload_apply(ifname, &w, &before, &after, err, sizeof err);
    if (e)
        fail_msg("apply: %s", err);
    assert_true(before.f[OFFLOAD_TSO].on);
    assert_all_bits(&after, OFFLOAD_TSO, 0);
    assert_all_bits(&after, OFFLOAD_GSO, 0);
    offload_format(&after, buf, sizeof buf);
    assert_int_equal(strncmp(buf, "tso=off gso=off gro=", 20), 0);
    cross_check(&after);
    /* ethtool agrees on the legacy summary line, and on accecn in particular */
    assert_int_equal(testlib_ethtool_bit("dbo0", "tcp-segmentation-offload", NULL), 0);
    assert_int_equal(testlib_ethtool_bit("dbo0", "generic-segmentation-offload", NULL), 0);
    int accecn = testlib_ethtool_bit("dbo0", "tx-tcp-accecn-segmentation", NULL);
    assert_true(accecn == 0 || accecn == -1); /* -1: kernel older than 6.18 */
    /* the live state read afresh is the same */
    struct offload_state now;
    assert_int_equal(offload_get("dbo0", &now, err, sizeof err), OFFLOAD_OK);
    offload_format(&now, buf, sizeof buf);
    assert_int_equal(strncmp(buf, "tso=off gso=off", 15), 0);

    /* the peer is untouched */
    assert_int_equal(testlib_ethtool_bit("dbo1", "tcp-segmentation-offload", NULL), 1);

    e = offload_restore(&before, &restored, err, sizeof err);
    if (e)
        fail_msg("restore: %s", err);
    assert_all_bits(&restored, OFFLOAD_TSO, 1);
    assert_all_bits(&restored, OFFLOAD_GSO, 1);
    assert_int_equal(testlib_ethtool_bit("dbo0", "tcp-segmentation-offload", NULL), 1);
    cross_check(&restored);
}

static void test_real_gro_and_noop(void **state)
{
    (void)state;
    char err[256];
    struct offload_wish w = {{0}};
    struct offload_state before, after;
    assert_int_equal(offload_get("dbo0", &before, err, sizeof err), OFFLOAD_OK);
    int gro0 = before.f[OFFLOAD_GRO].on;
    w.want[OFFLOAD_GRO] = gro0 ? OFFLOAD_OFF : OFFLOAD_ON;
    enum offload_err e = offload_apply("dbo0", &w, &before, &after, err, sizeof err);
    if (e)
        fail_msg("apply gro: %s", err);
    assert_int_equal(after.f[OFFLOAD_GRO].on, !gro0);
    assert_int_equal(testlib_ethtool_bit("dbo0", "generic-receive-offload", NULL), !gro0);
    /* tso untouched */
    assert_int_equal(after.f[OFFLOAD_TSO].on, before.f[OFFLOAD_TSO].on);

    /* asking for the state it has is a no-op: works even without privilege */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setresuid(65534, 65534, 65534) < 0)
            _exit(3);
        struct offload_state b2, a2;
        char e2[256];
        _exit(offload_apply("dbo0", &w, &b2, &a2, e2, sizeof e2) == OFFLOAD_OK ? 0 : 1);
    }
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);

    assert_int_equal(offload_restore(&before, &after, err, sizeof err), OFFLOAD_OK);
    assert_int_equal(after.f[OFFLOAD_GRO].on, gro0);
    assert_int_equal(testlib_ethtool_bit("dbo0", "generic-receive-offload", NULL), gro0);
}

static void test_real_errors(void **state)
{
    (void)state;
    char err[256];
    struct offload_state st;
    struct offload_wish w = {{0}};
    w.want[OFFLOAD_TSO] = OFFLOAD_OFF;

    assert_int_equal(offload_get("nosuch0", &st, err, sizeof err), OFFLOAD_ERR_NO_DEVICE);
    assert_string_equal(err, "nosuch0: no such network interface in this network namespace");
    assert_int_equal(offload_apply("nosuch0", &w, NULL, NULL, err, sizeof err), OFFLOAD_ERR_NO_DEVICE);
    assert_int_equal(offload_get("", &st, err, sizeof err), OFFLOAD_ERR_ARG);
    assert_string_equal(err, "empty interface name");
    assert_int_equal(offload_get("averyveryverylongname", &st, err, sizeof err), OFFLOAD_ERR_ARG);
    assert_string_equal(err, "interface name 'averyveryverylongname' is longer than 15 characters");

    /* Without CAP_NET_ADMIN: reading works, changing fails with a clear message. */
    int pfd[2];
    pid_t pid = testlib_fork_pipe(pfd);
    if (pid == 0) {
        char e2[256] = "";
        int code = 0;
        if (setresuid(65534, 65534, 65534) < 0)
            _exit(3);
        struct offload_state s2;
        if (offload_get("dbo0", &s2, e2, sizeof e2) != OFFLOAD_OK)
            code = 4;
        else
            code = offload_apply("dbo0", &w, NULL, NULL, e2, sizeof e2);
        if (write(pfd[1], e2, strlen(e2)) < 0)
            code = 5;
        _exit(code);
    }
    char msg[256] = "";
    int status = testlib_child_report(pid, pfd[0], msg, sizeof msg);
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != OFFLOAD_ERR_PERM)
        fail_msg("unprivileged apply: exit %d, message '%s'", WEXITSTATUS(status), msg);
    assert_string_equal(msg, "dbo0: setting features (ETHTOOL_SFEATURES) needs CAP_NET_ADMIN in the "
                             "interface's network namespace (run as root)");
    /* and nothing changed */
    assert_int_equal(testlib_ethtool_bit("dbo0", "tcp-segmentation-offload", NULL), 1);
}

/* Devices that refuse. (1) sg off makes the kernel drop tso, so tso=on on a veth without
 * sg is refused. (2) tun's segmentation offloads follow TUNSETOFFLOAD from its owner, so
 * tso=on leaves them off ("off [requested on]" in ethtool -k). Either way the state
 * before the failed call is put back. */
static void test_real_refused_rolls_back(void **state)
{
    (void)state;
    char err[256];
    struct offload_state before, after, now;
    struct offload_wish w = {{0}};
    w.want[OFFLOAD_TSO] = OFFLOAD_ON;
    assert_int_equal(testlib_sh("ip link add dbs0 type veth peer name dbs1 && ethtool -K dbs0 sg off >/dev/null"), 0);
    assert_int_equal(offload_get("dbs0", &before, err, sizeof err), OFFLOAD_OK);
    enum offload_err e = offload_apply("dbs0", &w, &before, &after, err, sizeof err);
    assert_int_equal(e, OFFLOAD_ERR_REFUSED);
    assert_non_null(strstr(err, "dbs0: the device refused tso=on: tx-tcp"));
    assert_non_null(strstr(err, "stays off (TSO needs sg and tx checksumming on)"));
    assert_int_equal(offload_get("dbs0", &now, err, sizeof err), OFFLOAD_OK);
    for (unsigned b = 0; b < now.f[OFFLOAD_TSO].nbits; b++)
        assert_int_equal(now.f[OFFLOAD_TSO].bits[b].requested, before.f[OFFLOAD_TSO].bits[b].requested);
    testlib_sh("ip link del dbs0");

    if (testlib_sh("ip tuntap add dbt0 mode tun 2>/dev/null") != 0) {
        printf("# no tun device here: tun refusal not checked\n");
        return;
    }
    /* first turn tso off (accepted), then ask for it on (refused) */
    w.want[OFFLOAD_TSO] = OFFLOAD_OFF;
    e = offload_apply("dbt0", &w, &before, &after, err, sizeof err);
    if (e)
        fail_msg("tso=off on tun: %s", err);
    w.want[OFFLOAD_TSO] = OFFLOAD_ON;
    e = offload_apply("dbt0", &w, &before, &after, err, sizeof err);
    assert_int_equal(e, OFFLOAD_ERR_REFUSED);
    assert_non_null(strstr(err, "dbt0: the device refused tso=on: tx-tcp"));
    assert_int_equal(offload_get("dbt0", &now, err, sizeof err), OFFLOAD_OK);
    for (unsigned b = 0; b < now.f[OFFLOAD_TSO].nbits; b++)
        assert_int_equal(now.f[OFFLOAD_TSO].bits[b].requested, before.f[OFFLOAD_TSO].bits[b].requested);
    testlib_sh("ip link del dbt0");
}

static void test_real_crash_recovery(void **state)
{
    (void)state;
    make_tmpdir();
    char err[256], path[512];
    snprintf(path, sizeof path, "%s/recover/offload.state", tmpdir);
    struct offload_wish w = {{0}};
    w.want[OFFLOAD_TSO] = OFFLOAD_OFF;
    w.want[OFFLOAD_GSO] = OFFLOAD_OFF;

    /* A child plays the daemon: applies, saves, and stays alive until killed. */
    int pfd[2];
    pid_t pid = testlib_fork_pipe(pfd);
    if (pid == 0) {
        struct offload_state before;
        char e2[256];
        char ok = offload_apply("dbo0", &w, &before, NULL, e2, sizeof e2) == OFFLOAD_OK &&
                  offload_state_save(path, &before, e2, sizeof e2) == OFFLOAD_OK;
        if (write(pfd[1], &ok, 1) != 1)
            _exit(1);
        for (int i = 0; i < 600; i++) /* bounded: 60 s at most */
            usleep(100000);
        _exit(0);
    }
    char ok = 0;
    assert_int_equal(read(pfd[0], &ok, 1), 1);
    close(pfd[0]);
    if (!ok) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fail_msg("child could not apply/save");
    }
    assert_int_equal(testlib_ethtool_bit("dbo0", "tcp-segmentation-offload", NULL), 0);

    /* owner alive: hands off */
    enum offload_err e = offload_state_recover(path, NULL, err, sizeof err);
    assert_int_equal(e, OFFLOAD_ERR_STATE_OWNER);
    assert_non_null(strstr(err, "still running; not touching it"));
    assert_int_equal(testlib_ethtool_bit("dbo0", "tcp-segmentation-offload", NULL), 0);

    /* SIGKILL: nothing restored by the dead process... */
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    assert_int_equal(testlib_ethtool_bit("dbo0", "tcp-segmentation-offload", NULL), 0);
    /* ...the next start does it, and removes the file */
    struct offload_state restored;
    e = offload_state_recover(path, &restored, err, sizeof err);
    if (e)
        fail_msg("recover: %s", err);
    assert_all_bits(&restored, OFFLOAD_TSO, 1);
    assert_all_bits(&restored, OFFLOAD_GSO, 1);
    assert_int_equal(testlib_ethtool_bit("dbo0", "tcp-segmentation-offload", NULL), 1);
    assert_int_equal(testlib_ethtool_bit("dbo0", "generic-segmentation-offload", NULL), 1);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(offload_state_recover(path, NULL, err, sizeof err), OFFLOAD_ERR_NO_STATE);

    /* written in another netns: left alone */
    struct offload_state before;
    assert_int_equal(offload_get("dbo0", &before, err, sizeof err), OFFLOAD_OK);
    assert_int_equal(offload_state_save(path, &before, err, sizeof err), OFFLOAD_OK);
    assert_int_equal(testlib_sh("sed -i 's/^netns .*/netns 1/; s/^pid .*/pid 999999999/' '%s'", path), 0);
    assert_int_equal(offload_state_recover(path, NULL, err, sizeof err), OFFLOAD_ERR_STATE_STALE);
    assert_non_null(strstr(err, "saved in another network namespace"));
    assert_int_equal(access(path, F_OK), 0);

    /* the interface is gone: stale, removed */
    assert_int_equal(testlib_sh("ip link add dbg0 type veth peer name dbg1"), 0);
    assert_int_equal(offload_get("dbg0", &before, err, sizeof err), OFFLOAD_OK);
    assert_int_equal(offload_state_save(path, &before, err, sizeof err), OFFLOAD_OK);
    assert_int_equal(testlib_sh("ip link del dbg0"), 0);
    assert_int_equal(offload_state_recover(path, NULL, err, sizeof err), OFFLOAD_ERR_STATE_STALE);
    assert_non_null(strstr(err, "interface dbg0 no longer exists; stale state file removed"));
    assert_int_equal(access(path, F_OK), -1);
}

/* The bits are not the point: the packets are. Across a veth pair whose far end lives in
 * a second private namespace (a child process), the sender's veth carries ~64 KB
 * GSO/TSO super-packets by default and MTU-sized packets after tso=off,gso=off. */
#define PKT_BYTES (8u << 20)

/* tx counters of DEV from /proc/net/dev, which (unlike /sys/class/net, a view of the
 * namespace that mounted /sys) shows the reading process's own namespace. */
static unsigned long long read_stat(const char *dev, const char *name)
{
    char line[512];
    unsigned long long v[16] = {0};
    size_t n = strlen(dev);
    FILE *f = fopen("/proc/net/dev", "r");
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        char *p = line;
        while (*p == ' ')
            p++;
        if (strncmp(p, dev, n) == 0 && p[n] == ':')
            sscanf(p + n + 1, "%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
                   &v[5], &v[6], &v[7], &v[8], &v[9]);
    }
    fclose(f);
    return strcmp(name, "tx_bytes") == 0 ? v[8] : v[9];
}

/* Average bytes per packet on dbp0 while sending PKT_BYTES to the child's listener. */
static double send_and_measure(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    struct timeval tv = {.tv_sec = 10};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(5001)};
    inet_pton(AF_INET, "198.18.0.2", &a.sin_addr);
    int connected = -1;
    for (int i = 0; i < 50 && connected < 0; i++) { /* the child may still be binding */
        connected = connect(fd, (struct sockaddr *)&a, sizeof a);
        if (connected < 0) {
            close(fd);
            usleep(20000);
            fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        }
    }
    if (connected < 0)
        fail_msg("connect to 198.18.0.2:5001: %s", strerror(errno));
    static char buf[1 << 16];
    unsigned long long p0 = read_stat("dbp0", "tx_packets"), b0 = read_stat("dbp0", "tx_bytes");
    size_t sent = 0;
    while (sent < PKT_BYTES) {
        ssize_t w = send(fd, buf, sizeof buf, MSG_NOSIGNAL);
        if (w <= 0)
            fail_msg("send: %s", strerror(errno));
        sent += (size_t)w;
    }
    shutdown(fd, SHUT_WR);
    char c;
    while (read(fd, &c, 1) > 0) /* the child closes after reading everything */
        ;
    close(fd);
    unsigned long long dp = read_stat("dbp0", "tx_packets") - p0, db = read_stat("dbp0", "tx_bytes") - b0;
    if (dp == 0 || db < PKT_BYTES)
        fail_msg("dbp0 sent %llu packets, %llu bytes for %u bytes of data", dp, db, PKT_BYTES);
    return (double)db / (double)dp;
}

static void test_real_packet_sizes(void **state)
{
    (void)state;
    int ready[2], go[2];
    assert_int_equal(pipe(ready), 0);
    assert_int_equal(pipe(go), 0);
    assert_int_equal(testlib_sh("ip link add dbp0 type veth peer name dbp1"), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) { /* the receiver, in a namespace of its own */
        alarm(60);
        char c = 1;
        close(ready[0]);
        close(go[1]);
        if (unshare(CLONE_NEWNET) < 0 || write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
            _exit(2);
        if (testlib_sh("ip link set lo up && ip addr add 198.18.0.2/24 dev dbp1 && ip link set dbp1 up") != 0)
            _exit(3);
        int l = socket(AF_INET, SOCK_STREAM, 0), one = 1;
        setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(5001)};
        inet_pton(AF_INET, "198.18.0.2", &a.sin_addr);
        if (bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 2) < 0)
            _exit(4);
        static char buf[1 << 16];
        for (int conn = 0; conn < 2; conn++) {
            int fd = accept(l, NULL, NULL);
            if (fd < 0)
                _exit(5);
            while (read(fd, buf, sizeof buf) > 0)
                ;
            close(fd);
        }
        _exit(0);
    }
    close(ready[1]);
    close(go[0]);
    char c;
    assert_int_equal(read(ready[0], &c, 1), 1);
    assert_int_equal(testlib_sh("ip link set dbp1 netns %d && ip addr add 198.18.0.1/24 dev dbp0 && ip link set dbp0 up",
                                (int)pid), 0);
    assert_int_equal(write(go[1], &c, 1), 1);

    char err[256];
    struct offload_state st, before;
    assert_int_equal(offload_get("dbp0", &st, err, sizeof err), OFFLOAD_OK);
    assert_true(st.f[OFFLOAD_TSO].on && st.f[OFFLOAD_GSO].on);
    double on = send_and_measure();

    struct offload_wish w = {{0}};
    w.want[OFFLOAD_TSO] = OFFLOAD_OFF;
    w.want[OFFLOAD_GSO] = OFFLOAD_OFF;
    if (offload_apply("dbp0", &w, &before, NULL, err, sizeof err))
        fail_msg("apply: %s", err);
    double off = send_and_measure();
    int sig = 0, status;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status))
        sig = WTERMSIG(status);
    printf("# dbp0 bytes/packet: tso/gso on %.0f, off %.0f\n", on, off);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0 && sig == 0);
    if (on < 8000.0)
        fail_msg("with tso/gso on, %.0f bytes/packet: expected super-packets (> 8000)", on);
    if (off > 1600.0)
        fail_msg("with tso/gso off, %.0f bytes/packet: expected MTU-sized packets (<= 1600)", off);
    close(ready[0]);
    close(go[1]);
    /* the child's namespace died with it, and the veth pair with it */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_get),
        cmocka_unit_test(test_real_tso_gso_off_and_restore),
        cmocka_unit_test(test_real_gro_and_noop),
        cmocka_unit_test(test_real_errors),
        cmocka_unit_test(test_real_refused_rolls_back),
        cmocka_unit_test(test_real_crash_recovery),
        cmocka_unit_test(test_real_packet_sizes),
    };
    const char *skip_reason = netns_setup();
    return testlib_run_group("offload_dev", tests, sizeof tests / sizeof tests[0], NULL, skip_reason, tmpdir);
}
