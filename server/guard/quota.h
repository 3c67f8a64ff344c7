/* quota: per-address byte budgets over a sliding window (limits.per_ip_bytes over
 * limits.per_ip_window). An address that has used its budget in the last window is
 * refused until enough of its use has aged out; quota_take says how long that is (what
 * debitd sends as Retry-After).
 *
 * The window is kept as QUOTA_SLOTS slots of window/QUOTA_SLOTS each: use ages out a slot
 * at a time, so "the last window" is exact to within one slot. A response is charged in
 * full when it starts (so that concurrent downloads from one address see each other) and
 * what it did not send is refunded when it ends (quota_refund). The request that crosses
 * the budget is served in full: an address exceeds its budget by at most the responses it
 * had started before it crossed it.
 *
 * The counters belong to the server, not to the configuration: quota_set_limits changes
 * the budget and window of a live table without losing what every address has used, which
 * is what a configuration reload calls. Time is the caller's (NOW_MS, any monotonic
 * milliseconds): the tests drive it by hand. Thread-safe. */
#ifndef DEBITD_QUOTA_H
#define DEBITD_QUOTA_H

#include <stddef.h>
#include <stdint.h>

#define QUOTA_SLOTS 16
#define QUOTA_KEY_LEN 16
/* Addresses tracked at once by default (limits.per_ip_table): about 170 bytes each. */
#define QUOTA_MAX_ADDRESSES 100000
/* Entries compared to pick the one a new address takes over when the table is full. */
#define QUOTA_SAMPLE 16

struct quota;

/* What quota_take charged, for quota_refund. */
struct quota_receipt {
    unsigned char key[QUOTA_KEY_LEN];
    uint64_t slot;       /* absolute slot index the bytes went to */
    uint64_t bytes;      /* bytes charged; 0 = nothing */
    uint32_t generation; /* limits generation the slot index belongs to */
};

enum quota_verdict {
    QUOTA_OK = 0,    /* serve; the bytes were charged (or no budget is set) */
    QUOTA_OVER,      /* refuse: the address has used its budget; *retry_after_s says when */
};

/* The table's state for /metrics. */
struct quota_stats {
    size_t entries;    /* addresses in the table (some may have aged out, not yet dropped) */
    size_t capacity;   /* the most it holds (limits.per_ip_table) */
    uint64_t overflow; /* new addresses that found it full and took over an entry */
};

/* An empty table holding at most MAX_ADDRESSES addresses (0 = QUOTA_MAX_ADDRESSES), with
 * no budget (every quota_take is QUOTA_OK) until quota_set_limits. NULL when out of
 * memory. The caller owns it (quota_free). */
struct quota *quota_new(size_t max_addresses);
/* Release it. NULL is fine. */
void quota_free(struct quota *q);

/* Budget BYTES per WINDOW_MS (BYTES 0 = no budget; WINDOW_MS at least QUOTA_SLOTS). What
 * each address has used is kept; when the window changes, it is re-counted as used at
 * NOW_MS, so it ages out one new window later (never earlier than under the old one). */
void quota_set_limits(struct quota *q, uint64_t bytes, uint64_t window_ms, uint64_t now_ms);

/* A response of BYTES for the address KEY starts at NOW_MS. QUOTA_OK: charged, *rc says
 * what (for quota_refund). QUOTA_OVER: nothing charged, *retry_after_s (>= 1) is how long
 * until the address is below its budget again. rc and retry_after_s may be NULL.
 * A new address that finds the table full (after dropping what aged out) takes over the
 * least-used of QUOTA_SAMPLE entries (of all, in a table that small) with the use it
 * holds: it is metered from that use on, and refused if that use is already over the
 * budget (then nothing changes). A full table thus counts too much, never too little, and
 * its memory stays bounded; the address whose entry was taken starts from the next one it
 * takes over. Only when out of memory with an empty table is a response served uncounted
 * (QUOTA_OK, rc->bytes 0). */
enum quota_verdict quota_take(struct quota *q, const unsigned char key[QUOTA_KEY_LEN], uint64_t bytes,
                              uint64_t now_ms, struct quota_receipt *rc, uint64_t *retry_after_s);

/* Give back UNUSED of what RC charged (a response that ended early). Ignored when the slot
 * has aged out, the address was dropped or the limits changed meanwhile. */
void quota_refund(struct quota *q, const struct quota_receipt *rc, uint64_t unused, uint64_t now_ms);

/* Bytes KEY has used in the window that ends at NOW_MS. */
uint64_t quota_used(struct quota *q, const unsigned char key[QUOTA_KEY_LEN], uint64_t now_ms);

/* Addresses in the table (some may have aged out and not yet been dropped). */
size_t quota_addresses(struct quota *q);

/* Entries, capacity and takeovers so far, read together. */
void quota_stats(struct quota *q, struct quota_stats *st);

#endif
