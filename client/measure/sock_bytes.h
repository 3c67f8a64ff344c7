/* sock_bytes: the bytes the kernel moved on a transfer's socket, sampled as the transfer
 * runs: tcpi_bytes_received for a download, tcpi_bytes_acked for an upload (TCP_INFO,
 * Linux >= 4.1, read through common/tcp_info.h). Each read is timestamped when it is made
 * and the bytes since the previous read are spread over the real time between the two
 * (series_add_span), so a transfer thread that waited for a CPU does not turn into a rate
 * collapse followed by a burst: the kernel kept receiving (up to the receive window)
 * while the application did not read. The counters include what the application never
 * sees (TLS records' headers and MACs, WebSocket frame headers): callers rescale the
 * finished series to the application's bytes (series_scale). */
#ifndef DEBIT_SOCK_BYTES_H
#define DEBIT_SOCK_BYTES_H

#include <stdint.h>

#include "series.h"

/* Least time between two reads: a few hundred reads a second at most, 20 per 100 ms
 * interval, a getsockopt each (about a microsecond). */
#define SOCK_BYTES_GAP_S 0.005
/* A read that took longer than this (the thread was preempted in it) has no one time. */
#define SOCK_BYTES_READ_MAX_S 0.001

struct sock_bytes {
    int fd;          /* -1: not begun, or closed (reads then add nothing) */
    int upload;      /* count bytes_acked, not bytes_received */
    int ok;          /* begun and the kernel fills the counters */
    int done;        /* the last span was added */
    uint64_t last;   /* counter at the last read */
    double t_last;   /* when it was read */
    uint64_t app_last; /* the application's count then (for sock_bytes_end) */
};

/* Not begun; sock_bytes_poll and _end then do nothing. */
void sock_bytes_init(struct sock_bytes *k);
/* Take the counter of fd at `now` as the base (the start of the timed window), with the
 * application's count app_bytes then. Returns 0, or -1 (k->ok == 0) when fd has no such
 * counter (not TCP, a kernel older than 4.1). */
int sock_bytes_begin(struct sock_bytes *k, int fd, int upload, double now, uint64_t app_bytes);
/* Read the counter when SOCK_BYTES_GAP_S has passed since `now` and the last read (or
 * always, with force) and add what it grew by to s over [t_last, the read's own time]
 * (the middle of two clock reads around it; a read that took over SOCK_BYTES_READ_MAX_S
 * is dropped, a forced one retried). app_bytes: the application's count at now. */
void sock_bytes_poll(struct sock_bytes *k, double now, uint64_t app_bytes, int force, struct series *s);
/* The last span, up to t_end, once (nothing when the caller set k->done after a forced
 * last poll): the
 * counter's value at the end when known (have_end: the socket's last TCP_INFO, which
 * counts nothing after the window), else what the application counted since the last
 * read. */
void sock_bytes_end(struct sock_bytes *k, int have_end, uint64_t end_value, double t_end, uint64_t app_bytes,
                    struct series *s);

#endif
