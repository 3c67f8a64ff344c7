/* cpu_budget: debitd's own CPU budget (common/cgroup.h) as the request threads see it: the
 * X-Debit-Cpu header, /status's "cpu", the /metrics gauges, and the cpu.stat counters each
 * transfer's record takes deltas of (server/observe/evidence.h).
 *
 * The cgroup is found at start and looked up again by cpu_budget_refresh, which the
 * server's sampler thread calls once a second: the lab moves debitd into a cgroup after it
 * started, and a quota can change at any time. cpu.stat stays open between refreshes (one
 * descriptor for the process, reopened only when the cgroup changes) and is read with one
 * pread, so a transfer's two reads cost two system calls under a quota and none without
 * one (the counters only move under a quota: the refresh's copy is current). Thread-safe (a read-write lock:
 * readers never wait for each other). */
#ifndef DEBITD_CPU_BUDGET_H
#define DEBITD_CPU_BUDGET_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup.h"

struct cpu_budget;

/* What a reader gets (plain data). */
struct cpu_budget_view {
    int found;          /* a cpu controller: the rest is meaningful */
    unsigned gen;       /* changes whenever the cgroup (path or version) changes */
    int version;        /* 1 or 2 */
    char path[256];     /* "/debit/x" */
    double quota_pct;   /* < 0: no limit */
    uint64_t period_us; /* 0: none shown */
    int have_stat;      /* stat was read */
    struct cgroup_stat stat;
};

/* Find the cgroup under ROOT ("/" when NULL) and read it once (cpu_budget_refresh). NULL
 * only when out of memory: an unreadable cgroup is reported by cpu_budget_error. */
struct cpu_budget *cpu_budget_new(const char *root);
void cpu_budget_free(struct cpu_budget *b);

/* Look the cgroup and its budget up again. 0, or -1 with err (the budget then reads as
 * "no controller" until a refresh succeeds). */
int cpu_budget_refresh(struct cpu_budget *b, char *err, size_t errlen);

/* X-Debit-Cpu's value as of the last refresh ("quota=5%; period=100ms; cgroup=v1:/x" or
 * "none"); without "; cgroup=..." unless WITH_PATH (privacy.details = false: a cgroup path
 * can name the host's container or service). */
void cpu_budget_header(struct cpu_budget *b, int with_path, char *buf, size_t len);

/* The budget as of the last refresh, and cpu.stat now when WITH_STAT (one pread under a
 * quota; the last refresh's copy without one). */
void cpu_budget_read(struct cpu_budget *b, int with_stat, struct cpu_budget_view *v);

/* cpu.stat now (as cpu_budget_read's stat) and the cgroup generation, without the rest:
 * what a transfer's start needs. Returns 1 read, 0 none (no controller, or unreadable). */
int cpu_budget_stat(struct cpu_budget *b, unsigned *gen, struct cgroup_stat *st);

/* /status's "cpu": {"x_debit_cpu": S, "cgroup": null | {"version", "path", "quota_pct",
 * "period_us", "nr_periods", "nr_throttled", "throttled_ms"} (cpu.stat's totals now),
 * "error": S (only when the last refresh failed)}; "path" (and the header's) only WITH_PATH.
 * New reference. */
json_t *cpu_budget_json(struct cpu_budget *b, int with_path);

#endif
