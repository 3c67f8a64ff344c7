/* cb_write: libcurl's write callback. It only counts: no copy, no allocation, one clock
 * read per call (vDSO), so the client is never the bottleneck. It also enforces
 * --max-bytes when a server ignored the Range request, and --duration (the bytes of the
 * write that arrives after the deadline are not counted: they came too late). */
#include "xfer.h"

#include "sys.h"

size_t cb_write(char *ptr, size_t size, size_t nmemb, void *ud)
{
    (void)ptr;
    struct xfer *x = ud;
    size_t n = size * nmemb;
    double now = sys_mono_s();
    if (!x->series.started)
        series_start(&x->series, x->t_hdr_end > 0 ? x->t_hdr_end : now);
    if (x->agg && !x->agg->started)
        series_start(x->agg, x->t_hdr_end > 0 ? x->t_hdr_end : now);
    if (x->opt->duration_s > 0 && x->agg && now - x->agg->t0 >= x->opt->duration_s) {
        x->duration_hit = 1;
        return 0;
    }
    size_t counted = n;
    uint64_t max = x->max_bytes;
    int stop = 0;
    if (max) {
        /* Exactly max bytes: done, but let a 206 end normally; more than max (a server that
         * ignored the Range request): count up to max and abort. */
        if (x->bytes + n >= max) {
            x->max_bytes_hit = 1;
            stop = x->bytes + n > max;
            counted = (size_t)(max - x->bytes);
        }
    }
    if (counted) {
        series_add(&x->series, now, counted);
        x->bytes += counted;
        if (x->run_bytes)
            *x->run_bytes += counted;
        x->t_last_byte = now;
        /* The body's last byte: the kernel's count is final now, read it at once. */
        xfer_count(x, now, counted, (x->expected >= 0 && x->bytes >= (uint64_t)x->expected) || (max && x->bytes >= max));
    }
    x->t_last_data = now;
    x->rx_bytes += n;
    /* Returning less than n makes libcurl abort with CURLE_WRITE_ERROR. */
    return stop ? 0 : n;
}

void xfer_count(struct xfer *x, double now, uint64_t bytes, int force)
{
    if (!x->agg)
        return;
    if (!x->ks.ok) {
        series_add(x->agg, now, bytes);
        return;
    }
    sock_bytes_poll(&x->ks, now, x->bytes, force, x->agg);
}
