/* evidence: the server's side of one transfer, kept in its record next to TCP_INFO so that
 * a client can tell what limited it (issue 10): the CPU time of the thread that served it
 * and of the whole process, the cgroup's CPU budget and the throttling it caused meanwhile,
 * what the periodic TCP_INFO samples saw (app-limited, nothing left unsent, cwnd range),
 * the send buffer, and the cwnd before the first byte.
 *
 * In debitd's libmicrohttpd mode (an internal polling thread per worker, epoll, a thread
 * pool) a connection belongs to one worker thread for its whole life: the access handler
 * that queues a response and the completion callback run in that thread, and so does every
 * sendfile of the body. evidence_begin (from the handler) and evidence_end (from the
 * completion callback) therefore bracket the serving thread's work for this transfer with
 * getrusage(RUSAGE_THREAD). Should the two ever run in different threads, the thread's
 * figures are null rather than wrong. A thread serves many connections at once: each mark
 * records the most transfers its thread had under way together during it
 * (thread_transfers_max), 1 meaning the thread's CPU time is this transfer's alone. */
#ifndef DEBITD_EVIDENCE_H
#define DEBITD_EVIDENCE_H

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/resource.h>

#include "cgroup.h"
#include "cpu_budget.h"
#include "ifstat.h"
#include "tcp_info.h"

struct evidence_thread; /* the transfers under way on one thread */

/* Taken when a transfer starts (evidence_begin), in the request's context. */
/* Bodies shorter than this get no CPU side (cpu, cgroup, so_sndbuf null in the record):
 * four getrusage and two cpu.stat reads were 11 % of debitd's CPU on 4 KiB requests
 * (docs/performance.md), and a CPU figure over a sub-millisecond transfer means nothing
 * at the kernel's tick-based user/system split. 1 MiB is debit's own --min-bytes default:
 * below it a run is "not a test file" anyway. */
#define EVIDENCE_MIN_BYTES (1024u * 1024u)
/* Bodies shorter than this get no run-queue wait (cpu.runqueue_ms null): one pread of
 * /proc/thread-self/schedstat took 5.3 us on this machine (getrusage 1 us; a loop of 200,000,
 * 2026-12-06), two per transfer 5 % of a 1 MiB request's CPU; and a wait over a transfer of
 * a few ms says little. 16 MiB takes 10 ms or more even on loopback. */
#define EVIDENCE_RUNQ_MIN_BYTES (16u * 1024u * 1024u)
/* Bodies shorter than this get no interface counters ("iface" null; ifstat.h): two readings
 * cost 3.5-6.5 us per transfer in a loop on loopback (load 12, 2026-12-06), 2-3 % of a
 * 1 MiB request's 185-205 us of CPU in bench/many.sh; and over a transfer of a few ms the
 * interface's other traffic weighs as much as its own. */
#define EVIDENCE_IFACE_MIN_BYTES EVIDENCE_RUNQ_MIN_BYTES

struct evidence_mark {
    int begun;                      /* evidence_begin ran (the body was long enough) */
    uint64_t seq0;                  /* its start's number on that thread (0: none kept) */
    struct evidence_thread *thread; /* the thread it is counted on; NULL when not counted */
    unsigned max_active;            /* most transfers under way on that thread meanwhile (set by the drop) */
    pthread_t self;
    struct timeval thread_user0, thread_sys0, self_user0, self_sys0;
    double runq0;                   /* the thread's run-queue wait at the start, ms (< 0 unknown) */
    double mono0;
    unsigned cg_gen;
    int cg_have;
    struct cgroup_stat cg0;
    struct ifstat_point if0;        /* the egress interface's counters at the start (ifindex 0: unknown) */
};

/* What the record shows (plain data, copied into the transfers ring). Zeroed = unknown. */
struct transfer_evidence {
    /* at the start */
    uint32_t initial_cwnd;   /* tcpi_snd_cwnd before the response's first byte; 0 unknown */
    uint64_t sndbuf_setting; /* the listener's tcp profile sndbuf; 0 = autotuning */
    uint64_t tcp_wmem_max;   /* net.ipv4.tcp_wmem's max in debitd's netns; 0 unknown */
    uint64_t tcp_rmem_max;   /* net.ipv4.tcp_rmem's max, the same (uploads) */
    /* at the end (have_cpu set) */
    int have_cpu;
    int have_thread;         /* the thread's figures are known (begin and end in one thread) */
    double user_ms, sys_ms, wall_ms, process_user_ms, process_sys_ms;
    unsigned thread_transfers_max;
    double runq_ms;          /* the serving thread waited to run meanwhile (schedstat); < 0 unknown */
    int64_t so_sndbuf;       /* getsockopt SO_SNDBUF at the end; < 0 unknown */
    int64_t so_rcvbuf;       /* getsockopt SO_RCVBUF at the end of an upload; <= 0 unknown */
    int have_cgroup;         /* a cpu controller at the end */
    int cg_version;
    char cg_path[256];       /* "" = not shown (privacy.details = false) */
    double quota_pct;        /* < 0: no limit */
    uint64_t period_us;      /* 0: none */
    int have_deltas;         /* cpu.stat read at both ends of one cgroup */
    double throttled_ms;
    uint64_t nr_throttled, nr_periods;
    /* what left the egress interface meanwhile (ifstat.h): interface-wide counters */
    int have_iface;
    char iface[IF_NAMESIZE];
    uint64_t tx_bytes, tx_packets;
    int iface_shared; /* other transfers of debitd were under way meanwhile (transfers.c sets it) */
};

/* The delivery rate between samples (bytes_acked's growth), kept for the verdict's plateau:
 * at most EVIDENCE_RATES entries; when full, neighbours are averaged in pairs and each
 * entry covers twice as many samples (a long transfer keeps its shape at a coarser step). */
#define EVIDENCE_RATES 32

/* Folded from the sampler's TCP_INFO samples (evidence_sample). Zeroed at the start. */
struct transfer_sampled {
    uint64_t count, app_limited, notsent_zero;
    uint32_t cwnd_min, cwnd_max;
    uint64_t delivery_rate_max_bps;
    uint64_t acked_prev;         /* bytes_acked (bytes_received: an upload) at the previous sample */
    double t_prev, acc_s;        /* its time; seconds gathered toward the next entry */
    uint64_t acc_bytes;          /* bytes gathered toward it */
    unsigned stride, in_acc;     /* samples per entry (1, 2, 4, ...), gathered so far */
    unsigned nrate;
    float rate_mbps[EVIDENCE_RATES];
};

/* Mark the start of a transfer of BYTES served by the calling thread to PEER: its CPU
 * times (and run-queue wait from EVIDENCE_RUNQ_MIN_BYTES on), the process's, cpu.stat of
 * BUDGET (NULL: none), the tx counters of the interface the route to PEER leaves by from
 * EVIDENCE_IFACE_MIN_BYTES on (PEER NULL: none; ifstat.h). M is linked into the thread's
 * list until evidence_end or evidence_drop. */
void evidence_begin(struct evidence_mark *m, struct cpu_budget *budget, uint64_t bytes, const struct sockaddr *peer);

/* The transfer of M ended (call from the thread that serves it): fill EV's end part from
 * M, the CPU times and cpu.stat now, SOCK's SO_SNDBUF (SOCK < 0: unknown), and what the
 * interface sent since evidence_begin (have_iface; iface_shared is left 0). Unlinks M.
 * M never begun (a zeroed mark: a body under EVIDENCE_MIN_BYTES): EV says nothing known. */
void evidence_end(struct evidence_mark *m, struct cpu_budget *budget, int sock, struct transfer_evidence *ev);

/* Unlink M if it is still linked (a request freed without evidence_end). Any thread. */
void evidence_drop(struct evidence_mark *m);

/* Fold one periodic TCP_INFO sample, taken at NOW (sys_mono_s), into S: the rates from
 * bytes_acked, or from bytes_received when RECEIVED (debitd receives an upload). */
void evidence_sample(struct transfer_sampled *s, const struct tcp_info_sample *ti, double now, int received);

/* RECORD's "iface" (docs/server.md): null, or the interface's name, tx_bytes, tx_packets,
 * bytes_per_packet and shared over the transfer. In the access log line too. */
void evidence_iface_to_json(json_t *record, const struct transfer_evidence *ev);

/* Add "cpu", "sampled", "cgroup", "sndbuf" and "initial_cwnd" to RECORD (docs/server.md):
 * "cpu" and "cgroup" are null until the end (EV->have_cpu), "cgroup" also without a cpu
 * controller. */
void evidence_to_json(json_t *record, const struct transfer_evidence *ev, const struct transfer_sampled *s);

#endif
