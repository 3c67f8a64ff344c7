/* store_session: see store_session.h. */
#include "store_session.h"

#include "err.h"
#include "store_record.h"
#include "store_spool.h"
#include "sys.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct store_session {
    struct store_spec spec;
    struct store *st; /* NULL once the store failed: the rest is spooled */
    struct store_context ctx;
    char id[33];
    char kernel[256];
    char offloads[1024];
    char spool[PATH_MAX];
    char error[1024];
    char *argv;
    double started_at;
    long flushed, spooled, runs, runs_ok;
};

static char *join_args(int argc, char *const *argv)
{
    size_t len = 1;
    for (int i = 0; i < argc; i++)
        len += strlen(argv[i]) + 1;
    char *s = calloc(1, len);
    for (int i = 0; s && i < argc; i++) {
        if (i)
            strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}

struct store_session *store_session_begin(const struct store_spec *spec, const char *vantage, int argc,
                                          char *const *argv, char *err, size_t errlen)
{
    struct store_session *s = calloc(1, sizeof *s);
    if (!s || !(s->argv = join_args(argc, argv)) || store_new_id(s->id, err, errlen) != 0) {
        if (s)
            free(s->argv);
        free(s);
        if (!s)
            err_set(err, errlen, "out of memory");
        return NULL;
    }
    s->spec = *spec;
    s->started_at = sys_wall_s();
    store_kernel(s->kernel, sizeof s->kernel);
    store_offloads(s->offloads, sizeof s->offloads);
    s->ctx = (struct store_context){.invocation_id = s->id, .vantage = vantage, .kernel = s->kernel};
    if (store_spool_path(spec, s->spool, sizeof s->spool, err, errlen) != 0) {
        store_session_free(s);
        return NULL;
    }
    if (spec->kind == STORE_SQLITE && store_mkdirs(spec->target, s->error, sizeof s->error) != 0)
        return s;
    s->st = store_open(spec, s->error, sizeof s->error);
    if (!s->st)
        return s;
    s->flushed = store_spool_flush(s->spool, s->st, s->error, sizeof s->error);
    if (s->flushed < 0) {
        /* The spool stays; so that its order is kept, this session's runs join it. */
        err_prefix(s->error, sizeof s->error, "writing the spool %s", s->spool);
        store_close(s->st);
        s->st = NULL;
        s->flushed = 0;
    }
    return s;
}

/* Into the store while it works, else into the spool. */
static enum store_put put(struct store_session *s, const char *table, json_t *rec, char *err, size_t errlen)
{
    if (s->st && store_insert(s->st, table, &rec, 1, s->error, sizeof s->error) >= 0)
        return STORE_PUT_STORED;
    if (s->st) {
        store_close(s->st);
        s->st = NULL;
    }
    if (store_spool_append(s->spool, table, rec, err, errlen) != 0)
        return STORE_PUT_LOST;
    s->spooled++;
    return STORE_PUT_SPOOLED;
}

enum store_put store_session_run(struct store_session *s, json_t *run, char *err, size_t errlen)
{
    char id[33], offl[sizeof s->offloads];
    if (store_new_id(id, err, errlen) != 0)
        return STORE_PUT_LOST;
    /* Read per run: a scenario variant changes offloads between cells. */
    store_offloads(offl, sizeof offl);
    json_t *rec = store_record_run(run, &s->ctx, id, offl[0] ? offl : NULL, err, errlen);
    if (!rec)
        return STORE_PUT_LOST;
    s->runs++;
    if (json_is_true(json_object_get(run, "ok")))
        s->runs_ok++;
    enum store_put p = put(s, "runs", rec, err, errlen);
    json_decref(rec);
    return p;
}

enum store_put store_session_end(struct store_session *s, json_t *summary, char *err, size_t errlen)
{
    json_t *rec = store_record_invocation(&s->ctx, s->started_at, sys_wall_s(), s->offloads[0] ? s->offloads : NULL,
                                          s->argv, s->runs, s->runs_ok, summary);
    if (!rec) {
        err_set(err, errlen, "out of memory");
        return STORE_PUT_LOST;
    }
    enum store_put p = put(s, "invocations", rec, err, errlen);
    json_decref(rec);
    return p;
}

void store_session_free(struct store_session *s)
{
    if (!s)
        return;
    store_close(s->st);
    free(s->argv);
    free(s);
}

long store_session_flushed(const struct store_session *s)
{
    return s->flushed;
}

long store_session_spooled(const struct store_session *s)
{
    return s->spooled;
}

const char *store_session_spool_path(const struct store_session *s)
{
    return s->spool;
}

const char *store_session_error(const struct store_session *s)
{
    return s->st ? "" : s->error;
}

const char *store_session_id(const struct store_session *s)
{
    return s->id;
}
