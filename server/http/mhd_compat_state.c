/* mhd_compat_state: the part of mhd_compat.h that everything beneath libmicrohttpd reads
 * (which tricks are on, the descriptor table, the kernel's setsockopt), kept apart from
 * the interposers (mhd_compat.c), which call nopush and sendstep, which read this: so
 * that no call goes round in a circle. */
#include "mhd_compat.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "conn.h"

#define PROBED (1u << 31) /* tricks: the probe has run */

static _Atomic unsigned tricks;
static _Atomic int force_unknown;
static _Atomic unsigned force_off; /* mhd_compat_force_off */
/* The connection on each descriptor (512 KiB of zeroes in .bss, touched only as far as
 * descriptors go): set and cleared on the connection's worker (conn_new, conn_free). */
static struct conn *_Atomic fd_table[MHD_COMPAT_MAX_FD];

int mhd_compat_kernel_setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
    return (int)syscall(SYS_setsockopt, fd, level, name, val, len);
}

struct mhd_fd_state *mhd_compat_fd(int fd)
{
    if (fd < 0 || fd >= MHD_COMPAT_MAX_FD)
        return NULL;
    struct conn *c = atomic_load_explicit(&fd_table[fd], memory_order_relaxed);
    return c ? &c->io : NULL;
}

void mhd_compat_fd_attach(int fd, struct conn *c)
{
    if (fd >= 0 && fd < MHD_COMPAT_MAX_FD)
        atomic_store_explicit(&fd_table[fd], c, memory_order_relaxed);
}

void mhd_compat_fd_detach(int fd, struct conn *c)
{
    struct conn *expected = c;
    if (fd >= 0 && fd < MHD_COMPAT_MAX_FD)
        atomic_compare_exchange_strong_explicit(&fd_table[fd], &expected, NULL, memory_order_relaxed,
                                                memory_order_relaxed);
}

/* VERSION is one of MHD_COMPAT_VERIFIED's */
static int verified(const char *version)
{
    const char *p = MHD_COMPAT_VERIFIED;
    size_t n = strlen(version);
    while (*p) {
        size_t k = strcspn(p, ",");
        if (k == n && strncmp(p, version, n) == 0)
            return 1;
        p += k + (p[k] == ',');
    }
    return 0;
}

const char *mhd_compat_plain_reason(void)
{
    const char *env = getenv(MHD_COMPAT_ENV);
    if (env && strcmp(env, "plain") == 0)
        return MHD_COMPAT_ENV "=plain";
    if (atomic_load(&force_unknown))
        return "treated as unknown (a test)";
    if (!verified(MHD_get_version()))
        return "not a version debitd was verified with";
    return NULL;
}

/* NAME's definition in the global scope (the one libmicrohttpd's calls bind to) lies in
 * the object that holds this code: debitd's interposer (mhd_compat.c). Not where a build
 * hides it (tests/lib/hide-setsockopt.ver), nor in a static build. */
static int interposed(const char *name)
{
    Dl_info def, self;
    void *p = dlsym(RTLD_DEFAULT, name);
    return p && dladdr(p, &def) && dladdr((void *)mhd_compat_on, &self) && def.dli_fbase == self.dli_fbase;
}

static unsigned current(void)
{
    unsigned t = atomic_load_explicit(&tricks, memory_order_relaxed);
    if (!(t & PROBED)) {
        t = PROBED;
        if (!mhd_compat_plain_reason()) {
            t |= MHD_TRICK_ALL;
            if (!interposed("setsockopt"))
                t &= ~(unsigned)MHD_TRICK_SETSOCKOPT;
            if (!interposed("sendfile64"))
                t &= ~(unsigned)MHD_TRICK_SENDFILE;
            t &= ~atomic_load(&force_off);
        }
        atomic_store_explicit(&tricks, t, memory_order_relaxed);
    }
    return t & ~PROBED;
}

unsigned mhd_compat_tricks(void)
{
    return current();
}

int mhd_compat_on(enum mhd_trick trick)
{
    return (current() & (unsigned)trick) != 0;
}

void mhd_compat_force_unknown(int unknown)
{
    atomic_store(&force_unknown, unknown);
    atomic_store(&tricks, 0); /* probe again */
}

void mhd_compat_force_off(unsigned set)
{
    atomic_store(&force_off, set & MHD_TRICK_ALL);
    atomic_store(&tricks, 0); /* probe again */
}
