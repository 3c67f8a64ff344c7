/* Unit tests for netctl/netcfg.c: netcfg never prints; what the offload session wants the
 * user told comes back through netcfg_note(). The system part runs as root in a private
 * network namespace (unshared at start) with a veth pair: a child applies offloads and
 * dies without restoring them (as after SIGKILL), and the next netcfg_offload() puts them
 * back first and returns the note. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "netcfg.h"
#include "offload_session.h"

static int in_netns;

/* What debit does with --offload SPEC: parse where the option is read, then apply. */
static int apply_spec(struct netcfg *n, const char *spec, char *err, size_t errlen)
{
    char ifname[IF_NAMESIZE];
    struct offload_wish wish;
    memset(&wish, 0, sizeof wish);
    if (offload_parse_spec(spec, ifname, &wish, err, errlen) != OFFLOAD_OK)
        return -1;
    return netcfg_offload(n, ifname, &wish, err, errlen);
}

static void test_bad_specs_no_note(void **state)
{
    (void)state;
    static const struct { const char *spec; const char *err; } rows[] = {
        { "eth0", "" },                 /* no colon */
        { "eth0:tso=maybe", "maybe" },
        { ":tso=off", "" },
        { "nosuchdev0:tso=off", "nosuchdev0" },
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        struct netcfg *n = netcfg_new();
        assert_non_null(n);
        assert_string_equal(netcfg_note(n), "");
        char err[256] = "";
        assert_int_equal(apply_spec(n, rows[i].spec, err, sizeof err), -1);
        if (!err[0] || !strstr(err, rows[i].err)) fail_msg("row %zu (%s): error '%s'", i, rows[i].spec, err);
        assert_string_equal(netcfg_note(n), "");
        assert_int_equal(netcfg_end(n, err, sizeof err), 0);
        netcfg_free(n);
    }
    netcfg_free(NULL);
}

static void test_note_after_a_killed_run(void **state)
{
    (void)state;
    if (!in_netns) skip();
    pid_t c = fork();
    assert_true(c >= 0);
    if (c == 0) {
        struct netcfg *n = netcfg_new();
        char err[256];
        /* Applied, state file written, then gone without restoring (no atexit). */
        _exit(n && apply_spec(n, "nct0:tso=off,gso=off", err, sizeof err) == 0 ? 0 : 1);
    }
    int st;
    assert_int_equal(waitpid(c, &st, 0), c);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);

    struct netcfg *n = netcfg_new();
    char err[256] = "", want[64];
    if (apply_spec(n, "nct0:gso=off", err, sizeof err) != 0) fail_msg("offload: %s", err);
    snprintf(want, sizeof want, "restored nct0 offloads left by pid %d ", (int)c);
    if (strncmp(netcfg_note(n), want, strlen(want)) != 0) fail_msg("note: '%s'", netcfg_note(n));
    assert_int_equal(netcfg_end(n, err, sizeof err), 0);
    /* A clean apply after that: nothing to tell. */
    if (apply_spec(n, "nct0:gso=off", err, sizeof err) != 0) fail_msg("offload: %s", err);
    assert_string_equal(netcfg_note(n), "");
    assert_int_equal(netcfg_end(n, err, sizeof err), 0);
    netcfg_free(n);
    char path[256];
    offload_session_default_path("nct0", path, sizeof path);
    assert_int_equal(access(path, F_OK), -1); /* state file gone */
}

static int setup_netns(void **state)
{
    (void)state;
    if (geteuid() != 0 || unshare(CLONE_NEWNET) < 0) return 0;
    in_netns = system("ip link set lo up && ip link add nct0 type veth peer name nct1 && "
                      "ip link set nct0 up && ip link set nct1 up") == 0;
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_specs_no_note),
        cmocka_unit_test(test_note_after_a_killed_run),
    };
    return cmocka_run_group_tests(tests, setup_netns, NULL);
}
