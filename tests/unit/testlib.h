/* testlib: helpers shared by the unit tests — shell commands, scratch directories, a
 * private network namespace for device tests, ethtool's view of a device, a loopback TCP
 * pair, a child that reports through a pipe, TAP skips.
 *
 * Header only (static inline): the Makefile builds each tests/unit/test_*.c into a binary
 * of its own and compiles nothing else from this folder. Include it after <cmocka.h>. */
#ifndef DEBIT_TESTLIB_H
#define DEBIT_TESTLIB_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

/* Run the shell command built from fmt; its exit status, or -1 if it did not exit. */
static inline int testlib_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int testlib_sh(const char *fmt, ...)
{
    char cmd[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int r = system(cmd);
    return r == -1 ? -1 : WIFEXITED(r) ? WEXITSTATUS(r) : -1;
}

/* Create a directory from template (ending in XXXXXX) into dir, unless dir already names
 * one. Returns 0, or -1 with errno (dir is then empty). */
static inline int testlib_mkdtemp(char *dir, size_t len, const char *template)
{
    if (dir[0])
        return 0;
    snprintf(dir, len, "%s", template);
    if (mkdtemp(dir))
        return 0;
    int e = errno;
    dir[0] = 0;
    errno = e;
    return -1;
}

/* rm -rf dir, when set; a TAP comment when that fails. */
static inline void testlib_rm_rf(const char *dir)
{
    if (dir[0] && testlib_sh("rm -rf '%s'", dir) != 0)
        fprintf(stderr, "# could not remove %s\n", dir);
}

/* Write TEXT to ROOT/REL, creating its folders (fake /proc and /sys trees). The file is
 * rewritten in place, so a descriptor already open on it reads the new text. Returns 0, or
 * -1 when a folder or the file cannot be made. */
static inline int testlib_put_file(const char *root, const char *rel, const char *text)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    char *slash = strrchr(path, '/');
    *slash = 0;
    if (testlib_sh("mkdir -p '%s'", path) != 0)
        return -1;
    *slash = '/';
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int r = fputs(text, f) < 0 ? -1 : 0;
    return fclose(f) == 0 ? r : -1;
}

/* Move this process into a network namespace of its own, so that device tests never
 * touch the machine's interfaces and everything they create dies with the process.
 * Returns NULL, or why the tests must be skipped (not root, no ip or ethtool, unshare
 * refused). The caller brings lo up and creates its devices. */
static inline const char *testlib_private_netns(void)
{
    static char why[256];
    if (geteuid() != 0)
        return "needs root (CAP_NET_ADMIN) to create a private network namespace";
    if (testlib_sh("command -v ip >/dev/null && command -v ethtool >/dev/null") != 0)
        return "needs ip (iproute2) and ethtool (run tools/deps as root)";
    struct stat before, after;
    stat("/proc/self/ns/net", &before);
    if (unshare(CLONE_NEWNET) < 0) {
        snprintf(why, sizeof why, "unshare(CLONE_NEWNET) failed: %s", strerror(errno));
        return why;
    }
    stat("/proc/self/ns/net", &after);
    if (before.st_ino == after.st_ino)
        return "unshare(CLONE_NEWNET) did not give a new namespace";
    return NULL;
}

/* Print every test of tests[0..n) as a TAP skip with reason, for a binary that cannot
 * run them: cmocka 1.1 prints a skip() as "not ok N # SKIP", which TAP counts as a
 * failure. */
static inline void testlib_skip_all(const struct CMUnitTest *tests, size_t n, const char *reason)
{
    printf("# SKIP %s\n", reason);
    for (size_t i = 0; i < n; i++)
        printf("ok - %s # SKIP %s\n", tests[i].name, reason);
}

/* The main() of a binary whose tests need a scratch namespace and directory: skip them
 * all with skip_reason when it is not NULL, else run them as group NAME (with SETUP) and
 * remove tmpdir. Returns main's exit status. */
static inline int testlib_run_group(const char *name, const struct CMUnitTest *tests, size_t n,
                                    CMFixtureFunction setup, const char *skip_reason, const char *tmpdir)
{
    if (skip_reason) {
        testlib_skip_all(tests, n, skip_reason);
        return 0;
    }
    int failed = _cmocka_run_group_tests(name, tests, n, setup, NULL);
    if (tmpdir)
        testlib_rm_rf(tmpdir);
    return failed ? 1 : 0;
}

/* `ethtool -k dev`'s value for name (a kernel bit or a legacy flag): 1 on, 0 off, -1 not
 * listed. *fixed (when not NULL) gets whether ethtool shows "[fixed]". */
static inline int testlib_ethtool_bit(const char *dev, const char *name, int *fixed)
{
    char cmd[128], line[256];
    snprintf(cmd, sizeof cmd, "ethtool -k %s 2>/dev/null", dev);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    int v = -1;
    size_t n = strlen(name);
    while (fgets(line, sizeof line, p)) {
        char *s = line;
        while (*s == '\t' || *s == ' ')
            s++;
        if (strncmp(s, name, n) == 0 && s[n] == ':') {
            v = strncmp(s + n + 1, " on", 3) == 0;
            if (fixed)
                *fixed = strstr(s, "[fixed]") != NULL;
        }
    }
    pclose(p);
    return v;
}

/* A connected TCP pair on 127.0.0.1; *srv is the accepted end (what debitd sends on). */
/* A listening TCP socket on 127.0.0.1 at a free port (*PORT), backlog 16. */
static inline int testlib_listen(unsigned *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    assert_true(fd >= 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(listen(fd, 16), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
    *port = ntohs(sa.sin_port);
    return fd;
}

static inline void testlib_loopback_pair(int *cli, int *srv)
{
    int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(l >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof a;
    assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(l, 1), 0);
    assert_int_equal(getsockname(l, (struct sockaddr *)&a, &al), 0);
    *cli = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_int_equal(connect(*cli, (struct sockaddr *)&a, sizeof a), 0);
    *srv = accept(l, NULL, NULL);
    assert_true(*srv >= 0);
    close(l);
}

/* Fork a child that reports to its parent through a pipe. In the child: returns 0, with
 * pfd[1] open for writing. In the parent: returns the child's pid, with pfd[0] open for
 * reading (testlib_child_report). Each side's other end is closed. */
static inline pid_t testlib_fork_pipe(int pfd[2])
{
    assert_int_equal(pipe(pfd), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    close(pfd[pid == 0 ? 0 : 1]);
    return pid;
}

/* The parent's side of a child that reports a message through a pipe and exits: read it
 * from fd into buf (NUL-terminated, at most len - 1 bytes), close fd, reap pid. Returns
 * the child's wait status. */
static inline int testlib_child_report(pid_t pid, int fd, char *buf, size_t len)
{
    ssize_t n = read(fd, buf, len - 1);
    buf[n > 0 ? n : 0] = 0;
    close(fd);
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

#endif
