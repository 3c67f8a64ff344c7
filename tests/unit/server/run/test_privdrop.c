/* Unit tests for server/run/privdrop.c and server/run/seccomp_filter.c: the plan (what is kept and
 * why, table-driven), then the drop itself in forked children (root only: a drop cannot be
 * undone), each reporting what /proc/self/status and a few refused calls say. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <seccomp.h>

#include "testlib.h"

#include "config.h"
#include "privdrop.h"

static void test_plan(void **state)
{
    (void)state;
    static const struct {
        int user;    /* user = "nobody" */
        uid_t euid;  /* debitd runs as */
        int restore; /* an offload restore is pending */
        int tcp;     /* a TCP profile needs CAP_NET_ADMIN */
        int change_id, keep;
    } rows[] = {
        {1, 0, 0, 0, 1, 0}, {1, 0, 1, 0, 1, 1}, {1, 1000, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0},
        {0, 0, 1, 0, 0, 1}, {1, 0, 0, 1, 1, 1}, {1, 1000, 1, 1, 0, 1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct config c;
        char err[256];
        assert_int_equal(config_defaults(&c, err, sizeof err), 0);
        if (rows[i].user)
            assert_int_equal(config_set_user(&c, "nobody", err, sizeof err), 0);
        c.seccomp = CONFIG_SECCOMP_KILL;
        struct privdrop_plan p;
        privdrop_plan_make(&c, rows[i].euid, rows[i].restore, rows[i].tcp, &p);
        if (p.change_id != rows[i].change_id || p.keep_net_admin != rows[i].keep)
            fail_msg("row %zu: change_id %d keep %d, want %d %d", i, p.change_id, p.keep_net_admin,
                     rows[i].change_id, rows[i].keep);
        assert_int_equal(p.seccomp, CONFIG_SECCOMP_KILL);
        if (p.change_id) {
            assert_int_equal(p.uid, getpwnam("nobody")->pw_uid);
            assert_string_equal(p.user, "nobody");
        }
        if (p.keep_net_admin)
            assert_non_null(strstr(p.why, rows[i].restore ? "offload restore" : "TCP profile"));
        config_free(&c);
    }
}

/* Is NAME in the first line of FILE (a space-separated list)? */
static int listed(const char *file, const char *name)
{
    char line[512] = "", *save = NULL;
    FILE *f = fopen(file, "re");
    if (f && !fgets(line, sizeof line, f))
        line[0] = 0;
    if (f)
        fclose(f);
    for (char *t = strtok_r(line, " \n", &save); t; t = strtok_r(NULL, " \n", &save))
        if (strcmp(t, name) == 0)
            return 1;
    return 0;
}

/* Which profiles need CAP_NET_ADMIN, asked of the kernel (root: the child drops it). */
static void test_profiles(void **state)
{
    (void)state;
    static const struct {
        const char *cc;   /* "" = default */
        uint64_t sndbuf;  /* 0 = autotuned */
        uint64_t pacing;  /* bit/s */
        int need;         /* -1: decided below from the sysctls */
    } rows[] = {
        {"", 0, 0, 0}, {"", 0, 1000000000, 0}, {"", 1ULL << 30, 0, 1}, {"", 65536, 0, 0},
        {"reno", 0, 0, -1}, {"cubic", 0, 0, -1},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct config c;
        char err[256];
        assert_int_equal(config_defaults(&c, err, sizeof err), 0);
        assert_int_equal(config_clear_listeners(&c), 0);
        assert_int_equal(config_add_listener(&c, "127.0.0.1", 9, err, sizeof err), 0);
        int need = rows[i].need;
        if (rows[i].cc[0]) {
            if (!listed("/proc/sys/net/ipv4/tcp_available_congestion_control", rows[i].cc)) {
                config_free(&c);
                continue; /* not in this kernel */
            }
            snprintf(c.listen[0].tcp.congestion, sizeof c.listen[0].tcp.congestion, "%s", rows[i].cc);
            need = !listed("/proc/sys/net/ipv4/tcp_allowed_congestion_control", rows[i].cc);
        }
        c.listen[0].tcp.sndbuf = rows[i].sndbuf;
        c.listen[0].tcp.pacing_rate_bps = rows[i].pacing;
        if (privdrop_profiles_need_net_admin(&c) != need)
            fail_msg("row %zu (cc \"%s\", sndbuf %llu): want %d", i, rows[i].cc, (unsigned long long)rows[i].sndbuf,
                     need);
        config_free(&c);
    }
}

static void *thread_main(void *arg)
{
    return arg;
}

static void *block_main(void *arg)
{
    char c;
    ssize_t r = read(*(int *)arg, &c, 1);
    (void)r;
    return NULL;
}

static void field(const char *name, char *out, size_t len)
{
    char line[256];
    FILE *f = fopen("/proc/self/status", "re");
    snprintf(out, len, "?");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, name, strlen(name)) == 0 && line[strlen(name)] == ':') {
            char *v = line + strlen(name) + 1;
            v += strspn(v, " \t");
            v[strcspn(v, "\n")] = 0;
            snprintf(out, len, "%s", v);
        }
    if (f)
        fclose(f);
}

/* In a child: drop as PLAN says, then report "uid= caps= nnp= seccomp= exec= fork= connect=
 * thread= socket=" (each call's errno name, or ok). */
static void drop_and_report(const struct privdrop_plan *plan, char *out, size_t len)
{
    int pfd[2];
    pid_t pid = testlib_fork_pipe(pfd);
    if (pid == 0) {
        char note[512], err[512], msg[1024], caps[32], nnp[8], sc[8];
        if (privdrop_apply(plan, note, sizeof note, err, sizeof err) < 0) {
            dprintf(pfd[1], "apply failed: %s", err);
            _exit(1);
        }
        field("CapEff", caps, sizeof caps);
        field("NoNewPrivs", nnp, sizeof nnp);
        field("Seccomp", sc, sizeof sc);
        /* without a filter, exec would succeed and report nothing */
        int filtered = plan->seccomp != CONFIG_SECCOMP_OFF && !privdrop_sanitizer_build();
        char *argv[] = {"/bin/true", NULL};
        int exec_e = filtered && execv(argv[0], argv) < 0 ? errno : 0;
        pid_t k = filtered ? fork() : -1;
        if (k == 0)
            _exit(0);
        int fork_e = filtered && k < 0 ? errno : 0;
        if (k > 0)
            waitpid(k, NULL, 0);
        int s = socket(AF_INET, SOCK_STREAM, 0);
        int sock_e = s < 0 ? errno : 0;
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(9), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        int conn_e = s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) < 0 ? errno : 0;
        pthread_t t;
        int th = pthread_create(&t, NULL, thread_main, NULL);
        if (th == 0)
            pthread_join(t, NULL);
        snprintf(msg, sizeof msg, "uid=%u caps=%s nnp=%s seccomp=%s exec=%s fork=%s socket=%s connect=%s thread=%s",
                 (unsigned)getuid(), caps, nnp, sc, exec_e == EPERM ? "EPERM" : "other", fork_e == EPERM ? "EPERM" : "other",
                 sock_e ? "failed" : "ok", conn_e == EPERM ? "EPERM" : "other", th == 0 ? "ok" : strerror(th));
        ssize_t w = write(pfd[1], msg, strlen(msg));
        (void)w;
        _exit(0);
    }
    testlib_child_report(pid, pfd[0], out, len);
}

/* nobody's ids (65534 on Debian) */
static uid_t nobody_uid;
static gid_t nobody_gid;

/* A child's report must be "uid=NOBODY " then REST. */
static void check_report(const char *got, const char *rest)
{
    char want[512];
    snprintf(want, sizeof want, "uid=%u %s", (unsigned)nobody_uid, rest);
    assert_string_equal(got, want);
}

static void test_drop_to_nobody(void **state)
{
    (void)state;
    struct privdrop_plan p = {.change_id = 1, .uid = nobody_uid, .gid = nobody_gid, .user = "nobody",
                              .seccomp = CONFIG_SECCOMP_EPERM};
    char got[1024];
    drop_and_report(&p, got, sizeof got);
    if (privdrop_sanitizer_build()) /* no filter */
        check_report(got, "caps=0000000000000000 nnp=1 seccomp=0 exec=other fork=other socket=ok "
                          "connect=other thread=ok");
    else
        check_report(got, "caps=0000000000000000 nnp=1 seccomp=2 exec=EPERM fork=EPERM socket=ok "
                          "connect=EPERM thread=ok");
}

static void test_keep_net_admin(void **state)
{
    (void)state;
    struct privdrop_plan p = {.change_id = 1, .uid = nobody_uid, .gid = nobody_gid, .user = "nobody",
                              .keep_net_admin = 1, .why = "test", .seccomp = CONFIG_SECCOMP_OFF};
    char got[1024];
    drop_and_report(&p, got, sizeof got);
    check_report(got, "caps=0000000000001000 nnp=1 seccomp=0 exec=other fork=other socket=ok "
                      "connect=other thread=ok");
}

/* Under a service manager's filter that refuses capset and seccomp(2) with EPERM, as
 * systemd's SystemCallFilter=@system-service ~@privileged does: the capabilities stay as
 * started (said in the note) and debitd's own filter still stacks (through prctl). */
static void test_under_systemd_filter(void **state)
{
    (void)state;
    if (privdrop_sanitizer_build()) {
        skip(); /* no filter of ours to stack */
        return;
    }
    int pfd[2];
    pid_t pid = testlib_fork_pipe(pfd);
    if (pid == 0) {
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(capset), 0) < 0 ||
            seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(seccomp), 0) < 0 || seccomp_load(ctx) < 0)
            _exit(1);
        seccomp_release(ctx);
        /* forget what libseccomp learnt of the kernel before that filter, as a process
         * started under it would never have known */
        seccomp_reset(NULL, SCMP_ACT_ALLOW);
        struct privdrop_plan p = {.seccomp = CONFIG_SECCOMP_EPERM};
        char note[512], err[256] = "", filters[8];
        int r = privdrop_apply(&p, note, sizeof note, err, sizeof err);
        field("Seccomp_filters", filters, sizeof filters);
        dprintf(pfd[1], "%d %s filters=%s %s", r, err, filters,
                strstr(note, "capabilities: left as started (capset refused") ? "noted" : note);
        _exit(0);
    }
    char got[1024];
    testlib_child_report(pid, pfd[0], got, sizeof got);
    assert_string_equal(got, "0  filters=2 noted");
}

static void test_refuses_threads(void **state)
{
    (void)state;
    int pfd[2];
    pid_t pid = testlib_fork_pipe(pfd);
    if (pid == 0) {
        /* a second thread that lives until the child exits: it waits on a pipe no one writes */
        int hold[2];
        pthread_t t;
        if (pipe(hold) < 0 || pthread_create(&t, NULL, block_main, &hold[0]) != 0)
            _exit(1);
        struct privdrop_plan p = {.seccomp = CONFIG_SECCOMP_OFF};
        char note[256], err[256] = "";
        int r = privdrop_apply(&p, note, sizeof note, err, sizeof err);
        dprintf(pfd[1], "%d %s", r, err);
        _exit(0);
    }
    char got[512];
    testlib_child_report(pid, pfd[0], got, sizeof got);
    assert_string_equal(got, "-1 privilege drop: 2 threads are running (it must come before any)");
}

int main(void)
{
    const struct CMUnitTest plan[] = {cmocka_unit_test(test_plan)};
    const struct CMUnitTest root[] = {
        cmocka_unit_test(test_profiles),
        cmocka_unit_test(test_drop_to_nobody),
        cmocka_unit_test(test_keep_net_admin),
        cmocka_unit_test(test_under_systemd_filter),
        cmocka_unit_test(test_refuses_threads),
    };
    int r = cmocka_run_group_tests(plan, NULL, NULL);
    const struct passwd *pw = getpwnam("nobody");
    if (geteuid() != 0 || !pw) {
        testlib_skip_all(root, sizeof root / sizeof root[0], "needs root and the user nobody");
        return r;
    }
    nobody_uid = pw->pw_uid;
    nobody_gid = pw->pw_gid;
    return r | cmocka_run_group_tests(root, NULL, NULL);
}
