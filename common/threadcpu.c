/* threadcpu: see threadcpu.h. */
#include "threadcpu.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sys.h"

/* The per-thread schedstat descriptor: -1 not yet opened, -2 not available. A key's
 * destructor closes it when the thread exits (debitd's workers are replaced on a reload). */
static __thread int sched_fd = -1;
static pthread_key_t sched_key;
static pthread_once_t sched_once = PTHREAD_ONCE_INIT;

static void sched_close(void *p)
{
    int fd = (int)(long)p - 1;
    if (fd >= 0)
        close(fd);
}

static void sched_key_init(void)
{
    pthread_key_create(&sched_key, sched_close);
}

static int sched_open(void)
{
    if (sched_fd != -1)
        return sched_fd;
    pthread_once(&sched_once, sched_key_init);
    int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
    sched_fd = fd >= 0 ? fd : -2;
    if (fd >= 0)
        pthread_setspecific(sched_key, (void *)(long)(fd + 1));
    return sched_fd;
}

/* The second field of schedstat: ns waited on a run queue; < 0 unknown. */
double threadcpu_runq_ms(void)
{
    int fd = sched_open();
    if (fd < 0)
        return -1;
    char buf[96];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    char *end;
    strtoull(buf, &end, 10); /* time on a CPU: getrusage's sum already */
    if (end == buf)
        return -1;
    char *p = end;
    unsigned long long wait = strtoull(p, &end, 10);
    return end == p ? -1 : (double)wait / 1e6;
}

static double tv_ms(const struct timeval *t)
{
    return (double)t->tv_sec * 1e3 + (double)t->tv_usec / 1e3;
}

void threadcpu_now(struct threadcpu *t)
{
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) == 0) {
        t->user_ms = tv_ms(&ru.ru_utime);
        t->sys_ms = tv_ms(&ru.ru_stime);
    } else {
        t->user_ms = t->sys_ms = 0;
    }
    t->runq_ms = threadcpu_runq_ms();
    t->mono_s = sys_mono_s();
}

void threadcpu_delta(const struct threadcpu *a, const struct threadcpu *b, struct threadcpu_delta *d)
{
    d->user_ms = b->user_ms >= a->user_ms ? b->user_ms - a->user_ms : 0;
    d->sys_ms = b->sys_ms >= a->sys_ms ? b->sys_ms - a->sys_ms : 0;
    d->cpu_ms = d->user_ms + d->sys_ms;
    d->runq_ms = a->runq_ms >= 0 && b->runq_ms >= a->runq_ms ? b->runq_ms - a->runq_ms : -1;
    d->wall_ms = b->mono_s > a->mono_s ? (b->mono_s - a->mono_s) * 1e3 : 0;
}
