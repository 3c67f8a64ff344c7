/* cgroup: the CPU budget of this process's cgroup, as the kernel enforces it (CFS
 * bandwidth control), and the throttling it caused: what debitd reports about itself
 * (X-Debit-Cpu, /status, each transfer's record) so that a client can tell "the server was
 * short of CPU" from "the path was slow".
 *
 * Finds the cpu controller's hierarchy in ROOT/proc/self/mountinfo (else PID 1's) and the
 * process's cgroup in ROOT/proc/self/cgroup: cgroup v1 (a "cgroup" mount whose options name "cpu"), v2 (the
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

/* The hierarchy that holds the cpu controller, held open: a process started by `ip netns
 * exec` sees a fresh /sys without the cgroup mounts, and one that dropped its privileges
 * can mount nothing any more, so the mount is found once at start (in this mount
 * namespace; else, with ROOT "/", a private detached mount of the same hierarchy, which
 * needs CAP_SYS_ADMIN; else through ROOT/proc/1/root, PID 1's namespace) and every later
 * read is relative to this descriptor. */
struct cgroup_mount {
    int version;    /* 1 or 2 */
    int fd;         /* O_PATH directory of the mount; -1 when none */
    char root[256]; /* the part of the hierarchy mounted there ("/" but in a cgroup namespace) */
    char dir[1100]; /* where, for messages: ROOT [+ /proc/1/root] + the mount point */
};

struct cgroup_cpu {
    int version;    /* 1 or 2 */
    char path[256]; /* the cgroup as /proc/self/cgroup names it: "/debit/x", "/" */
    int dirfd;      /* the mount's descriptor (borrowed from struct cgroup_mount) */
    char rel[512];  /* the cgroup's folder relative to it: "." or "debit/x" */
    char dir[1700]; /* for messages: the mount's dir + the folder */
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

/* Find the hierarchy holding the cpu controller of this process under ROOT ("/" when NULL)
 * and open it: 1 found (M->fd open: cgroup_mount_close), 0 none (the controller is not
 * mounted anywhere, or no cgroup line names it), -1 unreadable or malformed files, or a
 * mount that cannot be opened (err names the file). */
int cgroup_mount_find(const char *root, struct cgroup_mount *m, char *err, size_t errlen);
/* Close M's descriptor (idempotent; M zeroed and fd -1 after). */
void cgroup_mount_close(struct cgroup_mount *m);

/* The process's CPU cgroup in hierarchy M, from ROOT/proc/self/cgroup now: 1 found (CG
 * filled), 0 the process has no cpu controller there (v2 without "cpu" in the cgroup's
 * cgroup.controllers), -1 unreadable or malformed files (err names the file). */
int cgroup_cpu_find(const char *root, const struct cgroup_mount *m, struct cgroup_cpu *cg, char *err,
                    size_t errlen);

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
