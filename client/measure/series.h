/* series: a download's throughput sampled on a fixed grid (100 ms by default), and what
 * is derived from it: peak rate and slow-start time.
 *
 * Time 0 is the end of the response headers, the start of wget's averaging window, so the
 * series and the run's average describe the same bytes: sum(rate * dt) == body bytes.
 * Bytes come either at a point (series_add: the interval in which the write that carried
 * them arrived) or over a span (series_add_span: a counter read at two times, its bytes
 * spread evenly over the real time between the reads, so a late read still gives the true
 * rate of each interval it covers; sock_bytes.h). Intervals with no data (a stall) are 0.
 * Spans of several streams may reach back into an interval already closed: its rate is
 * then updated, so the series is final only after series_finish. The last interval is usually partial: its rate is
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
    double *acc;          /* bytes of each interval from t0, closed or not (owned) */
    size_t nacc, acc_cap;
    double total;         /* every byte added */
    double t_max;         /* the latest time anything was added at (absolute) */
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
/* `bytes` received between absolute times `from` and `to` (to >= from), spread evenly over
 * that span; the part before t0 goes to the first interval. Closes the intervals that end
 * at or before `to`. Starts the series at `from` if not started. */
void series_add_span(struct series *s, double from, double to, double bytes);
/* Multiply every rate by factor (after series_finish): a series counted in another unit
 * (the kernel's bytes, with TLS records' overhead) rescaled to the application's bytes. */
void series_scale(struct series *s, double factor);
/* Close the series at absolute time t_end (time of the last byte): the current interval,
 * partial or not, becomes the last sample. A span that ended later (a counter read just
 * after the last byte) moves the end there: intervals once closed stay closed. */
void series_finish(struct series *s, double t_end);

/* Highest rate (Mb/s) over full intervals (or the only, partial one); 0 when empty. */
double series_peak(const struct series *s);
/* Time (s from t0) of the end of the first interval reaching fraction * peak; -1 if empty. */
double series_slow_start(const struct series *s, double fraction);

#endif
