/* http_metrics: GET /metrics: the allow list (metrics.allow), then the counters of
 * metrics.c with what the rest of the server knows now (connections, uploads, refusals,
 * each listener's TCP profile, acceptor counters and interface offloads, read as /status
 * reads them). */
#include "http_metrics.h"
#include "http_reply.h"
#include "http_status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "speedtest.h"
#include "refusal_log.h"
#include "units.h"

#define MAX_OFFLOAD_SAMPLES (CONFIG_MAX_LISTENERS * 8)

/* As X-Debit-Tcp and /status say it (http_listener_tcp, tcp_profile_words). */
static void tcp_view(const struct listener *l, struct metrics_tcp *t, struct tcp_profile_words *x)
{
    struct tcp_profile shown;
    http_listener_tcp(l, &shown);
    tcp_profile_words(&shown, x);
    *t = (struct metrics_tcp){l->name, x->cc, x->pacing, x->sndbuf, x->notsent_lowat};
}

/* The listeners' offload samples from /status's listener objects (J), once per interface. */
static size_t offload_view(json_t *const *j, size_t n, struct metrics_offload *out, size_t max)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_object_get(j[i], "offload");
        const char *ifname = json_string_value(json_object_get(o, "interface"));
        if (!ifname)
            continue;
        int seen = 0;
        for (size_t p = 0; p < k && !seen; p++)
            seen = strcmp(out[p].interface, ifname) == 0;
        const char *key;
        json_t *v;
        json_object_foreach(o, key, v)
            if (!seen && json_is_boolean(v) && k < max) /* features; null = not reported */
                out[k++] = (struct metrics_offload){ifname, key, json_is_true(v)};
    }
    return k;
}

static enum MHD_Result render(struct listener *l, struct MHD_Connection *conn)
{
    struct server *s = l->srv;
    const struct config *c = s->snap->cfg;
    size_t nl = s->n_listeners;
    const char **lnames = calloc(nl + 1, sizeof *lnames);
    const char **fnames = calloc(c->n_files + 1, sizeof *fnames);
    json_t **lj = calloc(nl + 1, sizeof *lj);
    struct metrics_tcp *tcp = calloc(nl + 1, sizeof *tcp);
    struct tcp_profile_words *tt = calloc(nl + 1, sizeof *tt);
    struct metrics_offload *off = calloc(MAX_OFFLOAD_SAMPLES, sizeof *off);
    struct metrics_accept *acc = calloc(nl + 1, sizeof *acc);
    char *body = NULL;
    size_t len = 0;
    FILE *out = NULL;
    int ok = 0;
    if (!lnames || !fnames || !lj || !tcp || !tt || !off || !acc)
        goto done;
    for (size_t i = 0; i < nl; i++) {
        lnames[i] = s->listeners[i].name;
        lj[i] = http_listener_json(&s->listeners[i], 1);
        tcp_view(&s->listeners[i], &tcp[i], &tt[i]);
        struct acceptor_stats as; /* as /status listeners[].accept */
        acceptor_stats(s->listeners[i].acceptor, &as);
        acc[i] = (struct metrics_accept){lnames[i], as.accepted, as.refused, as.at_limit, as.errors, as.open};
    }
    for (size_t i = 0; i < c->n_files; i++)
        fnames[i] = c->files[i].path;
    const char *rnames[REFUSAL_N];
    uint64_t refusals[REFUSAL_N];
    for (int r = 0; r < REFUSAL_N; r++) {
        rnames[r] = refusal_reason_name((enum refusal_reason)r);
        refusals[r] = watchdog_total(s->watchdog, (enum refusal_reason)r);
    }
    const char *st_labels[2 * (SPEEDTEST_N_ENDPOINTS - 1)];
    for (int e = 1; e < SPEEDTEST_N_ENDPOINTS; e++) { /* row e - 1 (http_speedtest.c) */
        st_labels[2 * (e - 1)] = speedtest_protocol_name(speedtest_protocol_of((enum speedtest_endpoint)e));
        st_labels[2 * (e - 1) + 1] = speedtest_endpoint_name((enum speedtest_endpoint)e);
    }
    struct metrics_view v = {
        .version = DEBIT_VERSION, .listeners = lnames, .n_listeners = nl, .files = fnames,
        .n_files = c->n_files, .uptime_s = server_uptime(s),
        .refusal_names = rnames, .refusals = refusals,
        .n_refusals = REFUSAL_N, .offload = off, .n_offload = offload_view(lj, nl, off, MAX_OFFLOAD_SAMPLES),
        .tcp = tcp, .n_tcp = nl, .accept = acc, .n_accept = nl, .config_generation = s->reload.generation,
        .reloads_ok = s->reload.ok, .reloads_refused = s->reload.refused,
        .speedtest_labels = st_labels, .n_speedtest = SPEEDTEST_N_ENDPOINTS - 1,
    };
    struct quota_stats qs;
    quota_stats(s->quota, &qs);
    v.quota_entries = qs.entries, v.quota_capacity = qs.capacity, v.quota_overflow = qs.overflow;
    struct cpu_budget_view cv;
    cpu_budget_read(s->cpu, 1, &cv);
    v.cpu_quota_ratio = cv.found && cv.quota_pct >= 0 ? cv.quota_pct / 100 : -1;
    v.have_cpu_stat = cv.have_stat;
    v.cpu_throttled_s = (double)cv.stat.throttled_ns / 1e9;
    v.cpu_nr_throttled = cv.stat.nr_throttled;
    if (!(out = open_memstream(&body, &len)))
        goto done;
    ok = metrics_render(s->metrics, &s->counters, &v, out) == 0;
    ok &= fclose(out) == 0;
done:
    for (size_t i = 0; lj && i < nl; i++)
        json_decref(lj[i]);
    free(lnames);
    free(fnames);
    free(lj);
    free(tcp);
    free(tt);
    free(off);
    free(acc);
    if (!ok) {
        free(body);
        return http_reply_text(l, conn, 500, NULL, NULL);
    }
    return http_reply_buffer(l, conn, 200, body, len, "text/plain; version=0.0.4; charset=utf-8");
}

enum MHD_Result http_metrics(struct listener *l, struct MHD_Connection *conn)
{
    const struct config *c = l->srv->snap->cfg;
    if (!c->metrics.enabled) /* as if there were no such page */
        return http_reply_text(l, conn, 404, NULL, NULL);
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (!ci || !acl_match(&c->metrics.allow, ci->client_addr))
        return http_reply_text(l, conn, 403, NULL, NULL);
    return render(l, conn);
}
