/* cb_xferinfo: libcurl's transfer-info callback, called many times a second while data
 * flow and about once a second when idle. It aborts the download on Ctrl-C and on a stall
 * (nothing at all received for --stall seconds: libcurl's LOW_SPEED options average over
 * whole seconds and would let a trickle through), and feeds the progress hook. */
#include "xfer.h"

#include "sys.h"

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
        x->stalled = 1;
        return 1;
    }
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
