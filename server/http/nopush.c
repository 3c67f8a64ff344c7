/* nopush: see nopush.h. */
#include "nopush.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>

#include "err.h"
#include "mhd_compat.h"

enum {
    NOPUSH_HELD = 1,    /* between nopush_begin and nopush_end */
    NOPUSH_NODELAY = 2, /* TCP_NODELAY set by nopush_begin on this connection */
};

/* the state is a byte of the descriptor's mhd_fd_state, written by the connection's worker */
static _Atomic uint64_t calls_held;

static int set_int(int fd, int name, int on, const char *what, char *err, size_t errlen)
{
    if (mhd_compat_kernel_setsockopt(fd, IPPROTO_TCP, name, &on, sizeof on) == 0)
        return 0;
    return err_set(err, errlen, "setsockopt %s %d on descriptor %d: %s", what, on, fd, strerror(errno));
}

static int held(const struct mhd_fd_state *st)
{
    return st && (atomic_load_explicit(&st->nopush, memory_order_relaxed) & NOPUSH_HELD);
}

int nopush_held(int fd)
{
    return held(mhd_compat_fd(fd));
}

int nopush_intercept(struct mhd_fd_state *st)
{
    if (!held(st))
        return 0;
    atomic_fetch_add_explicit(&calls_held, 1, memory_order_relaxed);
    return 1;
}

int nopush_interposed(void)
{
    return mhd_compat_on(MHD_TRICK_SETSOCKOPT);
}

int nopush_begin(int fd, char *err, size_t errlen)
{
    /* without the interposition libmicrohttpd's push would undo the cork: two calls for nothing */
    if (!nopush_interposed())
        return err_set(err, errlen, "setsockopt() is not interposed in this build (libmicrohttpd's calls reach "
                       "libc): headers go out alone");
    struct mhd_fd_state *fs = mhd_compat_fd(fd);
    if (!fs)
        return err_set(err, errlen, "descriptor %d is no connection's (mhd_compat's table, %d entries)", fd,
                       MHD_COMPAT_MAX_FD);
    unsigned char st = atomic_load_explicit(&fs->nopush, memory_order_relaxed);
    /* TCP_NODELAY first, while nothing is queued: after the uncork any send then pushes */
    if (!(st & NOPUSH_NODELAY) && set_int(fd, TCP_NODELAY, 1, "TCP_NODELAY", err, errlen) < 0)
        return -1;
    st |= NOPUSH_NODELAY;
    atomic_store_explicit(&fs->nopush, st, memory_order_relaxed);
    if (set_int(fd, TCP_CORK, 1, "TCP_CORK", err, errlen) < 0)
        return -1;
    atomic_store_explicit(&fs->nopush, st | NOPUSH_HELD, memory_order_relaxed);
    return 0;
}

int nopush_end(int fd, char *err, size_t errlen)
{
    struct mhd_fd_state *fs = mhd_compat_fd(fd);
    if (!held(fs))
        return 0;
    unsigned char st = atomic_load_explicit(&fs->nopush, memory_order_relaxed);
    atomic_store_explicit(&fs->nopush, st & ~NOPUSH_HELD, memory_order_relaxed);
    if (set_int(fd, TCP_CORK, 0, "TCP_CORK", err, errlen) < 0)
        return -1;
    return 1;
}

uint64_t nopush_calls_held(void)
{
    return atomic_load_explicit(&calls_held, memory_order_relaxed);
}
