/* store_spool: see store_spool.h. */
#include "store_spool.h"

#include "err.h"
#include "store_record.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

int store_spool_path(const struct store_spec *spec, char *buf, size_t len, char *err, size_t errlen)
{
    char dir[4000], id[33];
    if (store_data_dir(dir, sizeof dir, err, errlen) != 0)
        return -1;
    store_content_id(spec->target, strlen(spec->target), id);
    int n = snprintf(buf, len, "%s/spool/%.16s.jsonl", dir, id);
    if (n < 0 || (size_t)n >= len)
        return err_set(err, errlen, "spool path too long");
    return 0;
}

int store_spool_append(const char *path, const char *table, json_t *record, char *err, size_t errlen)
{
    json_t *line = json_pack("{s:s, s:O}", "table", table, "record", record);
    char *text = line ? json_dumps(line, JSON_COMPACT) : NULL;
    json_decref(line);
    if (!text)
        return err_set(err, errlen, "out of memory");
    size_t n = strlen(text);
    text[n] = '\n'; /* json_dumps's NUL becomes the line's end */
    /* the folder is made on the first record spooled, not when the spool is named: a store
     * that works never needs it, and the data folder may be unusable (store_spec_writable) */
    if (store_mkdirs(path, err, errlen) != 0) {
        free(text);
        return -1;
    }
    int rc = 0, fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || flock(fd, LOCK_EX) != 0)
        rc = err_set(err, errlen, "%s: %s", path, strerror(errno));
    for (size_t off = 0; rc == 0 && off <= n;) {
        ssize_t w = write(fd, text + off, n + 1 - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            rc = err_set(err, errlen, "%s: %s", path, strerror(errno));
        else
            off += (size_t)w;
    }
    if (rc == 0 && fsync(fd) != 0)
        rc = err_set(err, errlen, "%s: fsync: %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    free(text);
    return rc;
}

struct pending {
    json_t *runs, *invocations; /* arrays of records */
};

/* One spool line into p. A line that is not a record (a torn last line of a crash) is
 * skipped: it was never acknowledged as spooled. */
static void take_line(struct pending *p, const char *line)
{
    json_t *o = json_loads(line, 0, NULL);
    const char *table = json_string_value(json_object_get(o, "table"));
    json_t *rec = json_object_get(o, "record");
    if (table && json_is_object(rec))
        json_array_append(strcmp(table, "runs") == 0 ? p->runs : p->invocations, rec);
    json_decref(o);
}

static long insert_array(struct store *st, const char *table, json_t *arr, char *err, size_t errlen)
{
    size_t n = json_array_size(arr);
    json_t **recs = calloc(n + 1, sizeof *recs);
    if (!recs)
        return err_set(err, errlen, "out of memory");
    for (size_t i = 0; i < n; i++)
        recs[i] = json_array_get(arr, i);
    long rc = store_insert(st, table, recs, n, err, errlen);
    free(recs);
    return rc;
}

long store_spool_flush(const char *path, struct store *st, char *err, size_t errlen)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        /* none yet; or a non-folder in the data folder's place, where none can be */
        return errno == ENOENT || errno == ENOTDIR ? 0 : err_set(err, errlen, "%s: %s", path, strerror(errno));
    FILE *f = NULL;
    if (flock(fd, LOCK_EX) != 0 || !(f = fdopen(dup(fd), "r"))) {
        err_set(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    struct pending p = {json_array(), json_array()};
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) > 0)
        take_line(&p, line);
    free(line);
    fclose(f);
    long held = (long)(json_array_size(p.runs) + json_array_size(p.invocations)), rc = held;
    if (insert_array(st, "runs", p.runs, err, errlen) < 0 ||
        insert_array(st, "invocations", p.invocations, err, errlen) < 0)
        rc = -1;
    else if (held && (ftruncate(fd, 0) != 0 || fsync(fd) != 0))
        rc = err_set(err, errlen, "%s: %s", path, strerror(errno));
    json_decref(p.runs);
    json_decref(p.invocations);
    close(fd);
    return rc;
}
