/* offload state files: see offload.h ("crash recovery") and docs/offload.md.
 *
 * Format: a line-oriented text file, so that an operator can read it and `ethtool -K` by
 * hand if everything else fails:
 *   # debit offload state ...
 *   version 1
 *   interface veth0
 *   ifindex 7
 *   netns 4026532291
 *   pid 1234
 *   pid_start 5678
 *   saved_at 1764472800
 *   bit tso tx-tcp-segmentation requested=1 active=1 fixed=0
 *   ...                     (one line per tso/gso/gro kernel bit) */
#include "offload.h"
#include "offload_int.h"

#include "err.h"
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STATE_VERSION 1

/* Field 22 of /proc/PID/stat: start time in clock ticks after boot; 0 if unknown. It
 * tells a live owner from an unrelated process that reused the pid. */
static unsigned long long pid_start_time(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')'); /* comm may hold spaces and parentheses */
    if (!p)
        return 0;
    p++;
    for (int field = 3; field < 22 && p; field++) { /* p is before field 3 */
        p = strchr(p + 1, ' ');
    }
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* mkdir -p of PATH's parent directory. An action: 0 or -1 (err filled). */
static int make_parent_dirs(const char *path, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
        return err_set(err, errlen, "%s: path too long", path);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return 0;
    *slash = 0;
    for (char *p = dir + 1; ; p++) {
        if (*p == '/' || *p == 0) {
            char c = *p;
            *p = 0;
            if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
                return err_set(err, errlen, "%s: cannot create directory %s: %s", path, dir, strerror(errno));
            }
            *p = c;
            if (!c)
                break;
        }
    }
    return 0;
}

enum offload_err offload_state_save(const char *path, const struct offload_state *before,
                                    char *err, size_t errlen)
{
    if (!path || !*path) {
        err_set(err, errlen, "empty offload state file path");
        return OFFLOAD_ERR_ARG;
    }
    if (make_parent_dirs(path, err, errlen) < 0)
        return OFFLOAD_ERR_STATE_FILE;
    /* 0644 whatever the umask: operators may read it, it holds no secret. Replaced
     * atomically and durably: a crash right after must find the whole old or new file. */
    struct sys_atomic a;
    FILE *f = sys_atomic_open(&a, path, 0644, err, errlen);
    if (!f)
        return OFFLOAD_ERR_STATE_FILE;
    fprintf(f, "# debit offload state: the interface's offloads before debit changed them.\n"
               "# Removed when they are restored; if it outlives its process, `debitd --restore-offload`\n"
               "# (or the next start) puts them back.\n");
    fprintf(f, "version %d\ninterface %s\nifindex %d\nnetns %llu\npid %d\npid_start %llu\nsaved_at %lld\n",
            STATE_VERSION, before->ifname, before->ifindex, sys_netns_inode(), (int)getpid(),
            pid_start_time(getpid()), (long long)time(NULL));
    for (int fe = 0; fe < OFFLOAD_SETTABLE; fe++) {
        const struct offload_feature_state *fs = &before->f[fe];
        for (unsigned b = 0; b < fs->nbits; b++)
            fprintf(f, "bit %s %s requested=%d active=%d fixed=%d\n", offload_names[fe], fs->bits[b].name,
                    fs->bits[b].requested, fs->bits[b].active, fs->bits[b].fixed);
    }
    if (sys_atomic_commit(&a, err, errlen) < 0)
        return OFFLOAD_ERR_STATE_FILE;
    return OFFLOAD_OK;
}

enum offload_err offload_state_load(const char *path, struct offload_state *st,
                                    struct offload_saved_info *info, char *err, size_t errlen)
{
    struct offload_saved_info i0;
    if (!info)
        info = &i0;
    memset(st, 0, sizeof *st);
    memset(info, 0, sizeof *info);
    FILE *f = fopen(path, "re");
    if (!f) {
        if (errno == ENOENT) {
            err_set(err, errlen, "%s: no saved offload state", path);
            return OFFLOAD_ERR_NO_STATE;
        }
        err_set(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return OFFLOAD_ERR_STATE_FILE;
    }
    char line[256];
    int lineno = 0, version = 0, have_if = 0;
    enum offload_err e = OFFLOAD_OK;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t n = strlen(line);
        if (n && line[n - 1] == '\n')
            line[--n] = 0;
        else if (!feof(f)) {
            e = OFFLOAD_ERR_STATE_FILE;
            err_set(err, errlen, "%s:%d: line too long", path, lineno);
            break;
        }
        if (line[0] == '#' || line[0] == 0)
            continue;
        char key[32], a[64], b[64];
        int ireq, iact, ifix;
        long long v;
        if (sscanf(line, "bit %31s %63s requested=%d active=%d fixed=%d", a, b, &ireq, &iact, &ifix) == 5) {
            enum offload_feature fe;
            if (offload_feature_parse(a, &fe) < 0 || fe >= OFFLOAD_SETTABLE || strlen(b) >= OFFLOAD_BIT_NAME_LEN) {
                e = OFFLOAD_ERR_STATE_FILE;
                err_set(err, errlen, "%s:%d: bad feature line", path, lineno);
                break;
            }
            struct offload_feature_state *fs = &st->f[fe];
            if (fs->nbits >= OFFLOAD_MAX_BITS) {
                e = OFFLOAD_ERR_STATE_FILE;
                err_set(err, errlen, "%s:%d: too many bits for %s", path, lineno, a);
                break;
            }
            struct offload_bit *bit = &fs->bits[fs->nbits++];
            memcpy(bit->name, b, strlen(b) + 1); /* length checked above */
            bit->requested = ireq != 0;
            bit->active = iact != 0;
            bit->fixed = ifix != 0;
        } else if (sscanf(line, "interface %63s", a) == 1 && strncmp(line, "interface ", 10) == 0) {
            if (strlen(a) >= IF_NAMESIZE) {
                e = OFFLOAD_ERR_STATE_FILE;
                err_set(err, errlen, "%s:%d: interface name too long", path, lineno);
                break;
            }
            memcpy(st->ifname, a, strlen(a) + 1); /* length checked above */
            have_if = 1;
        } else if (sscanf(line, "%31s %lld", key, &v) == 2) {
            if (strcmp(key, "version") == 0)
                version = (int)v;
            else if (strcmp(key, "ifindex") == 0)
                st->ifindex = (int)v;
            else if (strcmp(key, "netns") == 0)
                info->netns = (unsigned long long)v;
            else if (strcmp(key, "pid") == 0)
                info->pid = (pid_t)v;
            else if (strcmp(key, "pid_start") == 0)
                info->pid_start = (unsigned long long)v;
            else if (strcmp(key, "saved_at") == 0)
                info->saved_at = v;
            /* unknown numeric keys: written by a newer version, ignored */
        } else {
            e = OFFLOAD_ERR_STATE_FILE;
            err_set(err, errlen, "%s:%d: cannot parse '%s'", path, lineno, line);
            break;
        }
    }
    fclose(f);
    if (e)
        return e;
    if (version != STATE_VERSION) {
        err_set(err, errlen, "%s: unsupported state file version %d", path, version);
        return OFFLOAD_ERR_STATE_FILE;
    }
    if (!have_if) {
        err_set(err, errlen, "%s: no interface line", path);
        return OFFLOAD_ERR_STATE_FILE;
    }
    for (int fe = 0; fe < OFFLOAD_NFEATURES; fe++)
        offload_feature_summarize(&st->f[fe]);
    return OFFLOAD_OK;
}

enum offload_err offload_state_remove(const char *path, char *err, size_t errlen)
{
    if (unlink(path) < 0 && errno != ENOENT) {
        err_set(err, errlen, "%s: cannot remove: %s", path, strerror(errno));
        return OFFLOAD_ERR_STATE_FILE;
    }
    return OFFLOAD_OK;
}

enum offload_err offload_state_recover(const char *path, struct offload_state *restored,
                                       char *err, size_t errlen)
{
    struct offload_state saved;
    struct offload_saved_info info;
    enum offload_err e = offload_state_load(path, &saved, &info, err, errlen);
    if (e)
        return e;
    if (info.pid > 0 && info.pid != getpid() && (kill(info.pid, 0) == 0 || errno == EPERM)) {
        unsigned long long start = pid_start_time(info.pid);
        if (start == 0 || info.pid_start == 0 || start == info.pid_start) {
            err_set(err, errlen,
                    "%s: offload state of %s belongs to process %d, which is still running; not touching it", path,
                    saved.ifname, (int)info.pid);
            return OFFLOAD_ERR_STATE_OWNER;
        }
    }
    unsigned long long ns = sys_netns_inode();
    if (info.netns && ns && info.netns != ns) {
        err_set(err, errlen, "%s: saved in another network namespace (net:[%llu], this is net:[%llu]); left in place",
                path, info.netns, ns);
        return OFFLOAD_ERR_STATE_STALE;
    }
    int idx = (int)if_nametoindex(saved.ifname);
    if (idx == 0 || (saved.ifindex && idx != saved.ifindex)) {
        char e2[256];
        offload_state_remove(path, e2, sizeof e2);
        if (idx == 0) {
            err_set(err, errlen, "%s: interface %s no longer exists; stale state file removed", path, saved.ifname);
            return OFFLOAD_ERR_STATE_STALE;
        }
        err_set(err, errlen, "%s: interface %s was recreated (index %d, saved %d); stale state file removed", path,
                saved.ifname, idx, saved.ifindex);
        return OFFLOAD_ERR_STATE_STALE;
    }
    e = offload_restore(&saved, restored, err, errlen);
    if (e)
        return e;
    return offload_state_remove(path, err, errlen);
}
