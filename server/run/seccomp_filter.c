/* seccomp_filter: see seccomp_filter.h.
 *
 * The list was found with `strace -f -c` of debitd through tests/e2e/server_*.sh and
 * offload_server.sh, then checked by running those tests with the filter in "eperm" mode
 * and reading the kernel log for denials (docs/server.md, "Least privilege"). It holds what
 * a server of this kind does after start-up: file descriptors, memory, sockets it is given
 * (accept, send, sendfile, TCP_INFO), epoll/eventfd, threads, signals, clocks, the ethtool
 * ioctl of X-Debit-Offload and the offload restore, getifaddrs (an AF_NETLINK route socket),
 * and removing the offload state file at exit. Not in it, among others: execve, fork
 * (clone without CLONE_THREAD), ptrace, kill, connect, listen, setuid and friends, mount,
 * bpf, perf_event_open, io_uring, userfaultfd, keyctl, setns/unshare, chown/chmod by path,
 * link/symlink. */
#include "seccomp_filter.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/sockios.h>
#include <sched.h>
#include <seccomp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <termios.h>

#include "array.h"
#include "err.h"

/* Allowed whatever their arguments. Names, resolved for the running architecture by
 * libseccomp (a name the architecture lacks is skipped). */
static const char *const allowed[] = {
    /* file descriptors and files */
    "read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev", "preadv2", "pwritev2",
    "lseek", "close", "close_range", "open", "openat", "stat", "fstat", "lstat", "newfstatat", "statx",
    "access", "faccessat", "faccessat2", "readlink", "readlinkat", "getdents64", "fcntl", "dup", "dup2",
    "dup3", "pipe", "pipe2", "ftruncate", "fallocate", "fsync", "fdatasync", "fchmod", "unlink", "unlinkat",
    "rename", "renameat", "renameat2", "mkdir", "mkdirat", "umask", "getcwd", "statfs", "fstatfs",
    /* memory (the content memfd, malloc arenas, thread stacks) */
    "mmap", "munmap", "mprotect", "mremap", "madvise", "brk", "memfd_create", "mincore", "membarrier",
    /* sockets handed to debitd: accept, options (TCP profiles, TCP_INFO), send, sendfile */
    "accept", "accept4", "bind", "setsockopt", "getsockopt", "getsockname", "getpeername", "shutdown",
    "sendto", "sendmsg", "sendmmsg", "recvfrom", "recvmsg", "recvmmsg", "sendfile",
    /* event loops (libmicrohttpd: epoll and an eventfd per thread), the sampler's poll */
    "epoll_create", "epoll_create1", "epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2", "poll",
    "ppoll", "select", "pselect6", "eventfd", "eventfd2", "timerfd_create", "timerfd_settime",
    "timerfd_gettime", "timer_create", "timer_settime", "timer_gettime", "timer_delete", "alarm", "setitimer",
    "getitimer", "flock",
    /* threads and signals (clone is below: threads only) */
    "futex", "futex_waitv", "set_robust_list", "get_robust_list", "rseq", "set_tid_address", "exit",
    "exit_group", "gettid", "getpid", "getppid", "tgkill", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn",
    "rt_sigtimedwait", "rt_sigpending", "sigaltstack", "restart_syscall", "sched_yield", "sched_getaffinity",
    /* clocks, randomness, identity (read only), limits */
    "clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday", "time", "getrandom",
    "uname", "sysinfo", "prlimit64", "getrlimit", "getrusage", "times", "getuid", "geteuid", "getgid",
    "getegid", "getresuid", "getresgid", "getgroups", "capget",
};

/* ioctl: the ethtool request (offload state and restore), interface lookups (if_nametoindex),
 * a socket's unacknowledged bytes (SIOCOUTQ, the ack watcher: ack_watch.c), and what stdio
 * and libraries ask of a descriptor. TIOCSTI and the rest are refused. */
static const unsigned long ioctls[] = {SIOCETHTOOL, SIOCGIFINDEX, SIOCGIFNAME, SIOCGIFFLAGS, SIOCOUTQ,
                                       FIONREAD,    FIONBIO,      FIOCLEX,     TCGETS};
/* prctl: thread names (pthread_setname_np) and read-only queries. */
static const int prctls[] = {PR_SET_NAME, PR_GET_NAME, PR_GET_DUMPABLE, PR_CAPBSET_READ, PR_GET_NO_NEW_PRIVS};
/* socket: the address families debitd opens itself (the ethtool socket, getifaddrs). */
static const int families[] = {AF_UNIX, AF_INET, AF_INET6};

size_t seccomp_filter_allowed_count(void)
{
    size_t n = 0;
    for (size_t i = 0; i < ARRAY_SIZE(allowed); i++)
        if (seccomp_syscall_resolve_name(allowed[i]) != __NR_SCMP_ERROR)
            n++;
    return n + 5; /* clone, ioctl, prctl, socket, socketpair (with argument checks) */
}

/* libseccomp's SCMP_An() macros leave datum_b out for two-operand comparisons, which
 * clang's -Wmissing-field-initializers reports: the same comparison, spelled out. */
static struct scmp_arg_cmp arg(unsigned n, enum scmp_compare op, scmp_datum_t a, scmp_datum_t b)
{
    return (struct scmp_arg_cmp){.arg = n, .op = op, .datum_a = a, .datum_b = b};
}

static int add(scmp_filter_ctx ctx, uint32_t action, const char *name, int nr, unsigned n,
               const struct scmp_arg_cmp *cmp, char *err, size_t errlen)
{
    int r = seccomp_rule_add_array(ctx, action, nr, n, cmp);
    if (r < 0)
        return err_set(err, errlen, "seccomp: rule for %s: %s", name, strerror(-r));
    return 0;
}

static int add_rules(scmp_filter_ctx ctx, char *err, size_t errlen)
{
    for (size_t i = 0; i < ARRAY_SIZE(allowed); i++) {
        int nr = seccomp_syscall_resolve_name(allowed[i]);
        if (nr == __NR_SCMP_ERROR)
            continue;
        if (add(ctx, SCMP_ACT_ALLOW, allowed[i], nr, 0, NULL, err, errlen) < 0)
            return -1;
    }
    struct scmp_arg_cmp c[2];
    for (size_t i = 0; i < ARRAY_SIZE(ioctls); i++) {
        /* the kernel reads the request as an unsigned int: compare the low 32 bits only */
        c[0] = arg(1, SCMP_CMP_MASKED_EQ, 0xffffffffUL, ioctls[i]);
        if (add(ctx, SCMP_ACT_ALLOW, "ioctl", SCMP_SYS(ioctl), 1, c, err, errlen) < 0)
            return -1;
    }
    for (size_t i = 0; i < ARRAY_SIZE(prctls); i++) {
        c[0] = arg(0, SCMP_CMP_EQ, (scmp_datum_t)prctls[i], 0);
        if (add(ctx, SCMP_ACT_ALLOW, "prctl", SCMP_SYS(prctl), 1, c, err, errlen) < 0)
            return -1;
    }
    for (size_t i = 0; i < ARRAY_SIZE(families); i++) {
        c[0] = arg(0, SCMP_CMP_EQ, (scmp_datum_t)families[i], 0);
        if (add(ctx, SCMP_ACT_ALLOW, "socket", SCMP_SYS(socket), 1, c, err, errlen) < 0)
            return -1;
    }
    /* getifaddrs (X-Debit-Interface): a NETLINK_ROUTE socket, nothing else of netlink */
    c[0] = arg(0, SCMP_CMP_EQ, AF_NETLINK, 0);
    c[1] = arg(2, SCMP_CMP_EQ, NETLINK_ROUTE, 0);
    if (add(ctx, SCMP_ACT_ALLOW, "socket", SCMP_SYS(socket), 2, c, err, errlen) < 0)
        return -1;
    c[0] = arg(0, SCMP_CMP_EQ, AF_UNIX, 0);
    if (add(ctx, SCMP_ACT_ALLOW, "socketpair", SCMP_SYS(socketpair), 1, c, err, errlen) < 0)
        return -1;
    /* threads (pthread_create), never a process: clone's flags are its first argument */
    c[0] = arg(0, SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD);
    if (add(ctx, SCMP_ACT_ALLOW, "clone", SCMP_SYS(clone), 1, c, err, errlen) < 0)
        return -1;
    /* clone3 passes its flags in memory, out of a filter's reach: ENOSYS makes glibc use clone */
    if (add(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", SCMP_SYS(clone3), 0, NULL, err, errlen) < 0)
        return -1;
    return 0;
}

int seccomp_filter_install(enum config_seccomp mode, char *err, size_t errlen)
{
    if (mode == CONFIG_SECCOMP_OFF)
        return 0;
    uint32_t def = mode == CONFIG_SECCOMP_KILL  ? SCMP_ACT_KILL_PROCESS
                   : mode == CONFIG_SECCOMP_LOG ? SCMP_ACT_LOG
                                                : SCMP_ACT_ERRNO(EPERM);
    scmp_filter_ctx ctx = seccomp_init(def);
    if (!ctx)
        return err_set(err, errlen, "seccomp: cannot create a filter");
    int r;
    /* CTL_LOG: the kernel logs what is refused as well as the "log" action. It needs the
     * seccomp(2) system call; where a filter already in force refuses that (systemd's
     * SystemCallFilter=@system-service does), libseccomp loads through prctl(2) instead,
     * without the flag: the filter still applies, unlogged. No TSYNC for the same reason:
     * privdrop_apply runs with one thread only, which threads started later inherit.
     * NNP is libseccomp's default. */
    (void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_LOG, 1);
    if (add_rules(ctx, err, errlen) < 0) {
        seccomp_release(ctx);
        return -1;
    }
    r = seccomp_load(ctx);
    seccomp_release(ctx);
    if (r < 0)
        return err_set(err, errlen, "seccomp: loading the filter: %s", strerror(-r));
    return 0;
}
