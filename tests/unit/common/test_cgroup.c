/* Unit tests for common/cgroup.c on fake /proc and /sys trees in a scratch directory (the
 * ROOT argument): v1 (this machine's layout and the combined cpu,cpuacct one), v2, hybrid
 * (v1 holding cpu, or not), a v2 root cgroup, a cgroup namespace's mount root, no limit
 * ("-1", "max"), no cpu controller, and garbage files with the messages they give; cpu.stat
 * of both versions; the X-Debit-Cpu text. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array.h"
#include "cgroup.h"
#include "testlib.h"

static char dir[256];

static int setup(void **state)
{
    (void)state;
    return testlib_mkdtemp(dir, sizeof dir, "/tmp/debit-test-cgroup.XXXXXX");
}

static int teardown(void **state)
{
    (void)state;
    testlib_rm_rf(dir);
    return 0;
}

static void put(const char *root, const char *rel, const char *text)
{
    assert_int_equal(testlib_put_file(root, rel, text), 0);
}

#define MI_V1_CPU "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
#define MI_V1_CPUACCT "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
#define MI_V1_CPUSET "34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
#define MI_V1_MEM "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
#define MI_TMPFS "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
#define MI_UNIFIED "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
#define MI_V2 "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"

struct file {
    const char *rel, *text;
};

struct find_case {
    const char *name;
    struct file files[8];
    int found;           /* cgroup_cpu_find's result */
    const char *err;     /* its message (found -1) */
    int version;
    const char *path;    /* the cgroup */
    const char *dir;     /* the cpu files' folder, under the root */
    int budget;          /* cgroup_cpu_budget's result (found 1) */
    const char *budget_err;
    int limited;
    uint64_t quota_us, period_us;
    const char *header;  /* cgroup_format */
};

static const struct find_case finds[] = {
    {"v1 as on this machine, 5% quota",
     {{"proc/self/cgroup", "4:memory:/x\n2:cpuacct:/\n1:cpu:/debit/x\n0::/\n"},
      {"proc/self/mountinfo", MI_TMPFS MI_V1_CPU MI_V1_CPUACCT MI_V1_MEM MI_UNIFIED},
      {"sys/fs/cgroup/cpu/debit/x/cpu.cfs_quota_us", "5000\n"},
      {"sys/fs/cgroup/cpu/debit/x/cpu.cfs_period_us", "100000\n"}},
     1, NULL, 1, "/debit/x", "/sys/fs/cgroup/cpu/debit/x", 0, NULL, 1, 5000, 100000,
     "quota=5%; period=100ms; cgroup=v1:/debit/x"},
    {"v1 cpu,cpuacct combined, no limit (-1)",
     {{"proc/self/cgroup", "3:cpu,cpuacct:/system.slice/debitd.service\n"},
      {"proc/self/mountinfo", "25 24 0:22 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"},
      {"sys/fs/cgroup/cpu,cpuacct/system.slice/debitd.service/cpu.cfs_quota_us", "-1\n"},
      {"sys/fs/cgroup/cpu,cpuacct/system.slice/debitd.service/cpu.cfs_period_us", "100000\n"}},
     1, NULL, 1, "/system.slice/debitd.service", "/sys/fs/cgroup/cpu,cpuacct/system.slice/debitd.service", 0,
     NULL, 0, 0, 100000, "none"},
    {"v1 root cgroup: the files at the mount point",
     {{"proc/self/cgroup", "1:cpu:/\n"},
      {"proc/self/mountinfo", MI_V1_CPU},
      {"sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1"},
      {"sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000"}},
     1, NULL, 1, "/", "/sys/fs/cgroup/cpu", 0, NULL, 0, 0, 100000, "none"},
    {"v1 without cpu: cpuacct and cpuset are other controllers",
     {{"proc/self/cgroup", "2:cpuacct:/\n3:cpuset:/\n"}, {"proc/self/mountinfo", MI_V1_CPUACCT MI_V1_CPUSET}},
     0, NULL, 0, NULL, NULL, 0, NULL, 0, 0, 0, NULL},
    {"v1 cpu listed but not mounted",
     {{"proc/self/cgroup", "1:cpu:/a\n"}, {"proc/self/mountinfo", MI_TMPFS MI_V1_MEM}},
     0, NULL, 0, NULL, NULL, 0, NULL, 0, 0, 0, NULL},
    {"v2, no limit (max)",
     {{"proc/self/cgroup", "0::/system.slice/debitd.service\n"},
      {"proc/self/mountinfo", MI_V2},
      {"sys/fs/cgroup/system.slice/debitd.service/cgroup.controllers", "cpuset cpu io memory pids\n"},
      {"sys/fs/cgroup/system.slice/debitd.service/cpu.max", "max 100000\n"}},
     1, NULL, 2, "/system.slice/debitd.service", "/sys/fs/cgroup/system.slice/debitd.service", 0, NULL, 0, 0,
     100000, "none"},
    {"v2, 1.5% quota",
     {{"proc/self/cgroup", "0::/lab/s1\n"},
      {"proc/self/mountinfo", MI_V2},
      {"sys/fs/cgroup/lab/s1/cgroup.controllers", "cpu memory\n"},
      {"sys/fs/cgroup/lab/s1/cpu.max", "1500 100000\n"}},
     1, NULL, 2, "/lab/s1", "/sys/fs/cgroup/lab/s1", 0, NULL, 1, 1500, 100000,
     "quota=1.5%; period=100ms; cgroup=v2:/lab/s1"},
    {"v2 root cgroup: no cpu.max, no limit",
     {{"proc/self/cgroup", "0::/\n"}, {"proc/self/mountinfo", MI_V2},
      {"sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory hugetlb pids rdma misc\n"}},
     1, NULL, 2, "/", "/sys/fs/cgroup", 0, NULL, 0, 0, 0, "none"},
    {"v2 without the cpu controller",
     {{"proc/self/cgroup", "0::/user.slice\n"}, {"proc/self/mountinfo", MI_V2},
      {"sys/fs/cgroup/user.slice/cgroup.controllers", "memory pids\n"}},
     0, NULL, 0, NULL, NULL, 0, NULL, 0, 0, 0, NULL},
    {"hybrid: v1 holds cpu, v2 unified beside it",
     {{"proc/self/cgroup", "1:cpu:/h\n0::/h\n"},
      {"proc/self/mountinfo", MI_TMPFS MI_V1_CPU MI_UNIFIED},
      {"sys/fs/cgroup/unified/h/cgroup.controllers", ""},
      {"sys/fs/cgroup/cpu/h/cpu.cfs_quota_us", "20000\n"},
      {"sys/fs/cgroup/cpu/h/cpu.cfs_period_us", "50000\n"}},
     1, NULL, 1, "/h", "/sys/fs/cgroup/cpu/h", 0, NULL, 1, 20000, 50000, "quota=40%; period=50ms; cgroup=v1:/h"},
    {"hybrid: cpu not in v1, so in the unified hierarchy",
     {{"proc/self/cgroup", "5:memory:/m\n0::/u\n"},
      {"proc/self/mountinfo", MI_TMPFS MI_V1_MEM MI_UNIFIED},
      {"sys/fs/cgroup/unified/u/cgroup.controllers", "cpu\n"},
      {"sys/fs/cgroup/unified/u/cpu.max", "250000 1000000\n"}},
     1, NULL, 2, "/u", "/sys/fs/cgroup/unified/u", 0, NULL, 1, 250000, 1000000,
     "quota=25%; period=1000ms; cgroup=v2:/u"},
    {"cgroup namespace: the mount's root is stripped from the path",
     {{"proc/self/cgroup", "0::/docker/abc/sub\n"},
      {"proc/self/mountinfo", "30 23 0:26 /docker/abc /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"},
      {"sys/fs/cgroup/sub/cgroup.controllers", "cpu\n"},
      {"sys/fs/cgroup/sub/cpu.max", "max 100000\n"}},
     1, NULL, 2, "/docker/abc/sub", "/sys/fs/cgroup/sub", 0, NULL, 0, 0, 100000, "none"},
    {"a mount point with an escaped space",
     {{"proc/self/cgroup", "1:cpu:/\n"},
      {"proc/self/mountinfo", "32 31 0:29 / /sys/fs/cg\\040v1 rw - cgroup cgroup rw,cpu\n"},
      {"sys/fs/cg v1/cpu.cfs_quota_us", "1000\n"},
      {"sys/fs/cg v1/cpu.cfs_period_us", "10000\n"}},
     1, NULL, 1, "/", "/sys/fs/cg v1", 0, NULL, 1, 1000, 10000, "quota=10%; period=10ms; cgroup=v1:/"},
    {"the hierarchy only in PID 1's mount namespace (ip netns exec's fresh /sys)",
     {{"proc/self/cgroup", "1:cpu:/lab/s1\n0::/\n"},
      {"proc/self/mountinfo", "22 1 0:21 / /sys rw - sysfs sysfs rw\n"},
      {"proc/1/mountinfo", MI_TMPFS MI_V1_CPU},
      {"proc/1/root/sys/fs/cgroup/cpu/lab/s1/cpu.cfs_quota_us", "3000\n"},
      {"proc/1/root/sys/fs/cgroup/cpu/lab/s1/cpu.cfs_period_us", "100000\n"}},
     1, NULL, 1, "/lab/s1", "/proc/1/root/sys/fs/cgroup/cpu/lab/s1", 0, NULL, 1, 3000, 100000,
     "quota=3%; period=100ms; cgroup=v1:/lab/s1"},
    {"not mounted here nor in PID 1's namespace",
     {{"proc/self/cgroup", "1:cpu:/lab/s1\n"}, {"proc/self/mountinfo", MI_V1_MEM}, {"proc/1/mountinfo", MI_V1_MEM}},
     0, NULL, 0, NULL, NULL, 0, NULL, 0, 0, 0, NULL},
    {"no /proc/self/cgroup", {{"proc/self/mountinfo", MI_V2}}, -1, "cannot read", 0, NULL, NULL, 0, NULL, 0, 0, 0,
     NULL},
    {"garbage /proc/self/cgroup", {{"proc/self/cgroup", "0::/\ngarbage\n"}, {"proc/self/mountinfo", MI_V2}}, -1,
     "cgroup: line 2: not \"ID:CONTROLLERS:PATH\"", 0, NULL, NULL, 0, NULL, 0, 0, 0, NULL},
    {"garbage mountinfo", {{"proc/self/cgroup", "1:cpu:/\n"}, {"proc/self/mountinfo", MI_V1_MEM "nonsense\n"}},
     -1, "mountinfo: line 2: not a mountinfo line", 0, NULL, NULL, 0, NULL, 0, 0, 0, NULL},
    {"garbage cpu.cfs_quota_us",
     {{"proc/self/cgroup", "1:cpu:/g\n"}, {"proc/self/mountinfo", MI_V1_CPU},
      {"sys/fs/cgroup/cpu/g/cpu.cfs_quota_us", "lots\n"}, {"sys/fs/cgroup/cpu/g/cpu.cfs_period_us", "100000\n"}},
     1, NULL, 1, "/g", "/sys/fs/cgroup/cpu/g", -1, "cpu.cfs_quota_us: not a number: \"lots\"", 0, 0, 0, NULL},
    {"missing cpu.cfs_period_us",
     {{"proc/self/cgroup", "1:cpu:/g\n"}, {"proc/self/mountinfo", MI_V1_CPU},
      {"sys/fs/cgroup/cpu/g/cpu.cfs_quota_us", "5000\n"}},
     1, NULL, 1, "/g", "/sys/fs/cgroup/cpu/g", -1, "cpu.cfs_period_us: No such file", 0, 0, 0, NULL},
    {"garbage cpu.max",
     {{"proc/self/cgroup", "0::/g\n"}, {"proc/self/mountinfo", MI_V2},
      {"sys/fs/cgroup/g/cgroup.controllers", "cpu\n"}, {"sys/fs/cgroup/g/cpu.max", "5000\n"}},
     1, NULL, 2, "/g", "/sys/fs/cgroup/g", -1, "cpu.max: not \"QUOTA PERIOD\": \"5000\"", 0, 0, 0, NULL},
    {"cpu.max with a period of 0",
     {{"proc/self/cgroup", "0::/g\n"}, {"proc/self/mountinfo", MI_V2},
      {"sys/fs/cgroup/g/cgroup.controllers", "cpu\n"}, {"sys/fs/cgroup/g/cpu.max", "5000 0\n"}},
     1, NULL, 2, "/g", "/sys/fs/cgroup/g", -1, "a period of 0", 0, 0, 0, NULL},
};

static void test_find_and_budget(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(finds); i++) {
        const struct find_case *c = &finds[i];
        char root[512], want[1400], err[512] = "";
        snprintf(root, sizeof root, "%s/case%zu", dir, i);
        assert_int_equal(testlib_sh("mkdir -p '%s'", root), 0);
        for (size_t k = 0; k < ARRAY_SIZE(c->files) && c->files[k].rel; k++)
            put(root, c->files[k].rel, c->files[k].text);
        struct cgroup_mount m;
        struct cgroup_cpu cg;
        int r = cgroup_mount_find(root, &m, err, sizeof err);
        if (r == 1) {
            r = cgroup_cpu_find(root, &m, &cg, err, sizeof err);
            if (r != 1)
                cgroup_mount_close(&m);
        }
        if (r != c->found)
            fail_msg("%s: found %d, want %d (%s)", c->name, r, c->found, err);
        if (r < 0) {
            if (!strstr(err, c->err))
                fail_msg("%s: message \"%s\" lacks \"%s\"", c->name, err, c->err);
            continue;
        }
        if (r == 0)
            continue;
        assert_int_equal(cg.version, c->version);
        assert_string_equal(cg.path, c->path);
        snprintf(want, sizeof want, "%s%s", root, c->dir);
        assert_string_equal(cg.dir, want);
        struct cgroup_budget b;
        err[0] = 0;
        int br = cgroup_cpu_budget(&cg, &b, err, sizeof err);
        if (br != c->budget)
            fail_msg("%s: budget %d, want %d (%s)", c->name, br, c->budget, err);
        cgroup_mount_close(&m);
        assert_int_equal(m.fd, -1);
        if (br < 0) {
            if (!strstr(err, c->budget_err))
                fail_msg("%s: message \"%s\" lacks \"%s\"", c->name, err, c->budget_err);
            continue;
        }
        assert_int_equal(b.limited, c->limited);
        if (c->limited)
            assert_int_equal(b.quota_us, c->quota_us);
        assert_int_equal(b.period_us, c->period_us);
        char hdr[256];
        cgroup_format(&cg, &b, hdr, sizeof hdr);
        if (strcmp(hdr, c->header) != 0)
            fail_msg("%s: header \"%s\", want \"%s\"", c->name, hdr, c->header);
    }
}

struct stat_case {
    const char *name;
    int version;
    const char *text;
    int ok;
    uint64_t periods, throttled, ns;
    const char *err;
};

static const struct stat_case stats[] = {
    {"v1", 1, "nr_periods 120\nnr_throttled 37\nthrottled_time 1234567890\n", 0, 120, 37, 1234567890, NULL},
    {"v1 of a newer kernel (bursts)", 1,
     "nr_periods 5\nnr_throttled 1\nthrottled_time 900\nnr_bursts 0\nburst_time 0\n", 0, 5, 1, 900, NULL},
    {"v2 (usec)", 2,
     "usage_usec 100\nuser_usec 60\nsystem_usec 40\nnr_periods 7\nnr_throttled 2\nthrottled_usec 3500\n"
     "nr_bursts 0\nburst_usec 0\n", 0, 7, 2, 3500000, NULL},
    {"v2 root: no throttling counters", 2, "usage_usec 100\nuser_usec 60\nsystem_usec 40\n", 0, 0, 0, 0, NULL},
    {"v1 does not read throttled_usec", 1, "throttled_usec 5\n", 0, 0, 0, 0, NULL},
    {"no final newline", 1, "nr_periods 3", 0, 3, 0, 0, NULL},
    {"empty", 2, "", 0, 0, 0, 0, NULL},
    {"a word for a number", 1, "nr_periods many\n", -1, 0, 0, 0, "cpu.stat: line 1: not \"NAME NUMBER\": \"nr_periods many\""},
    {"two numbers", 2, "usage_usec 1\nnr_periods 1 2\n", -1, 0, 0, 0, "line 2"},
    {"a negative number", 1, "nr_periods -1\n", -1, 0, 0, 0, "line 1"},
};

static void test_stat_parse(void **state)
{
    (void)state;
    for (size_t i = 0; i < ARRAY_SIZE(stats); i++) {
        const struct stat_case *c = &stats[i];
        struct cgroup_stat st;
        char err[256] = "";
        int r = cgroup_stat_parse(c->version, c->text, &st, err, sizeof err);
        if (r != c->ok)
            fail_msg("%s: %d, want %d (%s)", c->name, r, c->ok, err);
        if (r < 0) {
            if (!strstr(err, c->err))
                fail_msg("%s: message \"%s\" lacks \"%s\"", c->name, err, c->err);
            continue;
        }
        assert_int_equal(st.nr_periods, c->periods);
        assert_int_equal(st.nr_throttled, c->throttled);
        assert_int_equal(st.throttled_ns, c->ns);
    }
}

/* One descriptor, read again after the file changed (as the kernel's does). */
static void test_stat_fd(void **state)
{
    (void)state;
    char root[512], err[256];
    snprintf(root, sizeof root, "%s/statfd", dir);
    put(root, "proc/self/cgroup", "0::/s\n");
    put(root, "proc/self/mountinfo", MI_V2);
    put(root, "sys/fs/cgroup/s/cgroup.controllers", "cpu\n");
    put(root, "sys/fs/cgroup/s/cpu.stat", "nr_periods 1\nnr_throttled 0\nthrottled_usec 0\n");
    struct cgroup_mount m;
    struct cgroup_cpu cg;
    assert_int_equal(cgroup_mount_find(root, &m, err, sizeof err), 1);
    assert_int_equal(cgroup_cpu_find(root, &m, &cg, err, sizeof err), 1);
    int fd = cgroup_stat_open(&cg, err, sizeof err);
    assert_true(fd >= 0);
    struct cgroup_stat st;
    assert_int_equal(cgroup_stat_read(fd, cg.version, &st, err, sizeof err), 0);
    assert_int_equal(st.nr_periods, 1);
    put(root, "sys/fs/cgroup/s/cpu.stat", "nr_periods 9\nnr_throttled 4\nthrottled_usec 250\n");
    assert_int_equal(cgroup_stat_read(fd, cg.version, &st, err, sizeof err), 0);
    assert_int_equal(st.nr_periods, 9);
    assert_int_equal(st.nr_throttled, 4);
    assert_int_equal(st.throttled_ns, 250000);
    close(fd);
    assert_int_equal(cgroup_stat_read(fd, 2, &st, err, sizeof err), -1);
    assert_non_null(strstr(err, "cpu.stat: Bad file descriptor"));
    /* a cgroup without cpu.stat */
    snprintf(cg.rel, sizeof cg.rel, "nowhere");
    snprintf(cg.dir, sizeof cg.dir, "%s/nowhere", root);
    assert_int_equal(cgroup_stat_open(&cg, err, sizeof err), -1);
    assert_non_null(strstr(err, "nowhere/cpu.stat: No such file"));
    /* moved: the same mount, another cgroup */
    put(root, "proc/self/cgroup", "0::/t\n");
    put(root, "sys/fs/cgroup/t/cgroup.controllers", "memory\n");
    assert_int_equal(cgroup_cpu_find(root, &m, &cg, err, sizeof err), 0);
    cgroup_mount_close(&m);
    cgroup_mount_close(&m);
}

static void test_format_and_pct(void **state)
{
    (void)state;
    char buf[128];
    struct cgroup_budget none = {0}, five = {1, 5000, 100000}, odd = {1, 333, 1000};
    struct cgroup_cpu cg = {.version = 1, .path = "/debit/x"};
    cgroup_format(NULL, &five, buf, sizeof buf);
    assert_string_equal(buf, "none");
    cgroup_format(&cg, &none, buf, sizeof buf);
    assert_string_equal(buf, "none");
    cgroup_format(&cg, &five, buf, sizeof buf);
    assert_string_equal(buf, "quota=5%; period=100ms; cgroup=v1:/debit/x");
    cgroup_format(&cg, &odd, buf, sizeof buf);
    assert_string_equal(buf, "quota=33.3%; period=1ms; cgroup=v1:/debit/x");
    assert_true(cgroup_quota_pct(&none) < 0);
    assert_true(cgroup_quota_pct(&five) == 5.0);
}

/* The machine's own cgroup: whatever it is, it is found or absent without an error. */
static void test_this_machine(void **state)
{
    (void)state;
    struct cgroup_mount m;
    struct cgroup_cpu cg;
    char err[512] = "";
    int r = cgroup_mount_find("/", &m, err, sizeof err);
    if (r == 1 && (r = cgroup_cpu_find("/", &m, &cg, err, sizeof err)) != 1)
        cgroup_mount_close(&m);
    if (r < 0)
        fail_msg("this machine: %s", err);
    if (r == 1) {
        struct cgroup_budget b;
        if (cgroup_cpu_budget(&cg, &b, err, sizeof err) < 0)
            fail_msg("this machine: %s", err);
        printf("# this machine: cgroup v%d %s (%s)\n", cg.version, cg.path, cg.dir);
        cgroup_mount_close(&m);
    } else {
        printf("# this machine: no cpu controller\n");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_find_and_budget), cmocka_unit_test(test_stat_parse),
        cmocka_unit_test(test_stat_fd),         cmocka_unit_test(test_format_and_pct),
        cmocka_unit_test(test_this_machine),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
