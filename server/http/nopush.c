/* nopush: see nopush.h. */
#include "nopush.h"

#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "err.h"

enum {
    NOPUSH_HELD = 1,    /* between nopush_begin and nopush_end */
    NOPUSH_NODELAY = 2, /* TCP_NODELAY set by nopush_begin on this connection */
};

/* 64 KiB of zeroes in .bss; a byte per descriptor, written by the connection's worker */
static _Atomic unsigned char state[NOPUSH_MAX_FD];
static _Atomic uint64_t calls_held;

/* The kernel's setsockopt, never this file's. */
static int sys_setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
    return (int)syscall(SYS_setsockopt, fd, level, name, val, len);
}

static int set_int(int fd, int name, int on, const char *what, char *err, size_t errlen)
{
    if (sys_setsockopt(fd, IPPROTO_TCP, name, &on, sizeof on) == 0)
        return 0;
    return err_set(err, errlen, "setsockopt %s %d on descriptor %d: %s", what, on, fd, strerror(errno));
}

int nopush_held(int fd)
{
    return fd >= 0 && fd < NOPUSH_MAX_FD && (atomic_load_explicit(&state[fd], memory_order_relaxed) & NOPUSH_HELD);
}

/* Interposes on libc's setsockopt for the whole process (nopush.h). Defined with libc's
 * prototype; every call but a held descriptor's TCP_CORK/TCP_NODELAY goes to the kernel. */
int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
    if (level == IPPROTO_TCP && (name == TCP_CORK || name == TCP_NODELAY) && nopush_held(fd)) {
        atomic_fetch_add_explicit(&calls_held, 1, memory_order_relaxed);
        return 0;
    }
    return sys_setsockopt(fd, level, name, val, len);
}

static pthread_once_t interposed_once = PTHREAD_ONCE_INIT;
static int interposed;

static void interposed_check(void)
{
    /* the first definition in the global scope is the one libmicrohttpd's calls bind to */
    interposed = dlsym(RTLD_DEFAULT, "setsockopt") == (void *)setsockopt;
}

int nopush_interposed(void)
{
    pthread_once(&interposed_once, interposed_check);
    return interposed;
}

int nopush_begin(int fd, char *err, size_t errlen)
{
    /* without the interposition libmicrohttpd's push would undo the cork: two calls for nothing */
    if (!nopush_interposed())
        return err_set(err, errlen, "setsockopt() is not interposed in this build (libmicrohttpd's calls reach "
                       "libc): headers go out alone");
    if (fd < 0 || fd >= NOPUSH_MAX_FD)
        return err_set(err, errlen, "descriptor %d is beyond nopush's table (%d)", fd, NOPUSH_MAX_FD);
    unsigned char st = atomic_load_explicit(&state[fd], memory_order_relaxed);
    /* TCP_NODELAY first, while nothing is queued: after the uncork any send then pushes */
    if (!(st & NOPUSH_NODELAY) && set_int(fd, TCP_NODELAY, 1, "TCP_NODELAY", err, errlen) < 0)
        return -1;
    st |= NOPUSH_NODELAY;
    atomic_store_explicit(&state[fd], st, memory_order_relaxed);
    if (set_int(fd, TCP_CORK, 1, "TCP_CORK", err, errlen) < 0)
        return -1;
    atomic_store_explicit(&state[fd], st | NOPUSH_HELD, memory_order_relaxed);
    return 0;
}

int nopush_end(int fd, char *err, size_t errlen)
{
    if (!nopush_held(fd))
        return 0;
    unsigned char st = atomic_load_explicit(&state[fd], memory_order_relaxed);
    atomic_store_explicit(&state[fd], st & ~NOPUSH_HELD, memory_order_relaxed);
    if (set_int(fd, TCP_CORK, 0, "TCP_CORK", err, errlen) < 0)
        return -1;
    return 1;
}

void nopush_forget(int fd)
{
    if (fd >= 0 && fd < NOPUSH_MAX_FD)
        atomic_store_explicit(&state[fd], 0, memory_order_relaxed);
}

uint64_t nopush_calls_held(void)
{
    return atomic_load_explicit(&calls_held, memory_order_relaxed);
}
