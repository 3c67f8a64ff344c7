/* verdict: the rules (see verdict.h and docs/verdict.md). Pure: numbers in, a kind and
 * a sentence out. */
#include "verdict.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

const char *verdict_name(enum verdict_kind k)
{
    switch (k) {
    case VERDICT_NETWORK: return "network";
    case VERDICT_RECEIVER_WINDOW: return "receiver_window";
    case VERDICT_SENDER_BUFFER: return "sender_buffer";
    case VERDICT_SENDER_CPU: return "sender_cpu";
    case VERDICT_CONGESTION: return "congestion";
    case VERDICT_RECEIVER_CPU: return "receiver_cpu";
    case VERDICT_UNKNOWN: break;
    }
    return "unknown";
}

enum verdict_kind verdict_from_name(const char *name)
{
    for (int k = VERDICT_NETWORK; k < VERDICT_UNKNOWN; k++)
        if (name && strcmp(name, verdict_name((enum verdict_kind)k)) == 0)
            return (enum verdict_kind)k;
    return VERDICT_UNKNOWN;
}

void verdict_in_init(struct verdict_in *in)
{
    /* Every double NAN: the struct is only doubles after its first counts. */
    memset(in, 0, sizeof *in);
    double *d[] = {
        &in->measured_mbps, &in->peak_mbps, &in->duration_s, &in->slow_start_s, &in->bottleneck_mbps,
        &in->rtt_ms, &in->min_rtt_ms, &in->rcv_rtt_ms, &in->rcv_space, &in->rcv_wnd, &in->rcv_ssthresh,
        &in->rcv_mss, &in->so_rcvbuf, &in->tcp_rmem_max, &in->rcvbuf_setting, &in->srv_duration_s, &in->busy_ms,
        &in->rwnd_limited_ratio, &in->sndbuf_limited_ratio, &in->total_retrans, &in->bytes_retrans,
        &in->snd_ssthresh, &in->max_snd_cwnd, &in->delivery_rate_bps, &in->srv_min_rtt_ms, &in->snd_mss,
        &in->cpu_user_ms, &in->cpu_sys_ms, &in->cpu_wall_ms, &in->cpu_share, &in->samples, &in->app_limited,
        &in->quota_pct, &in->throttled_ms, &in->nr_throttled, &in->nr_periods, &in->so_sndbuf, &in->tcp_wmem_max,
        &in->sndbuf_setting, &in->initial_cwnd, &in->rcv_cpu_ms, &in->rcv_runq_ms, &in->rcv_wall_ms,
        &in->cpu_runq_ms, &in->data_segs_out, &in->bytes_sent, &in->plateau_mbps, &in->plateau_share,
        &in->iface_bytes_per_packet, &in->snd_wnd,
    };
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        *d[i] = NAN;
}

static int known(double v)
{
    return isfinite(v);
}

static int pos(double v)
{
    return isfinite(v) && v > 0;
}

/* The base RTT in ms: the sender's min_rtt (it sees every ACK), else the receiver's. */
static double base_rtt_ms(const struct verdict_in *in)
{
    if (pos(in->srv_min_rtt_ms))
        return in->srv_min_rtt_ms;
    if (pos(in->min_rtt_ms))
        return in->min_rtt_ms;
    return pos(in->rtt_ms) ? in->rtt_ms : NAN;
}

void verdict_predict_in(const struct verdict_in *in, double rtt_ms, struct predict_in *p)
{
    memset(p, 0, sizeof *p);
    double rtt = rtt_ms > 0 ? rtt_ms : base_rtt_ms(in);
    p->rtt_s = pos(rtt) ? rtt / 1000 : 0;
    p->bottleneck_bps = pos(in->bottleneck_mbps) ? in->bottleneck_mbps * 1e6 : 0;
    /* A capped buffer is a limit. Under autotuning the buffer may grow to its ceiling
     * (tcp_wmem[2], tcp_rmem[2]): a limit where it binds below a known path rate (a long
     * RTT), else only what the autotuner may reach, never a prediction of its own. */
    int bn = p->bottleneck_bps > 0;
    double snd = known(in->sndbuf_setting) ? in->so_sndbuf : bn && pos(in->tcp_wmem_max) ? in->tcp_wmem_max : NAN;
    p->sndbuf_bytes = pos(snd) ? snd * PREDICT_SNDBUF_PAYLOAD : 0;
    double rcv = known(in->rcvbuf_setting) ? in->so_rcvbuf : bn && pos(in->tcp_rmem_max) ? in->tcp_rmem_max : NAN;
    p->rwnd_bytes = pos(rcv) ? rcv * PREDICT_RCVBUF_WINDOW : 0;
    p->initial_cwnd = pos(in->initial_cwnd) && in->initial_cwnd < 1e6 ? (unsigned)in->initial_cwnd : 0;
    double mss = pos(in->snd_mss) ? in->snd_mss : in->rcv_mss;
    p->mss = pos(mss) && mss < 1e6 ? (unsigned)mss : 0;
    p->bytes = in->bytes / (in->parallel > 1 ? in->parallel : 1);
}

/* The evidence sentence, built clause by clause. */
struct text {
    char *p;
    size_t len, n;
};

__attribute__((format(printf, 2, 3))) static void add(struct text *t, const char *fmt, ...)
{
    if (t->len <= 1 || t->n >= t->len - 1) /* len 1: the kind only (verdict_kind_of) */
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->p + t->n, t->len - t->n, fmt, ap);
    va_end(ap);
    if (k > 0)
        t->n = t->n + (size_t)k < t->len ? t->n + (size_t)k : t->len - 1;
}

static const char *mbps(double v, char *buf, size_t len)
{
    units_format_mbps(v, buf, len);
    return buf;
}

static const char *size(double v, char *buf, size_t len)
{
    units_format_size(v > 0 ? (uint64_t)v : 0, buf, len);
    return buf;
}

/* The rule function's state: the inputs and derived figures every rule reads. */
struct ctx {
    const struct verdict_in *in;
    double rate;      /* measured, per stream */
    double rtt;       /* base RTT, ms */
    struct text *t;
};

static void retrans_at_path_rate(const struct ctx *c)
{
    if (pos(c->in->total_retrans))
        add(c->t, "; %.0f segments retransmitted at the path's rate", c->in->total_retrans);
}

/* The predicted transfer time of one stream (s), 0 when there is no prediction. */
static double predicted_time_s(const struct verdict_in *in, const struct predict_out *pred)
{
    return pred->avg_bps > 0 && in->bytes ? (double)in->bytes / (in->parallel > 1 ? in->parallel : 1) * 8 / pred->avg_bps
                                          : 0;
}

/* The path's rate, strong form: the average itself within 10% of the bottleneck. The
 * path is shared by every stream: the run's total. */
static int rule_network(const struct ctx *c)
{
    const struct verdict_in *in = c->in;
    double bn = in->bottleneck_mbps;
    if (!pos(bn) || in->measured_mbps < VERDICT_NETWORK_FRACTION * bn)
        return 0;
    char a[32], b[32];
    add(c->t, "measured %s Mb/s = %.0f%% of the %s Mb/s bottleneck", mbps(in->measured_mbps, a, sizeof a),
        in->measured_mbps / bn * 100, mbps(bn, b, sizeof b));
    if (in->measured_mbps > VERDICT_MATCH_HI * bn)
        add(c->t, " (more than the path's rate: is --bottleneck right?)");
    retrans_at_path_rate(c);
    return 1;
}

/* The path's rate, weak form (after sender_cpu: a starved server can still peak at the
 * bottleneck): the series peaked at the bottleneck with an average of at least 75% of
 * it, or the average is within 10% of a prediction that the bottleneck limits (slow
 * start at a long RTT lowers the average, not the path's share) — unless slow start is
 * most of that prediction: then it is congestion control's (rule_congestion). */
static int rule_network_slow_start(const struct ctx *c, const struct predict_out *pred)
{
    const struct verdict_in *in = c->in;
    double bn = in->bottleneck_mbps;
    if (!pos(bn))
        return 0;
    char a[32], b[32], p[32];
    double f = in->measured_mbps / bn;
    if (pos(in->peak_mbps) && in->peak_mbps >= VERDICT_NETWORK_PEAK * bn && f >= VERDICT_NETWORK_PEAK_AVG)
        add(c->t, "peak %s Mb/s reached the %s Mb/s bottleneck; average %s Mb/s (%.0f%%) lowered by slow start or recovery",
            mbps(in->peak_mbps, p, sizeof p), mbps(bn, b, sizeof b), mbps(in->measured_mbps, a, sizeof a), f * 100);
    else if (pred->limit == PREDICT_LIMIT_BOTTLENECK && in->measured_mbps >= VERDICT_NETWORK_FRACTION * pred->avg_bps / 1e6 &&
             pred->slow_start_s < VERDICT_SLOW_START_SHARE * predicted_time_s(in, pred))
        add(c->t, "measured %s Mb/s = %.0f%% of the %s Mb/s predicted from the %s Mb/s bottleneck after %u slow-start rounds",
            mbps(in->measured_mbps, a, sizeof a), in->measured_mbps / (pred->avg_bps / 1e6) * 100,
            mbps(pred->avg_bps / 1e6, p, sizeof p), mbps(bn, b, sizeof b), pred->rounds);
    else
        return 0;
    retrans_at_path_rate(c);
    return 1;
}

/* The time the server's figures are shares of: the thread's wall time, else the
 * record's duration, else the client's window. */
static double server_wall_ms(const struct verdict_in *in)
{
    if (pos(in->cpu_wall_ms))
        return in->cpu_wall_ms;
    if (pos(in->srv_duration_s))
        return in->srv_duration_s * 1000;
    return pos(in->duration_s) ? in->duration_s * 1000 : NAN;
}

/* A thread's demand for a CPU over the transfer: on one or waiting for one, a share of the
 * wall time (NAN unknown). */
static double demand_of(double cpu_ms, double runq_ms, double wall_ms)
{
    if (!known(cpu_ms) || !pos(wall_ms))
        return NAN;
    return (cpu_ms + (pos(runq_ms) ? runq_ms : 0)) / wall_ms;
}

static double receiver_demand(const struct verdict_in *in)
{
    return demand_of(in->rcv_cpu_ms, in->rcv_runq_ms, in->rcv_wall_ms);
}

static double sender_demand(const struct verdict_in *in)
{
    if (!in->server_debitd || !known(in->cpu_user_ms) || !known(in->cpu_sys_ms))
        return NAN;
    return demand_of(in->cpu_user_ms + in->cpu_sys_ms, in->cpu_runq_ms, in->cpu_wall_ms);
}

/* Both ends on one host, together CPU-bound: they took turns on the same CPUs (and its
 * softirq work), and the end that copies every byte is the receiver (a sendfile sender
 * copies none): the receiver's CPU decides when it had at least half of its time on a CPU
 * or waiting for one, or used more CPU than the serving thread (the machine so busy that
 * both mostly waited: the work, not the waiting, tells which end needed the CPU). */
static int pair_cpu_bound(const struct verdict_in *in)
{
    double r = receiver_demand(in), s = sender_demand(in);
    if (!in->same_host || !known(r) || !known(s) || r + s < VERDICT_PAIR_BOUND)
        return 0;
    return r >= VERDICT_PAIR_RECEIVER || in->rcv_cpu_ms >= in->cpu_user_ms + in->cpu_sys_ms;
}

/* The mechanism of a CPU-bound sender: what a GiB cost it, and the size of the packets
 * leaving its interface (about 1514 B without TSO/GSO, tens of KB with them: the
 * per-packet cost it paid). Not TCP's bytes per segment: always about one MSS, whatever
 * the offloads. */
static void cpu_per_gib(const struct ctx *c)
{
    const struct verdict_in *in = c->in;
    if (known(in->cpu_user_ms) && known(in->cpu_sys_ms) && in->bytes) {
        double gib = (double)in->bytes / (1024.0 * 1024 * 1024);
        add(c->t, "; %.2f CPU-s per GiB sent", (in->cpu_user_ms + in->cpu_sys_ms) / 1000 / gib);
    }
    if (pos(in->iface_bytes_per_packet))
        add(c->t, ", %.0f bytes per packet leaving %s (its tx counters, interface-wide%s)",
            in->iface_bytes_per_packet, in->iface[0] ? in->iface : "its interface",
            in->iface_shared ? ", other transfers included" : "");
}

static int rule_sender_cpu(const struct ctx *c)
{
    const struct verdict_in *in = c->in;
    if (!in->server_debitd)
        return 0;
    double wall = server_wall_ms(in);
    double thr = pos(wall) && known(in->throttled_ms) ? in->throttled_ms / wall : NAN;
    double per = pos(in->nr_periods) && known(in->nr_throttled) ? in->nr_throttled / in->nr_periods : NAN;
    double share = in->cpu_share;
    if (!known(share) && known(in->cpu_user_ms) && known(in->cpu_sys_ms) && pos(in->cpu_wall_ms))
        share = (in->cpu_user_ms + in->cpu_sys_ms) / in->cpu_wall_ms;
    /* Runnable but waiting for a CPU (a machine shared with other work) is CPU-bound too:
     * without a quota, the time on a CPU and waiting for one together are the demand. */
    double wait = !pos(in->quota_pct) && known(share) && pos(in->cpu_runq_ms) && pos(in->cpu_wall_ms)
                      ? in->cpu_runq_ms / in->cpu_wall_ms
                      : 0;
    double demand = known(share) ? share + wait : NAN;
    double budget = pos(in->quota_pct) ? in->quota_pct / 100 : 1.0;
    int throttled = (known(thr) && thr >= VERDICT_THROTTLED_SHARE) || (known(per) && per >= VERDICT_THROTTLED_PERIODS);
    int at_budget = known(demand) && demand >= VERDICT_CPU_NEAR_BUDGET * budget;
    if (!throttled && !at_budget)
        return 0;
    if (!throttled && pair_cpu_bound(in)) /* a busy sender on the receiver's host: rule_receiver_cpu */
        return 0;
    double dry_s = pos(in->samples) && known(in->app_limited) ? in->app_limited / in->samples : NAN;
    double busy = known(in->busy_ms) && pos(in->srv_duration_s) ? in->busy_ms / (in->srv_duration_s * 1000) : NAN;
    int dry_known = known(dry_s) || known(busy);
    /* The kernel marks a rate sample app-limited when nothing waits to be sent: also when
     * a full send buffer is what keeps the data out (55 of 57 samples of the lab's capped
     * server). Those samples say "dry" only when the buffer was not what held it. */
    int full = known(in->sndbuf_limited_ratio) && in->sndbuf_limited_ratio >= VERDICT_LIMITED_RATIO;
    int dry = (known(dry_s) && dry_s >= VERDICT_DRY_SAMPLES && !full) || (known(busy) && busy <= VERDICT_DRY_BUSY);
    /* Throttled a quarter of the time or more, the server is starved even when its socket
     * still looked busy (a large autotuned buffer keeps data queued while the process is
     * stopped: the lab's servers under 1.5% were busy 92-94% of transfers throttled 30-66%
     * of the time, at 635-696 Mb/s); unless a full buffer or window says the CPU kept up. */
    int heavy = known(thr) && thr >= VERDICT_THROTTLED_HEAVY;
    int held = full || (known(in->rwnd_limited_ratio) && in->rwnd_limited_ratio >= VERDICT_LIMITED_RATIO);
    if (dry_known && !dry && !(heavy && !held))
        return 0;
    if (!dry_known && held)
        return 0;
    char a[32];
    if (throttled) {
        add(c->t, "throttled");
        if (known(thr))
            add(c->t, " %.0f%% of %.2f s", thr * 100, wall / 1000);
        if (known(per))
            add(c->t, "%s%.0f of %.0f periods", known(thr) ? ", " : " in ", in->nr_throttled, in->nr_periods);
        if (pos(in->quota_pct))
            add(c->t, " under a %g%% CPU quota", in->quota_pct);
    } else {
        add(c->t, "serving thread used %.2f CPU of a %.2f budget", share < 1 ? share : 1.0, budget);
        if (wait > 0)
            add(c->t, " and waited to run %.0f%% of the transfer", (wait < 1 ? wait : 1.0) * 100);
    }
    cpu_per_gib(c);
    if (dry_known) {
        add(c->t, dry ? "; socket ran dry:" : "; socket:");
        if (known(dry_s))
            add(c->t, " %.0f%% of %.0f samples app-limited", dry_s * 100, in->samples);
        if (known(busy))
            add(c->t, "%s busy %.0f%% of the transfer", known(dry_s) ? "," : "", busy * 100);
    }
    add(c->t, "; measured %s Mb/s", mbps(in->measured_mbps, a, sizeof a));
    return 1;
}

/* "at the limit": measured within [VERDICT_MATCH_LO, VERDICT_MATCH_HI] of it, and below
 * the bottleneck when one is known (at the bottleneck the path explains it). */
static int matches(const struct ctx *c, double limit_mbps)
{
    double bn = c->in->bottleneck_mbps;
    return pos(limit_mbps) && c->rate >= VERDICT_MATCH_LO * limit_mbps && c->rate <= VERDICT_MATCH_HI * limit_mbps &&
           !(pos(bn) && c->in->measured_mbps >= VERDICT_NETWORK_FRACTION * bn);
}

static int rule_sender_buffer(const struct ctx *c)
{
    const struct verdict_in *in = c->in;
    if (!in->server_debitd)
        return 0;
    int ratio = known(in->sndbuf_limited_ratio) && in->sndbuf_limited_ratio >= VERDICT_LIMITED_RATIO;
    double payload = pos(in->so_sndbuf) ? in->so_sndbuf * PREDICT_SNDBUF_PAYLOAD : NAN;
    int capped = pos(payload) && (known(in->sndbuf_setting) ||
                                  (pos(in->tcp_wmem_max) && in->so_sndbuf >= VERDICT_CAPPED * in->tcp_wmem_max));
    double lim = capped && pos(c->rtt) ? payload * 8 / (c->rtt / 1000) / 1e6 : NAN;
    int match = matches(c, lim);
    if (!ratio && !match)
        return 0;
    char a[32], b[32], s[32], q[32];
    if (ratio)
        add(c->t, "sndbuf-limited %.0f%% of busy time", in->sndbuf_limited_ratio * 100);
    if (known(lim)) {
        add(c->t, "%s", ratio ? "; " : "");
        if (known(in->sndbuf_setting))
            add(c->t, "send buffer %s: ", size(in->sndbuf_setting, q, sizeof q));
        else
            add(c->t, "send buffer at its tcp_wmem ceiling: ");
        add(c->t, "%.2f x SO_SNDBUF %s / %.1f ms RTT predicts %s Mb/s, measured %s", PREDICT_SNDBUF_PAYLOAD,
            size(in->so_sndbuf, s, sizeof s), c->rtt, mbps(lim, b, sizeof b), mbps(c->rate, a, sizeof a));
    } else {
        add(c->t, "; measured %s Mb/s", mbps(c->rate, a, sizeof a));
    }
    return 1;
}

static int rule_receiver_window(const struct ctx *c)
{
    const struct verdict_in *in = c->in;
    int ratio = in->server_debitd && known(in->rwnd_limited_ratio) && in->rwnd_limited_ratio >= VERDICT_LIMITED_RATIO;
    double win = pos(in->rcv_wnd) ? in->rcv_wnd : pos(in->so_rcvbuf) ? in->so_rcvbuf * PREDICT_RCVBUF_WINDOW : NAN;
    int capped = pos(win) && (known(in->rcvbuf_setting) ||
                              (pos(in->tcp_rmem_max) && pos(in->so_rcvbuf) && in->so_rcvbuf >= VERDICT_CAPPED * in->tcp_rmem_max));
    double rtt = pos(in->rcv_rtt_ms) ? in->rcv_rtt_ms : pos(in->rtt_ms) ? in->rtt_ms : c->rtt;
    double lim = capped && pos(rtt) ? win * 8 / (rtt / 1000) / 1e6 : NAN;
    int match = matches(c, lim);
    /* The sender's view (debitd): the window the receiver advertised, per base RTT. A rate
     * at it is that window's whatever share of busy time the kernel counted rwnd-limited (a
     * bbr sender waits on its pacing timer: 34-51 % in the lab's rwnd runs, threshold 50 %);
     * an autotuned receiver advertises well above what the path needs (25 MB at 190 Mb/s).
     * The rate compared is the plateau when there is one: the level the window held, which
     * a reader's stalls (the window shut meanwhile) leave above the average (63.0 Mb/s
     * measured at a 71.6 Mb/s plateau under a 79.5 Mb/s window in the lab). */
    double peer = in->server_debitd && pos(in->snd_wnd) && pos(c->rtt) ? in->snd_wnd * 8 / (c->rtt / 1000) / 1e6 : NAN;
    double held = pos(in->plateau_mbps) && in->parallel <= 1 && in->plateau_mbps > c->rate ? in->plateau_mbps : c->rate;
    int at_peer = !match && pos(peer) && held >= VERDICT_PEER_WINDOW_LO * peer && held <= VERDICT_MATCH_HI * peer &&
                  !(pos(in->bottleneck_mbps) && in->measured_mbps >= VERDICT_NETWORK_FRACTION * in->bottleneck_mbps);
    if (!ratio && !match && !at_peer)
        return 0;
    char a[32], b[32], s[32], t[32];
    if (ratio)
        add(c->t, "rwnd-limited %.0f%% of busy time", in->rwnd_limited_ratio * 100);
    if (at_peer) {
        add(c->t, "%sthe receiver's advertised window %s / %.1f ms base RTT = %s Mb/s, ", ratio ? "; " : "",
            size(in->snd_wnd, s, sizeof s), c->rtt, mbps(peer, b, sizeof b));
        if (held > c->rate)
            add(c->t, "a plateau of %s Mb/s, ", mbps(held, t, sizeof t));
        add(c->t, "measured %s", mbps(c->rate, a, sizeof a));
    } else if (known(lim)) {
        add(c->t, "%sreceive window %s", ratio ? "; " : "", size(win, s, sizeof s));
        if (known(in->rcvbuf_setting))
            add(c->t, " (--rcvbuf %s)", size(in->rcvbuf_setting, t, sizeof t));
        else
            add(c->t, " (tcp_rmem max %s)", size(in->tcp_rmem_max, t, sizeof t));
        add(c->t, " / %.1f ms RTT = %s Mb/s, measured %s", rtt, mbps(lim, b, sizeof b), mbps(c->rate, a, sizeof a));
    } else {
        add(c->t, "; measured %s Mb/s", mbps(c->rate, a, sizeof a));
    }
    /* The sender sees a shut window, not why: a receiver too busy to read shuts it too. */
    if (in->server_debitd && !known(receiver_demand(in)))
        add(c->t, "; the receiver's CPU is not seen here: a client too busy to read (receiver_cpu) keeps its window "
                  "shut as well");
    return 1;
}

/* The receiver's transfer thread on a CPU (or waiting for one) for at least
 * VERDICT_CPU_NEAR_BUDGET of the transfer: it read as fast as it could, and its window
 * stayed full for that reason (the sender then sees rwnd-limited time). Not when the
 * serving thread was at least as busy (then both were, and the sender's rule decides);
 * except on one host, where the pair's CPU-bound reading decides (pair_cpu_bound). */
static int rule_receiver_cpu(const struct ctx *c)
{
    const struct verdict_in *in = c->in;
    double demand = receiver_demand(in), srv = sender_demand(in);
    if (!known(demand))
        return 0;
    double on = in->rcv_cpu_ms / in->rcv_wall_ms;
    double wait = demand - on;
    int pair = pair_cpu_bound(in);
    if (!pair && (demand < VERDICT_CPU_NEAR_BUDGET || (known(srv) && srv >= demand)))
        return 0;
    char a[32];
    add(c->t, "receiver's transfer thread on a CPU %.0f%% of the transfer", (on < 1 ? on : 1.0) * 100);
    if (wait > 0)
        add(c->t, " and waiting to run %.0f%%", (wait < 1 ? wait : 1.0) * 100);
    add(c->t, demand >= VERDICT_CPU_NEAR_BUDGET ? " (a full core)" : " (one host: with the sender's, its CPUs full)");
    if (known(srv))
        add(c->t, "; sender's serving thread %.0f%%", (srv < 1 ? srv : 1.0) * 100);
    if (in->server_debitd && known(in->rwnd_limited_ratio))
        add(c->t, "; rwnd-limited %.0f%% of busy time", in->rwnd_limited_ratio * 100);
    if (in->bytes)
        add(c->t, "; %.2f CPU-s per GiB received", in->rcv_cpu_ms / 1000 / ((double)in->bytes / (1024.0 * 1024 * 1024)));
    add(c->t, "; measured %s Mb/s", mbps(in->measured_mbps, a, sizeof a));
    return 1;
}

/* Losses at a full queue, not below the path's rate: the window the sender kept after its
 * last loss (ssthresh: cubic keeps 0.7 of it, reno 0.5) carries at least
 * VERDICT_QUEUED_WINDOW x the plateau at the base RTT. A flow held below the path by its
 * losses (random drops) runs at about its window / base RTT, which ssthresh at most
 * slightly exceeds (0.5-1.2 x over a sawtooth); a window far above what the plateau needs
 * at the base RTT waited in the bottleneck's queue, and a drop-tail queue drops when full:
 * slow start's overshoot through a drop-tail bottleneck (1-4 % of a short transfer's bytes
 * in the lab, docs/verdict.md). The per-stream Mb/s of that window, else 0. */
static double queued_window(const struct ctx *c)
{
    const struct verdict_in *in = c->in;
    /* TCP_INFINITE_SSTHRESH (0x7fffffff): never reduced */
    if (!pos(in->snd_ssthresh) || in->snd_ssthresh >= 1e9 || !pos(in->snd_mss) || !pos(c->rtt))
        return 0;
    double w = in->snd_ssthresh * in->snd_mss * 8 / (c->rtt / 1000) / 1e6;
    double plateau = in->plateau_mbps / (in->parallel > 1 ? in->parallel : 1);
    return w >= VERDICT_QUEUED_WINDOW * plateau ? w : 0;
}

/* No --bottleneck: the sender was free (neither its receiver's window nor its send buffer
 * held it, its socket never ran dry), it barely retransmitted or lost only to a full queue
 * (queued_window), and the rate held one level after slow start: what held it there is the
 * path, whose rate that plateau estimates. */
static int rule_network_inferred(const struct ctx *c)
{
    const struct verdict_in *in = c->in;
    if (pos(in->bottleneck_mbps) || !in->server_debitd || !pos(in->plateau_mbps) || !known(in->plateau_share) ||
        in->plateau_share < VERDICT_PLATEAU_SHARE)
        return 0;
    if (!known(in->rwnd_limited_ratio) || in->rwnd_limited_ratio >= VERDICT_FREE_RATIO ||
        !known(in->sndbuf_limited_ratio) || in->sndbuf_limited_ratio >= VERDICT_FREE_RATIO)
        return 0;
    double dry_s = pos(in->samples) && known(in->app_limited) ? in->app_limited / in->samples : NAN;
    double busy = known(in->busy_ms) && pos(in->srv_duration_s) ? in->busy_ms / (in->srv_duration_s * 1000) : NAN;
    if (!known(dry_s) || dry_s >= VERDICT_DRY_SAMPLES || (known(busy) && busy <= VERDICT_DRY_BUSY))
        return 0;
    double rs = known(in->bytes_retrans) && in->bytes ? in->bytes_retrans / (double)in->bytes : NAN;
    if (!known(in->total_retrans))
        return 0;
    double queued = 0;
    if (in->total_retrans > 0 && !(known(rs) && rs < VERDICT_RETRANS_SHARE) && !(queued = queued_window(c)))
        return 0;
    char a[32], p[32], w[32];
    add(c->t, "sender free (rwnd-limited %.0f%%, sndbuf-limited %.0f%% of busy time, %.0f of %.0f samples "
              "app-limited, %.0f segments retransmitted",
        in->rwnd_limited_ratio * 100, in->sndbuf_limited_ratio * 100, in->app_limited, in->samples, in->total_retrans);
    if (queued > 0)
        add(c->t, " (%.2f%% of the bytes) into a full queue: ssthresh %.0f segments after the last loss = %s Mb/s at the "
                  "%.1f ms base RTT, %.1f x the plateau",
            known(rs) ? rs * 100 : 0, in->snd_ssthresh, mbps(queued, w, sizeof w), c->rtt,
            queued / (in->plateau_mbps / (in->parallel > 1 ? in->parallel : 1)));
    add(c->t, ") at a plateau of %s Mb/s (%.0f%% of the intervals within %.0f%%): the path's rate, inferred (no "
              "--bottleneck); measured %s Mb/s",
        mbps(in->plateau_mbps, p, sizeof p), in->plateau_share * 100, VERDICT_PLATEAU_BAND * 100,
        mbps(c->rate, a, sizeof a));
    return 1;
}

/* An upload seen by its receiver (debitd): not CPU-bound (rule_receiver_cpu did not fire,
 * its demand known and under VERDICT_CPU_NEAR_BUDGET), its window not the limit
 * (rule_receiver_window did not fire) and the received rate held one level after slow
 * start: the path, or the sender, whose side the receiver cannot see (the client's CPU or
 * send buffer hold a rate level as steadily). Said so in the evidence. */
static int rule_network_inferred_receiver(const struct ctx *c)
{
    const struct verdict_in *in = c->in;
    double demand = receiver_demand(in);
    if (pos(in->bottleneck_mbps) || !in->server_debitd || !pos(in->plateau_mbps) || !known(in->plateau_share) ||
        in->plateau_share < VERDICT_PLATEAU_SHARE || !known(demand) || demand >= VERDICT_CPU_NEAR_BUDGET)
        return 0;
    char a[32], p[32];
    add(c->t, "receiver free (its thread on a CPU or waiting %.0f%% of the transfer, its window not full) at a "
              "plateau of %s Mb/s (%.0f%% of the intervals within %.0f%%): the path's rate, inferred (no --bottleneck; "
              "the sender's side is not seen: its CPU or send buffer would hold a level too); measured %s Mb/s",
        demand * 100, mbps(in->plateau_mbps, p, sizeof p), in->plateau_share * 100, VERDICT_PLATEAU_BAND * 100,
        mbps(c->rate, a, sizeof a));
    return 1;
}

/* An upload's rules, from the receiver's record (verdict.h). */
static enum verdict_kind decide_upload_rules(const struct ctx *c, struct verdict *out)
{
    if (rule_network(c))
        return VERDICT_NETWORK;
    if (rule_receiver_cpu(c))
        return VERDICT_RECEIVER_CPU;
    if (rule_receiver_window(c))
        return VERDICT_RECEIVER_WINDOW;
    if (rule_network_inferred_receiver(c)) {
        out->path_mbps = c->in->plateau_mbps;
        return VERDICT_NETWORK;
    }
    return VERDICT_UNKNOWN;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void verdict_plateau(const double *mbps, size_t n, double *median, double *share)
{
    *median = *share = NAN;
    if (n == 0)
        return;
    double *v = malloc(n * sizeof *v);
    if (!v)
        return;
    /* The peak is the series' 90th percentile, not its maximum: a reader that stalled
     * catches up in one interval far above the path's rate (0 then 540 Mb/s on a 200 Mbit/s
     * path in the lab, under load), and that one interval late in a transfer would mark
     * everything before it as slow start and leave too few intervals for a plateau. */
    memcpy(v, mbps, n * sizeof *v);
    qsort(v, n, sizeof *v, cmp_double);
    double peak = v[(size_t)(0.9 * (double)(n - 1))];
    size_t from = 0;
    while (from < n && mbps[from] < 0.9 * peak)
        from++;
    size_t m = n - from;
    if (peak <= 0 || m < VERDICT_PLATEAU_MIN) {
        free(v);
        return;
    }
    memcpy(v, mbps + from, m * sizeof *v);
    qsort(v, m, sizeof *v, cmp_double);
    double med = m % 2 ? v[m / 2] : (v[m / 2 - 1] + v[m / 2]) / 2;
    size_t on = 0;
    for (size_t i = 0; i < m; i++)
        on += fabs(v[i] - med) <= VERDICT_PLATEAU_BAND * med;
    free(v);
    *median = med;
    *share = (double)on / (double)m;
}

static int rule_congestion(const struct ctx *c, const struct predict_out *pred)
{
    const struct verdict_in *in = c->in;
    int loss = in->server_debitd && pos(in->total_retrans) &&
               (!known(in->bytes_retrans) || !in->bytes || in->bytes_retrans / (double)in->bytes >= VERDICT_RETRANS_SHARE);
    /* The series' slow start needs 10 intervals (1 s); the prediction's its own figures. */
    int ss = pos(in->slow_start_s) && pos(in->duration_s) && in->slow_start_s >= VERDICT_SLOW_START_SHARE * in->duration_s;
    /* The prediction's slow start explains a run only when that prediction, slow start
     * included, is near what was measured: a measured rate far below it (an application-
     * paced server, loopback's microsecond RTT that predicts terabits) is something else. */
    double pt = predicted_time_s(in, pred);
    int pss = !ss && pt > 0 && pred->slow_start_s >= VERDICT_SLOW_START_SHARE * pt &&
              c->rate >= VERDICT_MATCH_LO * pred->avg_bps / 1e6;
    if (!loss && !ss && !pss)
        return 0;
    char a[32];
    if (loss) {
        add(c->t, "%.0f segments retransmitted", in->total_retrans);
        if (known(in->bytes_retrans) && in->bytes)
            add(c->t, " (%.2f%% of the bytes)", in->bytes_retrans * 100 / (double)in->bytes);
        if (pos(in->snd_ssthresh))
            add(c->t, ", ssthresh %.0f segments", in->snd_ssthresh);
        if (pos(in->max_snd_cwnd))
            add(c->t, ", max cwnd %.0f", in->max_snd_cwnd);
    }
    if (ss)
        add(c->t, "%sslow start until %.2f s of %.2f s", loss ? "; " : "", in->slow_start_s, in->duration_s);
    if (pss)
        add(c->t, "%spredicted slow start %.0f rounds = %.3f s of %.3f s", loss ? "; " : "", (double)pred->rounds,
            pred->slow_start_s, pt);
    add(c->t, "; measured %s Mb/s", mbps(c->rate, a, sizeof a));
    return 1;
}

/* Why there is no prediction: what would have made one is unknown. */
static void no_prediction(const struct verdict_in *in, struct verdict *out)
{
    struct text t = {out->no_prediction, sizeof out->no_prediction, 0};
    add(&t, "no limit known: no --bottleneck nor a plateau of a free sender, no capped buffer");
    if (!pos(base_rtt_ms(in)) && (known(in->sndbuf_setting) || known(in->rcvbuf_setting)))
        add(&t, " with an RTT");
    else if (pos(in->tcp_wmem_max) || pos(in->tcp_rmem_max))
        add(&t, " (autotuning's ceilings are not limits)");
}

/* The rules in order; the first that fires decides. */
static enum verdict_kind decide_rules(const struct ctx *c, struct verdict *out)
{
    if (rule_network(c))
        return VERDICT_NETWORK;
    if (rule_sender_cpu(c))
        return VERDICT_SENDER_CPU;
    if (rule_network_slow_start(c, &out->pred))
        return VERDICT_NETWORK;
    if (rule_receiver_cpu(c))
        return VERDICT_RECEIVER_CPU;
    if (rule_sender_buffer(c))
        return VERDICT_SENDER_BUFFER;
    if (rule_receiver_window(c))
        return VERDICT_RECEIVER_WINDOW;
    if (rule_network_inferred(c)) {
        out->path_mbps = c->in->plateau_mbps;
        return VERDICT_NETWORK;
    }
    if (rule_congestion(c, &out->pred))
        return VERDICT_CONGESTION;
    return VERDICT_UNKNOWN;
}

/* verdict_decide; WORDS 0: the kind and the prediction only, no sentences. */
static void decide(const struct verdict_in *in, struct verdict *out, int words)
{
    out->kind = VERDICT_UNKNOWN;
    out->evidence[0] = out->no_prediction[0] = 0;
    out->path_mbps = NAN;
    struct text t = {out->evidence, words ? sizeof out->evidence : 1, 0};
    struct predict_in pin;
    verdict_predict_in(in, 0, &pin);
    predict_rate(&pin, &out->pred);
    out->kind = VERDICT_UNKNOWN;
    if (!in->server_debitd)
        add(&t, "server side unknown (not debitd): client-side evidence only; ");
    unsigned n = in->parallel > 1 ? in->parallel : 1;
    struct ctx c = {in, in->measured_mbps / n, base_rtt_ms(in), &t};
    char a[32], b[32];
    if (in->upload) {
        snprintf(out->no_prediction, sizeof out->no_prediction, "an upload: the prediction is a download's");
        out->pred.limit = PREDICT_LIMIT_NONE;
        if (!in->receiver_side) {
            add(&t, "upload: the rules read a download's sender, the server; no verdict");
            return;
        }
        if (!pos(in->measured_mbps)) {
            add(&t, "no throughput measured");
            return;
        }
        add(&t, "upload, seen by its receiver: ");
        out->kind = decide_upload_rules(&c, out);
        if (out->kind == VERDICT_UNKNOWN)
            add(&t, "no rule matched: measured %s Mb/s", mbps(c.rate, a, sizeof a));
        return;
    }
    if (!pos(in->measured_mbps)) {
        add(&t, "no throughput measured");
    } else {
        if (n > 1)
            add(&t, "%u streams, figures per stream: ", n);
        out->kind = decide_rules(&c, out);
    }
    if (known(out->path_mbps)) { /* the inferred path's rate is the prediction's bottleneck */
        struct verdict_in with = *in;
        with.bottleneck_mbps = out->path_mbps;
        verdict_predict_in(&with, 0, &pin);
        predict_rate(&pin, &out->pred);
    }
    if (out->pred.limit == PREDICT_LIMIT_NONE && words)
        no_prediction(in, out);
    if (out->kind != VERDICT_UNKNOWN || !pos(in->measured_mbps) || !words)
        return;
    add(&t, "no rule matched: measured %s Mb/s", mbps(c.rate, a, sizeof a));
    if (out->pred.limit != PREDICT_LIMIT_NONE)
        add(&t, ", predicted %s Mb/s (%s)", mbps(out->pred.avg_bps / 1e6, b, sizeof b),
            predict_limit_name(out->pred.limit));
    if (!pos(in->bottleneck_mbps))
        add(&t, "; bottleneck unknown (--bottleneck)");
    if (out->pred.limit == PREDICT_LIMIT_NONE)
        add(&t, "; no prediction: %s", out->no_prediction);
}

void verdict_decide(const struct verdict_in *in, struct verdict *out)
{
    decide(in, out, 1);
}

enum verdict_kind verdict_kind_of(const struct verdict_in *in)
{
    struct verdict v;
    decide(in, &v, 0);
    return v.kind;
}
