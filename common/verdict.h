/* verdict: what limited one download — the path, the receiver's window or CPU, the
 * sender's buffer or CPU, congestion control (losses, slow start) — with a sentence of the
 * figures that decided it. verdict_decide() is a pure function of a struct of numbers (no
 * JSON, no I/O: unit-tested as a table, tests/unit/common/test_verdict.c), shared by both
 * programs: debit fills the struct from its run and the server's /transfers/ID record
 * (client/measure/verdict_input.c), debitd from its own record of the transfer
 * (server/observe/transfers.c). The rules, their order and their thresholds are in
 * docs/verdict.md. */
#ifndef DEBIT_VERDICT_H
#define DEBIT_VERDICT_H

#include <stddef.h>
#include <stdint.h>

#include "predict.h"

enum verdict_kind {
    VERDICT_NETWORK = 0,     /* the path's capacity (or losses at full path rate) */
    VERDICT_RECEIVER_WINDOW, /* the client's receive window / RTT */
    VERDICT_SENDER_BUFFER,   /* the server's send buffer / RTT */
    VERDICT_SENDER_CPU,      /* the server ran out of CPU (budget, throttling) and the socket ran dry */
    VERDICT_CONGESTION,      /* cwnd after losses, or slow start for most of the transfer */
    VERDICT_RECEIVER_CPU,    /* the receiver's transfer thread at a full core */
    VERDICT_UNKNOWN,
};

/* The JSON strings: "network", "receiver_window", "sender_buffer", "sender_cpu",
 * "congestion", "receiver_cpu", "unknown". */
const char *verdict_name(enum verdict_kind k);

/* Thresholds (docs/verdict.md says why each is where it is). */
#define VERDICT_NETWORK_FRACTION 0.90   /* average within 10% of the bottleneck */
#define VERDICT_NETWORK_PEAK 0.90       /* ... or a peak at it with an average of at least: */
#define VERDICT_NETWORK_PEAK_AVG 0.75
#define VERDICT_LIMITED_RATIO 0.50      /* rwnd/sndbuf-limited share of busy time */
#define VERDICT_MATCH_LO 0.60           /* measured / (buffer / RTT) that counts as "at that limit": */
#define VERDICT_MATCH_HI 1.35           /* a payload share of 0.40 to 0.90 when 0.67 is predicted */
#define VERDICT_PEER_WINDOW_LO 0.80     /* measured / (the peer's advertised window / base RTT): that window's rate */
#define VERDICT_CAPPED 0.90             /* a buffer at >= 90% of its ceiling is capped */
#define VERDICT_THROTTLED_SHARE 0.10    /* throttled_ms / wall */
#define VERDICT_THROTTLED_PERIODS 0.50  /* nr_throttled / nr_periods */
#define VERDICT_THROTTLED_HEAVY 0.25    /* throttled_ms / wall that is enough without a dry socket */
#define VERDICT_CPU_NEAR_BUDGET 0.80    /* thread CPU share / budget */
#define VERDICT_DRY_SAMPLES 0.20        /* app-limited samples / samples */
#define VERDICT_DRY_BUSY 0.90           /* busy time / transfer time at most: the socket idle 10% */
#define VERDICT_RETRANS_SHARE 0.001     /* bytes_retrans / bytes */
#define VERDICT_SLOW_START_SHARE 0.50   /* slow start / transfer time */
#define VERDICT_FREE_RATIO 0.10         /* rwnd/sndbuf-limited share of busy time below which the sender was free */
#define VERDICT_PLATEAU_BAND 0.10       /* an interval within 10% of the plateau's median is on it */
#define VERDICT_PLATEAU_SHARE 0.70      /* ... and at least 70% of the intervals after slow start are */
#define VERDICT_PLATEAU_MIN 5           /* intervals after slow start needed to call anything a plateau */
#define VERDICT_QUEUED_WINDOW 1.50      /* ssthresh x MSS / base RTT over the plateau: losses at a full queue */
#define VERDICT_PAIR_BOUND 1.00         /* one host: both ends' CPU demands together that make the pair CPU-bound */
#define VERDICT_PAIR_RECEIVER 0.50      /* ... with the receiver's at least this */

/* Every figure the rules may use. NAN (from <math.h>) = unknown or null, for each double;
 * a rule whose inputs are unknown does not fire. Times in ms unless named _s, sizes in
 * bytes, rates in Mb/s (10^6 bit/s) unless named _bps. */
struct verdict_in {
    /* The run, measured by the client. */
    double measured_mbps;     /* wget-style average */
    double peak_mbps;         /* best series interval */
    uint64_t bytes;
    double duration_s;        /* body_s: the averaging window */
    double slow_start_s;      /* the series' slow start (first interval at 90% of the peak) */
    unsigned parallel;        /* streams (the rules compare per-stream rates) */
    int upload;               /* the client sent: no verdict from the download rules */
    int receiver_side;        /* with upload: the figures are debitd's as the receiver (its
                               * receiving thread in rcv_cpu_ms.., its socket's receive side
                               * in rcv_*, so_rcvbuf.., the plateau of what it received):
                               * the upload rules decide (verdict_decide) */
    int same_host;            /* client and server on one host (loopback): they share its CPUs */
    double bottleneck_mbps;   /* --bottleneck */
    /* The client's receive side (TCP_INFO at the end, the socket's buffer). */
    double rtt_ms, min_rtt_ms, rcv_rtt_ms;
    double rcv_space, rcv_wnd, rcv_ssthresh, rcv_mss;
    double so_rcvbuf, tcp_rmem_max, rcvbuf_setting;
    /* The server's record (debitd only). */
    int server_debitd;        /* 0: no record: client-side evidence only */
    double srv_duration_s;    /* the record's duration_s */
    double busy_ms, rwnd_limited_ratio, sndbuf_limited_ratio;
    double total_retrans, bytes_retrans, snd_ssthresh, max_snd_cwnd, delivery_rate_bps, srv_min_rtt_ms, snd_mss;
    double cpu_user_ms, cpu_sys_ms, cpu_wall_ms, cpu_share;
    double samples, app_limited;
    double quota_pct, throttled_ms, nr_throttled, nr_periods; /* quota_pct NAN: no limit */
    double so_sndbuf, tcp_wmem_max, sndbuf_setting;           /* sndbuf_setting NAN: autotuning */
    double initial_cwnd;
    /* The peer's advertised receive window as the sender last saw it (TCP_INFO snd_wnd,
     * Linux >= 5.4; debitd only), bytes. */
    double snd_wnd;
    /* The receiver's transfer thread over the transfer (threadcpu.h): CPU ms, ms waited to
     * run, wall ms. */
    double rcv_cpu_ms, rcv_runq_ms, rcv_wall_ms;
    /* The serving thread's run-queue wait over the transfer (debitd), and the connection's
     * data segments and bytes sent (TCP_INFO: over its life, kept-alive requests included). */
    double cpu_runq_ms, data_segs_out, bytes_sent;
    /* The rate's plateau (verdict_plateau): the median interval after slow start, Mb/s
     * (the run's total, as the path is shared by its streams), and the share of those
     * intervals within VERDICT_PLATEAU_BAND of it. */
    double plateau_mbps, plateau_share;
    /* Bytes per packet that left the server's egress interface over the transfer (its tx
     * counters, interface-wide: debitd's "iface"), the interface, and whether other
     * transfers ran meanwhile (the figure then includes theirs). */
    double iface_bytes_per_packet;
    int iface_shared;
    char iface[16];
};

/* A verdict_in with every double NAN and every count 0. */
void verdict_in_init(struct verdict_in *in);

#define VERDICT_EVIDENCE_MAX 512

struct verdict {
    enum verdict_kind kind;
    char evidence[VERDICT_EVIDENCE_MAX]; /* never empty */
    struct predict_out pred;             /* pred.limit NONE: no prediction */
    char no_prediction[160];             /* pred.limit NONE: why ("" otherwise) */
    double path_mbps;                    /* the path's rate inferred from the plateau (network
                                          * without --bottleneck), NAN otherwise */
};

/* The prediction's inputs from the run's figures: the bottleneck, the base RTT (the
 * server's min_rtt, else the client's), the send buffer's payload (so_sndbuf x
 * PREDICT_SNDBUF_PAYLOAD) when capped (debitd's sndbuf set), the receive window's
 * (SO_RCVBUF x PREDICT_RCVBUF_WINDOW) under --rcvbuf, the initial window and MSS, the
 * size. The autotuning ceilings (tcp_wmem_max, tcp_rmem_max) are limits only below a
 * known bottleneck: alone they are what the autotuner may reach, not what limits (a
 * loopback RTT of microseconds would make them terabits). rtt_ms > 0 replaces the RTT
 * (the plot's curve). */
void verdict_predict_in(const struct verdict_in *in, double rtt_ms, struct predict_in *p);

/* The rules, in order: network (the average at the bottleneck), sender_cpu, network
 * (the bottleneck after slow start), receiver_cpu, sender_buffer, receiver_window,
 * network (inferred: a free sender at a plateau), congestion, else unknown. An upload
 * seen by its receiver (upload and receiver_side: debitd's record of an upload) has rules
 * of its own: network (the bottleneck), receiver_cpu, receiver_window, network (inferred:
 * a receiver neither CPU- nor window-bound at a plateau; the sender's side unknown), else
 * unknown; no prediction. Any other upload: unknown. Pure; fills every field of out. */
void verdict_decide(const struct verdict_in *in, struct verdict *out);

/* The kind verdict_decide gives IN, without building its sentences (the evidence and the
 * reason for no prediction): what debitd keeps at the end of every transfer. */
enum verdict_kind verdict_kind_of(const struct verdict_in *in);

/* The plateau of a rate series (N intervals of Mb/s, the last partial one left out by the
 * caller): the median of the intervals from the first at 90% of the peak (the series' 90th
 * percentile: a catch-up interval after a stall is no peak) on (slow start done) into *median, and the share of those within VERDICT_PLATEAU_BAND of it into
 * *share; both NAN with fewer than VERDICT_PLATEAU_MIN such intervals. */
void verdict_plateau(const double *mbps, size_t n, double *median, double *share);

/* V's kind from the JSON name ("network", ...); VERDICT_UNKNOWN for any other. */
enum verdict_kind verdict_from_name(const char *name);

#endif
