/* series: a download's throughput sampled on a fixed grid (100 ms by default), and what
 * is derived from it: peak rate and slow-start time.
 *
 * Time 0 is the end of the response headers, the start of wget's averaging window, so the
 * series and the run's average describe the same bytes: sum(rate * dt) == body bytes.
 * Bytes are attributed to the interval in which the write that carried them arrived;
 * intervals with no data (a stall) are 0. The last interval is usually partial: its rate is
 * taken over its real length, and it counts for the peak only when no full interval exists.
 * Slow-start time is the end time of the first interval whose rate reaches 90% of the
 * peak: a 100 ms resolution, stated in the output. */
#ifndef DEBIT_SERIES_H
#define DEBIT_SERIES_H

#include <stddef.h>
#include <stdint.h>

#define SERIES_INTERVAL_S 0.1
#define SERIES_SLOW_START_FRACTION 0.9

struct series {
    double interval_s;
    double t0;            /* time origin (seconds, any monotonic clock) */
    int started;
    double edge;          /* end of the current interval, absolute */
    uint64_t cur_bytes;   /* bytes in the current interval */
    double *mbps;         /* closed intervals' rates, Mb/s (owned) */
    size_t n, cap;
    double last_dt;       /* length of the last interval (== interval_s unless partial) */
    int oom;
};

void series_init(struct series *s, double interval_s);
void series_free(struct series *s); /* frees the samples; s itself is the caller's */
/* Set time 0. Must precede series_add. */
void series_start(struct series *s, double t0);
/* `bytes` received at absolute time `now` (>= t0, non-decreasing). */
void series_add(struct series *s, double now, uint64_t bytes);
/* Close the series at absolute time t_end (time of the last byte): the current interval,
 * partial or not, becomes the last sample. */
void series_finish(struct series *s, double t_end);

/* Highest rate (Mb/s) over full intervals (or the only, partial one); 0 when empty. */
double series_peak(const struct series *s);
/* Time (s from t0) of the end of the first interval reaching fraction * peak; -1 if empty. */
double series_slow_start(const struct series *s, double fraction);

#endif
