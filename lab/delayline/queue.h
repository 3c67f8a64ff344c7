/* queue: the NFQUEUE side of the delay line (nfnetlink_queue over libmnl). Each queued
 * packet's metadata is read (NFQNL_COPY_META: no payload crosses to userspace), its id
 * held in a FIFO (hold.h) for the delay, then released with one batched ACCEPT verdict per
 * wake-up. NFQA_CFG_F_GSO keeps GSO/GRO packets whole (unless a loss is set: loss_ppm), so a 64 KB aggregate costs one
 * message instead of 45. */
#ifndef DEBIT_DELAYLINE_QUEUE_H
#define DEBIT_DELAYLINE_QUEUE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "drop.h"
#include "hold.h"

struct queue_opts {
    unsigned queue_num;
    uint64_t delay_ns;
    uint32_t maxlen;     /* kernel queue length and ring capacity (packets) */
    uint32_t rcvbuf;     /* netlink socket receive buffer (bytes) */
    int fail_open;       /* accept, undelayed, what overflows the queue instead of dropping */
    uint32_t loss_ppm;   /* drop each packet with this probability (drop.h), 0: none. When
                          * set, GSO/GRO packets are queued as their segments, so that the
                          * rate is per wire packet, not per 64 KB aggregate */
    uint64_t seed;       /* of the drop decisions */
    int segments;        /* queue GSO/GRO packets as their wire segments (as with a loss):
                          * each pays packet_cost_ns, as each costs a CPU that segments */
    double packet_cost_ns; /* CPU time spent per packet read (0: none): a slow host's */
    double byte_cost_ns;   /* per-packet cost plus this much per byte of its length,
                            * spun on this thread's own CPU clock, so that a CPU quota on
                            * this program's cgroup turns it into a packets-per-second and
                            * bytes-per-second ceiling (docs/lab.md "The CPU budget") */
};

/* Bind the queue and configure it. Fails (EBUSY) when another program owns that queue
 * number. Returns NULL with err filled. Owned by the caller: queue_close(). */
struct queue *queue_open(const struct queue_opts *o, char *err, size_t errlen);

/* Hold and release packets until *stop becomes non-zero. SIGINT/SIGTERM must be blocked by
 * the caller: they are unblocked only while waiting (ppoll), so a stop request is never
 * lost. Returns 0 on a stop request, -1 on a socket error (err filled). */
int queue_run(struct queue *q, volatile sig_atomic_t *stop, char *err, size_t errlen);

/* Accept every held packet now, unbind, close. NULL is fine. */
void queue_close(struct queue *q);

const struct hold_stats *queue_stats(const struct queue *q);
/* Packets accepted at once, undelayed, because the ring was full or out of order. */
uint64_t queue_immediate(const struct queue *q);
/* The loss decisions so far: decided (every packet seen) and dropped. */
const struct drop *queue_drops(const struct queue *q);
/* Packets whose delay ran from the kernel's arrival timestamp (NFQA_TIMESTAMP) rather
 * than from the moment this program read them. */
uint64_t queue_stamped(const struct queue *q);
/* CPU time spent on --packet-cost/--byte-cost so far (ns). */
uint64_t queue_burned_ns(const struct queue *q);
/* The kernel's counters for this queue from /proc/net/netfilter/nfnetlink_queue:
 * dropped because the queue was full, and because the socket could not take them.
 * Returns 0, or -1 when the queue is not listed. */
int queue_kernel_drops(unsigned queue_num, uint64_t *queue_dropped, uint64_t *user_dropped);

#endif
