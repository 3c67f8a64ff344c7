/* Unit tests for server/observe/evidence.c and server/observe/cpu_budget.c: the record's server-side keys
 * (exact names and null rules, the contract with the client's verdict), CPU time of the
 * serving thread against a busy loop, thread_transfers_max of overlapping transfers, an end
 * in another thread (thread figures null), the sampler's counts; cpu.stat deltas, a cgroup
 * change between start and end (no deltas), X-Debit-Cpu and /status "cpu" on a fake cgroup
 * tree that changes (the lab moves debitd after it started). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cpu_budget.h"
#include "evidence.h"
#include "sys.h"
#include "testlib.h"
#include "transfers.h"

static char dir[256];

static int setup(void **state)
{
    (void)state;
    return testlib_mkdtemp(dir, sizeof dir, "/tmp/debit-test-evidence.XXXXXX");
}

static int teardown(void **state)
{
    (void)state;
    testlib_rm_rf(dir);
    return 0;
}

/* In place (same inode): cpu_budget's open cpu.stat sees the change. */
static void put(const char *rel, const char *text)
{
    assert_int_equal(testlib_put_file(dir, rel, text), 0);
}

static void fake_v1(const char *cg, const char *quota)
{
    char rel[256], line[300];
    snprintf(line, sizeof line, "1:cpu:%s\n0::/\n", cg);
    put("proc/self/cgroup", line);
    put("proc/self/mountinfo", "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n");
    snprintf(rel, sizeof rel, "sys/fs/cgroup/cpu%s/cpu.cfs_quota_us", cg);
    put(rel, quota);
    snprintf(rel, sizeof rel, "sys/fs/cgroup/cpu%s/cpu.cfs_period_us", cg);
    put(rel, "100000\n");
    snprintf(rel, sizeof rel, "sys/fs/cgroup/cpu%s/cpu.stat", cg);
    put(rel, "nr_periods 10\nnr_throttled 1\nthrottled_time 1000000\n");
}

static void busy_ms(double ms)
{
    double end = sys_mono_s() + ms / 1000;
    volatile unsigned long x = 0;
    while (sys_mono_s() < end)
        x++;
}

static const char *const record_keys[] = {"cpu", "sampled", "cgroup", "sndbuf", "initial_cwnd"};
static const char *const cpu_keys[] = {"user_ms", "sys_ms", "wall_ms", "share", "thread_transfers_max", "source",
                                       "process_user_ms", "process_sys_ms", "runqueue_ms"};
static const char *const sampled_keys[] = {"count",        "app_limited",  "cwnd_min",     "cwnd_max",
                                           "delivery_rate_max_bps", "notsent_zero", "plateau_mbps", "plateau_share"};
static const char *const cgroup_keys[] = {"version", "path", "quota_pct", "period_us", "throttled_ms",
                                          "nr_throttled", "nr_periods"};
static const char *const sndbuf_keys[] = {"setting", "so_sndbuf", "tcp_wmem_max"};

/* O has exactly KEYS. */
static void exact_keys(json_t *o, const char *const *keys, size_t n, const char *what)
{
    if (!json_is_object(o))
        fail_msg("%s: not an object", what);
    for (size_t i = 0; i < n; i++)
        if (!json_object_get(o, keys[i]))
            fail_msg("%s: no \"%s\"", what, keys[i]);
    if (json_object_size(o) != n)
        fail_msg("%s: %zu keys, want %zu", what, json_object_size(o), n);
}

static double num(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    if (!json_is_number(v))
        fail_msg("\"%s\" is not a number", k);
    return json_number_value(v);
}

/* A whole transfer through the ring: keys while sending, after the end, with a budget. */
static void test_record_keys(void **state)
{
    (void)state;
    fake_v1("/debit/x", "5000\n");
    struct cpu_budget *budget = cpu_budget_new(dir);
    assert_non_null(budget);
    int cli, srv;
    testlib_loopback_pair(&cli, &srv);
    struct transfers *t = transfers_new(4);
    struct transfer_evidence start = {.initial_cwnd = 10, .sndbuf_setting = 0, .tcp_wmem_max = 4194304};
    struct transfer_start s = {"/f", "", "", 0, 100, 200, srv, NULL, "sendfile", &start, 0, 0};
    char id[TRANSFER_ID_LEN];
    uint64_t seq = transfers_begin(t, &s, id);
    struct evidence_mark m;
    evidence_begin(&m, budget, EVIDENCE_RUNQ_MIN_BYTES, NULL);

    json_t *j = transfers_get(t, id, NULL);
    for (size_t i = 0; i < sizeof record_keys / sizeof *record_keys; i++)
        assert_non_null(json_object_get(j, record_keys[i]));
    assert_true(json_is_null(json_object_get(j, "cpu")));    /* while sending */
    assert_true(json_is_null(json_object_get(j, "cgroup")));
    assert_true(json_is_null(json_object_get(j, "iface"))); /* no peer: no interface */
    assert_string_equal(json_string_value(json_object_get(j, "direction")), "download");
    assert_true(json_is_null(json_object_get(j, "limited_by"))); /* no verdict while sending */
    assert_true(json_is_null(json_object_get(j, "predicted_mbps")));
    assert_int_equal(json_integer_value(json_object_get(j, "initial_cwnd")), 10);
    json_t *sb = json_object_get(j, "sndbuf");
    exact_keys(sb, sndbuf_keys, 3, "sndbuf");
    assert_true(json_is_null(json_object_get(sb, "setting"))); /* autotuning */
    assert_true(json_is_null(json_object_get(sb, "so_sndbuf"))); /* read at the end */
    assert_int_equal(json_integer_value(json_object_get(sb, "tcp_wmem_max")), 4194304);
    json_t *sa = json_object_get(j, "sampled");
    exact_keys(sa, sampled_keys, sizeof sampled_keys / sizeof *sampled_keys, "sampled");
    assert_true(json_is_null(json_object_get(sa, "plateau_mbps"))); /* no intervals yet */
    assert_int_equal(json_integer_value(json_object_get(sa, "count")), 0);
    assert_true(json_is_null(json_object_get(sa, "cwnd_min")));
    json_decref(j);

    assert_int_equal(transfers_sample(t), 1); /* one real TCP_INFO sample of the pair */
    busy_ms(30);
    put("sys/fs/cgroup/cpu/debit/x/cpu.stat", "nr_periods 15\nnr_throttled 4\nthrottled_time 51000000\n");
    struct transfer_evidence ev = {0};
    evidence_end(&m, budget, srv, &ev);
    json_t *logged = transfers_end(t, seq, "done", 100, NULL, &ev);
    assert_non_null(logged);
    for (size_t i = 0; i < sizeof record_keys / sizeof *record_keys; i++) /* not in the access log */
        assert_null(json_object_get(logged, record_keys[i]));
    /* what left the interface and the direction are in the log line too (issue 32) */
    assert_non_null(json_object_get(logged, "iface"));
    assert_string_equal(json_string_value(json_object_get(logged, "direction")), "download");
    json_decref(logged);
    json_t *done = transfers_get(t, id, NULL);
    assert_non_null(done);
    json_t *cpu = json_object_get(done, "cpu");
    exact_keys(cpu, cpu_keys, 9, "cpu");
    assert_string_equal(json_string_value(json_object_get(cpu, "source")), "RUSAGE_THREAD");
    double busy = num(cpu, "user_ms") + num(cpu, "sys_ms"), wall = num(cpu, "wall_ms");
    printf("# busy loop of 30 ms: user+sys %.1f ms, wall %.1f ms, share %.2f\n", busy, wall, num(cpu, "share"));
    assert_true(wall >= 30);
    assert_true(busy > 0 && busy <= wall + 20); /* rusage ticks can round up */
    assert_true(num(cpu, "share") >= 0 && num(cpu, "share") <= 1); /* never above one CPU */
    json_t *rq = json_object_get(cpu, "runqueue_ms"); /* null only without schedstat */
    assert_true(json_is_null(rq) || (json_number_value(rq) >= 0 && json_number_value(rq) <= wall + 1));
    assert_true(num(cpu, "process_user_ms") + num(cpu, "process_sys_ms") > 0);
    assert_int_equal(json_integer_value(json_object_get(cpu, "thread_transfers_max")), 1);
    json_t *cg = json_object_get(done, "cgroup");
    exact_keys(cg, cgroup_keys, 7, "cgroup");
    assert_int_equal(json_integer_value(json_object_get(cg, "version")), 1);
    assert_string_equal(json_string_value(json_object_get(cg, "path")), "/debit/x");
    assert_true(num(cg, "quota_pct") == 5.0);
    assert_int_equal(json_integer_value(json_object_get(cg, "period_us")), 100000);
    assert_true(num(cg, "throttled_ms") == 50.0); /* deltas: 51 ms - 1 ms */
    assert_int_equal(json_integer_value(json_object_get(cg, "nr_throttled")), 3);
    assert_int_equal(json_integer_value(json_object_get(cg, "nr_periods")), 5);
    sa = json_object_get(done, "sampled");
    assert_int_equal(json_integer_value(json_object_get(sa, "count")), 1); /* the sampler's, not the end's */
    assert_true(json_integer_value(json_object_get(sa, "cwnd_min")) >= 1);
    assert_true(json_integer_value(json_object_get(sa, "cwnd_max")) >= json_integer_value(json_object_get(sa, "cwnd_min")));
    assert_int_equal(json_integer_value(json_object_get(done, "initial_cwnd")), 10); /* the start's part stays */
    sb = json_object_get(done, "sndbuf");
    assert_true(json_integer_value(json_object_get(sb, "so_sndbuf")) > 0);
    /* debitd's own verdict: throttled 50 of ~30 ms under its 5% quota, the socket idle
     * (nothing was queued: busy 0): sender_cpu, said with the figures */
    assert_string_equal(json_string_value(json_object_get(done, "limited_by")), "sender_cpu");
    const char *why = json_string_value(json_object_get(done, "limited_by_evidence"));
    assert_non_null(why);
    if (!strstr(why, "3 of 5 periods under a 5% CPU quota"))
        fail_msg("evidence: %s", why);
    assert_true(json_is_null(json_object_get(done, "predicted_mbps"))); /* no limit known */
    assert_non_null(strstr(json_string_value(json_object_get(done, "predicted_note")), "no limit known"));
    json_decref(done);
    transfers_free(t);
    cpu_budget_free(budget);
    close(cli);
    close(srv);
}

static void test_thread_transfers_max(void **state)
{
    (void)state;
    struct evidence_mark a, b, c;
    struct transfer_evidence ea = {0}, eb = {0}, ec = {0};
    evidence_begin(&a, NULL, EVIDENCE_RUNQ_MIN_BYTES, NULL);
    evidence_begin(&b, NULL, EVIDENCE_RUNQ_MIN_BYTES, NULL); /* two at once */
    evidence_end(&b, NULL, -1, &eb);
    evidence_begin(&c, NULL, EVIDENCE_RUNQ_MIN_BYTES, NULL); /* two again, never three */
    evidence_end(&a, NULL, -1, &ea);
    evidence_end(&c, NULL, -1, &ec);
    assert_int_equal(ea.thread_transfers_max, 2);
    assert_int_equal(eb.thread_transfers_max, 2);
    assert_int_equal(ec.thread_transfers_max, 2);
    struct evidence_mark d;
    struct transfer_evidence ed = {0};
    evidence_begin(&d, NULL, EVIDENCE_RUNQ_MIN_BYTES, NULL); /* alone now */
    evidence_end(&d, NULL, -1, &ed);
    assert_int_equal(ed.thread_transfers_max, 1);
    assert_false(ed.have_cgroup);
    assert_true(ed.so_sndbuf < 0);
    /* a request freed without an end leaves nothing behind */
    evidence_begin(&d, NULL, EVIDENCE_RUNQ_MIN_BYTES, NULL);
    evidence_drop(&d);
    evidence_drop(&d);
    evidence_begin(&d, NULL, EVIDENCE_RUNQ_MIN_BYTES, NULL);
    evidence_end(&d, NULL, -1, &ed);
    assert_int_equal(ed.thread_transfers_max, 1);
}

/* thread_transfers_max against a brute force: random starts and ends on one thread, up to
 * CONC at once, each mark's answer the largest count seen at any start during it. */
static void test_thread_transfers_max_random(void **state)
{
    (void)state;
    static const struct {
        unsigned conc, ops, seed;
    } rows[] = {{1, 50, 1}, {3, 400, 2}, {40, 3000, 3}, {300, 6000, 4}, {1000, 8000, 5}};
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        unsigned conc = rows[k].conc;
        struct evidence_mark *m = calloc(conc, sizeof *m);
        unsigned *want = calloc(conc, sizeof *want);
        int *live = calloc(conc, sizeof *live);
        assert_non_null(m);
        assert_non_null(want);
        assert_non_null(live);
        unsigned active = 0, ended = 0;
        srand(rows[k].seed);
        for (unsigned op = 0; op < rows[k].ops || active; op++) {
            unsigned i = (unsigned)rand() % conc;
            int start = op < rows[k].ops && !live[i] && (active == 0 || rand() % 2);
            if (start) {
                evidence_begin(&m[i], NULL, EVIDENCE_RUNQ_MIN_BYTES, NULL);
                live[i] = 1;
                active++;
                for (unsigned j = 0; j < conc; j++) /* the brute force */
                    if (live[j] && want[j] < active)
                        want[j] = active;
            } else if (live[i]) {
                struct transfer_evidence ev = {0};
                evidence_end(&m[i], NULL, -1, &ev);
                assert_int_equal(ev.thread_transfers_max, want[i]);
                live[i] = 0;
                want[i] = 0;
                active--;
                ended++;
            }
        }
        assert_true(ended > 0);
        free(m);
        free(want);
        free(live);
    }
}

static void *end_elsewhere(void *arg)
{
    struct evidence_mark *m = arg;
    struct transfer_evidence *ev = (struct transfer_evidence *)(m + 1);
    evidence_end(m, NULL, -1, ev);
    return NULL;
}

/* Begun in one thread, ended in another: the thread's figures are unknown, not wrong. */
static void test_other_thread(void **state)
{
    (void)state;
    struct {
        struct evidence_mark m;
        struct transfer_evidence ev;
    } x = {0};
    evidence_begin(&x.m, NULL, EVIDENCE_RUNQ_MIN_BYTES, NULL);
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, end_elsewhere, &x.m), 0);
    pthread_join(th, NULL);
    assert_true(x.ev.have_cpu);
    assert_false(x.ev.have_thread);
    json_t *j = json_object();
    struct transfer_sampled s = {0};
    evidence_to_json(j, &x.ev, &s);
    json_t *cpu = json_object_get(j, "cpu");
    assert_true(json_is_null(json_object_get(cpu, "user_ms")));
    assert_true(json_is_null(json_object_get(cpu, "sys_ms")));
    assert_true(json_is_null(json_object_get(cpu, "share")));
    assert_true(json_is_number(json_object_get(cpu, "wall_ms")));
    json_decref(j);
}

struct sample_case {
    const char *name;
    struct tcp_info_sample in[3];
    size_t n;
    uint64_t count, app_limited, notsent_zero;
    uint32_t cwnd_min, cwnd_max;
    uint64_t rate_max;
};

#define TI(cwnd, app, notsent, rate)                                                                          \
    {.have = TCP_INFO_HAVE_BASE | TCP_INFO_HAVE_MIN_RTT | TCP_INFO_HAVE_DELIVERY, .snd_cwnd = cwnd,           \
     .delivery_rate_app_limited = app, .notsent_bytes = notsent, .delivery_rate_bps = rate}

static const struct sample_case samples[] = {
    {"none", {{0}}, 0, 0, 0, 0, 0, 0, 0},
    {"one", {TI(10, 0, 5000, 1000)}, 1, 1, 0, 0, 10, 10, 1000},
    {"socket ran dry", {TI(10, 1, 0, 500), TI(40, 1, 0, 9000), TI(20, 0, 100, 3000)}, 3, 3, 2, 2, 10, 40, 9000},
    /* a kernel without notsent_bytes: never counted as "nothing unsent" */
    {"old kernel", {{.have = TCP_INFO_HAVE_BASE, .snd_cwnd = 7}}, 1, 1, 0, 0, 7, 7, 0},
};

static void test_sampled(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof samples / sizeof *samples; i++) {
        const struct sample_case *c = &samples[i];
        struct transfer_sampled s = {0};
        for (size_t k = 0; k < c->n; k++)
            evidence_sample(&s, &c->in[k], 0, 0);
        json_t *j = json_object();
        struct transfer_evidence ev = {0};
        evidence_to_json(j, &ev, &s);
        json_t *o = json_object_get(j, "sampled");
        if ((uint64_t)json_integer_value(json_object_get(o, "count")) != c->count ||
            (uint64_t)json_integer_value(json_object_get(o, "app_limited")) != c->app_limited ||
            (uint64_t)json_integer_value(json_object_get(o, "notsent_zero")) != c->notsent_zero)
            fail_msg("%s: counts", c->name);
        if (c->count) {
            assert_int_equal(json_integer_value(json_object_get(o, "cwnd_min")), c->cwnd_min);
            assert_int_equal(json_integer_value(json_object_get(o, "cwnd_max")), c->cwnd_max);
            assert_int_equal(json_integer_value(json_object_get(o, "delivery_rate_max_bps")), c->rate_max);
        } else {
            assert_true(json_is_null(json_object_get(o, "cwnd_max")));
        }
        /* no end yet: cpu and cgroup null, initial_cwnd unknown */
        assert_true(json_is_null(json_object_get(j, "cpu")));
        assert_true(json_is_null(json_object_get(j, "cgroup")));
        assert_true(json_is_null(json_object_get(j, "initial_cwnd")));
        json_decref(j);
    }
}

/* A sender's rates from what was delivered, SACKed included: while a hole is repaired
 * bytes_acked stands still and then jumps; delivered x MSS keeps the path's rate. Without
 * delivered (a kernel before 4.18) bytes_acked still counts; a receiver's bytes_received. */
static void test_sampled_delivered(void **state)
{
    (void)state;
    /* 4 readings 0.1 s apart: 2.5 MB delivered each (200 Mb/s); acked 2.5, 0, then 5 MB */
    static const uint64_t acked[] = {0, 2500000, 2500000, 7500000};
    static const uint32_t delivered[] = {0, 1726, 3452, 5178}; /* x 1448 B = 2.5 MB each */
    for (int with = 0; with <= 1; with++) {
        struct transfer_sampled s = {0};
        for (int k = 0; k < 4; k++) {
            struct tcp_info_sample ti = {.have = TCP_INFO_HAVE_BASE | TCP_INFO_HAVE_BYTES, .snd_mss = 1448,
                                         .bytes_acked = acked[k]};
            if (with) {
                ti.have |= TCP_INFO_HAVE_DELIVERED;
                ti.delivered = delivered[k];
            }
            evidence_sample(&s, &ti, 1.0 + 0.1 * k, 0);
        }
        assert_int_equal(s.nrate, 3);
        if (with) {
            for (int i = 0; i < 3; i++)
                assert_true(fabs(s.rate_mbps[i] - 199.9) < 0.1);
        } else {
            assert_true(fabs(s.rate_mbps[0] - 200) < 0.1);
            assert_true(s.rate_mbps[1] == 0);
            assert_true(fabs(s.rate_mbps[2] - 400) < 0.1);
        }
    }
    /* a receiver counts bytes_received, whatever delivered says */
    struct transfer_sampled s = {0};
    for (int k = 0; k < 3; k++) {
        struct tcp_info_sample ti = {.have = TCP_INFO_HAVE_BASE | TCP_INFO_HAVE_BYTES | TCP_INFO_HAVE_DELIVERED,
                                     .snd_mss = 1448, .delivered = 7, .bytes_received = 1250000 * (uint64_t)k};
        evidence_sample(&s, &ti, 1.0 + 0.1 * k, 1);
    }
    assert_int_equal(s.nrate, 2);
    assert_true(fabs(s.rate_mbps[1] - 100) < 0.1);
}

/* The budget follows the process: moved into another cgroup, the header changes at the
 * next refresh and a transfer across the move gets no deltas; no controller: "none". */
static void test_budget_refresh(void **state)
{
    (void)state;
    fake_v1("/a", "-1\n");
    struct cpu_budget *b = cpu_budget_new(dir);
    char hdr[256];
    cpu_budget_header(b, 1, hdr, sizeof hdr);
    assert_string_equal(hdr, "none");
    json_t *j = cpu_budget_json(b, 1);
    assert_string_equal(json_string_value(json_object_get(j, "x_debit_cpu")), "none");
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "cgroup"), "path")), "/a");
    assert_true(json_is_null(json_object_get(json_object_get(j, "cgroup"), "quota_pct")));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "cgroup"), "nr_throttled")), 1);
    json_decref(j);

    struct evidence_mark m;
    evidence_begin(&m, b, EVIDENCE_RUNQ_MIN_BYTES, NULL);
    fake_v1("/debit/y", "2500\n");
    char err[256];
    assert_int_equal(cpu_budget_refresh(b, err, sizeof err), 0);
    cpu_budget_header(b, 1, hdr, sizeof hdr);
    assert_string_equal(hdr, "quota=2.5%; period=100ms; cgroup=v1:/debit/y");
    cpu_budget_header(b, 0, hdr, sizeof hdr); /* privacy.details = false */
    assert_string_equal(hdr, "quota=2.5%; period=100ms");
    j = cpu_budget_json(b, 0);
    assert_string_equal(json_string_value(json_object_get(j, "x_debit_cpu")), "quota=2.5%; period=100ms");
    assert_null(json_object_get(json_object_get(j, "cgroup"), "path"));
    assert_true(json_object_get(json_object_get(j, "cgroup"), "quota_pct") != NULL);
    json_decref(j);
    struct transfer_evidence ev = {0};
    evidence_end(&m, b, -1, &ev);
    assert_true(ev.have_cgroup);
    assert_false(ev.have_deltas); /* two cgroups' counters are unrelated */
    json_t *r = json_object();
    struct transfer_sampled s = {0};
    evidence_to_json(r, &ev, &s);
    json_t *cg = json_object_get(r, "cgroup");
    assert_string_equal(json_string_value(json_object_get(cg, "path")), "/debit/y");
    assert_true(num(cg, "quota_pct") == 2.5);
    assert_true(json_is_null(json_object_get(cg, "throttled_ms")));
    json_decref(r);
    ev.cg_path[0] = 0; /* what http_completed does with privacy.details = false */
    r = json_object();
    evidence_to_json(r, &ev, &s);
    assert_true(json_is_null(json_object_get(json_object_get(r, "cgroup"), "path")));
    json_decref(r);

    /* no cpu controller any more (no cgroup line names it): none, cgroup null, no error */
    put("proc/self/cgroup", "2:memory:/\n");
    assert_int_equal(cpu_budget_refresh(b, err, sizeof err), 0);
    cpu_budget_header(b, 1, hdr, sizeof hdr);
    assert_string_equal(hdr, "none");
    j = cpu_budget_json(b, 1);
    assert_true(json_is_null(json_object_get(j, "cgroup")));
    assert_null(json_object_get(j, "error"));
    json_decref(j);
    evidence_begin(&m, b, EVIDENCE_RUNQ_MIN_BYTES, NULL);
    evidence_end(&m, b, -1, &ev);
    assert_false(ev.have_cgroup);

    /* unreadable: an error in /status, "none" in the header */
    put("sys/fs/cgroup/cpu/debit/y/cpu.cfs_quota_us", "junk\n");
    put("proc/self/cgroup", "1:cpu:/debit/y\n0::/\n");
    assert_int_equal(cpu_budget_refresh(b, err, sizeof err), -1);
    assert_non_null(strstr(err, "not a number"));
    j = cpu_budget_json(b, 1);
    assert_non_null(strstr(json_string_value(json_object_get(j, "error")), "cpu.cfs_quota_us"));
    assert_string_equal(json_string_value(json_object_get(j, "x_debit_cpu")), "none");
    json_decref(j);
    cpu_budget_free(b);
    cpu_budget_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_record_keys),  cmocka_unit_test(test_thread_transfers_max),
        cmocka_unit_test(test_thread_transfers_max_random),
        cmocka_unit_test(test_other_thread), cmocka_unit_test(test_sampled), cmocka_unit_test(test_sampled_delivered),
        cmocka_unit_test(test_budget_refresh),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
