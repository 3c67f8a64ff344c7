/* hold: the delay line's FIFO of held packets. The delay is constant, so packets become due
 * in the order they arrived, which is also their NFQUEUE id order: one ring, and a single
 * batched verdict (NFQNL_MSG_VERDICT_BATCH, "accept every id <= N") releases all that is
 * due. Pure bookkeeping, no I/O, so it is unit-tested on its own. */
#ifndef DEBIT_DELAYLINE_HOLD_H
#define DEBIT_DELAYLINE_HOLD_H

#include <stddef.h>
#include <stdint.h>

struct hold_stats {
    uint64_t packets;      /* packets released */
    uint64_t bytes;        /* their original lengths (GSO packets count whole) */
    uint64_t batches;      /* verdict messages that released them */
    uint32_t max_held;     /* most packets held at once */
    uint64_t late_sum_ns;  /* sum of (release time - due time) */
    uint64_t late_max_ns;  /* worst lateness */
};

/* Ring of capacity cap (rounded up to a power of two, >= 2); each packet is due delay_ns
 * after its arrival. Returns NULL on allocation failure. Owned by the caller: hold_free(). */
struct hold *hold_new(uint32_t cap, uint64_t delay_ns);
void hold_free(struct hold *h);

/* Record packet id (arrived at now_ns, len bytes). Returns 0, or -1 when the ring is full
 * or id does not increase (the caller must then accept that packet at once). */
int hold_push(struct hold *h, uint32_t id, uint32_t len, uint64_t now_ns);

/* Pop every packet due at now_ns (all of them when flush is set). Returns how many were
 * popped and stores the highest id in *last_id (the batch verdict's id); 0 when none. */
uint32_t hold_pop_due(struct hold *h, uint64_t now_ns, int flush, uint32_t *last_id);

/* Nanoseconds until the oldest held packet is due (0 if already due), or -1 when empty. */
int64_t hold_next_due(const struct hold *h, uint64_t now_ns);

const struct hold_stats *hold_stats(const struct hold *h);

#endif
