/* evidence: see evidence.h. */
#include "evidence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "sys.h"
#include "threadcpu.h"

/* The most transfers under way at once during each mark, in O(log n) per transfer:
 * walking every mark under way at each start was O(n) (1.4 % of debitd's CPU at 500
 * transfers per worker on 1 MiB, `perf record`; n up to limits.connections). The count
 * rises only at a start, so the most during a mark is the largest count right after a
 * start since its own: the starts' counts form a suffix-maximum stack, seq increasing and
 * count strictly decreasing from the bottom, and a mark's answer is the first entry at or
 * after its start. A new start pops the entries it dominates; the stack never holds more
 * entries than the most transfers ever under way together, and is freed when none is. */
struct peak {
    uint64_t seq;   /* the start's number on this thread */
    unsigned count; /* transfers under way right after it */
};

struct evidence_thread {
    pthread_mutex_t lock; /* taken by other threads only in evidence_drop's rare case */
    unsigned active;
    uint64_t seq;
    struct peak *peaks;
    size_t n, cap;
};

/* Lives as long as its thread: a worker exits only after libmicrohttpd closed all of its
 * connections, so no mark refers to it then (and peaks is freed, none being under way). */
static __thread struct evidence_thread this_thread = {PTHREAD_MUTEX_INITIALIZER, 0, 0, NULL, 0, 0};

static void link_mark(struct evidence_mark *m)
{
    struct evidence_thread *t = &this_thread;
    pthread_mutex_lock(&t->lock);
    unsigned n = ++t->active;
    m->seq0 = ++t->seq;
    m->max_active = n; /* the answer if the stack cannot grow */
    while (t->n > 0 && t->peaks[t->n - 1].count <= n)
        t->n--;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        struct peak *p = realloc(t->peaks, cap * sizeof *p);
        if (p) {
            t->peaks = p;
            t->cap = cap;
        }
    }
    if (t->n < t->cap)
        t->peaks[t->n++] = (struct peak){m->seq0, n};
    else
        m->seq0 = 0; /* no entry: keep the count at the start */
    m->thread = t;
    pthread_mutex_unlock(&t->lock);
}

/* The largest count among the starts from SEQ0 on: the first entry at or after it. */
static unsigned peak_since(const struct evidence_thread *t, uint64_t seq0)
{
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->peaks[mid].seq < seq0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < t->n ? t->peaks[lo].count : 0;
}

void evidence_drop(struct evidence_mark *m)
{
    struct evidence_thread *t = m->thread;
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    if (m->seq0) {
        unsigned most = peak_since(t, m->seq0);
        if (most > m->max_active)
            m->max_active = most;
    }
    if (--t->active == 0) { /* nothing under way: no start before now is asked for again */
        free(t->peaks);
        t->peaks = NULL;
        t->n = t->cap = 0;
    }
    m->thread = NULL;
    pthread_mutex_unlock(&t->lock);
}

void evidence_begin(struct evidence_mark *m, struct cpu_budget *budget, uint64_t bytes, const struct sockaddr *peer)
{
    memset(m, 0, sizeof *m);
    m->begun = 1;
    link_mark(m);
    m->self = pthread_self();
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    m->thread_user0 = ru.ru_utime;
    m->thread_sys0 = ru.ru_stime;
    getrusage(RUSAGE_SELF, &ru);
    m->self_user0 = ru.ru_utime;
    m->self_sys0 = ru.ru_stime;
    m->runq0 = bytes >= EVIDENCE_RUNQ_MIN_BYTES ? threadcpu_runq_ms() : -1;
    m->mono0 = sys_mono_s();
    if (budget)
        m->cg_have = cpu_budget_stat(budget, &m->cg_gen, &m->cg0);
    if (bytes >= EVIDENCE_IFACE_MIN_BYTES) /* last: the counters as close to the first byte as may be */
        ifstat_begin(peer, &m->if0);
}

static double tv_ms(const struct timeval *a, const struct timeval *b)
{
    return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_usec - a->tv_usec) / 1e3;
}

void evidence_end(struct evidence_mark *m, struct cpu_budget *budget, int sock, struct transfer_evidence *ev)
{
    if (!m->begun) {
        memset(ev, 0, sizeof *ev);
        ev->so_sndbuf = -1;
        return;
    }
    struct ifstat_point if1 = m->if0; /* first: the counters as close to the last byte as may be */
    int have_if = m->if0.ifindex > 0 && ifstat_read(&if1) == 0;
    struct rusage th, self;
    int same = pthread_equal(m->self, pthread_self());
    getrusage(RUSAGE_THREAD, &th);
    getrusage(RUSAGE_SELF, &self);
    double runq = same && m->runq0 >= 0 ? threadcpu_runq_ms() : -1;
    double now = sys_mono_s();
    evidence_drop(m);
    memset(ev, 0, sizeof *ev);
    ev->have_cpu = 1;
    ev->have_thread = same;
    ev->user_ms = same ? tv_ms(&m->thread_user0, &th.ru_utime) : 0;
    ev->sys_ms = same ? tv_ms(&m->thread_sys0, &th.ru_stime) : 0;
    ev->wall_ms = (now - m->mono0) * 1e3;
    ev->process_user_ms = tv_ms(&m->self_user0, &self.ru_utime);
    ev->process_sys_ms = tv_ms(&m->self_sys0, &self.ru_stime);
    ev->thread_transfers_max = m->max_active ? m->max_active : 1;
    ev->runq_ms = same && m->runq0 >= 0 && runq >= m->runq0 ? runq - m->runq0 : -1;
    ev->so_sndbuf = -1;
    /* counters that went backwards (the interface replaced under the same index) say nothing */
    if (have_if && if1.tx_bytes >= m->if0.tx_bytes && if1.tx_packets >= m->if0.tx_packets) {
        ev->have_iface = 1;
        snprintf(ev->iface, sizeof ev->iface, "%s", m->if0.name);
        ev->tx_bytes = if1.tx_bytes - m->if0.tx_bytes;
        ev->tx_packets = if1.tx_packets - m->if0.tx_packets;
    }
    int v = 0;
    socklen_t len = sizeof v;
    if (sock >= 0 && getsockopt(sock, SOL_SOCKET, SO_SNDBUF, &v, &len) == 0)
        ev->so_sndbuf = v;
    if (!budget)
        return;
    struct cpu_budget_view cv;
    cpu_budget_read(budget, 1, &cv);
    if (!cv.found)
        return;
    ev->have_cgroup = 1;
    ev->cg_version = cv.version;
    snprintf(ev->cg_path, sizeof ev->cg_path, "%s", cv.path);
    ev->quota_pct = cv.quota_pct;
    ev->period_us = cv.period_us;
    /* deltas only within one cgroup: moved meanwhile, the two counters are unrelated */
    ev->have_deltas = m->cg_have && cv.have_stat && cv.gen == m->cg_gen;
    if (ev->have_deltas) {
        const struct cgroup_stat *a = &m->cg0, *b = &cv.stat;
        ev->throttled_ms = b->throttled_ns >= a->throttled_ns ? (double)(b->throttled_ns - a->throttled_ns) / 1e6 : 0;
        ev->nr_throttled = b->nr_throttled >= a->nr_throttled ? b->nr_throttled - a->nr_throttled : 0;
        ev->nr_periods = b->nr_periods >= a->nr_periods ? b->nr_periods - a->nr_periods : 0;
    }
}

/* One more interval of BYTES over SECONDS into S's rates (see EVIDENCE_RATES). */
static void rate_add(struct transfer_sampled *s, uint64_t bytes, double seconds)
{
    if (!s->stride)
        s->stride = 1;
    s->acc_bytes += bytes;
    s->acc_s += seconds;
    if (++s->in_acc < s->stride)
        return;
    if (s->nrate == EVIDENCE_RATES) { /* full: pairs into one, each entry twice as long */
        for (unsigned i = 0; i < EVIDENCE_RATES / 2; i++)
            s->rate_mbps[i] = (s->rate_mbps[2 * i] + s->rate_mbps[2 * i + 1]) / 2;
        s->nrate = EVIDENCE_RATES / 2;
        s->stride *= 2;
    }
    if (s->acc_s > 0)
        s->rate_mbps[s->nrate++] = (float)((double)s->acc_bytes * 8 / s->acc_s / 1e6);
    s->acc_bytes = 0;
    s->acc_s = 0;
    s->in_acc = 0;
}

void evidence_sample(struct transfer_sampled *s, const struct tcp_info_sample *ti, double now, int received)
{
    if (ti->have & TCP_INFO_HAVE_BYTES) {
        /* A sender's rate counts what was delivered, SACKed included: bytes_acked stops at
         * the first hole while a loss is repaired and then jumps (a clean 200 Mbit/s path
         * with 2-5 % of its bytes resent after slow start), which the plateau takes for a
         * rate that did not hold. delivered x MSS moves on with what reached the receiver. */
        int seg = !received && (ti->have & TCP_INFO_HAVE_DELIVERED) && ti->snd_mss;
        uint64_t moved = received ? ti->bytes_received : seg ? (uint64_t)ti->delivered * ti->snd_mss : ti->bytes_acked;
        /* the first sample is the baseline (a kept-alive connection's count starts earlier) */
        if (s->t_prev > 0 && now > s->t_prev && moved >= s->acked_prev)
            rate_add(s, moved - s->acked_prev, now - s->t_prev);
        s->acked_prev = moved;
        s->t_prev = now;
    }
    if (!s->count || ti->snd_cwnd < s->cwnd_min)
        s->cwnd_min = ti->snd_cwnd;
    if (ti->snd_cwnd > s->cwnd_max)
        s->cwnd_max = ti->snd_cwnd;
    if (ti->delivery_rate_bps > s->delivery_rate_max_bps)
        s->delivery_rate_max_bps = ti->delivery_rate_bps;
    s->count++;
    if (ti->delivery_rate_app_limited)
        s->app_limited++;
    if ((ti->have & TCP_INFO_HAVE_MIN_RTT) && ti->notsent_bytes == 0)
        s->notsent_zero++;
}

static json_t *real_or_null(int known, double v)
{
    return known ? json_real(v) : json_null();
}

static json_t *int_or_null(int known, uint64_t v)
{
    return known ? json_integer((json_int_t)v) : json_null();
}

void evidence_iface_to_json(json_t *record, const struct transfer_evidence *ev)
{
    if (!ev->have_iface) {
        json_object_set_new(record, "iface", json_null());
        return;
    }
    json_object_set_new(record, "iface",
                        json_pack("{s:s, s:I, s:I, s:o, s:b, s:s}", "name", ev->iface, "tx_bytes",
                                  (json_int_t)ev->tx_bytes, "tx_packets", (json_int_t)ev->tx_packets,
                                  "bytes_per_packet",
                                  real_or_null(ev->tx_packets > 0, ev->tx_packets ? (double)ev->tx_bytes / (double)ev->tx_packets : 0),
                                  "shared", ev->iface_shared, "scope", "interface-wide"));
}

void evidence_to_json(json_t *record, const struct transfer_evidence *ev, const struct transfer_sampled *s)
{
    json_t *cpu = json_null(), *cg = json_null();
    if (ev->have_cpu) {
        int th = ev->have_thread;
        double busy = ev->user_ms + ev->sys_ms;
        cpu = json_pack("{s:o, s:o, s:f, s:o, s:i, s:s, s:f, s:f}", "user_ms", real_or_null(th, ev->user_ms),
                        "sys_ms", real_or_null(th, ev->sys_ms), "wall_ms", ev->wall_ms, "share",
                        real_or_null(th && ev->wall_ms > 0, ev->wall_ms > busy ? busy / ev->wall_ms : 1.0),
                        "thread_transfers_max", (int)ev->thread_transfers_max, "source", "RUSAGE_THREAD",
                        "process_user_ms", ev->process_user_ms, "process_sys_ms", ev->process_sys_ms);
        if (ev->have_cgroup) {
            int d = ev->have_deltas;
            cg = json_pack("{s:i, s:o, s:o, s:o, s:o, s:o, s:o}", "version", ev->cg_version, "path",
                           ev->cg_path[0] ? json_string(ev->cg_path) : json_null(),
                           "quota_pct", real_or_null(ev->quota_pct >= 0, ev->quota_pct), "period_us",
                           int_or_null(ev->period_us > 0, ev->period_us), "throttled_ms",
                           real_or_null(d, ev->throttled_ms), "nr_throttled", int_or_null(d, ev->nr_throttled),
                           "nr_periods", int_or_null(d, ev->nr_periods));
        }
    }
    int n = s->count > 0;
    if (json_is_object(cpu)) /* one thread is never more than one CPU: share is capped at 1 */
        json_object_set_new(cpu, "runqueue_ms", real_or_null(ev->have_thread && ev->runq_ms >= 0, ev->runq_ms));
    json_object_set_new(record, "cpu", cpu ? cpu : json_null());
    json_object_set_new(record, "sampled",
                        json_pack("{s:I, s:I, s:o, s:o, s:o, s:I}", "count", (json_int_t)s->count, "app_limited",
                                  (json_int_t)s->app_limited, "cwnd_min", int_or_null(n, s->cwnd_min), "cwnd_max",
                                  int_or_null(n, s->cwnd_max), "delivery_rate_max_bps",
                                  int_or_null(n, s->delivery_rate_max_bps), "notsent_zero",
                                  (json_int_t)s->notsent_zero));
    json_object_set_new(record, "cgroup", cg ? cg : json_null());
    json_object_set_new(record, "sndbuf",
                        json_pack("{s:o, s:o, s:o}", "setting", int_or_null(ev->sndbuf_setting > 0, ev->sndbuf_setting),
                                  "so_sndbuf", int_or_null(ev->have_cpu && ev->so_sndbuf >= 0, (uint64_t)ev->so_sndbuf),
                                  "tcp_wmem_max", int_or_null(ev->tcp_wmem_max > 0, ev->tcp_wmem_max)));
    json_object_set_new(record, "initial_cwnd", int_or_null(ev->initial_cwnd > 0, ev->initial_cwnd));
}
