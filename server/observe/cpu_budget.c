/* cpu_budget: see cpu_budget.h. */
#include "cpu_budget.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sys.h"

struct cpu_budget {
    pthread_rwlock_t lock;
    char root[512];
    struct cgroup_mount mount; /* found once (at start, with privileges), else at each refresh */
    int found;
    unsigned gen;
    struct cgroup_cpu cg;
    struct cgroup_budget budget;
    int stat_fd; /* CG's cpu.stat; -1 none */
    int have_stat;           /* stat below was read by the last refresh */
    struct cgroup_stat stat; /* cpu.stat as of the last refresh */
    char header[320];
    char error[256]; /* the last refresh's failure; "" */
};

struct cpu_budget *cpu_budget_new(const char *root)
{
    struct cpu_budget *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    snprintf(b->root, sizeof b->root, "%s", root ? root : "/");
    b->stat_fd = -1;
    b->mount.fd = -1;
    snprintf(b->header, sizeof b->header, "none");
    pthread_rwlock_init(&b->lock, NULL);
    char err[256];
    cpu_budget_refresh(b, err, sizeof err); /* kept in b->error */
    return b;
}

void cpu_budget_free(struct cpu_budget *b)
{
    if (!b)
        return;
    if (b->stat_fd >= 0)
        close(b->stat_fd);
    cgroup_mount_close(&b->mount);
    pthread_rwlock_destroy(&b->lock);
    free(b);
}

int cpu_budget_refresh(struct cpu_budget *b, char *err, size_t errlen)
{
    /* the files are read outside the lock; only the swap is under it. Only the sampler
     * thread refreshes (and cpu_budget_new before it starts), so the mount needs no lock:
     * readers never touch it. */
    struct cgroup_cpu cg;
    struct cgroup_budget budget = {0};
    int found = b->mount.fd >= 0 ? 1 : cgroup_mount_find(b->root, &b->mount, err, errlen);
    if (found == 1)
        found = cgroup_cpu_find(b->root, &b->mount, &cg, err, errlen);
    if (found == 1 && cgroup_cpu_budget(&cg, &budget, err, errlen) < 0)
        found = -1;
    pthread_rwlock_rdlock(&b->lock);
    int same = found == 1 && b->found && b->stat_fd >= 0 && cg.version == b->cg.version &&
               strcmp(cg.dir, b->cg.dir) == 0;
    pthread_rwlock_unlock(&b->lock);
    int fd = -1;
    if (found == 1 && !same && (fd = cgroup_stat_open(&cg, err, errlen)) < 0)
        found = -1;
    pthread_rwlock_wrlock(&b->lock);
    int old = -1;
    if (found == 1) {
        if (!same) {
            old = b->stat_fd;
            b->stat_fd = fd;
            b->gen++;
        }
        b->cg = cg;
        b->budget = budget;
        b->error[0] = 0;
        cgroup_format(&cg, &budget, b->header, sizeof b->header);
    } else {
        if (b->found)
            b->gen++;
        old = b->stat_fd;
        b->stat_fd = -1;
        memset(&b->cg, 0, sizeof b->cg);
        memset(&b->budget, 0, sizeof b->budget);
        snprintf(b->error, sizeof b->error, "%s", found < 0 ? err : "");
        snprintf(b->header, sizeof b->header, "none");
    }
    b->found = found == 1;
    char serr[128];
    b->have_stat = b->found && cgroup_stat_read(b->stat_fd, b->cg.version, &b->stat, serr, sizeof serr) == 0;
    pthread_rwlock_unlock(&b->lock);
    if (old >= 0) /* no reader holds it: they read under the lock */
        close(old);
    return found < 0 ? -1 : 0;
}

void cpu_budget_header(struct cpu_budget *b, int with_path, char *buf, size_t len)
{
    pthread_rwlock_rdlock(&b->lock);
    sys_strcpy(buf, len, b->header); /* for every file response: no formatting */
    pthread_rwlock_unlock(&b->lock);
    char *cg = with_path ? NULL : strstr(buf, "; cgroup=");
    if (cg)
        *cg = 0;
}

void cpu_budget_read(struct cpu_budget *b, int with_stat, struct cpu_budget_view *v)
{
    memset(v, 0, sizeof *v);
    v->quota_pct = -1;
    pthread_rwlock_rdlock(&b->lock);
    v->gen = b->gen;
    if (b->found) {
        v->found = 1;
        v->version = b->cg.version;
        snprintf(v->path, sizeof v->path, "%s", b->cg.path);
        v->quota_pct = cgroup_quota_pct(&b->budget);
        v->period_us = b->budget.period_us;
        /* Without a quota the kernel's bandwidth timer does not run and the counters stand
         * still: the last refresh's are current, and a transfer costs no system call. */
        char err[128];
        if (!with_stat)
            v->have_stat = 0;
        else if (!b->budget.limited) {
            v->have_stat = b->have_stat;
            v->stat = b->stat;
        } else
            v->have_stat = cgroup_stat_read(b->stat_fd, b->cg.version, &v->stat, err, sizeof err) == 0;
    }
    pthread_rwlock_unlock(&b->lock);
}

int cpu_budget_stat(struct cpu_budget *b, unsigned *gen, struct cgroup_stat *st)
{
    char err[128];
    int r = 0;
    pthread_rwlock_rdlock(&b->lock);
    *gen = b->gen;
    if (b->found && !b->budget.limited) {
        *st = b->stat;
        r = b->have_stat;
    } else if (b->found) {
        r = cgroup_stat_read(b->stat_fd, b->cg.version, st, err, sizeof err) == 0;
    }
    pthread_rwlock_unlock(&b->lock);
    return r;
}

json_t *cpu_budget_json(struct cpu_budget *b, int with_path)
{
    struct cpu_budget_view v;
    char hdr[320];
    cpu_budget_read(b, 1, &v);
    cpu_budget_header(b, with_path, hdr, sizeof hdr);
    json_t *cg = json_null();
    if (v.found)
        cg = json_pack("{s:i, s:s, s:o, s:o, s:o, s:o, s:o}", "version", v.version, "path", v.path, "quota_pct",
                       v.quota_pct < 0 ? json_null() : json_real(v.quota_pct), "period_us",
                       v.period_us ? json_integer((json_int_t)v.period_us) : json_null(), "nr_periods",
                       v.have_stat ? json_integer((json_int_t)v.stat.nr_periods) : json_null(), "nr_throttled",
                       v.have_stat ? json_integer((json_int_t)v.stat.nr_throttled) : json_null(), "throttled_ms",
                       v.have_stat ? json_real((double)v.stat.throttled_ns / 1e6) : json_null());
    if (cg && !with_path)
        json_object_del(cg, "path");
    json_t *o = json_pack("{s:s, s:o}", "x_debit_cpu", hdr, "cgroup", cg);
    pthread_rwlock_rdlock(&b->lock);
    if (o && b->error[0])
        json_object_set_new(o, "error", json_string(b->error));
    pthread_rwlock_unlock(&b->lock);
    return o;
}
