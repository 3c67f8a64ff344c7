/* cb_xferinfo: libcurl's transfer-info callback, called many times a second while data
 * flow and about once a second when idle. It aborts the download on Ctrl-C and on a stall,
 * and feeds the progress hook. A stall is nothing at all received for --stall seconds, or
 * less than --stall-rate bytes/s over the last --stall seconds (a sliding window of
 * XFER_WINDOW_STEPS checkpoints, so a trickle is caught within stall_s * (1 + 1/8) plus
 * one callback interval). libcurl's LOW_SPEED options are not used: they average over
 * whole seconds and count nothing but the body. */
#include "xfer.h"

#include "sys.h"

void xfer_window_push(struct xfer *x, double now)
{
    const unsigned cap = XFER_WINDOW_STEPS + 1;
    if (x->win_n > 0) {
        unsigned newest = (x->win_head + x->win_n - 1) % cap;
        if (now - x->win_t[newest] < x->opt->stall_s / XFER_WINDOW_STEPS)
            return;
    }
    unsigned at = (x->win_head + x->win_n) % cap;
    if (x->win_n == cap) {
        at = x->win_head; /* overwrite the oldest */
        x->win_head = (x->win_head + 1) % cap;
    } else {
        x->win_n++;
    }
    x->win_t[at] = now;
    x->win_b[at] = x->rx_bytes;
}

/* Below the minimum rate over the newest checkpoint that is stall_s old or more? */
static int too_slow(struct xfer *x, double now)
{
    const unsigned cap = XFER_WINDOW_STEPS + 1;
    for (unsigned k = x->win_n; k-- > 0;) {
        unsigned i = (x->win_head + k) % cap;
        double age = now - x->win_t[i];
        if (age < x->opt->stall_s)
            continue;
        uint64_t got = x->rx_bytes - x->win_b[i];
        if ((double)got >= x->opt->stall_rate_Bps * age)
            return 0;
        x->stall_window_bytes = got;
        x->stall_window_s = age;
        return 1;
    }
    return 0;
}

int cb_xferinfo(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    struct xfer *x = ud;
    (void)dltotal;
    (void)dlnow;
    (void)ultotal;
    (void)ulnow;
    double now = sys_mono_s();
    if (x->hooks && x->hooks->stop && *x->hooks->stop) {
        x->interrupted = 1;
        return 1;
    }
    if (x->opt->stall_s > 0 && now - x->t_last_data >= x->opt->stall_s) {
        x->stalled = XFER_STALL_NOTHING;
        return 1;
    }
    if (x->opt->stall_s > 0 && x->opt->stall_rate_Bps > 0) {
        xfer_window_push(x, now);
        if (too_slow(x, now)) {
            x->stalled = XFER_STALL_SLOW;
            return 1;
        }
    }
    /* Between writes too: an upload's bytes are acked after the last read callback. */
    if (x->ks.ok && x->agg && x->agg->started)
        sock_bytes_poll(&x->ks, now, x->bytes, 0, x->agg);
    if (x->quiet_progress)
        return 0;
    /* Stream 1 speaks for the run: every stream's bytes, the run's total. */
    uint64_t bytes = x->run_bytes ? *x->run_bytes : x->bytes;
    if (now - x->rate_t >= 1.0) {
        x->rate_mbps = (double)(bytes - x->rate_bytes) * 8 / (now - x->rate_t) / 1e6;
        x->rate_t = now;
        x->rate_bytes = bytes;
    }
    if (x->hooks && x->hooks->progress && now - x->t_progress >= 0.2) {
        x->t_progress = now;
        int64_t expected = x->expected;
        if (x->max_bytes && (expected < 0 || (uint64_t)expected > x->max_bytes))
            expected = (int64_t)x->max_bytes;
        if (x->nstreams > 1)
            expected = x->run_expected >= 0 ? x->run_expected : expected >= 0 ? expected * x->nstreams : -1;
        struct dl_progress p = {
            .bytes = bytes,
            .expected = expected,
            .elapsed_s = now - x->t_start,
            .rate_mbps = x->rate_mbps > 0 || now - x->t_start >= 1.0 ? x->rate_mbps
                         : now > x->t_start ? (double)bytes * 8 / (now - x->t_start) / 1e6 : 0,
        };
        x->hooks->progress(&p, x->hooks->ud);
    }
    return 0;
}
