/* sys: see sys.h. */
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "err.h"

static struct timespec clock_now(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return ts;
}

double sys_mono_s(void)
{
    struct timespec ts = clock_now(CLOCK_MONOTONIC);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t sys_mono_ns(void)
{
    struct timespec ts = clock_now(CLOCK_MONOTONIC);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int64_t sys_mono_ms(void)
{
    struct timespec ts = clock_now(CLOCK_MONOTONIC);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

double sys_wall_s(void)
{
    struct timespec ts = clock_now(CLOCK_REALTIME);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

char *sys_strcpy(char *dst, size_t len, const char *src)
{
    if (len && !memccpy(dst, src, 0, len))
        dst[len - 1] = 0;
    return dst;
}

void sys_iso_time(double t, char *buf, size_t len)
{
    time_t sec = (time_t)t;
    struct tm tm;
    gmtime_r(&sec, &tm);
    char base[32];
    strftime(base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
    int ms = (int)((t - (double)sec) * 1000);
    snprintf(buf, len, "%s.%03dZ", base, ms < 0 ? 0 : ms > 999 ? 999 : ms);
}

void sys_sleep_ms(long ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {
    }
}

/* ---- atomic replacement ------------------------------------------------------------- */

static int tmp_name(const char *path, char *out, size_t outlen)
{
    return snprintf(out, outlen, "%s.tmp.%ld", path, (long)getpid()) < (int)outlen ? 0 : -1;
}

FILE *sys_atomic_open(struct sys_atomic *a, const char *path, mode_t mode, char *err, size_t errlen)
{
    memset(a, 0, sizeof *a);
    if (!path || !*path) {
        err_set(err, errlen, "empty file name");
        return NULL;
    }
    if (snprintf(a->path, sizeof a->path, "%s", path) >= (int)sizeof a->path || tmp_name(path, a->tmp, sizeof a->tmp)) {
        err_set(err, errlen, "%s: path too long", path);
        return NULL;
    }
    int fd = open(a->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0) {
        err_set(err, errlen, "%s: %s (temporary file %s)", path, strerror(errno), a->tmp);
        return NULL;
    }
    fchmod(fd, mode); /* the mode asked for, whatever the umask */
    a->fp = fdopen(fd, "w");
    if (!a->fp) {
        err_set(err, errlen, "%s: %s", a->tmp, strerror(errno));
        close(fd);
        unlink(a->tmp);
        return NULL;
    }
    return a->fp;
}

static void fsync_parent(const char *path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
}

int sys_atomic_commit(struct sys_atomic *a, char *err, size_t errlen)
{
    if (!a->fp)
        return err_set(err, errlen, "%s: not open", a->path);
    int bad = ferror(a->fp);
    int e = bad ? EIO : 0;
    if (!bad && (fflush(a->fp) != 0 || fsync(fileno(a->fp)) != 0)) {
        bad = 1;
        e = errno;
    }
    if (fclose(a->fp) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    a->fp = NULL;
    if (!bad && rename(a->tmp, a->path) != 0) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        unlink(a->tmp);
        return err_set(err, errlen, "%s: %s", a->path, strerror(e));
    }
    /* The rename itself must survive a crash right after it. */
    fsync_parent(a->path);
    return 0;
}

void sys_atomic_abort(struct sys_atomic *a)
{
    if (a->fp) {
        fclose(a->fp);
        a->fp = NULL;
        unlink(a->tmp);
    }
}

int sys_atomic_check(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return err_set(err, errlen, "%s: is a directory", path);
    char tmp[PATH_MAX];
    if (tmp_name(path, tmp, sizeof tmp))
        return err_set(err, errlen, "%s: path too long", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0)
        return err_set(err, errlen, "%s: %s (temporary file %s)", path, strerror(errno), tmp);
    close(fd);
    unlink(tmp);
    return 0;
}

/* ---- programs ------------------------------------------------------------------------ */

static int is_exec(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0;
}

int sys_find_in_path(const char *name, char *out, size_t outlen)
{
    if (strchr(name, '/'))
        return snprintf(out, outlen, "%s", name) < (int)outlen && is_exec(out);
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    while (*path) {
        size_t l = strcspn(path, ":");
        if (l > 0 && snprintf(out, outlen, "%.*s/%s", (int)l, path, name) < (int)outlen && is_exec(out))
            return 1;
        path += l;
        if (*path == ':')
            path++;
    }
    if (outlen)
        out[0] = '\0';
    return 0;
}

int sys_find_beside_self(const char *name, char *out, size_t outlen)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return 0;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    return snprintf(out, outlen, "%s/%s", self, name) < (int)outlen && is_exec(out);
}

int sys_wait_child_ms(pid_t pid, long ms, int *status)
{
    for (long waited = 0;; waited += 10) {
        int st = 0;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            if (status)
                *status = st;
            return 1;
        }
        if (r < 0 && errno == ECHILD)
            return 1;
        if (waited >= ms)
            return 0;
        sys_sleep_ms(10);
    }
}

int sys_reap_child_ms(pid_t pid, long ms, int *status)
{
    if (sys_wait_child_ms(pid, ms, status))
        return 1;
    kill(pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (status)
        *status = st;
    return 0;
}

unsigned long long sys_netns_inode(void)
{
    struct stat st;
    return stat("/proc/self/ns/net", &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

const char *sys_file_type_name(mode_t mode)
{
    switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFIFO: return "a FIFO";
    case S_IFSOCK: return "a socket";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFLNK: return "a symbolic link";
    default: return "not a regular file";
    }
}

int sys_anonymous_pipe(const char *path)
{
    struct statfs fs;
    return statfs(path, &fs) == 0 && fs.f_type == PIPEFS_MAGIC;
}

static int type_ok(const char *path, mode_t mode, int allow_chr)
{
    return S_ISREG(mode) || (allow_chr && (S_ISCHR(mode) || (S_ISFIFO(mode) && sys_anonymous_pipe(path))));
}

int sys_open_regular(const char *path, int flags, mode_t mode, int allow_chr, const char *verb, char *err,
                     size_t errlen)
{
    struct stat st;
    /* the type first: stat never blocks, and a FIFO opened for writing without a reader
     * fails with ENXIO, a message that would not say why (a directory cannot block: open
     * says EISDIR for writing, fstat below for reading) */
    if (stat(path, &st) == 0 && !type_ok(path, st.st_mode, allow_chr) && !S_ISDIR(st.st_mode))
        return err_set(err, errlen, "\"%s\" is %s, not a regular file", path, sys_file_type_name(st.st_mode));
    if (!verb)
        verb = (flags & O_ACCMODE) == O_RDONLY ? "read" : "open";
    /* O_NONBLOCK still, for what the path became in between */
    int fd = open(path, flags | O_NONBLOCK | O_CLOEXEC, mode);
    if (fd < 0)
        return errno == ENXIO ? err_set(err, errlen, "\"%s\" is a FIFO or a device without a peer, not a regular file", path)
                              : err_set(err, errlen, "cannot %s \"%s\": %s", verb, path, strerror(errno));
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        return err_set(err, errlen, "cannot %s \"%s\": %s", verb, path, strerror(e));
    }
    if (!type_ok(path, st.st_mode, allow_chr)) {
        close(fd);
        return err_set(err, errlen, "\"%s\" is %s, not a regular file", path, sys_file_type_name(st.st_mode));
    }
    int fl = fcntl(fd, F_GETFL);
    if (!(flags & O_NONBLOCK) && fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}
