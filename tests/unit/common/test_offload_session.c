/* Unit tests for common/offload_session.c, on a veth in a private network namespace of
 * this test process (unshare(CLONE_NEWNET); nothing outlives the process). Child
 * processes play the measuring program and die in every way a program can: normal end,
 * exit() without end, SIGTERM, its own SIGINT handler, SIGKILL. After each, the veth's
 * offloads must be back (checked with ethtool -k) and the state file gone or recovered.
 * Without root: skipped, with the reason. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "offload_session.h"
#include "testlib.h"

static const char *skip_reason;
static char tmpdir[128];
static char state_path[256];

#define TSO() testlib_ethtool_bit("dbq0", "tcp-segmentation-offload", NULL)
#define GSO() testlib_ethtool_bit("dbq0", "generic-segmentation-offload", NULL)

static int file_exists(const char *p)
{
    return access(p, F_OK) == 0;
}

static void wish_off(struct offload_wish *w)
{
    memset(w, 0, sizeof *w);
    w->want[OFFLOAD_TSO] = OFFLOAD_OFF;
    w->want[OFFLOAD_GSO] = OFFLOAD_OFF;
}

/* Fork a child that begins a tso/gso-off session on dbq0 with the shared state file,
 * reports readiness through a pipe, then runs BODY (which decides how it dies). */
static pid_t child_session(void (*body)(struct offload_session *), int handle_signals)
{
    int pfd[2];
    pid_t pid = testlib_fork_pipe(pfd);
    if (pid == 0) {
        struct offload_session *s = offload_session_new();
        struct offload_wish w;
        char err[256], note[256];
        wish_off(&w);
        char ok = offload_session_begin(s, "dbq0", &w, state_path, note, sizeof note, err, sizeof err) == OFFLOAD_OK;
        if (!ok)
            fprintf(stderr, "child begin: %s\n", err);
        if (handle_signals)
            offload_session_handle_signals();
        if (write(pfd[1], &ok, 1) != 1 || !ok)
            _exit(2);
        close(pfd[1]);
        body(s);
        _exit(99); /* body must not return */
    }
    char ok = 0;
    if (read(pfd[0], &ok, 1) != 1 || !ok) {
        close(pfd[0]);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fail_msg("child could not begin its session");
    }
    close(pfd[0]);
    return pid;
}

static void body_wait(struct offload_session *s)
{
    (void)s;
    for (int i = 0; i < 600; i++) /* bounded: 60 s */
        usleep(100000);
    _exit(0);
}

static void body_exit_without_end(struct offload_session *s)
{
    (void)s;
    exit(0); /* atexit restores */
}

static void body_end_then_exit(struct offload_session *s)
{
    char err[256];
    _exit(offload_session_end(s, err, sizeof err) == OFFLOAD_OK ? 0 : 1);
}

/* A program with its own SIGHUP handler (installed before handle_signals, which must
 * leave it alone) that ends through exit(): the atexit hook restores. */
static volatile sig_atomic_t got_hup;
static void own_hup(int sig)
{
    (void)sig;
    got_hup = 1;
}

static void body_own_handler(struct offload_session *s)
{
    (void)s;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = own_hup;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGHUP, &sa, NULL);
    offload_session_handle_signals(); /* again: must not replace own_hup */
    if (kill(getppid(), SIGUSR1) < 0) /* handler installed: tell the parent */
        _exit(3);
    for (int i = 0; i < 600 && !got_hup; i++) /* bounded: 60 s */
        usleep(100000);
    exit(got_hup ? 7 : 4);
}

/* A forked grandchild exiting must not restore the parent's change. */
static void body_fork_then_end(struct offload_session *s)
{
    pid_t g = fork();
    if (g == 0)
        exit(0); /* runs atexit handlers of the copied session */
    waitpid(g, NULL, 0);
    int still_off = TSO() == 0;
    char err[256];
    int ended = offload_session_end(s, err, sizeof err) == OFFLOAD_OK;
    _exit(still_off && ended ? 0 : 1);
}

static int wait_exit(pid_t pid, int *sig)
{
    int status;
    waitpid(pid, &status, 0);
    *sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void assert_restored(void)
{
    assert_int_equal(TSO(), 1);
    assert_int_equal(GSO(), 1);
    assert_false(file_exists(state_path));
}

static void test_begin_end(void **state)
{
    (void)state;
    struct offload_session *s = offload_session_new();
    struct offload_wish w;
    char err[256], note[256], buf[64];
    wish_off(&w);
    assert_null(offload_session_before(s));
    assert_null(offload_session_before(s));
    enum offload_err e = offload_session_begin(s, "dbq0", &w, state_path, note, sizeof note, err, sizeof err);
    if (e)
        fail_msg("begin: %s", err);
    assert_string_equal(note, "");
    assert_non_null(offload_session_before(s));
    offload_format(offload_session_after(s), buf, sizeof buf);
    assert_int_equal(strncmp(buf, "tso=off gso=off", 15), 0);
    offload_format(offload_session_before(s), buf, sizeof buf);
    assert_int_equal(strncmp(buf, "tso=on gso=on", 13), 0);
    assert_int_equal(TSO(), 0);
    assert_int_equal(GSO(), 0);
    assert_true(file_exists(state_path));
    /* the file holds the state before */
    struct offload_state saved;
    assert_int_equal(offload_state_load(state_path, &saved, NULL, err, sizeof err), OFFLOAD_OK);
    assert_true(saved.f[OFFLOAD_TSO].on);

    /* one session, one change */
    assert_int_equal(offload_session_begin(s, "dbq0", &w, NULL, NULL, 0, err, sizeof err), OFFLOAD_ERR_ARG);
    assert_string_equal(err, "dbq0: offload session already active on dbq0");

    /* nor two sessions on one interface */
    struct offload_session *s2 = offload_session_new();
    assert_int_equal(offload_session_begin(s2, "dbq0", &w, NULL, NULL, 0, err, sizeof err), OFFLOAD_ERR_ARG);
    assert_string_equal(err, "dbq0: another offload session of this process is active on dbq0");
    offload_session_free(s2);
    assert_int_equal(TSO(), 0);

    assert_int_equal(offload_session_end(s, err, sizeof err), OFFLOAD_OK);
    assert_restored();
    assert_int_equal(offload_session_end(s, err, sizeof err), OFFLOAD_OK); /* idempotent */
    offload_session_free(s);
    offload_session_free(NULL);

    /* free of an active session restores too */
    s = offload_session_new();
    assert_int_equal(offload_session_begin(s, "dbq0", &w, NULL, NULL, 0, err, sizeof err), OFFLOAD_OK);
    assert_int_equal(TSO(), 0);
    offload_session_free(s);
    assert_int_equal(TSO(), 1);
}

static void test_failures_change_nothing(void **state)
{
    (void)state;
    struct offload_session *s = offload_session_new();
    struct offload_wish w;
    char err[256];
    wish_off(&w);
    assert_int_equal(offload_session_begin(s, "nosuch0", &w, state_path, NULL, 0, err, sizeof err),
                     OFFLOAD_ERR_NO_DEVICE);
    assert_string_equal(err, "nosuch0: no such network interface in this network namespace");
    assert_false(file_exists(state_path));
    assert_null(offload_session_before(s));

    /* refused (sg off drops tso): rolled back, no state file */
    assert_int_equal(testlib_sh("ip link add dbr0 type veth peer name dbr1 && ethtool -K dbr0 sg off >/dev/null"), 0);
    memset(&w, 0, sizeof w);
    w.want[OFFLOAD_TSO] = OFFLOAD_ON;
    assert_int_equal(offload_session_begin(s, "dbr0", &w, state_path, NULL, 0, err, sizeof err), OFFLOAD_ERR_REFUSED);
    assert_false(file_exists(state_path));
    assert_null(offload_session_before(s));
    testlib_sh("ip link del dbr0");

    /* unprivileged: clear error, nothing changed */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setresuid(65534, 65534, 65534) < 0)
            _exit(3);
        struct offload_session *c = offload_session_new();
        struct offload_wish cw;
        char e2[256];
        wish_off(&cw);
        enum offload_err e = offload_session_begin(c, "dbq0", &cw, NULL, NULL, 0, e2, sizeof e2);
        _exit(e == OFFLOAD_ERR_PERM && strstr(e2, "needs CAP_NET_ADMIN") ? 0 : 1);
    }
    int sig;
    assert_int_equal(wait_exit(pid, &sig), 0);
    assert_int_equal(TSO(), 1);
    offload_session_free(s);

    /* This process runs in a private network namespace (setup): its inode is in the
     * name, so that another namespace's eth0 never shares the state file. */
    char p[300], want[300];
    struct stat ns;
    assert_int_equal(stat("/proc/self/ns/net", &ns), 0);
    snprintf(want, sizeof want, "/run/debit/offload-eth0@net%lu.state", (unsigned long)ns.st_ino);
    offload_session_default_path("eth0", p, sizeof p);
    assert_string_equal(p, want);
}

static void test_child_ends_normally(void **state)
{
    (void)state;
    int sig;
    pid_t pid = child_session(body_end_then_exit, 0);
    assert_int_equal(wait_exit(pid, &sig), 0);
    assert_restored();
}

static void test_exit_without_end(void **state)
{
    (void)state;
    int sig;
    pid_t pid = child_session(body_exit_without_end, 0);
    assert_int_equal(wait_exit(pid, &sig), 0);
    assert_restored();
}

static void test_sigterm(void **state)
{
    (void)state;
    int sig;
    pid_t pid = child_session(body_wait, 1);
    assert_int_equal(TSO(), 0);
    kill(pid, SIGTERM);
    assert_int_equal(wait_exit(pid, &sig), -1);
    assert_int_equal(sig, SIGTERM); /* died of the signal, as without us */
    assert_restored();
}

static volatile sig_atomic_t got_usr1;
static void on_usr1(int sig)
{
    (void)sig;
    got_usr1 = 1;
}

static void test_own_handler_kept(void **state)
{
    (void)state;
    int sig;
    got_usr1 = 0;
    signal(SIGUSR1, on_usr1);
    pid_t pid = child_session(body_own_handler, 0);
    for (int i = 0; i < 100 && !got_usr1; i++)
        usleep(20000);
    assert_true(got_usr1);
    kill(pid, SIGHUP);
    assert_int_equal(wait_exit(pid, &sig), 7); /* its own handler ran, not ours */
    assert_restored();
    signal(SIGUSR1, SIG_DFL);
}

static void test_sigkill_then_next_start(void **state)
{
    (void)state;
    int sig;
    char err[256], note[512];
    pid_t pid = child_session(body_wait, 1);

    /* while the owner lives, a second instance on the same state file is refused */
    struct offload_session *s = offload_session_new();
    struct offload_wish w = {{0}};
    w.want[OFFLOAD_GRO] = OFFLOAD_ON;
    enum offload_err e = offload_session_begin(s, "dbq0", &w, state_path, note, sizeof note, err, sizeof err);
    assert_int_equal(e, OFFLOAD_ERR_STATE_OWNER);
    assert_non_null(strstr(err, "still running; not touching it (use a distinct state file per instance)"));
    assert_int_equal(TSO(), 0);

    kill(pid, SIGKILL);
    wait_exit(pid, &sig);
    assert_int_equal(sig, SIGKILL);
    assert_int_equal(TSO(), 0); /* nobody restored it */
    assert_true(file_exists(state_path));

    /* the next start recovers first, then applies its own wish */
    e = offload_session_begin(s, "dbq0", &w, state_path, note, sizeof note, err, sizeof err);
    if (e)
        fail_msg("begin after SIGKILL: %s", err);
    char want[512];
    snprintf(want, sizeof want, "restored dbq0 offloads left by pid %d (state file %s)", (int)pid, state_path);
    assert_string_equal(note, want);
    assert_int_equal(TSO(), 1);
    assert_int_equal(GSO(), 1);
    assert_true(offload_session_after(s)->f[OFFLOAD_GRO].on);
    assert_int_equal(offload_session_end(s, err, sizeof err), OFFLOAD_OK);
    assert_false(file_exists(state_path));
    offload_session_free(s);
}

static void test_fork_does_not_restore(void **state)
{
    (void)state;
    int sig;
    pid_t pid = child_session(body_fork_then_end, 0);
    assert_int_equal(wait_exit(pid, &sig), 0);
    assert_restored();
}

static int setup(void **state)
{
    (void)state;
    return 0;
}

static void prepare(void)
{
    skip_reason = testlib_private_netns();
    if (skip_reason)
        return;
    if (testlib_sh("ip link set lo up && ip link add dbq0 type veth peer name dbq1") != 0) {
        skip_reason = "cannot create a veth pair in a private network namespace";
        return;
    }
    if (testlib_mkdtemp(tmpdir, sizeof tmpdir, "/tmp/debit-test-session.XXXXXX") < 0) {
        skip_reason = "mkdtemp failed";
        return;
    }
    snprintf(state_path, sizeof state_path, "%s/run/debit/offload-dbq0.state", tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_begin_end),
        cmocka_unit_test(test_failures_change_nothing),
        cmocka_unit_test(test_child_ends_normally),
        cmocka_unit_test(test_exit_without_end),
        cmocka_unit_test(test_sigterm),
        cmocka_unit_test(test_own_handler_kept),
        cmocka_unit_test(test_sigkill_then_next_start),
        cmocka_unit_test(test_fork_does_not_restore),
    };
    prepare();
    return testlib_run_group("offload_session", tests, sizeof tests / sizeof tests[0], setup, skip_reason, tmpdir);
}
