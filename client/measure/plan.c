/* plan: see plan.h. */
#include "plan.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "server_record.h"
#include "stats.h"

static const char *const order_names[] = {"alternate", "sequential", "random"};

int plan_order_parse(const char *s, enum plan_order *o)
{
    for (int i = 0; i < 3; i++) {
        if (strcmp(s, order_names[i]) == 0) {
            *o = (enum plan_order)i;
            return 0;
        }
    }
    return -1;
}

const char *plan_order_name(enum plan_order o)
{
    return (unsigned)o < 3 ? order_names[o] : "?";
}

struct plan_step *plan_steps(const struct plan *p, size_t *n)
{
    size_t total = p->nservers * p->runs;
    *n = total;
    struct plan_step *st = calloc(total ? total : 1, sizeof *st);
    if (!st)
        return NULL;
    size_t k = 0;
    if (p->order == PLAN_ORDER_SEQUENTIAL) {
        for (size_t s = 0; s < p->nservers; s++)
            for (unsigned r = 1; r <= p->runs; r++)
                st[k++] = (struct plan_step){s, r};
        return st;
    }
    for (unsigned r = 1; r <= p->runs; r++)
        for (size_t s = 0; s < p->nservers; s++)
            st[k++] = (struct plan_step){s, r};
    if (p->order == PLAN_ORDER_RANDOM && total > 1) {
        uint64_t rng = p->seed;
        for (size_t i = total - 1; i > 0; i--) {
            size_t j = (size_t)stats_rand_below(&rng, i + 1);
            struct plan_step t = st[i];
            st[i] = st[j];
            st[j] = t;
        }
        /* Renumber so that each server's runs count up in the order they happen. */
        unsigned *next = calloc(p->nservers, sizeof *next);
        if (!next) {
            free(st);
            return NULL;
        }
        for (size_t i = 0; i < total; i++)
            st[i].run = ++next[st[i].server];
        free(next);
    }
    return st;
}

/* Sleep up to s seconds, waking early when *stop is set. */
static void pause_for(double s, volatile sig_atomic_t *stop)
{
    while (s > 0 && !(stop && *stop)) {
        double d = s < 0.1 ? s : 0.1;
        struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR && !(stop && *stop))
            ;
        s -= d;
    }
}

int plan_execute(const struct plan *p, struct result_set *rs, const struct plan_hooks *hooks)
{
    size_t total;
    struct plan_step *st = plan_steps(p, &total);
    if (!st)
        return -1;
    struct dl_hooks dh = {
        .progress = hooks ? hooks->progress : NULL,
        .ud = hooks ? hooks->ud : NULL,
        .stop = hooks ? hooks->stop : NULL,
    };
    int rc = 0;
    for (size_t i = 0; i < total; i++) {
        if (dh.stop && *dh.stop) {
            rc = 1;
            break;
        }
        if (i > 0 && p->pause_s > 0) {
            pause_for(p->pause_s, dh.stop);
            if (dh.stop && *dh.stop) {
                rc = 1;
                break;
            }
        }
        const struct plan_server *sv = &p->servers[st[i].server];
        if (hooks && hooks->run_start)
            hooks->run_start(p, i, total, &st[i], hooks->ud);
        struct run_result *r = result_new();
        if (!r) {
            rc = -1;
            break;
        }
        r->server = strdup(sv->name);
        r->url = strdup(sv->url);
        r->scenario = p->scenario ? strdup(p->scenario) : NULL;
        r->variant = p->variant ? strdup(p->variant) : NULL;
        /* Reports compare these strings: a run without them cannot be kept. */
        if (!r->server || !r->url || (p->scenario && !r->scenario) || (p->variant && !r->variant)) {
            result_free(r);
            rc = -1;
            break;
        }
        r->run = st[i].run;
        r->seq = (unsigned)rs->n + 1;
        dl_perform(sv->url, p->dl, &dh, r);
        if (r->err == RESULT_ERR_INTERRUPTED) {
            result_free(r);
            rc = 1;
            break;
        }
        if (r->ok) {
            /* After the timed download, so the extra request never disturbs a measurement. */
            char err[512];
            if (server_record_fetch(r, p->dl, err, sizeof err) < 0)
                r->server_record_error = strdup(err);
        }
        if (result_set_add(rs, r) != 0) {
            rc = -1;
            break;
        }
        if (hooks && hooks->run_done)
            hooks->run_done(p, r, i, total, hooks->ud);
    }
    free(st);
    return rc;
}
