/* outfile: see outfile.h. */
#include "outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"

enum target { TARGET_REPLACE, TARGET_DIRECT, TARGET_DIR };

/* What path names: a directory, something written directly, or a file to replace (which
 * is the symlink's target when path is a link: replaced there, the link kept). */
static enum target classify(const char *path, char *replace, size_t len)
{
    struct stat st;
    snprintf(replace, len, "%s", path);
    if (stat(path, &st) != 0) /* not there, or a dangling link: created where it points */
        return TARGET_REPLACE;
    if (S_ISDIR(st.st_mode))
        return TARGET_DIR;
    if (!S_ISREG(st.st_mode))
        return TARGET_DIRECT;
    char *real = realpath(path, NULL);
    if (real && strlen(real) < len)
        snprintf(replace, len, "%s", real);
    free(real);
    return TARGET_REPLACE;
}

FILE *outfile_open(struct outfile *o, const char *path, char *err, size_t errlen)
{
    memset(o, 0, sizeof *o);
    snprintf(o->path, sizeof o->path, "%s", path);
    char replace[PATH_MAX];
    switch (classify(path, replace, sizeof replace)) {
    case TARGET_DIR:
        err_set(err, errlen, "%s: %s", path, strerror(EISDIR));
        return NULL;
    case TARGET_DIRECT:
        o->direct = 1;
        o->fp = fopen(path, "w");
        if (!o->fp)
            err_set(err, errlen, "%s: %s", path, strerror(errno));
        else
            snprintf(o->fd_path, sizeof o->fd_path, "/dev/fd/%d", fileno(o->fp));
        return o->fp;
    case TARGET_REPLACE:
        break;
    }
    FILE *fp = sys_atomic_open(&o->a, replace, 0644, err, errlen);
    if (!fp && strcmp(replace, path) != 0)
        err_prefix(err, errlen, "%s", path);
    return fp;
}

const char *outfile_write_path(const struct outfile *o)
{
    return o->direct ? o->fd_path : o->a.tmp;
}

int outfile_commit(struct outfile *o, char *err, size_t errlen)
{
    if (!o->direct)
        return sys_atomic_commit(&o->a, err, errlen);
    if (!o->fp)
        return err_set(err, errlen, "%s: not open", o->path);
    int bad = ferror(o->fp) || fflush(o->fp) != 0;
    int e = errno ? errno : EIO;
    if (fclose(o->fp) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    o->fp = NULL;
    return bad ? err_set(err, errlen, "%s: %s", o->path, strerror(e)) : 0;
}

void outfile_abort(struct outfile *o)
{
    if (o->direct && o->fp)
        fclose(o->fp);
    o->fp = NULL;
    if (!o->direct)
        sys_atomic_abort(&o->a);
}

int outfile_check(const char *path, char *err, size_t errlen)
{
    char replace[PATH_MAX];
    switch (classify(path, replace, sizeof replace)) {
    case TARGET_DIR:
        return err_set(err, errlen, "%s: %s", path, strerror(EISDIR));
    case TARGET_DIRECT:
        /* opening a FIFO to check would wait for its reader: the permission is enough */
        return access(path, W_OK) == 0 ? 0 : err_set(err, errlen, "%s: %s", path, strerror(errno));
    case TARGET_REPLACE:
        break;
    }
    return sys_atomic_check(replace, err, errlen);
}
