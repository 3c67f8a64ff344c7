/* logfile: see logfile.h. */
#include "logfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "privdrop.h"
#include "sys.h"

static int is_stream(const char *path)
{
    return !path || strcmp(path, "off") == 0 || strcmp(path, "-") == 0;
}

/* The user that will write the log: the configured one when debitd (root) drops to it. */
static int as_user(const struct config *c)
{
    return c->user && geteuid() == 0;
}

/* May the log's writer access PATH with MODE? 1, 0, -1 (err). */
static int writer_access(const struct config *c, const char *path, int mode, char *err, size_t errlen)
{
    if (as_user(c))
        return privdrop_user_access(path, mode, c->uid, c->gid, err, errlen);
    return faccessat(AT_FDCWD, path, mode, AT_EACCESS) == 0;
}

/* "root" or "uid 1234": names only before the identity is pinned (config.h: no name
 * lookup after the privilege drop). */
static const char *owner_name(const struct config *c, uid_t uid, char *buf, size_t len)
{
    struct passwd pw, *res = NULL;
    char pbuf[1024];
    if (!c->ids && getpwuid_r(uid, &pw, pbuf, sizeof pbuf, &res) == 0 && res)
        snprintf(buf, len, "%s (uid %u)", pw.pw_name, (unsigned)uid);
    else
        snprintf(buf, len, "uid %u", (unsigned)uid);
    return buf;
}

static const char *writer_name(const struct config *c, char *buf, size_t len)
{
    if (as_user(c))
        snprintf(buf, len, "user %s (uid %u)", c->user, (unsigned)c->uid);
    else
        snprintf(buf, len, "debitd (uid %u)", (unsigned)geteuid());
    return buf;
}

/* Whom to give the file to, as chown(1) takes it. */
static const char *fix_owner(const struct config *c, char *buf, size_t len)
{
    if (as_user(c))
        snprintf(buf, len, "%s", c->user);
    else
        snprintf(buf, len, "%u", (unsigned)geteuid());
    return buf;
}

int logfile_check(const struct config *c, char *warn, size_t warnlen, char *err, size_t errlen)
{
    if (warn && warnlen)
        warn[0] = 0;
    const char *p = c->access_log;
    if (is_stream(p))
        return 0;
    char where[PATH_MAX + 16], own[160], who[160], fix[80];
    config_place(c, c->access_log_line, where, sizeof where);
    struct stat st = {0};
    if (stat(p, &st) == 0) {
        if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode) && !(S_ISFIFO(st.st_mode) && sys_anonymous_pipe(p)))
            return err_set(err, errlen, "%s: log.access: \"%s\" is %s, not a regular file (or a stream such as "
                           "/dev/stderr)", where, p, sys_file_type_name(st.st_mode));
        int ok = writer_access(c, p, W_OK, err, errlen);
        if (ok < 0)
            return err_prefix(err, errlen, "%s: log.access", where);
        if (!ok)
            return err_set(err, errlen, "%s: log.access: \"%s\" is owned by %s, mode %04o, and %s cannot write "
                           "it, so it could not be reopened (SIGUSR1, a reload)%s: chown %s \"%s\" (or remove it: "
                           "debitd creates it for that user)", where, p, owner_name(c, st.st_uid, own, sizeof own),
                           (unsigned)(st.st_mode & 07777), writer_name(c, who, sizeof who),
                           as_user(c) ? " after the privilege drop" : "", fix_owner(c, fix, sizeof fix), p);
        return 0;
    }
    if (errno != ENOENT)
        return err_set(err, errlen, "%s: log.access: \"%s\": %s", where, p, strerror(errno));
    char copy[PATH_MAX];
    snprintf(copy, sizeof copy, "%s", p);
    const char *dir = dirname(copy);
    int e = stat(dir, &st) < 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
    if (e)
        return err_set(err, errlen, "%s: log.access: cannot open \"%s\": %s", where, p, strerror(e));
    int ok = writer_access(c, dir, W_OK | X_OK, err, errlen);
    if (ok < 0)
        return err_prefix(err, errlen, "%s: log.access", where);
    if (ok)
        return 0;
    /* Root creates it at start and gives it to the user, who must then reach it by name
     * (search permission on the directory) to reopen it; new files after a rotation come
     * from logrotate's `create MODE USER GROUP`. */
    int reach = as_user(c) ? privdrop_user_access(dir, X_OK, c->uid, c->gid, err, errlen) : 0;
    if (reach < 0)
        return err_prefix(err, errlen, "%s: log.access", where);
    if (reach && faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) == 0) {
        if (warn)
            snprintf(warn, warnlen, "%s: log.access: %s cannot create files in %s: debitd creates \"%s\" for "
                     "it at start, but after a rotation the new file must be made for that user (logrotate's "
                     "`create 0640 %s adm`), or SIGUSR1 cannot reopen it", where, writer_name(c, who, sizeof who),
                     dir, p, c->user);
        return 0;
    }
    return err_set(err, errlen, "%s: log.access: cannot create \"%s\": %s cannot %s %s (owned by %s, mode %04o): "
                   "make the directory writable by that user (chown %s \"%s\"), or choose another one",
                   where, p, writer_name(c, who, sizeof who), reach || !as_user(c) ? "create files in" : "even reach",
                   dir, owner_name(c, st.st_uid, own, sizeof own), (unsigned)(st.st_mode & 07777),
                   fix_owner(c, fix, sizeof fix), dir);
}

int logfile_open(const struct config *c, FILE **out, char *err, size_t errlen)
{
    *out = NULL;
    const char *p = c->access_log;
    if (!p || strcmp(p, "off") == 0)
        return 0;
    if (strcmp(p, "-") == 0) {
        *out = stderr;
        return 0;
    }
    char where[PATH_MAX + 16];
    config_place(c, c->access_log_line, where, sizeof where);
    struct stat st;
    int created = stat(p, &st) < 0 && errno == ENOENT;
    int fd = sys_open_regular(p, O_WRONLY | O_APPEND | O_CREAT, 0666, 1, NULL, err, errlen);
    if (fd < 0)
        return err_prefix(err, errlen, "%s: log.access", where);
    /* root creates it for the user it drops to, who must reopen it after a rotation */
    if (created && as_user(c) && fchown(fd, c->uid, c->gid) < 0) {
        int e = errno;
        close(fd);
        return err_set(err, errlen, "%s: log.access: chown \"%s\" to %s: %s", where, p, c->user, strerror(e));
    }
    if (!(*out = fdopen(fd, "a"))) {
        int e = errno;
        close(fd);
        return err_set(err, errlen, "%s: log.access: \"%s\": %s", where, p, strerror(e));
    }
    return 0;
}

int logfile_reopen(const char *path, int fd, char *err, size_t errlen)
{
    int nfd = sys_open_regular(path, O_WRONLY | O_APPEND | O_CREAT, 0666, 1, "reopen", err, errlen);
    if (nfd < 0)
        return err_prefix(err, errlen, "log.access");
    /* dup3 replaces the descriptor the workers write to in one step: a line being written
     * now goes whole to the old file or whole to the new one, and no lock is needed. */
    int r = dup3(nfd, fd, O_CLOEXEC);
    int e = errno;
    close(nfd);
    if (r < 0)
        return err_set(err, errlen, "log.access: reopening \"%s\": %s", path, strerror(e));
    return 0;
}
