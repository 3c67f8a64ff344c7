/* series: see series.h. */
#include "series.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void series_init(struct series *s, double interval_s)
{
    *s = (struct series){.interval_s = interval_s, .last_dt = interval_s};
}

void series_free(struct series *s)
{
    if (!s)
        return;
    free(s->mbps);
    free(s->acc);
    s->mbps = NULL;
    s->acc = NULL;
    s->n = s->cap = s->nacc = s->acc_cap = 0;
}

void series_start(struct series *s, double t0)
{
    s->t0 = t0;
    s->nacc = 0;
    s->total = 0;
    s->t_max = t0;
    s->started = 1;
}

/* Absolute end of interval i. Recomputed from t0 rather than accumulated, so rounding
 * never drifts over a long download. */
static double edge(const struct series *s, size_t i)
{
    return s->t0 + (double)(i + 1) * s->interval_s;
}

/* The interval holding absolute time t: edge(i-1) <= t < edge(i), by the same arithmetic
 * as edge() so that a time exactly on an edge lands where closing expects it. */
static size_t index_of(const struct series *s, double t)
{
    if (t <= s->t0)
        return 0;
    size_t i = (size_t)floor((t - s->t0) / s->interval_s);
    if (t >= edge(s, i))
        i++;
    else if (i > 0 && t < edge(s, i - 1))
        i--;
    return i;
}

/* The byte counter of interval i, created (zero) as needed; NULL when out of memory. */
static double *acc_at(struct series *s, size_t i)
{
    if (i >= s->acc_cap) {
        size_t cap = s->acc_cap ? s->acc_cap : 256;
        while (cap <= i)
            cap *= 2;
        double *p = realloc(s->acc, cap * sizeof *p);
        if (!p) {
            s->oom = 1;
            return NULL;
        }
        s->acc = p;
        s->acc_cap = cap;
    }
    if (i >= s->nacc) {
        memset(s->acc + s->nacc, 0, (i + 1 - s->nacc) * sizeof *s->acc);
        s->nacc = i + 1;
    }
    return &s->acc[i];
}

static double acc_get(const struct series *s, size_t i)
{
    return i < s->nacc ? s->acc[i] : 0;
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

static double rate(const struct series *s, size_t i)
{
    return acc_get(s, i) * 8 / s->interval_s / 1e6;
}

/* Add bytes to interval i; an interval already closed gets its rate updated. */
static void put(struct series *s, size_t i, double bytes)
{
    double *a = acc_at(s, i);
    if (!a)
        return;
    *a += bytes;
    s->total += bytes;
    if (i < s->n)
        s->mbps[i] = rate(s, i);
}

/* Close every interval that ended at or before t. After a failed push s->n stops growing:
 * stop, or spin forever. */
static void close_until(struct series *s, double t)
{
    while (t >= edge(s, s->n) && !s->oom)
        push(s, rate(s, s->n));
}

void series_add(struct series *s, double now, uint64_t bytes)
{
    if (!s->started)
        series_start(s, now);
    close_until(s, now);
    put(s, index_of(s, now), (double)bytes);
    if (now > s->t_max)
        s->t_max = now;
}

void series_add_span(struct series *s, double from, double to, double bytes)
{
    if (!s->started)
        series_start(s, from);
    if (from < s->t0)
        from = s->t0;
    close_until(s, to);
    if (to > s->t_max)
        s->t_max = to;
    if (to <= from) {
        put(s, index_of(s, to), bytes);
        return;
    }
    size_t last = index_of(s, to);
    for (size_t i = index_of(s, from); i <= last && !s->oom; i++) {
        double a = i ? edge(s, i - 1) : s->t0, b = edge(s, i);
        if (a < from)
            a = from;
        if (b > to)
            b = to;
        if (b > a)
            put(s, i, bytes * (b - a) / (to - from));
    }
}

void series_scale(struct series *s, double factor)
{
    for (size_t i = 0; i < s->n; i++)
        s->mbps[i] *= factor;
    for (size_t i = 0; i < s->nacc; i++)
        s->acc[i] *= factor;
    s->total *= factor;
}

void series_finish(struct series *s, double t_end)
{
    if (!s->started)
        return;
    if (t_end < s->t_max)
        t_end = s->t_max;
    while (t_end > edge(s, s->n) && !s->oom)
        push(s, rate(s, s->n));
    double start = s->t0 + (double)s->n * s->interval_s;
    double dt = t_end - start;
    /* Bytes a span put past t_end (a counter read after the last byte) belong to the end. */
    double bytes = 0;
    for (size_t i = s->n; i < s->nacc; i++)
        bytes += s->acc[i];
    if (bytes > 0 || dt > 1e-9) {
        /* A zero-length tail with bytes (they all arrived at the edge) keeps them visible
         * over a token 1 µs rather than dividing by zero. */
        if (dt < 1e-6)
            dt = 1e-6;
        push(s, bytes * 8 / dt / 1e6);
        s->last_dt = dt;
    }
    s->nacc = 0;
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
