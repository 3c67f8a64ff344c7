/* privdrop: see privdrop.h. */
#include "privdrop.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "err.h"
#include "offload.h"
#include "seccomp_filter.h"
#include "sys.h"
#include "tcp_profile.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PRIVDROP_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(undefined_behavior_sanitizer)
#define PRIVDROP_SANITIZED 1
#endif
#endif
#ifndef PRIVDROP_SANITIZED
#define PRIVDROP_SANITIZED 0
#endif

int privdrop_sanitizer_build(void)
{
    return PRIVDROP_SANITIZED;
}

void privdrop_plan_make(const struct config *cfg, uid_t euid, int offload_restore_pending, int profiles_need_net_admin,
                        struct privdrop_plan *p)
{
    memset(p, 0, sizeof *p);
    p->seccomp = cfg->seccomp;
    if (cfg->user && euid == 0) {
        p->change_id = 1;
        p->uid = cfg->uid;
        p->gid = cfg->gid;
        p->user = cfg->user;
        p->group = cfg->group;
    }
    if (offload_restore_pending) {
        p->keep_net_admin = 1;
        p->why = "the offload restore at exit";
    } else if (profiles_need_net_admin) {
        p->keep_net_admin = 1;
        p->why = "a listener's TCP profile (SO_SNDBUFFORCE or a congestion control outside the allowed list)";
    }
}

int privdrop_profiles_need_net_admin(const struct config *cfg)
{
    int any = 0;
    for (size_t i = 0; i < cfg->n_listen; i++)
        any |= !tcp_profile_is_default(&cfg->listen[i].tcp);
    if (!any)
        return 0;
    /* Whether an algorithm is in net.ipv4.tcp_allowed_congestion_control, whether sndbuf fits
     * net.core.wmem_max: the kernel answers exactly, so ask it — a child without
     * CAP_NET_ADMIN applies every profile to a scratch socket, as debitd will on each
     * accepted one. */
    pid_t pid = fork();
    if (pid < 0)
        return 1; /* cannot tell: keep it, as before this check */
    if (pid == 0) {
        cap_t c = cap_get_proc();
        cap_value_t v[] = {CAP_NET_ADMIN};
        if (!c || cap_set_flag(c, CAP_EFFECTIVE, 1, v, CAP_CLEAR) < 0 || cap_set_proc(c) < 0)
            _exit(1);
        char err[256];
        for (size_t i = 0; i < cfg->n_listen; i++)
            if (!tcp_profile_is_default(&cfg->listen[i].tcp) &&
                tcp_profile_probe(&cfg->listen[i].tcp, cfg->listen[i].sa.ss_family, err, sizeof err) < 0)
                _exit(1);
        _exit(0);
    }
    int status = 0;
    if (sys_reap_child_ms(pid, 5000, &status) == 0 || !WIFEXITED(status))
        return 1;
    return WEXITSTATUS(status) != 0;
}

/* ---- the offload state file's directory ---- */

int privdrop_user_access(const char *path, int mode, uid_t uid, gid_t gid, char *err, size_t errlen)
{
    pid_t pid = fork();
    if (pid < 0)
        return err_set(err, errlen, "fork: %s", strerror(errno));
    if (pid == 0) {
        if (setgroups(1, &gid) < 0 || setresgid(gid, gid, gid) < 0 || setresuid(uid, uid, uid) < 0)
            _exit(2);
        _exit(access(path, mode) == 0 ? 0 : 1);
    }
    int status = 0;
    if (sys_reap_child_ms(pid, 5000, &status) == 0 || !WIFEXITED(status) || WEXITSTATUS(status) > 1)
        return err_set(err, errlen, "checking %s as uid %u: the check failed", path, (unsigned)uid);
    return WEXITSTATUS(status) == 0;
}

/* mkdir -p DIR's parents (0755, root's), then DIR itself. 1 created, 0 existed, -1 err. */
static int make_dir(const char *dir, char *err, size_t errlen)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = 0;
        if (mkdir(p, 0755) < 0 && errno != EEXIST)
            return err_set(err, errlen, "cannot create directory %s: %s", p, strerror(errno));
        *s = '/';
    }
    if (mkdir(p, 0755) == 0)
        return 1;
    if (errno == EEXIST)
        return 0;
    return err_set(err, errlen, "cannot create directory %s: %s", p, strerror(errno));
}

int privdrop_prepare_state_dir(const struct config *cfg, char *note, size_t notelen, char *err, size_t errlen)
{
    const struct offload_cfg *o = &cfg->offload;
    if (notelen)
        note[0] = 0;
    if (!cfg->user || geteuid() != 0 || !o->interface || !o->restore || offload_wish_empty(&o->wish) ||
        !o->state_file)
        return 0;
    char dir[PATH_MAX], def[PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s", o->state_file) >= (int)sizeof dir)
        return err_set(err, errlen, "%s: offload.state_file: path too long", cfg->source);
    char *slash = strrchr(dir, '/');
    if (!slash || slash == dir)
        return err_set(err, errlen, "%s: offload.state_file: \"%s\": with user = \"%s\" the state file needs a "
                       "directory of its own (e.g. %s)", cfg->source, o->state_file, cfg->user,
                       CONFIG_OFFLOAD_STATE_FILE);
    *slash = 0;
    snprintf(def, sizeof def, "%s", CONFIG_OFFLOAD_STATE_FILE);
    *strrchr(def, '/') = 0;
    int created = make_dir(dir, err, errlen);
    if (created < 0)
        return err_prefix(err, errlen, "%s: offload.state_file", cfg->source);
    struct stat st;
    if (stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
        return err_set(err, errlen, "%s: offload.state_file: %s is not a directory", cfg->source, dir);
    /* debitd's own directory (created now, or the default one root still owns) goes to the
     * user, as systemd's RuntimeDirectory= does with User=; a directory the operator chose
     * is never changed. */
    if ((created || (strcmp(dir, def) == 0 && st.st_uid == 0)) && st.st_uid != cfg->uid) {
        if (chown(dir, cfg->uid, cfg->gid) < 0)
            return err_set(err, errlen, "%s: offload.state_file: chown %s to %s: %s", cfg->source, dir, cfg->user,
                           strerror(errno));
        snprintf(note, notelen, "offload: state directory %s %s for user %s", dir,
                 created ? "created" : "given", cfg->user);
        st.st_uid = cfg->uid;
    }
    int ok = privdrop_user_access(dir, W_OK | X_OK, cfg->uid, cfg->gid, err, errlen);
    if (ok < 0)
        return err_prefix(err, errlen, "%s: offload.state_file", cfg->source);
    /* In a sticky directory (/tmp) only the file's owner may remove it, and root writes it. */
    if (!ok || ((st.st_mode & S_ISVTX) && st.st_uid != cfg->uid))
        return err_set(err, errlen, "%s: offload.state_file: user %s could not remove %s after the privilege "
                       "drop (%s is %s); use a directory of its own: a missing one, or the default %s, is "
                       "created for the user", cfg->source, cfg->user, o->state_file, dir,
                       ok ? "sticky" : "not writable or not reachable by that user", def);
    return 0;
}

/* ---- the drop ---- */

/* Threads of this process (/proc/self/task entries); -1 when unknown. */
static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static int set_identity(const struct privdrop_plan *p, char *err, size_t errlen)
{
    if (setgroups(1, &p->gid) < 0)
        return err_set(err, errlen, "setgroups(%u): %s", (unsigned)p->gid, strerror(errno));
    if (setresgid(p->gid, p->gid, p->gid) < 0)
        return err_set(err, errlen, "setresgid(%u): %s", (unsigned)p->gid, strerror(errno));
    if (setresuid(p->uid, p->uid, p->uid) < 0)
        return err_set(err, errlen, "setresuid(%u): %s", (unsigned)p->uid, strerror(errno));
    uid_t r, e, s;
    gid_t rg, eg, sg;
    if (getresuid(&r, &e, &s) < 0 || r != p->uid || e != p->uid || s != p->uid || getresgid(&rg, &eg, &sg) < 0 ||
        rg != p->gid || eg != p->gid || sg != p->gid)
        return err_set(err, errlen, "the user and group did not change as asked");
    /* as OpenSSH does: a drop that root can undo is no drop */
    if (p->uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
        return err_set(err, errlen, "root could be regained after the switch to uid %u", (unsigned)p->uid);
    return 0;
}

/* The bounding set: everything but CAP_NET_ADMIN when kept. Needs CAP_SETPCAP; without it
 * (debitd started unprivileged) it stays, which NoNewPrivs and the filter's refusal of
 * execve make moot: the bounding set only limits what an exec could gain. */
static int drop_bounding(int keep, char *err, size_t errlen)
{
    cap_t cur = cap_get_proc();
    cap_flag_value_t setpcap = CAP_CLEAR;
    if (cur) {
        cap_get_flag(cur, CAP_SETPCAP, CAP_EFFECTIVE, &setpcap);
        cap_free(cur);
    }
    if (setpcap != CAP_SET)
        return 0;
    for (cap_value_t c = 0; c < (cap_value_t)cap_max_bits(); c++)
        if (!(keep && c == CAP_NET_ADMIN) && CAP_IS_SUPPORTED(c) && cap_drop_bound(c) < 0)
            return err_set(err, errlen, "dropping capability %d from the bounding set: %s", (int)c, strerror(errno));
    return 0;
}

/* Seccomp mode of this process (/proc/self/status): 0 none, 2 a filter; -1 unknown. */
static int seccomp_mode(void)
{
    char line[128];
    int mode = -1;
    FILE *f = fopen("/proc/self/status", "re");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "Seccomp:", 8) == 0)
            mode = (int)strtol(line + 8, NULL, 10);
    if (f)
        fclose(f);
    return mode;
}

/* Permitted = effective = {CAP_NET_ADMIN} when kept (and held), else nothing; inheritable
 * and ambient empty. *KEPT says whether CAP_NET_ADMIN remains; *REFUSED is set when a
 * seccomp filter already in force (systemd's SystemCallFilter=~@privileged refuses
 * capset) kept the set as it was started: the service manager's bounding set then rules. */
static int set_caps(int keep, int *kept, int *refused, char *err, size_t errlen)
{
    cap_t cur = cap_get_proc();
    cap_flag_value_t has = CAP_CLEAR;
    if (cur) {
        cap_get_flag(cur, CAP_NET_ADMIN, CAP_PERMITTED, &has);
        cap_free(cur);
    }
    *kept = keep && has == CAP_SET;
    cap_t c = cap_init();
    if (!c)
        return err_set(err, errlen, "cap_init: %s", strerror(errno));
    int r = 0;
    if (*kept) {
        cap_value_t v[] = {CAP_NET_ADMIN};
        r = cap_set_flag(c, CAP_PERMITTED, 1, v, CAP_SET) | cap_set_flag(c, CAP_EFFECTIVE, 1, v, CAP_SET);
    }
    if (r == 0)
        r = cap_set_proc(c);
    int e = errno;
    cap_free(c);
    *refused = r < 0 && e == EPERM && seccomp_mode() == 2;
    if (*refused) {
        *kept = has == CAP_SET;
        return 0;
    }
    if (r < 0)
        return err_set(err, errlen, "setting the capabilities: %s", strerror(e));
    if (CAP_AMBIENT_SUPPORTED() && cap_reset_ambient() < 0)
        return err_set(err, errlen, "clearing the ambient capabilities: %s", strerror(errno));
    return 0;
}

int privdrop_apply(const struct privdrop_plan *p, char *note, size_t notelen, char *err, size_t errlen)
{
    int n = thread_count();
    if (n > 1)
        return err_set(err, errlen, "privilege drop: %d threads are running (it must come before any)", n);
    /* keep the permitted set across setresuid, so that CAP_NET_ADMIN can stay */
    if (p->change_id && p->keep_net_admin && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
        return err_set(err, errlen, "PR_SET_KEEPCAPS: %s", strerror(errno));
    int kept = 0;
    /* the bounding set while CAP_SETPCAP is still effective, the rest after the switch */
    if (drop_bounding(p->keep_net_admin, err, errlen) < 0)
        return -1;
    if (p->change_id) {
        if (set_identity(p, err, errlen) < 0)
            return err_prefix(err, errlen, "user = \"%s\"", p->user);
        if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
            return err_set(err, errlen, "PR_SET_KEEPCAPS: %s", strerror(errno));
    }
    int refused = 0;
    if (set_caps(p->keep_net_admin, &kept, &refused, err, errlen) < 0)
        return -1;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return err_set(err, errlen, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
    const char *sc;
    char scbuf[96];
    if (p->seccomp == CONFIG_SECCOMP_OFF) {
        sc = "off (seccomp = \"off\")";
    } else if (PRIVDROP_SANITIZED) {
        /* LeakSanitizer stops the world through ptrace from a helper task, which needs the
         * process dumpable (a uid change clears that) and calls the filter refuses */
        if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
            return err_set(err, errlen, "PR_SET_DUMPABLE: %s", strerror(errno));
        sc = "not installed (a sanitizer build)";
    } else {
        if (seccomp_filter_install(p->seccomp, err, errlen) < 0)
            return -1;
        snprintf(scbuf, sizeof scbuf, "%zu system calls allowed, others: %s", seccomp_filter_allowed_count(),
                 p->seccomp == CONFIG_SECCOMP_KILL ? "kill" : p->seccomp == CONFIG_SECCOMP_LOG ? "allowed, logged"
                                                                                               : "EPERM, logged");
        sc = scbuf;
    }
    char who[160];
    if (p->change_id)
        snprintf(who, sizeof who, "running as user %s (uid %u, gid %u)", p->user, (unsigned)p->uid,
                 (unsigned)p->gid);
    else
        snprintf(who, sizeof who, "running as uid %u (no user setting: identity kept)", (unsigned)geteuid());
    if (refused)
        snprintf(note, notelen, "privileges: %s; capabilities: left as started (capset refused by the seccomp "
                 "filter already in force: the service manager's bounding set applies); no_new_privs; seccomp: %s",
                 who, sc);
    else
        snprintf(note, notelen, "privileges: %s; capabilities: %s%s%s; no_new_privs; seccomp: %s", who,
                 kept ? "CAP_NET_ADMIN only, for " : "none", kept ? p->why : "",
                 p->keep_net_admin && !kept ? " (CAP_NET_ADMIN was wanted but not held)" : "", sc);
    return 0;
}
