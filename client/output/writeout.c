/* writeout: see writeout.h. The format is parsed once (at option time, so an unknown
 * variable is a usage error before any download) into literal pieces and variables. */
#include "writeout.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "err.h"
#include "stats.h"

enum wo_var {
    /* Per summary row. */
    WO_SERVER,
    WO_URL,
    WO_SCENARIO,
    WO_VARIANT,
    WO_RUNS_OK,
    WO_RUNS_FAILED,
    WO_MEDIAN_MBPS,
    WO_MIN_MBPS,
    WO_MAX_MBPS,
    WO_Q1_MBPS,
    WO_Q3_MBPS,
    WO_MEDIAN_TOTAL_MBPS,
    WO_MEDIAN_SLOW_START_S,
    WO_MEDIAN_RTT_MS,
    WO_MEDIAN_MIN_RTT_MS,
    WO_RATIO,
    WO_CI95_LOW,
    WO_CI95_HIGH,
    WO_P_VALUE,
    WO_P_METHOD,
    WO_LIMITED_BY,
    WO_PREDICTED_MBPS,
    WO_NROW, /* the first measurement-wide variable */
    WO_JSON = WO_NROW,
    WO_DEBIT_VERSION,
    WO_ORDER,
    WO_SEED,
    WO_RUNS_PER_SERVER,
    WO_INTERRUPTED,
    WO_TOTAL_RUNS_OK,
    WO_TOTAL_RUNS_FAILED,
    WO_NVARS,
};

/* Same names (and meaning) as the JSON summary's keys where there is one. */
const char *const writeout_variables[] = {
    [WO_SERVER] = "server",
    [WO_URL] = "url",
    [WO_SCENARIO] = "scenario",
    [WO_VARIANT] = "variant",
    [WO_RUNS_OK] = "runs_ok",
    [WO_RUNS_FAILED] = "runs_failed",
    [WO_MEDIAN_MBPS] = "median_mbps",
    [WO_MIN_MBPS] = "min_mbps",
    [WO_MAX_MBPS] = "max_mbps",
    [WO_Q1_MBPS] = "q1_mbps",
    [WO_Q3_MBPS] = "q3_mbps",
    [WO_MEDIAN_TOTAL_MBPS] = "median_total_mbps",
    [WO_MEDIAN_SLOW_START_S] = "median_slow_start_s",
    [WO_MEDIAN_RTT_MS] = "median_rtt_ms",
    [WO_MEDIAN_MIN_RTT_MS] = "median_min_rtt_ms",
    [WO_RATIO] = "ratio",
    [WO_CI95_LOW] = "ci95_low",
    [WO_CI95_HIGH] = "ci95_high",
    [WO_P_VALUE] = "p_value",
    [WO_P_METHOD] = "p_method",
    [WO_LIMITED_BY] = "limited_by",
    [WO_PREDICTED_MBPS] = "predicted_mbps",
    [WO_JSON] = "json",
    [WO_DEBIT_VERSION] = "debit_version",
    [WO_ORDER] = "order",
    [WO_SEED] = "seed",
    [WO_RUNS_PER_SERVER] = "runs_per_server",
    [WO_INTERRUPTED] = "interrupted",
    [WO_TOTAL_RUNS_OK] = "total_runs_ok",
    [WO_TOTAL_RUNS_FAILED] = "total_runs_failed",
    [WO_NVARS] = NULL,
};

/* A piece is literal text (var < 0) or one variable. */
struct piece {
    int var;
    char *text;
};

struct writeout {
    struct piece *p;
    size_t n;
    int per_row; /* names a per-row variable: printed once per summary row */
};

void writeout_free(struct writeout *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->n; i++)
        free(w->p[i].text);
    free(w->p);
    free(w);
}

static int add_piece(struct writeout *w, int var, const char *text, size_t len)
{
    struct piece *p = realloc(w->p, (w->n + 1) * sizeof *p);
    if (!p)
        return -1;
    w->p = p;
    p[w->n].var = var;
    p[w->n].text = var < 0 ? strndup(text, len) : NULL;
    if (var < 0 && !p[w->n].text)
        return -1;
    w->n++;
    return 0;
}

static int lookup(const char *name, size_t len)
{
    for (int i = 0; i < WO_NVARS; i++)
        if (strlen(writeout_variables[i]) == len && strncmp(writeout_variables[i], name, len) == 0)
            return i;
    return -1;
}

static int unknown_var(const char *name, size_t len, char *err, size_t errlen)
{
    char known[1024];
    size_t off = 0;
    for (int i = 0; i < WO_NVARS && off < sizeof known; i++)
        off += (size_t)snprintf(known + off, sizeof known - off, "%s%s", i ? " " : "", writeout_variables[i]);
    return err_set(err, errlen, "'%%{%.*s}': unknown variable (known: %s)", (int)len, name, known);
}

/* One escape after '\\' into *c: 0, or -1 when unknown. */
static int escape(char e, char *c)
{
    switch (e) {
    case 'n': *c = '\n'; return 0;
    case 't': *c = '\t'; return 0;
    case 'r': *c = '\r'; return 0;
    case '\\': *c = '\\'; return 0;
    default: return -1;
    }
}

static int parse_into(struct writeout *w, const char *fmt, char *err, size_t errlen)
{
    size_t cap = strlen(fmt) + 1, n = 0;
    char *lit = malloc(cap);
    if (!lit)
        return err_set(err, errlen, "out of memory");
    int rc = 0;
    for (const char *p = fmt; *p && rc == 0; p++) {
        if (*p == '\\') {
            if (!p[1] || escape(p[1], &lit[n]) != 0) {
                rc = err_set(err, errlen, "'\\%.1s': unknown escape (\\n \\t \\r \\\\)", p + 1);
                break;
            }
            n++, p++;
        } else if (*p == '%' && p[1] == '%') {
            lit[n++] = '%';
            p++;
        } else if (*p == '%' && p[1] == '{') {
            const char *name = p + 2, *end = strchr(name, '}');
            if (!end) {
                rc = err_set(err, errlen, "'%.40s': unterminated %%{", p);
                break;
            }
            int v = lookup(name, (size_t)(end - name));
            if (v < 0) {
                rc = unknown_var(name, (size_t)(end - name), err, errlen);
                break;
            }
            if ((n && add_piece(w, -1, lit, n) != 0) || add_piece(w, v, NULL, 0) != 0)
                rc = err_set(err, errlen, "out of memory");
            n = 0;
            w->per_row |= v < WO_NROW;
            p = end;
        } else {
            lit[n++] = *p;
        }
    }
    if (rc == 0 && n && add_piece(w, -1, lit, n) != 0)
        rc = err_set(err, errlen, "out of memory");
    free(lit);
    return rc;
}

struct writeout *writeout_parse(const char *fmt, char *err, size_t errlen)
{
    struct writeout *w = calloc(1, sizeof *w);
    if (!w) {
        err_set(err, errlen, "out of memory");
        return NULL;
    }
    if (parse_into(w, fmt, err, errlen) != 0) {
        writeout_free(w);
        return NULL;
    }
    return w;
}

static void put_num(FILE *out, double v, const char *f)
{
    if (isfinite(v))
        fprintf(out, f, v);
    else
        fputs("-", out);
}

static void put_str(FILE *out, const char *s)
{
    fputs(s && *s ? s : "-", out);
}

static void put_row_var(FILE *out, int v, const struct server_summary *g)
{
    int cmp = g->has_comparison;
    switch (v) {
    case WO_SERVER: put_str(out, g->server); break;
    case WO_URL: put_str(out, g->url); break;
    case WO_SCENARIO: put_str(out, g->scenario); break;
    case WO_VARIANT: put_str(out, g->variant); break;
    case WO_RUNS_OK: fprintf(out, "%u", g->runs_ok); break;
    case WO_RUNS_FAILED: fprintf(out, "%u", g->runs_failed); break;
    case WO_MEDIAN_MBPS: put_num(out, g->median_mbps, "%.3f"); break;
    case WO_MIN_MBPS: put_num(out, g->min_mbps, "%.3f"); break;
    case WO_MAX_MBPS: put_num(out, g->max_mbps, "%.3f"); break;
    case WO_Q1_MBPS: put_num(out, g->q1_mbps, "%.3f"); break;
    case WO_Q3_MBPS: put_num(out, g->q3_mbps, "%.3f"); break;
    case WO_MEDIAN_TOTAL_MBPS: put_num(out, g->median_total_mbps, "%.3f"); break;
    case WO_MEDIAN_SLOW_START_S: put_num(out, g->median_slow_start_s, "%.3f"); break;
    case WO_MEDIAN_RTT_MS: put_num(out, g->median_rtt_ms, "%.3f"); break;
    case WO_MEDIAN_MIN_RTT_MS: put_num(out, g->median_min_rtt_ms, "%.3f"); break;
    case WO_RATIO: put_num(out, cmp ? g->ratio : NAN, "%.6f"); break;
    case WO_CI95_LOW: put_num(out, cmp ? g->ci_lo : NAN, "%.6f"); break;
    case WO_CI95_HIGH: put_num(out, cmp ? g->ci_hi : NAN, "%.6f"); break;
    case WO_P_VALUE: put_num(out, cmp ? g->mw.p : NAN, "%.6g"); break;
    case WO_P_METHOD: put_str(out, cmp ? stats_mw_method_name(g->mw.method) : NULL); break;
    case WO_LIMITED_BY: put_str(out, g->limited_by); break;
    case WO_PREDICTED_MBPS: put_num(out, g->median_predicted_mbps, "%.3f"); break;
    }
}

static void put_var(FILE *out, int v, const struct result_set *rs, const struct summary *s,
                    const struct report_meta *m)
{
    unsigned ok = 0, failed = 0;
    for (size_t i = 0; rs && i < rs->n; i++)
        rs->runs[i]->ok ? ok++ : failed++;
    switch (v) {
    case WO_JSON: {
        json_t *o = report_to_json(rs, s, m);
        if (o)
            json_dumpf(o, out, JSON_COMPACT | JSON_REAL_PRECISION(10));
        json_decref(o);
        break;
    }
    case WO_DEBIT_VERSION: fputs(DEBIT_VERSION, out); break;
    case WO_ORDER: put_str(out, m ? m->order : NULL); break;
    case WO_SEED:
        if (m && m->seed_used)
            fprintf(out, "%llu", m->seed);
        else
            fputs("-", out);
        break;
    case WO_RUNS_PER_SERVER: fprintf(out, "%u", m ? m->runs : 0); break;
    case WO_INTERRUPTED: fputs(m && m->interrupted ? "true" : "false", out); break;
    case WO_TOTAL_RUNS_OK: fprintf(out, "%u", ok); break;
    case WO_TOTAL_RUNS_FAILED: fprintf(out, "%u", failed); break;
    }
}

static void print_once(FILE *out, const struct writeout *w, const struct result_set *rs, const struct summary *s,
                       const struct report_meta *m, const struct server_summary *g)
{
    for (size_t i = 0; i < w->n; i++) {
        const struct piece *p = &w->p[i];
        if (p->var < 0)
            fputs(p->text, out);
        else if (p->var < WO_NROW)
            put_row_var(out, p->var, g);
        else
            put_var(out, p->var, rs, s, m);
    }
}

int writeout_print(FILE *out, const struct writeout *w, const struct result_set *rs, const struct summary *s,
                   const struct report_meta *m)
{
    if (w->per_row)
        for (size_t k = 0; k < s->n; k++)
            print_once(out, w, rs, s, m, &s->rows[k]);
    else
        print_once(out, w, rs, s, m, NULL);
    return fflush(out) != 0 || ferror(out) ? -1 : 0;
}
