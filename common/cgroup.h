/* cgroup: the CPU budget of this process's cgroup, as the kernel enforces it (CFS
 * bandwidth control), and the throttling it caused: what debitd reports about itself
 * (X-Debit-Cpu, /status, each transfer's record) so that a client can tell "the server was
 * short of CPU" from "the path was slow".
 *
 * Finds the cpu controller's hierarchy in ROOT/proc/self/mountinfo and the process's cgroup
 * in ROOT/proc/self/cgroup: cgroup v1 (a "cgroup" mount whose options name "cpu"), v2 (the
 * "cgroup2" mount, when "cpu" is in the cgroup's cgroup.controllers), and hybrid machines
 * (v1 wins where it holds cpu: a controller is bound to one hierarchy only). Then reads the
 * budget (v1 cpu.cfs_quota_us / cpu.cfs_period_us, v2 cpu.max) and cpu.stat (v1
 * nr_periods, nr_throttled, throttled_time [ns]; v2 nr_periods, nr_throttled,
 * throttled_usec). ROOT is "/" on a real host; unit tests pass a directory holding fake
 * proc/ and sys/ trees. Only this cgroup's own budget is read, not its ancestors'. */
#ifndef DEBIT_CGROUP_H
#define DEBIT_CGROUP_H

#include <stddef.h>
#include <stdint.h>

struct cgroup_cpu {
    int version;    /* 1 or 2 */
    char path[256]; /* the cgroup as /proc/self/cgroup names it: "/debit/x", "/" */
    char dir[768];  /* the directory of its cpu.* files, ROOT included */
};

struct cgroup_budget {
    int limited;        /* 0: no quota ("-1" in v1, "max" in v2, or a v2 root cgroup) */
    uint64_t quota_us;  /* CPU time per period, when limited */
    uint64_t period_us; /* 0 when the kernel shows none (a v2 root cgroup) */
};

struct cgroup_stat {
    uint64_t nr_periods, nr_throttled;
    uint64_t throttled_ns; /* v1 throttled_time; v2 throttled_usec * 1000 */
};

/* Find the process's CPU cgroup under ROOT ("/" when NULL): 1 found (CG filled), 0 the
 * process has no cpu controller (not mounted, or v2 without "cpu" in cgroup.controllers),
 * -1 unreadable or malformed files (err names the file). */
int cgroup_cpu_find(const char *root, struct cgroup_cpu *cg, char *err, size_t errlen);

/* Read CG's budget into B: 0, or -1 with err (a missing or malformed file). */
int cgroup_cpu_budget(const struct cgroup_cpu *cg, struct cgroup_budget *b, char *err, size_t errlen);

/* Parse the text of a cpu.stat of cgroup VERSION (1 or 2) into ST: counters absent from
 * the file are 0 (a v2 root cgroup has no throttling counters). 0, or -1 with err for a
 * line that is not "NAME NUMBER". */
int cgroup_stat_parse(int version, const char *text, struct cgroup_stat *st, char *err, size_t errlen);

/* Open CG's cpu.stat for cgroup_stat_read: a descriptor (O_CLOEXEC), or -1 with err. */
int cgroup_stat_open(const struct cgroup_cpu *cg, char *err, size_t errlen);

/* Read cpu.stat through FD (from cgroup_stat_open) with one pread at offset 0, so that one
 * descriptor serves every reader at once (thread-safe). 0, or -1 with err. */
int cgroup_stat_read(int fd, int version, struct cgroup_stat *st, char *err, size_t errlen);

/* The budget as X-Debit-Cpu says it: "quota=5%; period=100ms; cgroup=v1:/debit/x", or
 * "none" when CG is NULL (no cpu controller) or B is not limited. */
void cgroup_format(const struct cgroup_cpu *cg, const struct cgroup_budget *b, char *buf, size_t len);

/* Percent of one CPU that B allows (quota / period * 100); -1 when not limited. */
double cgroup_quota_pct(const struct cgroup_budget *b);

#endif
