/* summary: see summary.h. */
#include "summary.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "labels.h"
#include "verdict.h"

static int same_cell(const struct run_result *a, const struct server_summary *s)
{
    return labels_same(a->scenario, s->scenario) && labels_same(a->variant, s->variant);
}

/* A run's receiver RTTs in ms, NAN where its "tcp" JSON has null (no sample; min_rtt
 * unknown before Linux 4.6 or before the first RTT sample). */
static double rtt_ms(const struct run_result *r)
{
    return r->tcp.have ? r->tcp.rtt_us / 1000.0 : NAN;
}

static double min_rtt_ms(const struct run_result *r)
{
    return (r->tcp.have & TCP_INFO_HAVE_MIN_RTT) && r->tcp.min_rtt_us ? r->tcp.min_rtt_us / 1000.0 : NAN;
}

/* Successful averages of one group into a new array (caller frees). */
static double *group_values(const struct result_set *rs, const struct server_summary *g, size_t *n,
                            size_t field)
{
    double *v = malloc((rs->n ? rs->n : 1) * sizeof *v);
    *n = 0;
    if (!v)
        return NULL;
    for (size_t i = 0; i < rs->n; i++) {
        const struct run_result *r = rs->runs[i];
        if (!r->ok || !same_cell(r, g) || strcmp(r->server, g->server) != 0)
            continue;
        double x;
        switch (field) {
        case 0: x = r->avg_mbps; break;
        case 1: x = r->total_mbps; break;
        case 2: x = r->slow_start_s >= 0 ? r->slow_start_s : NAN; break;
        case 3: x = rtt_ms(r); break;
        case 4: x = min_rtt_ms(r); break;
        default: x = r->predicted_mbps; break;
        }
        if (!isnan(x))
            v[(*n)++] = x;
    }
    return v;
}

static double median_of(const struct result_set *rs, const struct server_summary *g, size_t field)
{
    size_t n;
    double *v = group_values(rs, g, &n, field);
    double m = v ? stats_median(v, n) : NAN;
    free(v);
    return m;
}

static int verdict_index(const char *name)
{
    for (int k = VERDICT_NETWORK; k <= VERDICT_UNKNOWN; k++)
        if (name && strcmp(name, verdict_name((enum verdict_kind)k)) == 0)
            return k;
    return VERDICT_UNKNOWN;
}

/* g's limited_by from its runs' verdicts (summary.h says how a tie goes) and the median
 * of their predictions. */
static void summary_verdict(const struct result_set *rs, struct server_summary *g)
{
    g->median_predicted_mbps = median_of(rs, g, 5);
    g->verdict_run = SIZE_MAX;
    for (size_t i = 0; i < rs->n; i++) {
        const struct run_result *r = rs->runs[i];
        if (r->ok && same_cell(r, g) && strcmp(r->server, g->server) == 0)
            g->verdict_runs[verdict_index(r->limited_by)]++;
    }
    unsigned best = 0;
    for (int k = VERDICT_NETWORK; k <= VERDICT_UNKNOWN; k++)
        best = g->verdict_runs[k] > best ? g->verdict_runs[k] : best;
    if (!best)
        return;
    int pick = -1, tied = 0;
    for (int k = VERDICT_NETWORK; k <= VERDICT_UNKNOWN; k++)
        if (g->verdict_runs[k] == best) {
            tied++;
            if (pick < 0)
                pick = k;
        }
    if (tied > 1 && g->median_run != SIZE_MAX) {
        int m = verdict_index(rs->runs[g->median_run]->limited_by);
        if (g->verdict_runs[m] == best)
            pick = m;
    }
    g->limited_by = verdict_name((enum verdict_kind)pick);
    g->limited_by_runs = best;
    g->limited_by_tie = tied > 1;
    double gap = INFINITY;
    for (size_t i = 0; i < rs->n; i++) {
        const struct run_result *r = rs->runs[i];
        if (r->ok && same_cell(r, g) && strcmp(r->server, g->server) == 0 && verdict_index(r->limited_by) == pick &&
            fabs(r->avg_mbps - g->median_mbps) < gap) {
            gap = fabs(r->avg_mbps - g->median_mbps);
            g->verdict_run = i;
        }
    }
}

int summary_compute(const struct result_set *rs, const struct plan_server *names, size_t nnames, struct summary *out)
{
    *out = (struct summary){0};
    out->rows = calloc(rs->n + nnames + 1, sizeof *out->rows);
    if (!out->rows)
        return -1;
    for (size_t i = 0; i < nnames; i++) {
        out->rows[out->n].server = names[i].name;
        out->rows[out->n].url = names[i].url;
        out->rows[out->n].median_run = SIZE_MAX;
        out->rows[out->n].verdict_run = SIZE_MAX;
        out->n++;
    }
    for (size_t i = 0; i < rs->n; i++) {
        const struct run_result *r = rs->runs[i];
        struct server_summary *g = NULL;
        for (size_t k = 0; k < out->n; k++)
            if (same_cell(r, &out->rows[k]) && strcmp(out->rows[k].server, r->server) == 0)
                g = &out->rows[k];
        if (!g) {
            g = &out->rows[out->n++];
            g->server = r->server;
            g->scenario = r->scenario;
            g->variant = r->variant;
            g->median_run = SIZE_MAX;
            g->verdict_run = SIZE_MAX;
        }
        g->url = r->url;
        if (r->ok)
            g->runs_ok++;
        else
            g->runs_failed++;
        if (r->ok && r->duration_short)
            g->duration_short_runs++;
    }
    for (size_t k = 0; k < out->n; k++) {
        struct server_summary *g = &out->rows[k];
        size_t n;
        double *v = group_values(rs, g, &n, 0);
        if (!v) {
            summary_free(out); /* the caller frees nothing on failure */
            return -1;
        }
        g->median_mbps = stats_median(v, n);
        g->min_mbps = stats_min(v, n);
        g->max_mbps = stats_max(v, n);
        g->q1_mbps = stats_quantile(v, n, 0.25);
        g->q3_mbps = stats_quantile(v, n, 0.75);
        free(v);
        g->median_total_mbps = median_of(rs, g, 1);
        g->median_slow_start_s = median_of(rs, g, 2);
        g->median_rtt_ms = median_of(rs, g, 3);
        g->median_min_rtt_ms = median_of(rs, g, 4);
        double best = INFINITY;
        for (size_t i = 0; i < rs->n; i++) {
            const struct run_result *r = rs->runs[i];
            if (r->ok && same_cell(r, g) && strcmp(r->server, g->server) == 0 &&
                fabs(r->avg_mbps - g->median_mbps) < best) {
                best = fabs(r->avg_mbps - g->median_mbps);
                g->median_run = i;
            }
        }
    }
    for (size_t k = 0; k < out->n; k++)
        summary_verdict(rs, &out->rows[k]);
    /* Comparisons against the first server of each cell. */
    for (size_t k = 0; k < out->n; k++) {
        struct server_summary *g = &out->rows[k];
        struct server_summary *ref = NULL;
        for (size_t j = 0; j < k && !ref; j++)
            if (labels_same(out->rows[j].scenario, g->scenario) && labels_same(out->rows[j].variant, g->variant))
                ref = &out->rows[j];
        if (!ref) {
            g->is_reference = 1;
            continue;
        }
        size_t na, nb;
        double *a = group_values(rs, ref, &na, 0);
        double *b = group_values(rs, g, &nb, 0);
        if (a && b && na > 0 && nb > 0 && ref->median_mbps > 0) {
            g->ratio = g->median_mbps / ref->median_mbps;
            if (stats_bootstrap_ratio_ci(a, na, b, nb, SUMMARY_BOOTSTRAP_RESAMPLES, SUMMARY_CI_LEVEL,
                                         SUMMARY_BOOTSTRAP_SEED, &g->ci_lo, &g->ci_hi) != 0)
                g->ci_lo = g->ci_hi = NAN;
            /* A bootstrap of one value resamples it to itself: a zero-width "interval". */
            if (na < 2 || nb < 2)
                g->ci_lo = g->ci_hi = NAN;
            if (stats_mann_whitney(b, nb, a, na, &g->mw) == 0)
                g->has_comparison = 1;
        }
        free(a);
        free(b);
    }
    return 0;
}

void summary_free(struct summary *s)
{
    if (!s)
        return;
    free(s->rows);
    s->rows = NULL;
    s->n = 0;
}

const char *summary_footnotes(const struct summary *s, char *buf, size_t len)
{
    int ci = 0, ss = 0, dur = 0;
    for (size_t k = 0; k < s->n; k++) {
        const struct server_summary *g = &s->rows[k];
        ci |= g->has_comparison && !isfinite(g->ci_lo);
        ss |= g->runs_ok > 0 && !isfinite(g->median_slow_start_s);
        dur |= g->duration_short_runs > 0;
    }
    snprintf(buf, len, "%s%s%s%s%s", ci ? SUMMARY_CI_NOTE : "", ci && ss ? "\n" : "", ss ? SUMMARY_SLOW_START_NOTE : "",
             (ci || ss) && dur ? "\n" : "", dur ? SUMMARY_DURATION_NOTE : "");
    return buf;
}

#define METHOD_DOWN "avg = body bytes / (last byte - end of headers), as wget"
#define METHOD_UP "upload avg = body bytes / (the server's response - the first body byte sent)"
#define METHOD_REST                                                                                          \
    "; median of successful runs; "                                                                          \
    "ratio = median / first server's median, 95% CI by percentile bootstrap "                                \
    "(10000 resamples, seed 1); p = two-sided Mann-Whitney U (exact without ties for n <= 50, "              \
    "else normal approximation with tie and continuity correction); "                                        \
    "slow start = first 100 ms interval reaching 90% of the run's peak"

const char *summary_method_note(int downloads, int uploads)
{
    if (uploads && downloads)
        return METHOD_DOWN "; " METHOD_UP METHOD_REST;
    if (uploads)
        return METHOD_UP METHOD_REST;
    return METHOD_DOWN METHOD_REST;
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *summary_to_json(const struct summary *s)
{
    json_t *a = json_array();
    for (size_t k = 0; k < s->n; k++) {
        const struct server_summary *g = &s->rows[k];
        json_t *o = json_object();
        result_cell_json(o, g->server, g->url, g->scenario, g->variant);
        json_object_set_new(o, "runs_ok", json_integer(g->runs_ok));
        json_object_set_new(o, "runs_failed", json_integer(g->runs_failed));
        if (g->duration_short_runs)
            json_object_set_new(o, "duration_short_runs", json_integer(g->duration_short_runs));
        json_object_set_new(o, "median_mbps", num(g->median_mbps));
        json_object_set_new(o, "min_mbps", num(g->min_mbps));
        json_object_set_new(o, "max_mbps", num(g->max_mbps));
        json_object_set_new(o, "q1_mbps", num(g->q1_mbps));
        json_object_set_new(o, "q3_mbps", num(g->q3_mbps));
        json_object_set_new(o, "median_total_mbps", num(g->median_total_mbps));
        json_object_set_new(o, "median_slow_start_s", num(g->median_slow_start_s));
        json_object_set_new(o, "median_rtt_ms", num(g->median_rtt_ms));
        json_object_set_new(o, "median_min_rtt_ms", num(g->median_min_rtt_ms));
        json_object_set_new(o, "limited_by", g->limited_by ? json_string(g->limited_by) : json_null());
        json_t *vr = json_object();
        for (int v = VERDICT_NETWORK; v <= VERDICT_UNKNOWN; v++)
            if (g->verdict_runs[v])
                json_object_set_new(vr, verdict_name((enum verdict_kind)v), json_integer(g->verdict_runs[v]));
        json_object_set_new(o, "limited_by_runs", vr);
        if (g->limited_by_tie)
            json_object_set_new(o, "limited_by_tie", json_true());
        json_object_set_new(o, "predicted_mbps", num(g->median_predicted_mbps));
        if (g->has_comparison) {
            json_object_set_new(o, "ratio", num(g->ratio));
            if (isfinite(g->ci_lo))
                json_object_set_new(o, "ratio_ci95", json_pack("[o, o]", num(g->ci_lo), num(g->ci_hi)));
            else
                json_object_set_new(o, "ratio_ci95", json_null());
            if (!isfinite(g->ci_lo))
                json_object_set_new(o, "ratio_ci95_note", json_string(SUMMARY_CI_NOTE));
            json_object_set_new(o, "mann_whitney_u", num(g->mw.u1));
            json_object_set_new(o, "p_value", num(g->mw.p));
            json_object_set_new(o, "p_method", json_string(stats_mw_method_name(g->mw.method)));
            json_object_set_new(o, "p_min", num(g->mw.p_min));
            json_object_set_new(o, "p_n_too_small", json_boolean(g->mw.p_min >= STATS_ALPHA));
        }
        json_array_append_new(a, o);
    }
    return a;
}
