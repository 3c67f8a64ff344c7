/* sys: the small operating-system helpers every program needs once: clocks, durable
 * file replacement, PATH lookup, bounded waits for a child, the network namespace's
 * identity. Nothing here prints or exits; errors follow err.h. */
#ifndef DEBIT_SYS_H
#define DEBIT_SYS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* CLOCK_MONOTONIC, in seconds / nanoseconds / milliseconds: for durations, never dates. */
double sys_mono_s(void);
uint64_t sys_mono_ns(void);
int64_t sys_mono_ms(void);
/* CLOCK_REALTIME in seconds since the epoch: for timestamps a reader sees. */
double sys_wall_s(void);
/* T (sys_wall_s) as ISO 8601 UTC with milliseconds, "2026-11-30T03:14:29.918Z", into BUF
 * (32 bytes are enough): a JSON real would lose digits in compact output. */
void sys_iso_time(double t, char *buf, size_t len);
/* SRC into DST (LEN bytes) as snprintf(DST, LEN, "%s", SRC) would, cut and always
 * NUL-terminated when LEN > 0, without the formatting: for values copied on every request
 * (the file response's headers). Returns DST. */
char *sys_strcpy(char *dst, size_t len, const char *src);
/* Sleep ms milliseconds, resuming after signals. Async-signal-safe. */
void sys_sleep_ms(long ms);

/* Replace a file atomically and durably: write to a temporary file beside it (same
 * directory, so rename(2) is atomic), then fflush + fsync + rename + fsync of the
 * directory. A reader sees the old file or the whole new one, never half, even after a
 * crash. Usage:
 *   struct sys_atomic a;
 *   FILE *fp = sys_atomic_open(&a, path, 0644, err, errlen);
 *   if (!fp) return -1;
 *   ...fprintf(fp, ...)...
 *   return sys_atomic_commit(&a, err, errlen);   (or sys_atomic_abort(&a) to give up)
 * The FILE belongs to a; commit and abort close it and remove the temporary file on
 * failure. */
struct sys_atomic {
    FILE *fp;
    char path[PATH_MAX];
    char tmp[PATH_MAX];
};
FILE *sys_atomic_open(struct sys_atomic *a, const char *path, mode_t mode, char *err, size_t errlen);
int sys_atomic_commit(struct sys_atomic *a, char *err, size_t errlen);
void sys_atomic_abort(struct sys_atomic *a);
/* Can path be replaced this way (its directory writable, path not a directory)? Creates
 * and removes a temporary file. 0, or -1 with err filled. Lets a program fail before a
 * long measurement rather than after it. */
int sys_atomic_check(const char *path, char *err, size_t errlen);

/* Open PATH with FLAGS (O_CLOEXEC added) without ever blocking in open(2): a FIFO or a
 * device at PATH (a reader-less FIFO blocks a plain open forever) is refused first, by its
 * file type, with "\"PATH\" is a FIFO, not a regular file". Only a regular file is kept, or
 * with ALLOW_CHR also a stream that cannot block an open: a character device (/dev/null, a
 * terminal's /dev/stderr) or an anonymous pipe (/dev/stderr piped). MODE as open(2)'s for
 * O_CREAT. Returns the descriptor (blocking again), or -1 with the type's reason or "cannot
 * VERB \"PATH\": strerror" in err (VERB NULL: "read", or "open" when writing). */
int sys_open_regular(const char *path, int flags, mode_t mode, int allow_chr, const char *verb, char *err,
                     size_t errlen);
/* 1 when PATH is an anonymous pipe (pipefs: /dev/fd/N of -c <(...), /dev/stderr piped to
 * another program), which never blocks an open; a named FIFO (mkfifo) waits there for its
 * other end. */
int sys_anonymous_pipe(const char *path);
/* What the file type in MODE is called ("a FIFO", "a directory", "a socket"...). */
const char *sys_file_type_name(mode_t mode);

/* Find an executable NAME in $PATH (or a default PATH when unset) into out. A NAME with a
 * slash is checked as it is. Returns 1 found, 0 not found. */
int sys_find_in_path(const char *name, char *out, size_t outlen);
/* The file NAME in the directory of the running executable (/proc/self/exe), into out.
 * Returns 1 when it exists and is executable, else 0. */
int sys_find_beside_self(const char *name, char *out, size_t outlen);

/* Wait up to ms milliseconds for child pid to end (polling every 10 ms, through EINTR).
 * Returns 1 when it ended (*status filled when status is not NULL; a child already
 * reaped counts as ended), 0 when it is still running. Async-signal-safe. */
int sys_wait_child_ms(pid_t pid, long ms, int *status);
/* sys_wait_child_ms, then SIGKILL and reap if it had not ended. Returns 1 when it ended
 * by itself, 0 when it had to be killed. */
int sys_reap_child_ms(pid_t pid, long ms, int *status);

/* Inode number of this process's network namespace (/proc/self/ns/net), 0 if unknown.
 * Two processes are in the same namespace iff the numbers are equal. */
unsigned long long sys_netns_inode(void);

#endif
