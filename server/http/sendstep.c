/* sendstep: see sendstep.h. */
#include "sendstep.h"

#include <stdatomic.h>

#include "mhd_compat.h"

static __thread int in_flight; /* this worker thread's sendfile bodies under way */
static _Atomic uint64_t calls, widened;

void sendstep_begin(int sock, uint64_t end)
{
    in_flight++;
    struct mhd_fd_state *st = mhd_compat_fd(sock);
    if (st && mhd_compat_on(MHD_TRICK_SENDFILE))
        atomic_store_explicit(&st->send_end, end + 1, memory_order_relaxed);
}

void sendstep_end(int sock)
{
    if (in_flight > 0) /* a callback on another thread (a daemon's stop) must not wrap it */
        in_flight--;
    struct mhd_fd_state *st = mhd_compat_fd(sock);
    if (st)
        atomic_store_explicit(&st->send_end, 0, memory_order_relaxed);
}

void sendstep_stats(uint64_t *c, uint64_t *w)
{
    *c = atomic_load_explicit(&calls, memory_order_relaxed);
    *w = atomic_load_explicit(&widened, memory_order_relaxed);
}

size_t sendstep_step(struct mhd_fd_state *st, uint64_t off, size_t count)
{
    uint64_t end1 = st ? atomic_load_explicit(&st->send_end, memory_order_relaxed) : 0;
    if (!end1)
        return count;
    atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
    uint64_t end = end1 - 1;
    if (count == SENDSTEP_MHD_CHUNK && in_flight <= SENDSTEP_FEW && off + SENDSTEP_TAIL < end) {
        uint64_t room = end - SENDSTEP_TAIL - off; /* what may go before the last call */
        uint64_t step = room < SENDSTEP_MAX ? room : SENDSTEP_MAX;
        if (step > count) {
            count = (size_t)step;
            atomic_fetch_add_explicit(&widened, 1, memory_order_relaxed);
        }
    }
    return count;
}

int sendstep_interposed(void)
{
    return mhd_compat_on(MHD_TRICK_SENDFILE);
}
