/* offload_session: see offload_session.h. */
#include "offload_session.h"
#include "offload_int.h"

#include "err.h"
#include "sys.h"

#include <errno.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

struct offload_session {
    int active;
    pid_t owner;        /* a forked child must not restore its parent's change */
    char *state_path;   /* NULL: no state file */
    struct offload_state before, after;
    /* Prepared at begin for the signal handler: only ioctl and unlink there. */
    int fd;
    struct ifreq ifr;
    void *req;
};

/* Active sessions, read by the signal handler. */
static struct offload_session *volatile registry[OFFLOAD_SESSION_MAX];
static int atexit_done;

struct offload_session *offload_session_new(void)
{
    struct offload_session *s = calloc(1, sizeof *s);
    if (s)
        s->fd = -1;
    return s;
}

/* Is the namespace with this inode the initial one? pid 1's is the reference; where it
 * cannot be read (a sandbox), newer kernels give init_net a fixed inode
 * (PROC_NET_INIT_INO). */
static int initial_netns(unsigned long long ino)
{
    struct stat init;
    if (stat("/proc/1/ns/net", &init) == 0)
        return (unsigned long long)init.st_ino == ino;
    return ino == 0xEFFFFFF9ULL;
}

int offload_session_default_path(const char *ifname, char *buf, size_t len)
{
    /* Interface names are per network namespace and /run is not: outside the initial
     * namespace, the namespace's inode goes into the name, so that two namespaces'
     * "eth0" (two labs, two containers) never share a state file, while a restart in
     * the same namespace still finds the one a killed run left. */
    unsigned long long self = sys_netns_inode();
    if (self && !initial_netns(self))
        return snprintf(buf, len, "/run/debit/offload-%s@net%llu.state", ifname, self);
    return snprintf(buf, len, "/run/debit/offload-%s.state", ifname);
}

const struct offload_state *offload_session_before(const struct offload_session *s)
{
    return s && s->active ? &s->before : NULL;
}

const struct offload_state *offload_session_after(const struct offload_session *s)
{
    return s && s->active ? &s->after : NULL;
}

static void unregister(struct offload_session *s)
{
    for (int i = 0; i < OFFLOAD_SESSION_MAX; i++)
        if (registry[i] == s)
            registry[i] = NULL;
}

static void release(struct offload_session *s)
{
    unregister(s);
    if (s->fd >= 0)
        close(s->fd);
    s->fd = -1;
    free(s->req);
    s->req = NULL;
    free(s->state_path);
    s->state_path = NULL;
    s->active = 0;
}

static void end_all_at_exit(void)
{
    char err[256];
    for (int i = 0; i < OFFLOAD_SESSION_MAX; i++) {
        struct offload_session *s = registry[i];
        if (s && s->owner == getpid())
            offload_session_end(s, err, sizeof err); /* on failure the state file remains */
    }
}

/* Async-signal-safe: restore every active session of this process with its prepared
 * ioctl (unverified) and unlink its state file when the ioctl succeeded. Only the fatal
 * signal handler below calls it: a handler that returns to main ends sessions there. */
static void restore_all_signal_safe(void)
{
    int saved = errno;
    pid_t me = getpid();
    for (int i = 0; i < OFFLOAD_SESSION_MAX; i++) {
        struct offload_session *s = registry[i];
        if (!s || s->owner != me || s->fd < 0)
            continue;
        if (ioctl(s->fd, SIOCETHTOOL, &s->ifr) >= 0 && s->state_path)
            unlink(s->state_path);
    }
    errno = saved;
}

static void on_fatal_signal(int sig)
{
    restore_all_signal_safe();
    /* SA_RESETHAND made the disposition default again: die of the same signal. */
    raise(sig);
}

void offload_session_handle_signals(void)
{
    static const int sigs[] = {SIGTERM, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa;
        if (sigaction(sigs[i], NULL, &old) < 0)
            continue;
        if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
            continue; /* the program's own handler, or already ours */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_fatal_signal;
        sa.sa_flags = SA_RESETHAND | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

static int same_bits(const struct offload_state *a, const struct offload_state *b)
{
    for (int f = 0; f < OFFLOAD_SETTABLE; f++) {
        if (a->f[f].nbits != b->f[f].nbits)
            return 0;
        for (unsigned i = 0; i < a->f[f].nbits; i++)
            if (strcmp(a->f[f].bits[i].name, b->f[f].bits[i].name) ||
                a->f[f].bits[i].active != b->f[f].bits[i].active ||
                a->f[f].bits[i].requested != b->f[f].bits[i].requested)
                return 0;
    }
    return 1;
}

/* A leftover state file: restore it if its owner is dead, refuse to touch a live one. */
static enum offload_err recover_first(const char *path, char *note, size_t notelen, char *err, size_t errlen)
{
    struct offload_state saved;
    struct offload_saved_info info;
    char e2[512];
    enum offload_err e = offload_state_load(path, &saved, &info, e2, sizeof e2);
    if (e == OFFLOAD_ERR_NO_STATE)
        return OFFLOAD_OK;
    e = offload_state_recover(path, NULL, e2, sizeof e2);
    switch (e) {
    case OFFLOAD_OK:
        if (note)
            snprintf(note, notelen, "restored %s offloads left by pid %d (state file %s)", saved.ifname,
                     (int)info.pid, path);
        return OFFLOAD_OK;
    case OFFLOAD_ERR_NO_STATE:
        return OFFLOAD_OK;
    case OFFLOAD_ERR_STATE_STALE:
        if (access(path, F_OK) != 0) { /* removed: it could never apply */
            if (note)
                snprintf(note, notelen, "%s", e2);
            return OFFLOAD_OK;
        }
        err_set(err, errlen, "%s (use a distinct state file per instance)", e2);
        return e;
    case OFFLOAD_ERR_STATE_OWNER:
        err_set(err, errlen, "%s (use a distinct state file per instance)", e2);
        return e;
    default:
        err_set(err, errlen, "%s", e2);
        return e;
    }
}

enum offload_err offload_session_begin(struct offload_session *s, const char *ifname,
                                       const struct offload_wish *wish, const char *state_path,
                                       char *note, size_t notelen, char *err, size_t errlen)
{
    if (note && notelen)
        note[0] = 0;
    if (s->active) {
        err_set(err, errlen, "%s: offload session already active on %s", ifname, s->before.ifname);
        return OFFLOAD_ERR_ARG;
    }
    int slot = -1;
    for (int i = 0; i < OFFLOAD_SESSION_MAX; i++) {
        const struct offload_session *o = registry[i];
        if (!o) {
            if (slot < 0)
                slot = i;
            continue;
        }
        /* Two sessions on one interface would restore each other's "before". */
        if (o->owner == getpid() && (strcmp(o->before.ifname, ifname) == 0 ||
                                     (state_path && o->state_path && strcmp(o->state_path, state_path) == 0))) {
            err_set(err, errlen, "%s: another offload session of this process is active on %s", ifname,
                     o->before.ifname);
            return OFFLOAD_ERR_ARG;
        }
    }
    if (slot < 0) {
        err_set(err, errlen, "%s: more than %d offload sessions at once", ifname, OFFLOAD_SESSION_MAX);
        return OFFLOAD_ERR_ARG;
    }
    enum offload_err e;
    if (state_path) {
        e = recover_first(state_path, note, notelen, err, errlen);
        if (e)
            return e;
    }
    /* Save before touching anything: a crash between apply and save would lose it. */
    struct offload_state pre;
    e = offload_get(ifname, &pre, err, errlen);
    if (e)
        return e;
    if (state_path && (e = offload_state_save(state_path, &pre, err, errlen)) != OFFLOAD_OK)
        return e;
    e = offload_apply(ifname, wish, &s->before, &s->after, err, errlen);
    if (e) {
        char e2[256];
        if (state_path) /* nothing changed, or rolled back */
            offload_state_remove(state_path, e2, sizeof e2);
        return e;
    }
    char e2[512];
    if (state_path && !same_bits(&pre, &s->before) &&
        (e = offload_state_save(state_path, &s->before, e2, sizeof e2)) != OFFLOAD_OK)
        goto undo;
    if ((e = offload_prepare_restore(&s->before, &s->req, e2, sizeof e2)) != OFFLOAD_OK)
        goto undo;
    s->fd = offload_ctl_socket();
    if (s->fd < 0) {
        err_set(e2, sizeof e2, "%s: socket: %s", ifname, strerror(errno));
        e = OFFLOAD_ERR_SYSTEM;
        goto undo;
    }
    memset(&s->ifr, 0, sizeof s->ifr);
    memcpy(s->ifr.ifr_name, s->before.ifname, sizeof s->before.ifname);
    s->ifr.ifr_data = s->req;
    if (state_path && !(s->state_path = strdup(state_path))) {
        err_set(e2, sizeof e2, "out of memory");
        e = OFFLOAD_ERR_SYSTEM;
        goto undo;
    }
    s->owner = getpid();
    s->active = 1;
    if (!atexit_done && atexit(end_all_at_exit) == 0)
        atexit_done = 1;
    registry[slot] = s; /* last: the signal handler sees only complete sessions */
    return OFFLOAD_OK;

undo:;
    char e3[256];
    err_set(err, errlen, "%s", e2);
    if (offload_restore(&s->before, NULL, e3, sizeof e3) == OFFLOAD_OK && state_path)
        offload_state_remove(state_path, e3, sizeof e3);
    release(s);
    return e;
}

enum offload_err offload_session_end(struct offload_session *s, char *err, size_t errlen)
{
    if (!s || !s->active)
        return OFFLOAD_OK;
    unregister(s);
    enum offload_err e = offload_restore(&s->before, NULL, err, errlen);
    if (e == OFFLOAD_OK && s->state_path)
        e = offload_state_remove(s->state_path, err, errlen);
    release(s);
    return e;
}

void offload_session_free(struct offload_session *s)
{
    if (!s)
        return;
    char err[256];
    offload_session_end(s, err, sizeof err);
    free(s);
}
