/* predict: see predict.h. */
#include "predict.h"

#include <math.h>
#include <string.h>

const char *predict_limit_name(enum predict_limit l)
{
    switch (l) {
    case PREDICT_LIMIT_BOTTLENECK: return "bottleneck";
    case PREDICT_LIMIT_SNDBUF: return "sender buffer";
    case PREDICT_LIMIT_RWND: return "receive window";
    case PREDICT_LIMIT_NONE: break;
    }
    return "none";
}

static void consider(double bps, enum predict_limit l, struct predict_out *out)
{
    if (bps > 0 && isfinite(bps) && (out->limit == PREDICT_LIMIT_NONE || bps < out->steady_bps)) {
        out->steady_bps = bps;
        out->limit = l;
    }
}

/* Slow start as the textbook model: round k (k = 0, 1, ...) sends cwnd_k = iw x 2^k
 * segments in one RTT, a rate of cwnd_k x mss x 8 / rtt; the first round whose rate
 * reaches the steady limit and everything after it go at that limit. A transfer that
 * ends inside slow start takes its whole rounds plus its last partial window, sent at
 * the steady rate (a window leaves the sender at line rate, not spread over the RTT). */
int predict_rate(const struct predict_in *in, struct predict_out *out)
{
    memset(out, 0, sizeof *out);
    consider(in->bottleneck_bps, PREDICT_LIMIT_BOTTLENECK, out);
    if (in->rtt_s > 0) {
        consider(in->sndbuf_bytes * 8 / in->rtt_s, PREDICT_LIMIT_SNDBUF, out);
        consider(in->rwnd_bytes * 8 / in->rtt_s, PREDICT_LIMIT_RWND, out);
    }
    if (out->limit == PREDICT_LIMIT_NONE)
        return 0;
    double L = out->steady_bps;
    if (in->rtt_s <= 0 || in->bytes == 0) {
        out->avg_bps = L;
        return 1;
    }
    double mss = in->mss ? in->mss : PREDICT_DEFAULT_MSS;
    double win = (in->initial_cwnd ? in->initial_cwnd : PREDICT_DEFAULT_INITIAL_CWND) * mss; /* bytes, round 0 */
    double left = (double)in->bytes, t = 0;
    while (win * 8 / in->rtt_s < L && left > 0 && out->rounds < 64) {
        if (left <= win) { /* ends inside this round */
            t += left * 8 / L;
            left = 0;
            break;
        }
        left -= win;
        t += in->rtt_s;
        out->rounds++;
        win *= 2;
    }
    out->slow_start_s = out->rounds * in->rtt_s;
    t += left * 8 / L;
    out->avg_bps = t > 0 ? (double)in->bytes * 8 / t : L;
    return 1;
}
