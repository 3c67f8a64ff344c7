/* delay: see delay.h. The public API, the netem probe, and the delay-line mechanism
 * (a child process, debit-delayline). The netem mechanism is in delay_netem.c. */
#include "delay.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "array.h"
#include "delay_int.h"
#include "err.h"
#include "lossrate.h"
#include "sys.h"
#include "wire.h"

#define DEFAULT_QUEUE 7301u
#define READY_TIMEOUT_MS 5000
#define STOP_TIMEOUT_MS 3000

static const char *const mech_names[] = { "auto", "netem", "delayline" };
static const char *const dir_names[] = { "both", "out", "in" };

const char *delay_mechanism_name(enum delay_mechanism m)
{
    return (unsigned)m < ARRAY_SIZE(mech_names) ? mech_names[m] : "?";
}

int delay_mechanism_parse(const char *name, enum delay_mechanism *out)
{
    for (unsigned i = 0; name && i < ARRAY_SIZE(mech_names); i++)
        if (!strcmp(name, mech_names[i])) { *out = (enum delay_mechanism)i; return 0; }
    return -1;
}

const char *delay_dir_name(enum delay_dir dir)
{
    return (unsigned)dir < ARRAY_SIZE(dir_names) ? dir_names[dir] : "?";
}

int delay_dir_parse(const char *name, enum delay_dir *out)
{
    for (unsigned i = 0; name && i < ARRAY_SIZE(dir_names); i++)
        if (!strcmp(name, dir_names[i])) { *out = (enum delay_dir)i; return 0; }
    return -1;
}

void delay_split(const struct delay *d, uint64_t *out_us, uint64_t *in_us)
{
    switch (d->dir) {
    case DELAY_DIR_OUT: *out_us = d->rtt_us; *in_us = 0; break;
    case DELAY_DIR_IN: *out_us = 0; *in_us = d->rtt_us; break;
    default: *out_us = d->rtt_us / 2; *in_us = d->rtt_us - d->rtt_us / 2; break;
    }
}

/* ---- netem probe --------------------------------------------------------------------- */

int delay_netem_available(char *err, size_t errlen)
{
    static int cached = -2;
    if (cached >= 0) return cached;
    pid_t pid = fork();
    if (pid < 0) {
        return err_set(err, errlen, "netem probe: fork: %s", strerror(errno));
    }
    if (pid == 0) {
        /* Scratch namespace: dies with this child. Raw netlink only: no allocation
         * after fork in a possibly multi-threaded parent. */
        if (unshare(CLONE_NEWNET) < 0) _exit(3);
        struct delay_nlmsg m;
        if (delay_nl_build_netem_add(&m, 1 /* lo */, 0x10000 /* 1: */, 1000, 1000) < 0) _exit(4);
        int rc = delay_nl_exec(&m);
        if (rc == 0) _exit(0);
        if (rc == -ENOENT || rc == -EOPNOTSUPP) _exit(1);
        if (rc == -EPERM) _exit(3);
        _exit(4);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            return err_set(err, errlen, "netem probe: waitpid: %s", strerror(errno));
        }
    }
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 4;
    if (code == 0 || code == 1) {
        cached = code == 0;
        return cached;
    }
    err_set(err, errlen, code == 3 ? "netem probe: cannot create a scratch network namespace "
                                      "(needs root: CAP_SYS_ADMIN and CAP_NET_ADMIN)"
                                    : "netem probe: unexpected netlink error");
    return -1;
}

/* ---- handle ---------------------------------------------------------------------------- */

struct delay *delay_new(const char *dev, uint64_t rtt_us, char *err, size_t errlen)
{
    if (!dev || !*dev || strlen(dev) >= IF_NAMESIZE || strpbrk(dev, " /")) {
        err_set(err, errlen, "delay device '%s' is not a valid interface name", dev ? dev : "");
        return NULL;
    }
    if (rtt_us > DELAY_MAX_US) {
        err_set(err, errlen, "delay must be between 1 us and 10 s");
        return NULL;
    }
    struct delay *d = calloc(1, sizeof *d);
    if (!d) { err_set(err, errlen, "out of memory"); return NULL; }
    snprintf(d->dev, sizeof d->dev, "%s", dev);
    d->rtt_us = rtt_us;
    d->dir = DELAY_DIR_BOTH;
    d->want = DELAY_MECH_AUTO;
    d->used = DELAY_MECH_AUTO;
    d->rate_hint = 10000000000ull;
    d->queue_num = DEFAULT_QUEUE;
    d->pid = -1;
    d->out_fd = -1;
    return d;
}

static int check_idle(const struct delay *d, char *err, size_t errlen)
{
    if (!d->applied) return 0;
    return err_set(err, errlen, "delay settings cannot change while the delay is applied");
}

int delay_set_direction(struct delay *d, enum delay_dir dir, char *err, size_t errlen)
{
    if (check_idle(d, err, errlen) < 0) return -1;
    if ((unsigned)dir > DELAY_DIR_IN) return err_set(err, errlen, "bad delay direction");
    d->dir = dir;
    return 0;
}

int delay_set_mechanism(struct delay *d, enum delay_mechanism m, char *err, size_t errlen)
{
    if (check_idle(d, err, errlen) < 0) return -1;
    if ((unsigned)m > DELAY_MECH_DELAYLINE) return err_set(err, errlen, "bad delay mechanism");
    d->want = m;
    return 0;
}

int delay_set_rate_hint(struct delay *d, uint64_t bits_per_s, char *err, size_t errlen)
{
    if (check_idle(d, err, errlen) < 0) return -1;
    if (bits_per_s < 1000) return err_set(err, errlen, "delay rate hint must be at least 1 kbit/s");
    d->rate_hint = bits_per_s;
    return 0;
}

int delay_set_delayline_path(struct delay *d, const char *path, char *err, size_t errlen)
{
    if (check_idle(d, err, errlen) < 0) return -1;
    if (!path || !*path || strlen(path) >= sizeof d->delayline_path)
        return err_set(err, errlen, "delay line path is empty or too long");
    snprintf(d->delayline_path, sizeof d->delayline_path, "%s", path);
    return 0;
}

int delay_set_queue_num(struct delay *d, unsigned queue_num, char *err, size_t errlen)
{
    if (check_idle(d, err, errlen) < 0) return -1;
    if (queue_num > 65535) return err_set(err, errlen, "queue number must be 0..65535");
    d->queue_num = queue_num;
    return 0;
}

int delay_set_loss(struct delay *d, uint32_t ppm, char *err, size_t errlen)
{
    if (check_idle(d, err, errlen) < 0) return -1;
    if (ppm > LOSSRATE_PPM_MAX) return err_set(err, errlen, "loss rate above 100%%");
    d->loss_ppm = ppm;
    return 0;
}

uint32_t delay_loss(const struct delay *d) { return d->loss_ppm; }

void delay_set_seed(struct delay *d, uint64_t seed)
{
    if (d->applied) return;
    d->seed = seed;
    d->seed_known = d->seed_given = 1;
}

int delay_seed(const struct delay *d, uint64_t *seed)
{
    if (!d->seed_known || (d->applied && d->used != DELAY_MECH_DELAYLINE)) return 0;
    *seed = d->seed;
    return 1;
}

int delay_set_ipv6(struct delay *d, int enabled, char *err, size_t errlen)
{
    if (check_idle(d, err, errlen) < 0) return -1;
    d->no_ipv6 = !enabled;
    return 0;
}

enum delay_mechanism delay_mechanism_used(const struct delay *d) { return d->applied ? d->used : DELAY_MECH_AUTO; }
int delay_output_fd(const struct delay *d) { return d->out_fd; }

int delay_describe(const struct delay *d, char *buf, size_t len)
{
    char what[160], loss[16], via[32];
    lossrate_format(d->loss_ppm, loss, sizeof loss);
    if (d->applied) snprintf(via, sizeof via, " via %s", delay_mechanism_name(d->used));
    else snprintf(via, sizeof via, ", not applied");
    if (d->rtt_us == 0) {
        /* A loss-only path: the loss, and the directions it covers. */
        const char *dir = d->dir == DELAY_DIR_BOTH ? "each direction"
                        : d->dir == DELAY_DIR_OUT ? "outgoing packets" : "incoming packets";
        return snprintf(buf, len, "%s loss on %s (%s)%s", loss, d->dev, dir, via);
    }
    char dur[32];
    if (d->rtt_us % 1000 == 0) snprintf(dur, sizeof dur, "%llu ms", (unsigned long long)(d->rtt_us / 1000));
    else snprintf(dur, sizeof dur, "%.3f ms", (double)d->rtt_us / 1000.0);
    const char *dir = d->dir == DELAY_DIR_BOTH ? "split between both directions"
                    : d->dir == DELAY_DIR_OUT ? "on outgoing packets" : "on incoming packets";
    snprintf(what, sizeof what, "+%s round trip on %s (%s)", dur, d->dev, dir);
    if (!d->loss_ppm)
        return snprintf(buf, len, "%s%s", what, via);
    /* The loss goes where the delay goes: per direction of the same setting. */
    return snprintf(buf, len, "%s, %s loss %s%s%s", what, loss,
                    d->dir == DELAY_DIR_BOTH ? "per direction" : d->dir == DELAY_DIR_OUT ? "outgoing" : "incoming",
                    d->applied ? "," : "", via);
}

/* ---- delay line --------------------------------------------------------------------- */

/* The caller's path, else next to the running executable (build/debit ->
 * build/debit-delayline), else PATH. */
static int find_delayline(struct delay *d, char *err, size_t errlen)
{
    if (d->delayline_path[0]) {
        if (!sys_find_in_path(d->delayline_path, d->exe, sizeof d->exe))
            return err_set(err, errlen, "delay line program %s is not executable", d->delayline_path);
        return 0;
    }
    if (sys_find_beside_self("debit-delayline", d->exe, sizeof d->exe) ||
        sys_find_in_path("debit-delayline", d->exe, sizeof d->exe))
        return 0;
    d->exe[0] = '\0';
    return err_set(err, errlen, "no sch_netem in this kernel and debit-delayline was found neither next "
                   "to this program nor in PATH");
}

static int delayline_apply(struct delay *d, char *err, size_t errlen)
{
    if (find_delayline(d, err, errlen) < 0) return -1;
    uint64_t out_us, in_us;
    delay_split(d, &out_us, &in_us);
    /* debit-delayline holds each packet of the chosen directions for one --delay. For
     * "both" that is half the round trip each way. */
    const char *dir = d->dir == DELAY_DIR_OUT ? "out" : d->dir == DELAY_DIR_IN ? "in" : "both";
    uint64_t hold = d->dir == DELAY_DIR_OUT ? out_us : d->dir == DELAY_DIR_IN ? in_us : d->rtt_us / 2;
    char delay_arg[32];
    snprintf(delay_arg, sizeof delay_arg, "%lluus", (unsigned long long)hold);
    snprintf(d->qnum_arg, sizeof d->qnum_arg, "%u", d->queue_num);
    /* Built now: delay_remove() may need them in a signal handler. */
    char *v6 = d->no_ipv6 ? "--no-ipv6" : NULL;
    d->cleanup_argv[0] = d->exe;
    d->cleanup_argv[1] = "--cleanup";
    d->cleanup_argv[2] = "--quiet";
    d->cleanup_argv[3] = "--queue-num";
    d->cleanup_argv[4] = d->qnum_arg;
    d->cleanup_argv[5] = v6;
    d->cleanup_argv[6] = NULL;
    /* --loss always (0% is none), --seed N when the caller chose one, then v6, which may be
     * NULL and so ends the list: without a seed its slot comes first and the NULL after it
     * terminates. */
    lossrate_format(d->loss_ppm, d->loss_arg, sizeof d->loss_arg);
    snprintf(d->seed_arg, sizeof d->seed_arg, "%llu", (unsigned long long)d->seed);
    if (!d->seed_given) d->seed_known = 0;
    char *argv[] = { d->exe, "--dev", d->dev, "--delay", delay_arg, "--direction", (char *)dir,
                     "--queue-num", d->qnum_arg, "--loss", d->loss_arg, "--exit-with-parent", "--quiet",
                     d->seed_given ? "--seed" : v6, d->seed_given ? d->seed_arg : NULL, v6, NULL };

    if (d->out_fd >= 0) { close(d->out_fd); d->out_fd = -1; } /* from an earlier apply */
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC) < 0) return err_set(err, errlen, "pipe: %s", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        err_set(err, errlen, "fork: %s", strerror(errno));
        close(pfd[0]);
        close(pfd[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        /* The parent may ignore or block signals; the delay line must see SIGTERM. */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        /* Its own process group: a Ctrl-C on the terminal goes to debit, which then stops
         * the delay line in order (rules out first), instead of both racing. */
        setpgid(0, 0);
        execv(d->exe, argv);
        dprintf(1, "cannot run %s: %s\n", d->exe, strerror(errno));
        _exit(127);
    }
    close(pfd[1]);
    d->pid = pid;
    d->out_fd = pfd[0];

    char out[2048];
    size_t used = 0;
    int64_t deadline = sys_mono_ms() + READY_TIMEOUT_MS;
    for (;;) {
        int64_t left = deadline - sys_mono_ms();
        if (left <= 0) {
            err_set(err, errlen, "debit-delayline did not become ready within %d s", READY_TIMEOUT_MS / 1000);
            break;
        }
        struct pollfd p = { .fd = d->out_fd, .events = POLLIN };
        int rc = poll(&p, 1, (int)left);
        if (rc < 0 && errno == EINTR) continue;
        if (rc <= 0) continue;
        ssize_t n = read(d->out_fd, out + used, sizeof out - 1 - used);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            out[used] = '\0';
            while (used && (out[used - 1] == '\n' || out[used - 1] == ' ')) out[--used] = '\0';
            for (char *c = out; *c; c++) if (*c == '\n') *c = ' ';
            err_set(err, errlen, "debit-delayline failed: %s", used ? out : "exited without a word");
            break;
        }
        used += (size_t)n;
        out[used] = '\0';
        const char *ready = strstr(out, WIRE_DELAY_READY);
        if (ready) {
            /* The seed it drew (when none was given), for the caller to report. */
            const char *sd = strstr(ready, " seed=");
            if (sd && !d->seed_given) {
                char *end;
                unsigned long long v = strtoull(sd + 6, &end, 10);
                if (end != sd + 6) { d->seed = v; d->seed_known = 1; }
            }
            d->used = DELAY_MECH_DELAYLINE;
            return 0;
        }
        if (used + 1 >= sizeof out) used = 0; /* keep reading; the ready line is short */
    }
    /* Failure: make sure it is gone and left nothing behind. */
    kill(pid, SIGTERM);
    sys_reap_child_ms(pid, STOP_TIMEOUT_MS, NULL);
    close(d->out_fd);
    d->out_fd = -1;
    d->pid = -1;
    return -1;
}

/* Async-signal-safe: kill, waitpid, nanosleep, fork, execv, plain stores. */
static int delayline_remove(struct delay *d, char *err, size_t errlen)
{
    if (d->pid <= 0) return 0;
    pid_t pid = d->pid;
    int ret = 0;
    int st = 0;
    kill(pid, SIGTERM);
    /* Stopped in time and exited 0: it removed its own rules. Otherwise (killed, hung,
     * or already dead by a signal) they may remain: remove them here. They fail open
     * (--queue-bypass), so traffic was not blackholed meanwhile, only no longer delayed. */
    if (!sys_reap_child_ms(pid, STOP_TIMEOUT_MS, &st) || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        pid_t c = fork();
        if (c == 0) {
            int fd = open("/dev/null", O_WRONLY);
            if (fd >= 0) { dup2(fd, 1); dup2(fd, 2); }
            execv(d->exe, d->cleanup_argv);
            _exit(127);
        }
        int cst = 0;
        if (c < 0 || !sys_reap_child_ms(c, 5000, &cst) || !WIFEXITED(cst) || WEXITSTATUS(cst) != 0) {
            ret = -1;
            if (err && errlen) {
                const char *m = "debit-delayline did not stop cleanly; its iptables rules may "
                                "remain (debit-delayline --cleanup removes them)";
                size_t i = 0;
                for (; m[i] && i + 1 < errlen; i++) err[i] = m[i];
                err[i] = '\0';
            }
        }
    }
    d->pid = -1;
    return ret;
}

/* ---- apply / remove ----------------------------------------------------------------- */

int delay_apply(struct delay *d, char *err, size_t errlen)
{
    if (d->applied) return err_set(err, errlen, "delay on %s is already applied", d->dev);
    if (d->rtt_us == 0 && d->loss_ppm == 0)
        return err_set(err, errlen, "nothing to apply on %s: no delay and no loss", d->dev);
    if (if_nametoindex(d->dev) == 0)
        return err_set(err, errlen, "%s: no such network interface in this namespace", d->dev);
    enum delay_mechanism m = d->want;
    if (m == DELAY_MECH_AUTO) {
        int have = delay_netem_available(err, errlen);
        if (have < 0) return -1;
        m = have ? DELAY_MECH_NETEM : DELAY_MECH_DELAYLINE;
    }
    int rc;
    if (m == DELAY_MECH_NETEM) {
        rc = delay_netem_apply(d, err, errlen);
        if (rc == 0) d->used = DELAY_MECH_NETEM;
    } else {
        rc = delayline_apply(d, err, errlen);
    }
    if (rc == 0) d->applied = 1;
    return rc;
}

int delay_remove(struct delay *d, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!d || !d->applied) return 0;
    /* One remover at a time: a signal handler arriving during a removal returns at once. */
    if (__atomic_exchange_n(&d->removing, 1, __ATOMIC_SEQ_CST)) return 0;
    int rc = d->used == DELAY_MECH_NETEM ? delay_netem_remove(d, err, errlen)
                                         : delayline_remove(d, err, errlen);
    d->applied = 0;
    d->removing = 0;
    return rc;
}

void delay_free(struct delay *d)
{
    if (!d) return;
    char err[256];
    delay_remove(d, err, sizeof err);
    if (d->out_fd >= 0) close(d->out_fd);
    free(d);
}
