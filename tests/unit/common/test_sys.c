/* Unit tests for common/sys.c: atomic replacement (content, mode whatever the umask, no
 * temporary file left after commit, abort or a failed commit), PATH lookup, bounded child
 * waits with real children, monotonic clocks, the namespace inode. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sys.h"
#include "testlib.h"

static char dir[PATH_MAX];

static int setup(void **state)
{
    (void)state;
    return testlib_mkdtemp(dir, sizeof dir, "/tmp/debit-test-sys.XXXXXX");
}

static int teardown(void **state)
{
    (void)state;
    testlib_rm_rf(dir);
    return 0;
}

static void slurp(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
}

static int exists(const char *path)
{
    return access(path, F_OK) == 0;
}

static void tmp_of(const char *path, char *out, size_t len)
{
    snprintf(out, len, "%s.tmp.%ld", path, (long)getpid());
}

static void test_atomic_commit(void **state)
{
    (void)state;
    char path[PATH_MAX + 16], tmp[PATH_MAX + 32], buf[128], err[256];
    snprintf(path, sizeof path, "%s/out.txt", dir);
    tmp_of(path, tmp, sizeof tmp);
    static const struct {
        const char *text;
        mode_t mode;
    } rows[] = {{"first\n", 0640}, {"second, longer\n", 0600}, {"", 0644}}; /* replaced each time */
    mode_t old_umask = umask(077);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct sys_atomic a;
        FILE *fp = sys_atomic_open(&a, path, rows[i].mode, err, sizeof err);
        if (!fp)
            fail_msg("open: %s", err);
        fputs(rows[i].text, fp);
        assert_true(exists(tmp)); /* written beside it, not in place */
        assert_int_equal(sys_atomic_commit(&a, err, sizeof err), 0);
        slurp(path, buf, sizeof buf);
        assert_string_equal(buf, rows[i].text);
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 0777, rows[i].mode); /* whatever the umask */
        assert_false(exists(tmp));
    }
    umask(old_umask);
    /* commit twice: the second has nothing open */
    struct sys_atomic a;
    assert_non_null(sys_atomic_open(&a, path, 0644, err, sizeof err));
    assert_int_equal(sys_atomic_commit(&a, err, sizeof err), 0);
    assert_int_equal(sys_atomic_commit(&a, err, sizeof err), -1);
    assert_non_null(strstr(err, "not open"));
}

static void test_atomic_abort_and_failure(void **state)
{
    (void)state;
    char path[PATH_MAX + 16], tmp[PATH_MAX + 32], buf[64], err[256];
    snprintf(path, sizeof path, "%s/keep.txt", dir);
    tmp_of(path, tmp, sizeof tmp);
    FILE *f = fopen(path, "w");
    fputs("old\n", f);
    fclose(f);
    /* abort: the old file stays whole, the temporary file goes */
    struct sys_atomic a;
    FILE *fp = sys_atomic_open(&a, path, 0644, err, sizeof err);
    assert_non_null(fp);
    fputs("half a new fi", fp);
    sys_atomic_abort(&a);
    slurp(path, buf, sizeof buf);
    assert_string_equal(buf, "old\n");
    assert_false(exists(tmp));
    sys_atomic_abort(&a); /* idempotent */

    /* a commit that fails (rename onto a non-empty directory): -1, message, no tmp file */
    char d[PATH_MAX + 16], dtmp[PATH_MAX + 32], inner[PATH_MAX + 32];
    snprintf(d, sizeof d, "%s/adir", dir);
    snprintf(inner, sizeof inner, "%s/x", d);
    tmp_of(d, dtmp, sizeof dtmp);
    assert_int_equal(mkdir(d, 0755), 0);
    f = fopen(inner, "w");
    fclose(f);
    fp = sys_atomic_open(&a, d, 0644, err, sizeof err);
    assert_non_null(fp);
    fputs("x", fp);
    assert_int_equal(sys_atomic_commit(&a, err, sizeof err), -1);
    assert_non_null(strstr(err, d));
    assert_false(exists(dtmp));
    assert_true(exists(inner));

    /* open failures name the path; check says so before any work */
    char missing[PATH_MAX + 32];
    snprintf(missing, sizeof missing, "%s/no/such/dir/f", dir);
    assert_null(sys_atomic_open(&a, missing, 0644, err, sizeof err));
    assert_non_null(strstr(err, missing));
    assert_null(sys_atomic_open(&a, "", 0644, err, sizeof err));
    assert_string_equal(err, "empty file name");
    assert_int_equal(sys_atomic_check(missing, err, sizeof err), -1);
    assert_int_equal(sys_atomic_check(d, err, sizeof err), -1);
    assert_non_null(strstr(err, "is a directory"));
    assert_int_equal(sys_atomic_check(path, err, sizeof err), 0);
    slurp(path, buf, sizeof buf);
    assert_string_equal(buf, "old\n"); /* check touches nothing */
}

static void test_find_in_path(void **state)
{
    (void)state;
    char out[PATH_MAX];
    const char *saved = getenv("PATH");
    char *keep = saved ? strdup(saved) : NULL;
    static const struct {
        const char *path; /* NULL: unset */
        const char *name;
        int want;
    } rows[] = {
        {"/nonexistent:/bin:/usr/bin", "sh", 1},
        {"/nonexistent", "sh", 0},
        {"::/usr/bin", "sh", 1},               /* empty entries are skipped */
        {NULL, "sh", 1},                       /* unset: a default PATH */
        {"/nonexistent", "/bin/sh", 1},        /* with a slash: as it is */
        {"/bin:/usr/bin", "debit-no-such-program", 0},
        {"/bin:/usr/bin", "/etc/passwd", 0},   /* not executable */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        if (rows[i].path)
            setenv("PATH", rows[i].path, 1);
        else
            unsetenv("PATH");
        int got = sys_find_in_path(rows[i].name, out, sizeof out);
        if (got != rows[i].want)
            fail_msg("row %zu: %s in %s: %d, want %d", i, rows[i].name, rows[i].path ? rows[i].path : "(unset)",
                     got, rows[i].want);
        if (got)
            assert_int_equal(access(out, X_OK), 0);
        else if (!strchr(rows[i].name, '/'))
            assert_string_equal(out, ""); /* not found: nothing half-built left in out */
    }
    if (keep)
        setenv("PATH", keep, 1);
    free(keep);
    /* the test binary is beside itself */
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = '\0';
    assert_int_equal(sys_find_beside_self(strrchr(self, '/') + 1, out, sizeof out), 1);
    assert_string_equal(out, self);
    assert_int_equal(sys_find_beside_self("debit-no-such-program", out, sizeof out), 0);
}

static pid_t child_sleeping(long ms, int code)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        usleep((useconds_t)ms * 1000);
        _exit(code);
    }
    return pid;
}

static void test_wait_and_reap(void **state)
{
    (void)state;
    int st = -1;
    pid_t pid = child_sleeping(30, 3);
    int64_t t0 = sys_mono_ms();
    assert_int_equal(sys_wait_child_ms(pid, 5000, &st), 1);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 3);
    assert_true(sys_mono_ms() - t0 < 4000); /* returned when it ended, not at the bound */
    assert_int_equal(sys_wait_child_ms(pid, 10, NULL), 1); /* already reaped: ended */

    pid = child_sleeping(20000, 0);
    t0 = sys_mono_ms();
    assert_int_equal(sys_wait_child_ms(pid, 50, &st), 0); /* still running after the bound */
    int64_t waited = sys_mono_ms() - t0;
    assert_true(waited >= 50 && waited < 5000);
    assert_int_equal(sys_reap_child_ms(pid, 50, &st), 0); /* killed */
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
    assert_int_equal(kill(pid, 0), -1); /* reaped: gone */

    pid = child_sleeping(10, 5);
    assert_int_equal(sys_reap_child_ms(pid, 5000, &st), 1); /* ended by itself */
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 5);
}

/* sys_strcpy copies as snprintf("%s") would: same bytes, same cut, always terminated. */
static void test_strcpy(void **state)
{
    (void)state;
    static const struct {
        const char *src;
        size_t len;
    } rows[] = {{"tso=on gso=on", 64}, {"none", 5}, {"none", 4}, {"none", 1}, {"", 8}, {"abcdef", 3}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char got[64], want[64];
        memset(got, 'x', sizeof got);
        memset(want, 'x', sizeof want);
        assert_ptr_equal(sys_strcpy(got, rows[i].len, rows[i].src), got);
        snprintf(want, rows[i].len, "%s", rows[i].src);
        assert_memory_equal(got, want, sizeof got); /* nothing written past the cut either */
    }
    char one = 'x';
    sys_strcpy(&one, 0, "abc"); /* LEN 0: nothing written, as snprintf */
    assert_int_equal(one, 'x');
}

static void test_clocks_and_netns(void **state)
{
    (void)state;
    uint64_t prev = sys_mono_ns();
    for (int i = 0; i < 10000; i++) {
        uint64_t now = sys_mono_ns();
        assert_true(now >= prev);
        prev = now;
    }
    int64_t ms0 = sys_mono_ms();
    double s0 = sys_mono_s();
    sys_sleep_ms(30);
    assert_true(sys_mono_ms() - ms0 >= 30);
    double ds = sys_mono_s() - s0;
    assert_true(ds >= 0.030 && ds < 5.0);
    assert_true(sys_wall_s() > 1.7e9); /* seconds since the epoch, not since boot */
    struct stat st;
    assert_int_equal(stat("/proc/self/ns/net", &st), 0);
    assert_true(sys_netns_inode() == (unsigned long long)st.st_ino);
}

/* sys_open_regular, by the file type found at the path: a regular file opens; a named
 * FIFO (no other end: a plain open would block for ever), a directory and, without
 * allow_chr, a character device are refused at once with a message naming the path; an
 * anonymous pipe and a character device pass as streams. */
static void test_open_regular(void **state)
{
    (void)state;
    char dir[] = "/tmp/debit-test-open.XXXXXX", reg[64], fifo[64], err[256], pipe_path[64];
    assert_non_null(mkdtemp(dir));
    snprintf(reg, sizeof reg, "%s/f", dir);
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    snprintf(pipe_path, sizeof pipe_path, "/proc/self/fd/%d", fds[1]);
    static const struct {
        int which, flags, allow_chr;
        const char *want; /* NULL: opens; else the start of the message after the path */
    } rows[] = {
        {0, O_WRONLY | O_CREAT | O_APPEND, 0, NULL},
        {0, O_RDONLY, 0, NULL},
        {1, O_RDONLY, 0, "is a FIFO, not a regular file"},
        {1, O_WRONLY | O_APPEND, 1, "is a FIFO, not a regular file"},
        {2, O_RDONLY, 0, "is a directory, not a regular file"},
        {2, O_WRONLY, 1, ": Is a directory"},
        {3, O_WRONLY, 0, "is a character device, not a regular file"},
        {3, O_WRONLY, 1, NULL},
        {4, O_WRONLY, 1, NULL},
        {4, O_WRONLY, 0, "is a FIFO, not a regular file"},
    };
    const char *paths[] = {reg, fifo, dir, "/dev/null", pipe_path};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const char *p = paths[rows[i].which];
        int64_t t0 = sys_mono_ms();
        err[0] = 0;
        int fd = sys_open_regular(p, rows[i].flags, 0600, rows[i].allow_chr, NULL, err, sizeof err);
        assert_true(sys_mono_ms() - t0 < 1000); /* never waits */
        if (!rows[i].want) {
            if (fd < 0)
                fail_msg("row %zu: %s refused: %s", i, p, err);
            assert_int_equal(fcntl(fd, F_GETFL) & O_NONBLOCK, 0); /* blocking again */
            close(fd);
        } else {
            if (fd >= 0 || !strstr(err, p) || !strstr(err, rows[i].want))
                fail_msg("row %zu: %s: got %d \"%s\", want \"...%s\"", i, p, fd, err, rows[i].want);
        }
    }
    close(fds[0]);
    close(fds[1]);
    unlink(reg);
    unlink(fifo);
    rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_atomic_commit),
        cmocka_unit_test(test_atomic_abort_and_failure),
        cmocka_unit_test(test_find_in_path),
        cmocka_unit_test(test_wait_and_reap),
        cmocka_unit_test(test_clocks_and_netns),
        cmocka_unit_test(test_strcpy),
        cmocka_unit_test(test_open_regular),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
