/* jsonl: see jsonl.h. A plain fd with O_APPEND: one write(2) per line keeps lines whole
 * even if two measurements share a journal. */
#include "jsonl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"

struct jsonl {
    int fd;
    char *path;
};

struct jsonl *jsonl_open(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        err_set(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct jsonl *j = calloc(1, sizeof *j);
    if (!j || !(j->path = strdup(path))) {
        free(j);
        close(fd);
        err_set(err, errlen, "out of memory");
        return NULL;
    }
    j->fd = fd;
    return j;
}

int jsonl_append(struct jsonl *j, const struct run_result *r, char *err, size_t errlen)
{
    json_t *o = result_to_json(r);
    char *s = o ? json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(10)) : NULL;
    json_decref(o);
    if (!s)
        return err_set(err, errlen, "%s: cannot encode run as JSON", j->path);
    size_t n = strlen(s);
    s[n] = '\n'; /* replaces the terminator: written with its length below */
    size_t off = 0;
    while (off < n + 1) {
        ssize_t w = write(j->fd, s + off, n + 1 - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            err_set(err, errlen, "%s: %s", j->path, strerror(errno));
            free(s);
            return -1;
        }
        off += (size_t)w;
    }
    free(s);
    if (fsync(j->fd) != 0 && errno != EINVAL)
        return err_set(err, errlen, "%s: fsync: %s", j->path, strerror(errno));
    return 0;
}

void jsonl_close(struct jsonl *j)
{
    if (!j)
        return;
    close(j->fd);
    free(j->path);
    free(j);
}
