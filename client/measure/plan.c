/* plan: see plan.h. */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "stats.h"
#include "sys.h"

static const char *const order_names[] = {
    [PLAN_ORDER_ALTERNATE] = "alternate",
    [PLAN_ORDER_SEQUENTIAL] = "sequential",
    [PLAN_ORDER_RANDOM] = "random",
};

int plan_order_parse(const char *s, enum plan_order *o)
{
    for (size_t i = 0; i < ARRAY_SIZE(order_names); i++) {
        if (strcmp(s, order_names[i]) == 0) {
            *o = (enum plan_order)i;
            return 0;
        }
    }
    return -1;
}

const char *plan_order_name(enum plan_order o)
{
    return (unsigned)o < ARRAY_SIZE(order_names) ? order_names[o] : "?";
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
    for (long left = (long)(s * 1000 + 0.5); left > 0 && !(stop && *stop); left -= 100)
        sys_sleep_ms(left < 100 ? left : 100);
}

enum plan_status plan_execute(const struct plan *p, struct result_set *rs, const struct plan_hooks *hooks)
{
    size_t total;
    struct plan_step *st = plan_steps(p, &total);
    if (!st)
        return PLAN_FAILED;
    struct dl_hooks dh = {
        .progress = hooks ? hooks->progress : NULL,
        .interval = hooks ? hooks->interval : NULL,
        .ud = hooks ? hooks->ud : NULL,
        .stop = hooks ? hooks->stop : NULL,
    };
    enum plan_status rc = PLAN_DONE;
    for (size_t i = 0; i < total; i++) {
        if (dh.stop && *dh.stop) {
            rc = PLAN_STOPPED;
            break;
        }
        if (i > 0 && p->pause_s > 0) {
            pause_for(p->pause_s, dh.stop);
            if (dh.stop && *dh.stop) {
                rc = PLAN_STOPPED;
                break;
            }
        }
        const struct plan_server *sv = &p->servers[st[i].server];
        if (hooks && hooks->run_start)
            hooks->run_start(p, i, total, &st[i], hooks->ud);
        struct run_result *r = result_new();
        if (!r) {
            rc = PLAN_FAILED;
            break;
        }
        r->server = strdup(sv->name);
        r->url = strdup(sv->url);
        r->scenario = p->scenario ? strdup(p->scenario) : NULL;
        r->variant = p->variant ? strdup(p->variant) : NULL;
        /* Reports compare these strings: a run without them cannot be kept. */
        if (!r->server || !r->url || (p->scenario && !r->scenario) || (p->variant && !r->variant)) {
            result_free(r);
            rc = PLAN_FAILED;
            break;
        }
        r->run = st[i].run;
        r->seq = (unsigned)rs->n + 1;
        /* A scenario file can mix directions: a server's own upload size wins. */
        struct dl_options dl = *p->dl;
        if (sv->upload) {
            dl.upload = sv->upload;
            dl.max_bytes = 0;
        }
        if (sv->family)
            dl.ip_version = sv->family;
        dl_perform(sv->url, &dl, &dh, r);
        if (r->err == RESULT_ERR_INTERRUPTED) {
            result_free(r);
            rc = PLAN_STOPPED;
            break;
        }
        if (result_set_add(rs, r) != 0) {
            rc = PLAN_FAILED;
            break;
        }
        if (hooks && hooks->run_done)
            hooks->run_done(p, r, i, total, hooks->ud);
    }
    free(st);
    return rc;
}
