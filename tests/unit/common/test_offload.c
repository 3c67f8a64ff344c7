/* Unit tests for common/offload.c and common/offload_state.c that need no device: spec
 * parsing, formatting, JSON, state files. The ioctl tests on real devices are in
 * test_offload_dev.c. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "offload.h"
#include "testlib.h"

/* --- helpers -------------------------------------------------------------------------- */

static char tmpdir[256];

static void make_tmpdir(void)
{
    if (testlib_mkdtemp(tmpdir, sizeof tmpdir, "/tmp/debit-test-offload.XXXXXX") < 0)
        fail_msg("mkdtemp: %s", strerror(errno));
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void add_bit(struct offload_state *st, enum offload_feature f, const char *name, int active, int fixed)
{
    struct offload_feature_state *fs = &st->f[f];
    struct offload_bit *b = &fs->bits[fs->nbits++];
    snprintf(b->name, sizeof b->name, "%s", name);
    b->active = (unsigned char)active;
    b->requested = (unsigned char)active;
    b->fixed = (unsigned char)fixed;
    unsigned on = 0, fx = 0;
    for (unsigned i = 0; i < fs->nbits; i++) {
        on += fs->bits[i].active;
        fx += fs->bits[i].fixed;
    }
    fs->known = 1;
    fs->on = on > 0;
    fs->partial = on > 0 && on < fs->nbits;
    fs->fixed = fx == fs->nbits;
}

/* A hand-made state like a veth with tso/gso off. */
static void fake_state(struct offload_state *st)
{
    memset(st, 0, sizeof *st);
    snprintf(st->ifname, sizeof st->ifname, "veth0");
    st->ifindex = 7;
    add_bit(st, OFFLOAD_TSO, "tx-tcp-segmentation", 0, 0);
    add_bit(st, OFFLOAD_TSO, "tx-tcp-ecn-segmentation", 0, 0);
    add_bit(st, OFFLOAD_TSO, "tx-tcp-accecn-segmentation", 0, 0);
    add_bit(st, OFFLOAD_GSO, "tx-generic-segmentation", 0, 0);
    add_bit(st, OFFLOAD_GRO, "rx-gro", 1, 0);
    add_bit(st, OFFLOAD_SG, "tx-scatter-gather", 1, 0);
    add_bit(st, OFFLOAD_TXCSUM, "tx-checksum-ip-generic", 1, 0);
    add_bit(st, OFFLOAD_LRO, "rx-lro", 0, 1);
}

/* --- pure tests ----------------------------------------------------------------------- */

static void test_parse_spec(void **state)
{
    (void)state;
    static const struct {
        const char *spec;
        enum offload_err err;
        const char *ifname;
        enum offload_want tso, gso, gro;
        const char *msg;
    } rows[] = {
        {"eth0:tso=off,gso=off", OFFLOAD_OK, "eth0", OFFLOAD_OFF, OFFLOAD_OFF, OFFLOAD_LEAVE, NULL},
        {"eth0:gro=on", OFFLOAD_OK, "eth0", OFFLOAD_LEAVE, OFFLOAD_LEAVE, OFFLOAD_ON, NULL},
        {"veth-c0:tso=on,gso=off,gro=off", OFFLOAD_OK, "veth-c0", OFFLOAD_ON, OFFLOAD_OFF, OFFLOAD_OFF, NULL},
        {"enp0s31f6.100:tso=off", OFFLOAD_OK, "enp0s31f6.100", OFFLOAD_OFF, OFFLOAD_LEAVE, OFFLOAD_LEAVE, NULL},
        {"", OFFLOAD_ERR_SPEC, "", 0, 0, 0, "empty offload specification (expected DEV:tso=off,gso=off)"},
        {"eth0", OFFLOAD_ERR_SPEC, "", 0, 0, 0,
         "'eth0': expected DEV:FEATURE=on|off[,...] (e.g. eth0:tso=off,gso=off)"},
        {":tso=off", OFFLOAD_ERR_SPEC, "", 0, 0, 0, "':tso=off': missing interface name before ':'"},
        {"eth0:", OFFLOAD_ERR_SPEC, "", 0, 0, 0, "'eth0:': no feature after ':' (expected tso, gso or gro)"},
        {"eth0:tso", OFFLOAD_ERR_SPEC, "", 0, 0, 0, "'eth0:tso': 'tso' is not FEATURE=on|off"},
        {"eth0:tso=maybe", OFFLOAD_ERR_SPEC, "", 0, 0, 0, "'eth0:tso=maybe': tso: 'maybe' is not on or off"},
        {"eth0:tso=", OFFLOAD_ERR_SPEC, "", 0, 0, 0, "'eth0:tso=': tso: '' is not on or off"},
        {"eth0:tso=OFF", OFFLOAD_ERR_SPEC, "", 0, 0, 0, "'eth0:tso=OFF': tso: 'OFF' is not on or off"},
        {"eth0:tsx=off", OFFLOAD_ERR_SPEC, "", 0, 0, 0,
         "'eth0:tsx=off': unknown feature 'tsx' (expected tso, gso or gro)"},
        {"eth0:sg=off", OFFLOAD_ERR_SPEC, "", 0, 0, 0,
         "'eth0:sg=off': sg is reported only, not set (settable: tso, gso, gro)"},
        {"eth0:lro=off", OFFLOAD_ERR_SPEC, "", 0, 0, 0,
         "'eth0:lro=off': lro is reported only, not set (settable: tso, gso, gro)"},
        {"eth0:tso=off,tso=on", OFFLOAD_ERR_SPEC, "", 0, 0, 0, "'eth0:tso=off,tso=on': tso given twice"},
        {"eth0:tso=off,", OFFLOAD_ERR_SPEC, "", 0, 0, 0, "'eth0:tso=off,': trailing ','"},
        {"eth0:,tso=off", OFFLOAD_ERR_SPEC, "", 0, 0, 0, "'eth0:,tso=off': empty item"},
        {"averyveryverylongname:tso=off", OFFLOAD_ERR_SPEC, "", 0, 0, 0,
         "'averyveryverylongname:tso=off': interface name longer than 15 characters"},
        {"et h0:tso=off", OFFLOAD_ERR_SPEC, "", 0, 0, 0, "'et h0:tso=off': invalid interface name 'et h0'"},
        {"a/b:tso=off", OFFLOAD_ERR_SPEC, "", 0, 0, 0, "'a/b:tso=off': invalid interface name 'a/b'"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char ifname[IF_NAMESIZE] = "x", err[256] = "";
        struct offload_wish w;
        enum offload_err e = offload_parse_spec(rows[i].spec, ifname, &w, err, sizeof err);
        if (e != rows[i].err)
            fail_msg("'%s': got %s (%s), want %s", rows[i].spec, offload_strerror(e), err,
                     offload_strerror(rows[i].err));
        if (e == OFFLOAD_OK) {
            assert_string_equal(ifname, rows[i].ifname);
            if (w.want[OFFLOAD_TSO] != rows[i].tso || w.want[OFFLOAD_GSO] != rows[i].gso ||
                w.want[OFFLOAD_GRO] != rows[i].gro)
                fail_msg("'%s': wrong wish %d %d %d", rows[i].spec, w.want[0], w.want[1], w.want[2]);
        } else {
            if (strcmp(err, rows[i].msg) != 0)
                fail_msg("'%s': message\n  got:  %s\n  want: %s", rows[i].spec, err, rows[i].msg);
            assert_string_equal(ifname, "");
            assert_true(offload_wish_empty(&w));
        }
    }
}

static void test_wish_format(void **state)
{
    (void)state;
    char ifname[IF_NAMESIZE], err[256], buf[64];
    struct offload_wish w;
    assert_int_equal(offload_parse_spec("eth0:gro=on,tso=off", ifname, &w, err, sizeof err), OFFLOAD_OK);
    offload_wish_format(&w, buf, sizeof buf);
    assert_string_equal(buf, "tso=off gro=on");
    memset(&w, 0, sizeof w);
    assert_true(offload_wish_empty(&w));
    offload_wish_format(&w, buf, sizeof buf);
    assert_string_equal(buf, "");
    /* truncation: snprintf semantics, always terminated */
    assert_int_equal(offload_parse_spec("eth0:tso=off,gso=off,gro=off", ifname, &w, err, sizeof err), OFFLOAD_OK);
    assert_int_equal(offload_wish_format(&w, buf, 5), (int)strlen("tso=off gso=off gro=off"));
    assert_string_equal(buf, "tso=");
}

static void test_feature_names(void **state)
{
    (void)state;
    static const char *const names[] = {"tso", "gso", "gro", "sg", "txcsum", "lro"};
    for (int i = 0; i < OFFLOAD_NFEATURES; i++) {
        enum offload_feature f;
        assert_string_equal(offload_feature_name((enum offload_feature)i), names[i]);
        assert_int_equal(offload_feature_parse(names[i], &f), 0);
        assert_int_equal(f, i);
    }
    enum offload_feature f;
    assert_int_equal(offload_feature_parse("TSO", &f), -1);
    assert_null(offload_feature_name(OFFLOAD_NFEATURES));
    for (int e = OFFLOAD_OK; e <= OFFLOAD_ERR_STATE_STALE; e++)
        assert_string_not_equal(offload_strerror((enum offload_err)e), "unknown error");
    assert_string_equal(offload_strerror(OFFLOAD_ERR_PERM), "needs CAP_NET_ADMIN (run as root)");
}

static void test_format(void **state)
{
    (void)state;
    struct offload_state st;
    char buf[64];
    fake_state(&st);
    offload_format(&st, buf, sizeof buf);
    assert_string_equal(buf, "tso=off gso=off gro=on");

    /* partial tso reads "on", as ethtool -k shows it */
    st.f[OFFLOAD_TSO].bits[2].active = 1;
    st.f[OFFLOAD_TSO].on = 1;
    st.f[OFFLOAD_TSO].partial = 1;
    st.f[OFFLOAD_GRO].on = 0;
    offload_format(&st, buf, sizeof buf);
    assert_string_equal(buf, "tso=on gso=off gro=off");

    memset(&st, 0, sizeof st);
    offload_format(&st, buf, sizeof buf);
    assert_string_equal(buf, "tso=n/a gso=n/a gro=n/a");
}

static void test_json(void **state)
{
    (void)state;
    struct offload_state st;
    fake_state(&st);
    st.f[OFFLOAD_TSO].bits[2].active = 1;
    st.f[OFFLOAD_TSO].on = 1;
    st.f[OFFLOAD_TSO].partial = 1;
    st.f[OFFLOAD_TXCSUM].known = 0; /* as if the kernel had no such bit */
    json_t *j = offload_to_json(&st);
    char *s = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(s, "{\"bits\":{\"rx-gro\":true,\"rx-lro\":false,\"tx-checksum-ip-generic\":true,"
                           "\"tx-generic-segmentation\":false,\"tx-scatter-gather\":true,"
                           "\"tx-tcp-accecn-segmentation\":true,\"tx-tcp-ecn-segmentation\":false,"
                           "\"tx-tcp-segmentation\":false},\"fixed\":[\"lro\"],\"gro\":true,\"gso\":false,"
                           "\"interface\":\"veth0\",\"lro\":false,\"partial\":[\"tso\"],\"sg\":true,"
                           "\"tso\":true,\"txcsum\":null}");
    free(s);
    json_decref(j);
}

static void test_state_file_roundtrip(void **state)
{
    (void)state;
    make_tmpdir();
    char path[512], err[512];
    snprintf(path, sizeof path, "%s/run/debitd/offload.state", tmpdir); /* parents missing */
    struct offload_state st, back;
    struct offload_saved_info info;
    fake_state(&st);
    st.f[OFFLOAD_GSO].bits[0].requested = 1; /* requested on, active off: must survive */

    assert_int_equal(offload_state_load(path, &back, &info, err, sizeof err), OFFLOAD_ERR_NO_STATE);
    enum offload_err e = offload_state_save(path, &st, err, sizeof err);
    if (e)
        fail_msg("save: %s", err);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0644);
    char dir[512];
    snprintf(dir, sizeof dir, "%s/run/debitd", tmpdir);
    assert_int_equal(stat(dir, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));
    /* no temp file left behind */
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid());
    assert_int_equal(access(tmp, F_OK), -1);

    e = offload_state_load(path, &back, &info, err, sizeof err);
    if (e)
        fail_msg("load: %s", err);
    assert_string_equal(back.ifname, "veth0");
    assert_int_equal(back.ifindex, 7);
    assert_int_equal(info.pid, getpid());
    assert_true(info.pid_start > 0);
    assert_true(info.netns > 0);
    assert_true(info.saved_at > 1700000000);
    for (int f = 0; f < OFFLOAD_SETTABLE; f++) {
        assert_int_equal(back.f[f].nbits, st.f[f].nbits);
        assert_int_equal(back.f[f].on, st.f[f].on);
        for (unsigned b = 0; b < st.f[f].nbits; b++) {
            assert_string_equal(back.f[f].bits[b].name, st.f[f].bits[b].name);
            assert_int_equal(back.f[f].bits[b].active, st.f[f].bits[b].active);
            assert_int_equal(back.f[f].bits[b].requested, st.f[f].bits[b].requested);
            assert_int_equal(back.f[f].bits[b].fixed, st.f[f].bits[b].fixed);
        }
    }
    /* only what restore needs is saved: sg/txcsum/lro are not */
    assert_int_equal(back.f[OFFLOAD_SG].nbits, 0);

    /* the file is readable by an operator */
    FILE *f = fopen(path, "r");
    char text[2048];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    assert_non_null(strstr(text, "\ninterface veth0\n"));
    assert_non_null(strstr(text, "\nbit tso tx-tcp-accecn-segmentation requested=0 active=0 fixed=0\n"));
    assert_non_null(strstr(text, "\nbit gso tx-generic-segmentation requested=1 active=0 fixed=0\n"));

    /* overwrite is atomic and fine */
    assert_int_equal(offload_state_save(path, &st, err, sizeof err), OFFLOAD_OK);
    assert_int_equal(offload_state_remove(path, err, sizeof err), OFFLOAD_OK);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(offload_state_remove(path, err, sizeof err), OFFLOAD_OK); /* missing: fine */
    assert_int_equal(offload_state_recover(path, NULL, err, sizeof err), OFFLOAD_ERR_NO_STATE);

    /* unwritable place */
    assert_int_equal(offload_state_save("/proc/debit/offload.state", &st, err, sizeof err), OFFLOAD_ERR_STATE_FILE);
    assert_non_null(strstr(err, "cannot create directory /proc/debit"));
}

static void test_state_file_bad(void **state)
{
    (void)state;
    make_tmpdir();
    static const struct {
        const char *text;
        const char *msg; /* after "PATH" */
    } rows[] = {
        {"interface veth0\n", ": unsupported state file version 0"},
        {"version 2\ninterface veth0\n", ": unsupported state file version 2"},
        {"version 1\n", ": no interface line"},
        {"version 1\ninterface veth0\nbit tso\n", ":3: cannot parse 'bit tso'"},
        {"version 1\ninterface veth0\nbit sg tx-scatter-gather requested=1 active=1 fixed=0\n", ":3: bad feature line"},
        {"version 1\ninterface veth0\nbit tsx tx-tcp-segmentation requested=1 active=1 fixed=0\n",
         ":3: bad feature line"},
        {"version 1\ninterface averyveryverylongname\n", ":2: interface name too long"},
        {"version 1\ngarbage\n", ":2: cannot parse 'garbage'"},
    };
    char path[512], err[600], want[700];
    snprintf(path, sizeof path, "%s/bad.state", tmpdir);
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct offload_state st;
        write_file(path, rows[i].text);
        enum offload_err e = offload_state_load(path, &st, NULL, err, sizeof err);
        snprintf(want, sizeof want, "%s%s", path, rows[i].msg);
        if (e != OFFLOAD_ERR_STATE_FILE || strcmp(err, want) != 0)
            fail_msg("row %zu: got %s: %s\n  want: %s", i, offload_strerror(e), err, want);
    }
    /* a well-formed file with comments and unknown keys from a newer version loads */
    write_file(path, "# comment\n\nversion 1\ninterface veth0\nfuture_key 12\n"
                     "bit gro rx-gro requested=1 active=1 fixed=0\n");
    struct offload_state st;
    assert_int_equal(offload_state_load(path, &st, NULL, err, sizeof err), OFFLOAD_OK);
    assert_int_equal(st.f[OFFLOAD_GRO].on, 1);
    assert_int_equal(st.f[OFFLOAD_GRO].nbits, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_spec),
        cmocka_unit_test(test_wish_format),
        cmocka_unit_test(test_feature_names),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_state_file_roundtrip),
        cmocka_unit_test(test_state_file_bad),
    };
    int failed = cmocka_run_group_tests_name("offload", tests, NULL, NULL);
    testlib_rm_rf(tmpdir);
    return failed ? 1 : 0;
}
