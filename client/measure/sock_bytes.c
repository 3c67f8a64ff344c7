/* sock_bytes: see sock_bytes.h. */
#include "sock_bytes.h"

#include "sys.h"
#include "tcp_info.h"

void sock_bytes_init(struct sock_bytes *k)
{
    *k = (struct sock_bytes){.fd = -1};
}

static int read_counter(const struct sock_bytes *k, uint64_t *v)
{
    struct tcp_info_sample t;
    if (k->fd < 0 || tcp_info_read(k->fd, &t, NULL, 0) < 0 || !(t.have & TCP_INFO_HAVE_BYTES))
        return -1;
    *v = k->upload ? t.bytes_acked : t.bytes_received;
    return 0;
}

int sock_bytes_begin(struct sock_bytes *k, int fd, int upload, double now, uint64_t app_bytes)
{
    sock_bytes_init(k);
    k->fd = fd;
    k->upload = upload;
    if (fd < 0 || read_counter(k, &k->last) < 0)
        return -1;
    k->t_last = now;
    k->app_last = app_bytes;
    k->ok = 1;
    return 0;
}

static void add(struct sock_bytes *k, double now, uint64_t v, uint64_t app_bytes, struct series *s)
{
    if (now < k->t_last)
        now = k->t_last;
    if (v > k->last && s)
        series_add_span(s, k->t_last, now, (double)(v - k->last));
    if (v > k->last)
        k->last = v;
    k->t_last = now;
    k->app_last = app_bytes;
}

void sock_bytes_poll(struct sock_bytes *k, double now, uint64_t app_bytes, int force, struct series *s)
{
    if (!k->ok || k->done || (!force && now - k->t_last < SOCK_BYTES_GAP_S))
        return;
    /* Timed by the read itself, between two clock reads: a thread that waited for a CPU
     * between its clock and its read would put the bytes of the wait on the wrong side of
     * the timestamp (a dip, then a burst over the few ms to the next read). Such a read is
     * dropped (the next one covers its time); a forced one is tried a few times. */
    for (int tries = force ? 4 : 1; tries > 0; tries--) {
        uint64_t v;
        double a = sys_mono_s();
        if (read_counter(k, &v) < 0)
            return;
        double b = sys_mono_s();
        if (b - a <= SOCK_BYTES_READ_MAX_S) {
            add(k, (a + b) / 2, v, app_bytes, s);
            return;
        }
    }
}

void sock_bytes_end(struct sock_bytes *k, int have_end, uint64_t end_value, double t_end, uint64_t app_bytes,
                    struct series *s)
{
    if (!k->ok || k->done)
        return;
    uint64_t v = have_end ? end_value : k->last + (app_bytes > k->app_last ? app_bytes - k->app_last : 0);
    add(k, t_end, v, app_bytes, s);
    k->done = 1;
}
