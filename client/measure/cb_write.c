/* cb_write: libcurl's write callback. It only counts: no copy, no allocation, one clock
 * read per call (vDSO), so the client is never the bottleneck. It also enforces
 * --max-bytes when a server ignored the Range request. */
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
    size_t counted = n;
    uint64_t max = x->opt->max_bytes;
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
        x->t_last_byte = now;
    }
    x->t_last_data = now;
    x->rx_bytes += n;
    /* Returning less than n makes libcurl abort with CURLE_WRITE_ERROR. */
    return stop ? 0 : n;
}
