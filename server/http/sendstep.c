/* sendstep: see sendstep.h. */
#include "sendstep.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* 512 KiB in .bss: the end offset + 1 of each noted descriptor's response (0: not noted) */
static _Atomic uint64_t end_of[SENDSTEP_MAX_FD];
static __thread int in_flight; /* this worker thread's sendfile bodies under way */
static _Atomic uint64_t calls, widened;

void sendstep_note(int in_fd, uint64_t end)
{
    if (in_fd >= 0 && in_fd < SENDSTEP_MAX_FD)
        atomic_store_explicit(&end_of[in_fd], end + 1, memory_order_relaxed);
}

void sendstep_begin(void)
{
    in_flight++;
}

void sendstep_end(void)
{
    if (in_flight > 0) /* a callback on another thread (a daemon's stop) must not wrap it */
        in_flight--;
}

void sendstep_stats(uint64_t *c, uint64_t *w)
{
    *c = atomic_load_explicit(&calls, memory_order_relaxed);
    *w = atomic_load_explicit(&widened, memory_order_relaxed);
}

/* Interposes on libc's sendfile64 (x86-64: the same entry as sendfile) for the whole
 * process; the kernel's is called by number, never this one. */
ssize_t sendfile64(int out_fd, int in_fd, off64_t *offset, size_t count)
{
    uint64_t end1 = in_fd >= 0 && in_fd < SENDSTEP_MAX_FD ? atomic_load_explicit(&end_of[in_fd], memory_order_relaxed)
                                                          : 0;
    if (end1 && offset) {
        atomic_fetch_add_explicit(&calls, 1, memory_order_relaxed);
        uint64_t end = end1 - 1, off = (uint64_t)*offset;
        if (count == SENDSTEP_MHD_CHUNK && in_flight <= SENDSTEP_FEW && off + SENDSTEP_TAIL < end) {
            uint64_t room = end - SENDSTEP_TAIL - off; /* what may go before the last call */
            uint64_t step = room < SENDSTEP_MAX ? room : SENDSTEP_MAX;
            if (step > count) {
                count = (size_t)step;
                atomic_fetch_add_explicit(&widened, 1, memory_order_relaxed);
            }
        }
    }
    return (ssize_t)syscall(SYS_sendfile, out_fd, in_fd, offset, count);
}

static pthread_once_t interposed_once = PTHREAD_ONCE_INIT;
static int interposed;

static void interposed_check(void)
{
    /* the first definition in the global scope is the one libmicrohttpd's calls bind to */
    interposed = dlsym(RTLD_DEFAULT, "sendfile64") == (void *)sendfile64;
}

int sendstep_interposed(void)
{
    pthread_once(&interposed_once, interposed_check);
    return interposed;
}
