/* predict: what a download's settings predict for its average throughput, from the path
 * and buffer limits that hold in steady state (the bottleneck's rate, the send buffer /
 * RTT, the receive window / RTT) and the slow start that precedes it (initial_cwnd x MSS,
 * doubling each RTT until the limiting rate). The file's size turns both into an AVERAGE
 * over the transfer, comparable with the measured wget-style average. Pure arithmetic:
 * the verdict (verdict.h) and the plot's predicted curve (client/output/plot.c) call it.
 * docs/verdict.md gives the formulas and their limits. */
#ifndef DEBIT_PREDICT_H
#define DEBIT_PREDICT_H

#include <stdint.h>

/* Linux doubles a SO_SNDBUF request (socket(7)) and counts each skb's truesize (payload
 * plus overhead, queued or unacknowledged) against the doubled figure; the writer is
 * woken only once a third of it is free. What is in flight per RTT at the limit is then
 * between half of so_sndbuf (small skbs: the request itself) and most of it. Measured in
 * the lab (lab/lab.sh, +30 ms, 1 Gb/s, debitd sndbuf = 1 MiB, TSO/GSO on and off: 365 to
 * 395 Mb/s, docs/verdict.md): 0.65-0.71 of so_sndbuf, 0.67 as the prediction's share.
 * The receive side: old kernels' tcp_adv_win_scale 1 advertised half of SO_RCVBUF; 6.x
 * kernels derive a scaling_ratio from the skbs' truesize instead. Measured in the lab
 * (kernel 6.18, +30 ms, debit --rcvbuf 256 KiB and 1 MiB against the tuned server:
 * rcv_wnd 395 KiB of so_rcvbuf 512 KiB, 1.55 MiB of 2 MiB, i.e. 0.77 both times; 105 and
 * 391 Mb/s measured): 0.75 as the prediction's share. */
#define PREDICT_SNDBUF_PAYLOAD 0.67
#define PREDICT_RCVBUF_WINDOW 0.75
/* RFC 6928's initial window and the MSS of a 1500-byte MTU with timestamps, used when
 * the transfer did not report its own. */
#define PREDICT_DEFAULT_INITIAL_CWND 10
#define PREDICT_DEFAULT_MSS 1448

/* Which limit the steady state hits (the smallest one). */
enum predict_limit {
    PREDICT_LIMIT_NONE = 0,     /* no limit known: no prediction */
    PREDICT_LIMIT_BOTTLENECK,   /* the path's rate */
    PREDICT_LIMIT_SNDBUF,       /* send buffer payload / RTT */
    PREDICT_LIMIT_RWND,         /* receive window / RTT */
};

/* Inputs; 0 means unknown for every field (that limit is then not applied). */
struct predict_in {
    double bottleneck_bps;  /* path rate, bit/s (goodput is a little less: headers) */
    double rtt_s;           /* base round-trip time (min_rtt) */
    double sndbuf_bytes;    /* sender payload bytes in flight at most (so_sndbuf x PREDICT_SNDBUF_PAYLOAD) */
    double rwnd_bytes;      /* receive window, bytes */
    unsigned initial_cwnd;  /* segments; 0: PREDICT_DEFAULT_INITIAL_CWND */
    unsigned mss;           /* bytes; 0: PREDICT_DEFAULT_MSS */
    uint64_t bytes;         /* the transfer's size; 0: steady state only (avg = steady) */
};

struct predict_out {
    enum predict_limit limit;
    double steady_bps;      /* the smallest limit */
    double avg_bps;         /* average over `bytes`, slow start included */
    double slow_start_s;    /* time spent below the steady rate (whole RTT rounds) */
    unsigned rounds;        /* slow-start rounds before the steady rate */
};

/* Fill out from in. Returns 1 when a prediction was made, 0 when no limit is known (out
 * then holds PREDICT_LIMIT_NONE and zeros). Slow start needs rtt_s; without it the
 * average is the steady rate. */
int predict_rate(const struct predict_in *in, struct predict_out *out);

/* "bottleneck", "sender buffer", "receive window", "none". */
const char *predict_limit_name(enum predict_limit l);

#endif
