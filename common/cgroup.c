/* cgroup: see cgroup.h. */
#include "cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "err.h"

/* ROOT + PATH (PATH absolute): "/" or "" as ROOT adds nothing. */
static void under_root(const char *root, const char *path, char *out, size_t len)
{
    size_t n = root ? strlen(root) : 0;
    while (n > 0 && root[n - 1] == '/')
        n--;
    snprintf(out, len, "%.*s%s", (int)n, n ? root : "", path);
}

/* The whole of a small file (a procfs or cgroupfs one), PATH relative to DIRFD (AT_FDCWD
 * for an absolute or plain path), as a string the caller frees, or NULL with err naming
 * SHOWN (PATH when NULL). procfs files report size 0: read until EOF. */
static char *read_all_at(int dirfd, const char *path, const char *shown, char *err, size_t errlen)
{
    if (!shown)
        shown = path;
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        err_set(err, errlen, "cannot read %s: %s", shown, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            err_set(err, errlen, "%s: out of memory", shown);
            break;
        }
        ssize_t r = read(fd, buf + len, cap - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            err_set(err, errlen, "cannot read %s: %s", shown, strerror(errno));
            free(buf);
            buf = NULL;
            break;
        }
        if (r == 0) {
            buf[len] = 0;
            break;
        }
        len += (size_t)r;
        if (len + 1 == cap) {
            char *p = cap < (4u << 20) ? realloc(buf, cap * 2) : NULL;
            if (!p)
                free(buf);
            buf = p;
            cap *= 2;
        }
    }
    close(fd);
    return buf;
}

static char *read_all(const char *path, char *err, size_t errlen)
{
    return read_all_at(AT_FDCWD, path, NULL, err, errlen);
}

/* WORD is one of LIST's SEP-separated tokens. */
static int has_token(const char *list, size_t listlen, const char *word, char sep)
{
    size_t n = strlen(word);
    const char *p = list, *end = list + listlen;
    while (p < end) {
        const char *q = memchr(p, sep, (size_t)(end - p));
        size_t w = q ? (size_t)(q - p) : (size_t)(end - p);
        if (w == n && memcmp(p, word, n) == 0)
            return 1;
        p += w + 1;
    }
    return 0;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(const char *s, size_t n, char *out, size_t len)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < len; i++) {
        if (s[i] == '\\' && i + 3 < n && s[i + 1] >= '0' && s[i + 1] <= '3') {
            out[k++] = (char)(((s[i + 1] - '0') << 6) | ((s[i + 2] - '0') << 3) | (s[i + 3] - '0'));
            i += 3;
        } else {
            out[k++] = s[i];
        }
    }
    out[k] = 0;
}

struct mount {
    int found;
    char root[256];  /* the part of the hierarchy mounted there (field 4) */
    char point[512]; /* where (field 5) */
};

/* The space-separated field I (0-based) of LINE [start, end); 0 if absent. */
static int field(const char *line, const char *end, int i, const char **f, size_t *n)
{
    const char *p = line;
    for (int k = 0;; k++) {
        while (p < end && *p == ' ')
            p++;
        if (p >= end)
            return 0;
        const char *q = p;
        while (q < end && *q != ' ')
            q++;
        if (k == i) {
            *f = p;
            *n = (size_t)(q - p);
            return 1;
        }
        p = q;
    }
}

/* The v1 mount of the cpu controller and the cgroup2 mount, from mountinfo TEXT. */
static int parse_mountinfo(const char *text, const char *path, struct mount *v1, struct mount *v2, char *err,
                           size_t errlen)
{
    int lineno = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        if (!end)
            end = line + strlen(line);
        lineno++;
        const char *sep = NULL;
        for (const char *p = line; p + 2 <= end; p++)
            if (p[0] == ' ' && p[1] == '-' && (p + 2 == end || p[2] == ' ')) {
                sep = p;
                break;
            }
        const char *root, *point, *type, *opts = NULL;
        size_t rn, pn, tn, on;
        if (line == end) {
            /* blank line */
        } else if (!sep || !field(line, sep, 3, &root, &rn) || !field(line, sep, 4, &point, &pn) ||
                   !field(sep + 2, end, 0, &type, &tn)) {
            return err_set(err, errlen, "%s: line %d: not a mountinfo line", path, lineno);
        } else {
            if (!field(sep + 2, end, 2, &opts, &on))
                on = 0;
            struct mount *m = NULL;
            if (tn == 6 && memcmp(type, "cgroup", 6) == 0 && on && has_token(opts, on, "cpu", ','))
                m = v1;
            else if (tn == 7 && memcmp(type, "cgroup2", 7) == 0)
                m = v2;
            if (m && !m->found) {
                m->found = 1;
                unescape(root, rn, m->root, sizeof m->root);
                unescape(point, pn, m->point, sizeof m->point);
            }
        }
        line = *end ? end + 1 : end;
    }
    return 0;
}

/* ROOT/proc/self/cgroup's cgroups: "ID:CONTROLLERS:PATH", v1 listing its controllers, v2
 * "0::PATH". HAVE_V1 when a v1 line names cpu (V1PATH), HAVE_V2 for the v2 line. */
struct self_cgroup {
    int have_v1, have_v2;
    char v1path[256], v2path[256];
    char v1controllers[128]; /* "cpu" or "cpu,cpuacct": how that hierarchy is mounted */
};

static int self_cgroup_read(const char *root, struct self_cgroup *sc, char *err, size_t errlen)
{
    char path[1024];
    memset(sc, 0, sizeof *sc);
    under_root(root, "/proc/self/cgroup", path, sizeof path);
    char *text = read_all(path, err, errlen);
    if (!text)
        return -1;
    int lineno = 0, bad = 0;
    for (char *line = text; *line && !bad;) {
        char *end = strchr(line, '\n');
        if (end)
            *end = 0;
        lineno++;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!*line) {
            /* blank */
        } else if (!c1 || !c2 || c2[1] != '/') {
            bad = lineno;
        } else if (c1 - line == 1 && line[0] == '0' && c2 == c1 + 1) {
            sc->have_v2 = 1;
            snprintf(sc->v2path, sizeof sc->v2path, "%s", c2 + 1);
        } else if (has_token(c1 + 1, (size_t)(c2 - c1 - 1), "cpu", ',')) {
            sc->have_v1 = 1;
            snprintf(sc->v1path, sizeof sc->v1path, "%s", c2 + 1);
            snprintf(sc->v1controllers, sizeof sc->v1controllers, "%.*s", (int)(c2 - c1 - 1), c1 + 1);
        }
        line = end ? end + 1 : line + strlen(line);
    }
    free(text);
    if (bad)
        return err_set(err, errlen, "%s: line %d: not \"ID:CONTROLLERS:PATH\"", path, bad);
    return 0;
}

/* The v1 cpu mount and the cgroup2 mount in ROOT/PROC/mountinfo (PROC "/proc/self" or
 * "/proc/1"). Returns 0, or -1 with err. */
static int mounts_of(const char *root, const char *proc, struct mount *m1, struct mount *m2, char *err,
                     size_t errlen)
{
    char rel[64], path[1024];
    snprintf(rel, sizeof rel, "%s/mountinfo", proc);
    under_root(root, rel, path, sizeof path);
    char *text = read_all(path, err, errlen);
    if (!text)
        return -1;
    memset(m1, 0, sizeof *m1);
    memset(m2, 0, sizeof *m2);
    int r = parse_mountinfo(text, path, m1, m2, err, errlen);
    free(text);
    return r;
}

/* A detached mount of the hierarchy (v1: the controllers CONTROLLERS, as it is mounted
 * already; v2: cgroup2), attached to no tree, so nobody else sees it: where the process's
 * mount namespace has no cgroup mount (`ip netns exec` mounts a fresh /sys). Needs
 * CAP_SYS_ADMIN (debitd at start, as root). A descriptor, or -1. */
static int private_mount(int version, const char *controllers)
{
    int fs = fsopen(version == 1 ? "cgroup" : "cgroup2", FSOPEN_CLOEXEC);
    if (fs < 0)
        return -1;
    int ok = 1;
    for (const char *p = controllers; version == 1 && ok && *p;) {
        size_t n = strcspn(p, ",");
        char opt[64];
        snprintf(opt, sizeof opt, "%.*s", (int)n, p);
        if (strncmp(opt, "name=", 5) == 0)
            ok = fsconfig(fs, FSCONFIG_SET_STRING, "name", opt + 5, 0) == 0;
        else if (opt[0])
            ok = fsconfig(fs, FSCONFIG_SET_FLAG, opt, NULL, 0) == 0;
        p += n + (p[n] == ',');
    }
    int mnt = -1;
    if (ok && fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
        mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
    int e = errno;
    close(fs);
    errno = e;
    return mnt;
}

int cgroup_mount_find(const char *root, struct cgroup_mount *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    m->fd = -1;
    struct self_cgroup sc;
    if (self_cgroup_read(root, &sc, err, errlen) < 0)
        return -1;
    if (!sc.have_v1 && !sc.have_v2)
        return 0;
    int v1 = sc.have_v1; /* bound to a v1 hierarchy: never also in v2 */
    struct mount m1, m2;
    if (mounts_of(root, "/proc/self", &m1, &m2, err, errlen) < 0)
        return -1;
    const struct mount *mt = v1 ? &m1 : &m2;
    char base[512];
    under_root(root, "", base, sizeof base);
    if (!mt->found && (!root || strcmp(root, "/") == 0)) {
        /* not mounted here (`ip netns exec` mounts a fresh /sys): a private mount of it */
        int fd = private_mount(v1 ? 1 : 2, sc.v1controllers);
        if (fd >= 0) {
            m->version = v1 ? 1 : 2;
            m->fd = fd;
            snprintf(m->root, sizeof m->root, "/");
            snprintf(m->dir, sizeof m->dir, "(a private mount of cgroup%s%s)", v1 ? " " : "2",
                     v1 ? sc.v1controllers : "");
            return 1;
        }
    }
    if (!mt->found) {
        /* else PID 1's namespace, where the kernel lets us look (at start, as root) */
        if (mounts_of(root, "/proc/1", &m1, &m2, err, errlen) < 0 || !mt->found)
            return 0;
        under_root(root, "/proc/1/root", base, sizeof base);
    }
    m->version = v1 ? 1 : 2;
    snprintf(m->root, sizeof m->root, "%s", mt->root);
    snprintf(m->dir, sizeof m->dir, "%s%s", base, mt->point);
    m->fd = open(m->dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (m->fd < 0) {
        int e = errno;
        err_set(err, errlen, "cannot open %s: %s", m->dir, strerror(e));
        return -1;
    }
    return 1;
}

void cgroup_mount_close(struct cgroup_mount *m)
{
    if (m->fd >= 0)
        close(m->fd);
    memset(m, 0, sizeof *m);
    m->fd = -1;
}

int cgroup_cpu_find(const char *root, const struct cgroup_mount *m, struct cgroup_cpu *cg, char *err,
                    size_t errlen)
{
    memset(cg, 0, sizeof *cg);
    cg->dirfd = -1;
    struct self_cgroup sc;
    if (self_cgroup_read(root, &sc, err, errlen) < 0)
        return -1;
    if (m->fd < 0 || (m->version == 1 && !sc.have_v1) || (m->version == 2 && (sc.have_v1 || !sc.have_v2)))
        return 0;
    const char *path = m->version == 1 ? sc.v1path : sc.v2path;
    /* PATH relative to the mounted part of the hierarchy (a cgroup namespace mounts a part) */
    const char *rel = path;
    size_t mr = strlen(m->root);
    if (strcmp(m->root, "/") != 0 && strncmp(path, m->root, mr) == 0 && (path[mr] == '/' || !path[mr]))
        rel = path + mr;
    while (*rel == '/')
        rel++;
    cg->version = m->version;
    cg->dirfd = m->fd;
    snprintf(cg->path, sizeof cg->path, "%s", path);
    snprintf(cg->rel, sizeof cg->rel, "%s", *rel ? rel : ".");
    snprintf(cg->dir, sizeof cg->dir, "%s%s%s", m->dir, *rel ? "/" : "", rel);
    if (m->version == 1)
        return 1;
    char at[600], shown[1800];
    snprintf(at, sizeof at, "%s/cgroup.controllers", cg->rel);
    snprintf(shown, sizeof shown, "%s/cgroup.controllers", cg->dir);
    char *text = read_all_at(cg->dirfd, at, shown, err, errlen);
    if (!text)
        return -1;
    size_t n = strcspn(text, "\n");
    int cpu = has_token(text, n, "cpu", ' ');
    free(text);
    return cpu;
}

/* One unsigned decimal number (and a newline) in S; 0, or -1 with err naming PATH. */
static int parse_u64(const char *s, const char *path, uint64_t *v, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (end == s || *s == '-' || errno || (*end && *end != '\n') || (*end && end[1]))
        return err_set(err, errlen, "%s: not a number: \"%.*s\"", path, (int)strcspn(s, "\n"), s);
    *v = x;
    return 0;
}

/* CG's file NAME; PATH gets its name for messages. */
static char *read_in(const struct cgroup_cpu *cg, const char *name, char *path, size_t len, char *err,
                     size_t errlen)
{
    char at[600];
    snprintf(at, sizeof at, "%s/%s", cg->rel, name);
    snprintf(path, len, "%s/%s", cg->dir, name);
    return read_all_at(cg->dirfd, at, path, err, errlen);
}

int cgroup_cpu_budget(const struct cgroup_cpu *cg, struct cgroup_budget *b, char *err, size_t errlen)
{
    char path[1800];
    memset(b, 0, sizeof *b);
    int r = -1;
    if (cg->version == 1) {
        char *q = read_in(cg, "cpu.cfs_quota_us", path, sizeof path, err, errlen), *p = NULL;
        if (!q)
            return -1;
        if (strcmp(q, "-1\n") == 0 || strcmp(q, "-1") == 0)
            r = 0;
        else if ((r = parse_u64(q, path, &b->quota_us, err, errlen)) == 0)
            b->limited = 1;
        if (r == 0 && (p = read_in(cg, "cpu.cfs_period_us", path, sizeof path, err, errlen)))
            r = parse_u64(p, path, &b->period_us, err, errlen);
        else
            r = -1;
        free(q);
        free(p);
    } else {
        char at[600];
        snprintf(at, sizeof at, "%s/cpu.max", cg->rel);
        if (faccessat(cg->dirfd, at, F_OK, 0) < 0 && errno == ENOENT && strcmp(cg->rel, ".") == 0)
            return 0; /* the root cgroup has no limit and no cpu.max */
        char *t = read_in(cg, "cpu.max", path, sizeof path, err, errlen);
        if (!t)
            return -1;
        /* "QUOTA PERIOD", QUOTA "max" for none */
        char quota[32];
        unsigned long long period;
        int used = 0;
        if (sscanf(t, "%31s %llu%n", quota, &period, &used) != 2 || (t[used] && strcmp(t + used, "\n") != 0)) {
            r = err_set(err, errlen, "%s: not \"QUOTA PERIOD\": \"%.*s\"", path, (int)strcspn(t, "\n"), t);
        } else if (strcmp(quota, "max") == 0) {
            b->period_us = period;
            r = 0;
        } else if ((r = parse_u64(quota, path, &b->quota_us, err, errlen)) == 0) {
            b->period_us = period;
            b->limited = 1;
        }
        free(t);
    }
    if (r == 0 && b->limited && b->period_us == 0)
        r = err_set(err, errlen, "%s: a period of 0", path);
    return r;
}

int cgroup_stat_parse(int version, const char *text, struct cgroup_stat *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    int lineno = 0;
    for (const char *line = text; *line;) {
        size_t n = strcspn(line, "\n");
        lineno++;
        if (n) { /* "NAME DIGITS", by hand: this runs twice per transfer under a quota */
            size_t k = strcspn(line, " \n"), d = k + 1;
            unsigned long long v = 0;
            int ok = k > 0 && k < n && line[k] == ' ' && d < n;
            for (; ok && d < n; d++) {
                unsigned digit = (unsigned)(line[d] - '0');
                ok = digit <= 9 && v <= (~0ULL - digit) / 10;
                v = v * 10 + digit;
            }
            if (!ok)
                return err_set(err, errlen, "cpu.stat: line %d: not \"NAME NUMBER\": \"%.*s\"", lineno,
                               (int)(n > 60 ? 60 : n), line);
#define IS(s) (k == sizeof(s) - 1 && memcmp(line, s, k) == 0)
            if (IS("nr_periods"))
                st->nr_periods = v;
            else if (IS("nr_throttled"))
                st->nr_throttled = v;
            else if (version == 1 && IS("throttled_time"))
                st->throttled_ns = v;
            else if (version == 2 && IS("throttled_usec"))
                st->throttled_ns = v * 1000;
#undef IS
        }
        line += n + (line[n] == '\n');
    }
    return 0;
}

int cgroup_stat_open(const struct cgroup_cpu *cg, char *err, size_t errlen)
{
    char at[600];
    snprintf(at, sizeof at, "%s/cpu.stat", cg->rel);
    int fd = openat(cg->dirfd, at, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return err_set(err, errlen, "cannot read %s/cpu.stat: %s", cg->dir, strerror(errno));
    return fd;
}

int cgroup_stat_read(int fd, int version, struct cgroup_stat *st, char *err, size_t errlen)
{
    char buf[1024];
    ssize_t n;
    do
        n = pread(fd, buf, sizeof buf - 1, 0);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return err_set(err, errlen, "cpu.stat: %s", strerror(errno));
    buf[n] = 0;
    return cgroup_stat_parse(version, buf, st, err, errlen);
}

double cgroup_quota_pct(const struct cgroup_budget *b)
{
    if (!b->limited || !b->period_us)
        return -1;
    return (double)b->quota_us * 100.0 / (double)b->period_us;
}

void cgroup_format(const struct cgroup_cpu *cg, const struct cgroup_budget *b, char *buf, size_t len)
{
    if (!cg || !b || !b->limited || !b->period_us) {
        snprintf(buf, len, "none");
        return;
    }
    snprintf(buf, len, "quota=%.4g%%; period=%.4gms; cgroup=v%d:%s", cgroup_quota_pct(b),
             (double)b->period_us / 1000.0, cg->version, cg->path);
}
