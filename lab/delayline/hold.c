#include "hold.h"

#include <stdlib.h>

struct slot {
    uint64_t due_ns;
    uint32_t id;
    uint32_t len;
};

struct hold {
    struct slot *ring;
    uint32_t mask;     /* capacity - 1 */
    uint32_t head;     /* oldest */
    uint32_t count;
    uint64_t delay_ns;
    int have_last;
    uint32_t last_id;  /* id of the newest pushed packet, to enforce FIFO order */
    struct hold_stats st;
};

struct hold *hold_new(uint32_t cap, uint64_t delay_ns)
{
    uint32_t c = 2;
    while (c < cap && c < (1u << 30)) c <<= 1;
    struct hold *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->ring = calloc(c, sizeof *h->ring);
    if (!h->ring) { free(h); return NULL; }
    h->mask = c - 1;
    h->delay_ns = delay_ns;
    return h;
}

void hold_free(struct hold *h)
{
    if (!h) return;
    free(h->ring);
    free(h);
}

int hold_push(struct hold *h, uint32_t id, uint32_t len, uint64_t now_ns)
{
    if (h->count > h->mask) return -1;
    /* Ids grow by one per queued packet and wrap at 2^32: compare with wrap-around. */
    if (h->have_last && (int32_t)(id - h->last_id) <= 0) return -1;
    struct slot *s = &h->ring[(h->head + h->count) & h->mask];
    s->due_ns = now_ns + h->delay_ns;
    s->id = id;
    s->len = len;
    h->count++;
    h->have_last = 1;
    h->last_id = id;
    if (h->count > h->st.max_held) h->st.max_held = h->count;
    return 0;
}

uint32_t hold_pop_due(struct hold *h, uint64_t now_ns, int flush, uint32_t *last_id)
{
    uint32_t n = 0;
    while (h->count > 0) {
        struct slot *s = &h->ring[h->head];
        if (!flush && s->due_ns > now_ns) break;
        if (now_ns > s->due_ns) {
            uint64_t late = now_ns - s->due_ns;
            h->st.late_sum_ns += late;
            if (late > h->st.late_max_ns) h->st.late_max_ns = late;
        }
        h->st.packets++;
        h->st.bytes += s->len;
        *last_id = s->id;
        h->head = (h->head + 1) & h->mask;
        h->count--;
        n++;
    }
    if (n) h->st.batches++;
    return n;
}

int64_t hold_next_due(const struct hold *h, uint64_t now_ns)
{
    if (h->count == 0) return -1;
    uint64_t due = h->ring[h->head].due_ns;
    return due > now_ns ? (int64_t)(due - now_ns) : 0;
}

const struct hold_stats *hold_stats(const struct hold *h) { return &h->st; }
