/* threadcpu: how busy the calling thread was over a stretch of time — its CPU time (user and
 * system, getrusage(RUSAGE_THREAD)) and the time it waited on a run queue, runnable but not
 * running (/proc/thread-self/schedstat, the scheduler's own account). The verdict reads a
 * thread that was on a CPU or waiting for one for all of a transfer as CPU-bound: on a
 * machine shared with other jobs a CPU-bound thread's CPU share falls, its share plus its
 * wait does not (docs/verdict.md). Both programs use it: debit around its transfer loop,
 * debitd around a transfer on its serving thread. */
#ifndef DEBIT_THREADCPU_H
#define DEBIT_THREADCPU_H

/* One reading of the calling thread. */
struct threadcpu {
    double user_ms, sys_ms; /* since the thread started */
    double runq_ms;         /* waited to run since it started; < 0: unknown (no schedstat) */
    double mono_s;          /* CLOCK_MONOTONIC at the reading */
};

/* Read the calling thread's figures into T. The schedstat file is kept open per thread
 * (read with pread: one system call) and closed when the thread exits. */
void threadcpu_now(struct threadcpu *t);

/* Only the calling thread's run-queue wait so far (ms; < 0 unknown): one pread. */
double threadcpu_runq_ms(void);

/* What the thread did between A and B (two readings of one thread): CPU ms (user + sys),
 * run-queue wait ms (< 0 unknown), wall ms. */
struct threadcpu_delta {
    double user_ms, sys_ms, cpu_ms, runq_ms, wall_ms;
};
void threadcpu_delta(const struct threadcpu *a, const struct threadcpu *b, struct threadcpu_delta *d);

#endif
