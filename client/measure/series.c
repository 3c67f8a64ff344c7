/* series: see series.h. */
#include "series.h"

#include <stdlib.h>

void series_init(struct series *s, double interval_s)
{
    *s = (struct series){.interval_s = interval_s, .last_dt = interval_s};
}

void series_free(struct series *s)
{
    if (!s)
        return;
    free(s->mbps);
    s->mbps = NULL;
    s->n = s->cap = 0;
}

void series_start(struct series *s, double t0)
{
    s->t0 = t0;
    s->edge = t0 + s->interval_s;
    s->cur_bytes = 0;
    s->started = 1;
}

static void push(struct series *s, double mbps)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 256;
        double *p = realloc(s->mbps, cap * sizeof *p);
        if (!p) {
            s->oom = 1;
            return;
        }
        s->mbps = p;
        s->cap = cap;
    }
    s->mbps[s->n++] = mbps;
}

void series_add(struct series *s, double now, uint64_t bytes)
{
    if (!s->started)
        series_start(s, now);
    /* Close every interval that ended before this write arrived. The edge is recomputed
     * from t0 rather than accumulated, so rounding never drifts over a long download. */
    /* After a failed push s->n stops growing and so would the edge: stop, or spin forever. */
    while (now >= s->edge && !s->oom) {
        push(s, (double)s->cur_bytes * 8 / s->interval_s / 1e6);
        s->cur_bytes = 0;
        s->edge = s->t0 + (double)(s->n + 1) * s->interval_s;
    }
    s->cur_bytes += bytes;
}

void series_finish(struct series *s, double t_end)
{
    if (!s->started)
        return;
    while (t_end > s->edge && !s->oom) {
        push(s, (double)s->cur_bytes * 8 / s->interval_s / 1e6);
        s->cur_bytes = 0;
        s->edge = s->t0 + (double)(s->n + 1) * s->interval_s;
    }
    double start = s->t0 + (double)s->n * s->interval_s;
    double dt = t_end - start;
    if (s->cur_bytes > 0 || dt > 1e-9) {
        /* A zero-length tail with bytes (they all arrived at the edge) keeps them visible
         * over a token 1 µs rather than dividing by zero. */
        if (dt < 1e-6)
            dt = 1e-6;
        push(s, (double)s->cur_bytes * 8 / dt / 1e6);
        s->last_dt = dt;
    }
    s->cur_bytes = 0;
    s->started = 0;
}

static size_t full_count(const struct series *s)
{
    if (s->n == 0)
        return 0;
    /* The last sample is partial when its length is shorter than the interval. */
    if (s->last_dt < s->interval_s - 1e-9)
        return s->n - 1;
    return s->n;
}

double series_peak(const struct series *s)
{
    size_t nf = full_count(s);
    size_t lim = nf ? nf : s->n;
    double peak = 0;
    for (size_t i = 0; i < lim; i++)
        if (s->mbps[i] > peak)
            peak = s->mbps[i];
    return peak;
}

double series_slow_start(const struct series *s, double fraction)
{
    if (s->n == 0)
        return -1;
    /* A hair below, so that a rate of exactly 90% is not lost to rounding. */
    double target = fraction * series_peak(s) * (1 - 1e-9);
    size_t nf = full_count(s);
    size_t lim = nf ? nf : s->n;
    for (size_t i = 0; i < lim; i++)
        if (s->mbps[i] >= target)
            return i + 1 < s->n || s->last_dt >= s->interval_s - 1e-9
                       ? (double)(i + 1) * s->interval_s
                       : (double)i * s->interval_s + s->last_dt;
    return (double)lim * s->interval_s;
}
