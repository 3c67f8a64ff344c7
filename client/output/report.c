/* report: see report.h. */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "array.h"
#include "err.h"
#include "outfile.h"
#include "escape.h"
#include "labels.h"
#include "stats.h"
#include "sys.h"
#include "units.h"
#include "wire.h"

int report_format_parse(const char *s, enum report_format *f)
{
    static const char *const names[] = {
        [REPORT_TABLE] = "table", [REPORT_MARKDOWN] = "markdown", [REPORT_CSV] = "csv", [REPORT_JSON] = "json",
    };
    for (size_t i = 0; i < ARRAY_SIZE(names); i++)
        if (strcmp(s, names[i]) == 0) {
            *f = (enum report_format)i;
            return 0;
        }
    return -1;
}

/* the methods line for the directions RS holds */
static const char *method_note(const struct result_set *rs)
{
    int down = 0, up = 0;
    for (size_t i = 0; rs && i < rs->n; i++)
        if (rs->runs[i]->upload)
            up = 1;
        else
            down = 1;
    return summary_method_note(down, up);
}

static void fmt_num(double v, const char *fmtstr, char *buf, size_t len)
{
    if (!isfinite(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, fmtstr, v);
}

static int same_label(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

static void fmt_ratio(const struct server_summary *g, const struct summary *s, char *buf, size_t len)
{
    if (g->is_reference)
        snprintf(buf, len, "reference");
    else if (!g->has_comparison)
        snprintf(buf, len, "-");
    else if (isfinite(g->ci_lo))
        snprintf(buf, len, "%.3f [%.3f, %.3f]", g->ratio, g->ci_lo, g->ci_hi);
    else
        snprintf(buf, len, "%.3f [n/a]", g->ratio);
    /* the ratio's two sides: this row and its cell's reference (SUMMARY_DURATION_NOTE) */
    int short_runs = g->duration_short_runs > 0;
    for (size_t k = 0; g->has_comparison && k < s->n; k++)
        if (s->rows[k].is_reference && same_label(s->rows[k].scenario, g->scenario) &&
            same_label(s->rows[k].variant, g->variant))
            short_runs |= s->rows[k].duration_short_runs > 0;
    size_t l = strlen(buf);
    if (short_runs && l < len)
        snprintf(buf + l, len - l, " (short)");
}

static void fmt_p(const struct server_summary *g, char *buf, size_t len)
{
    if (!g->has_comparison)
        snprintf(buf, len, "-");
    else if (g->mw.p_min >= STATS_ALPHA) /* no outcome could be significant: p says nothing */
        snprintf(buf, len, "n too small");
    else
        snprintf(buf, len, "%.3g (%s)", g->mw.p, g->mw.method == STATS_MW_EXACT ? "exact" : "normal");
}

/* The figures of one summary row as the table and the markdown print them; with_units
 * adds " s" and " ms" to the slow start and RTT (markdown puts units in its header). */
struct row_cells {
    char med[32], mn[32], mx[32], ss[32], rtt[32], ratio[64], p[48];
};

static void fmt_cells(const struct server_summary *g, const struct summary *s, int with_units, struct row_cells *c)
{
    units_format_mbps(g->median_mbps, c->med, sizeof c->med);
    units_format_mbps(g->min_mbps, c->mn, sizeof c->mn);
    units_format_mbps(g->max_mbps, c->mx, sizeof c->mx);
    fmt_num(g->median_slow_start_s, with_units ? "%.2f s" : "%.2f", c->ss, sizeof c->ss);
    fmt_num(g->median_rtt_ms, with_units ? "%.2f ms" : "%.2f", c->rtt, sizeof c->rtt);
    fmt_ratio(g, s, c->ratio, sizeof c->ratio);
    fmt_p(g, c->p, sizeof c->p);
}

/* The "-" and "n/a" of the table, explained (summary_footnotes). */
static void write_footnotes(FILE *out, const struct summary *sum, const char *before)
{
    char notes[512];
    if (*summary_footnotes(sum, notes, sizeof notes))
        fprintf(out, "%s%s\n", before, notes);
}

/* s escaped for a terminal (escape.h) into buf; NULL stays NULL. Every text that did not
 * come from debit itself (server names, scenario labels, X-Debit-* values) goes through
 * it in the table, the Markdown and the CSV. ESC_NAME_MAX holds any server NAME a setter
 * accepts (255 bytes, escaped 4 per byte; a longer scenario label is cut, at a whole
 * character), ESC_VALUE_MAX any header value cb_header keeps (1023 bytes). */
#define ESC_NAME_MAX 1100
#define ESC_VALUE_MAX 4200
static const char *esc(char *buf, size_t len, const char *s)
{
    if (!s)
        return NULL;
    escape_text(buf, len, s);
    return buf;
}

static const char *header_of(const struct run_result *r, const char *name)
{
    return r->server_config ? json_string_value(json_object_get(r->server_config, name)) : NULL;
}

/* What each server said of itself (X-Debit-Offload, X-Debit-Tcp) next to its figures: the
 * seed's question is which server had TSO/GSO off, and a figure without that state is
 * worth little. One line per distinct answer, so a server whose state changed during the
 * measurement shows every state it was measured in. Nothing for plain mirrors. */
static void write_server_configs(FILE *out, const struct result_set *rs, const char *title, const char *bullet)
{
    int any = 0;
    for (size_t i = 0; rs && i < rs->n; i++) {
        const struct run_result *r = rs->runs[i];
        const char *off = header_of(r, WIRE_HDR_OFFLOAD), *tcp = header_of(r, WIRE_HDR_TCP);
        if (!off && !tcp)
            continue;
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++) {
            const struct run_result *q = rs->runs[j];
            seen = labels_same(q->server, r->server) && labels_same(header_of(q, WIRE_HDR_OFFLOAD), off) &&
                   labels_same(header_of(q, WIRE_HDR_TCP), tcp);
        }
        if (seen)
            continue;
        if (!any)
            fprintf(out, "%s", title);
        any = 1;
        char srv[ESC_NAME_MAX], eoff[ESC_VALUE_MAX], etcp[ESC_VALUE_MAX];
        off = esc(eoff, sizeof eoff, off);
        tcp = esc(etcp, sizeof etcp, tcp);
        fprintf(out, "%s%s: %s%s%s%s\n", bullet, esc(srv, sizeof srv, r->server), off ? "offload " : "",
                off ? off : "", off && tcp ? "; tcp " : tcp ? "tcp " : "", tcp ? tcp : "");
    }
}

/* What limited each server, per cell: the verdict of most runs (summary.h), how many
 * runs had it, the prediction, and the evidence of the run with that verdict closest to
 * the median (docs/verdict.md). */
static void write_verdicts(FILE *out, const struct result_set *rs, const struct summary *s, const char *title,
                           const char *bullet)
{
    fputs(title, out);
    char srv[ESC_NAME_MAX], scn[ESC_NAME_MAX], var[ESC_NAME_MAX], pred[32];
    for (size_t k = 0; k < s->n; k++) {
        const struct server_summary *g = &s->rows[k];
        fprintf(out, "%s%s", bullet, esc(srv, sizeof srv, g->server));
        if (g->scenario || g->variant)
            fprintf(out, " (%s%s%s)", g->scenario ? esc(scn, sizeof scn, g->scenario) : "",
                    g->scenario && g->variant ? ", " : "", g->variant ? esc(var, sizeof var, g->variant) : "");
        if (!g->limited_by) {
            fprintf(out, " limited by -: no successful run\n");
            continue;
        }
        units_format_mbps(g->median_predicted_mbps, pred, sizeof pred);
        fprintf(out, " limited by %s (%u of %u runs%s), predicted %s%s", g->limited_by, g->limited_by_runs, g->runs_ok,
                g->limited_by_tie ? ", a tie: the median run's" : "", pred,
                isfinite(g->median_predicted_mbps) ? " Mb/s" : "");
        const struct run_result *mr = g->verdict_run < rs->n ? rs->runs[g->verdict_run] : NULL;
        if (mr && mr->limited_by_evidence) {
            fputs(": ", out);
            escape_fputs(mr->limited_by_evidence, out);
        }
        fputc('\n', out);
    }
}

static void write_notes(FILE *out, const struct report_meta *m, const char *bullet)
{
    for (size_t i = 0; m && i < m->nnotes; i++) {
        fputs(bullet, out);
        escape_fputs(m->notes[i], out);
        fputc('\n', out);
    }
}

static void write_table(FILE *out, const struct result_set *rs, const struct summary *s,
                        const struct report_meta *m)
{
    const char *cur_scn = NULL, *cur_var = NULL;
    int first = 1;
    size_t w = 6;
    char srv[ESC_NAME_MAX], scn[ESC_NAME_MAX], var[ESC_NAME_MAX];
    for (size_t k = 0; k < s->n; k++)
        if (strlen(esc(srv, sizeof srv, s->rows[k].server)) > w)
            w = strlen(srv);
    for (size_t k = 0; k < s->n; k++) {
        const struct server_summary *g = &s->rows[k];
        if (first || !labels_same(g->scenario, cur_scn) || !labels_same(g->variant, cur_var)) {
            if (g->scenario || g->variant)
                fprintf(out, "%s%s%s%s%s\n", first ? "" : "\n", g->scenario ? "scenario " : "",
                        g->scenario ? esc(scn, sizeof scn, g->scenario) : "", g->variant ? (g->scenario ? ", " : "") : "",
                        g->variant ? esc(var, sizeof var, g->variant) : "");
            fprintf(out, "%-*s  %7s %6s  %11s %11s %11s  %10s %8s  %-26s %s\n", (int)w, "server", "runs ok", "failed",
                    "median", "min", "max", "slow start", "RTT", "ratio [95% CI]", "p (Mann-Whitney)");
            first = 0;
            cur_scn = g->scenario;
            cur_var = g->variant;
        }
        struct row_cells c;
        fmt_cells(g, s, 1, &c);
        char medu[40], mnu[40], mxu[40];
        snprintf(medu, sizeof medu, "%s%s", c.med, isfinite(g->median_mbps) ? " Mb/s" : "");
        snprintf(mnu, sizeof mnu, "%s%s", c.mn, isfinite(g->min_mbps) ? " Mb/s" : "");
        snprintf(mxu, sizeof mxu, "%s%s", c.mx, isfinite(g->max_mbps) ? " Mb/s" : "");
        fprintf(out, "%-*s  %7u %6u  %11s %11s %11s  %10s %8s  %-26s %s\n", (int)w, esc(srv, sizeof srv, g->server), g->runs_ok,
                g->runs_failed, medu, mnu, mxu, c.ss, c.rtt, c.ratio, c.p);
    }
    write_verdicts(out, rs, s, "\nLimited by (" SUMMARY_VERDICT_NOTE "):\n", "  ");
    fprintf(out, "\nMb/s = 10^6 bit/s. Method: %s.\n", method_note(rs));
    write_footnotes(out, s, "");
    write_server_configs(out, rs, "Servers, as they reported themselves (X-Debit-* headers):\n", "  ");
    if (m && m->nnotes) {
        fprintf(out, "Client settings:\n");
        write_notes(out, m, "  ");
    }
}

/* The seed's layout: rows = scenario, columns = server x client variant. */
static void write_markdown(FILE *out, const struct result_set *rs, const struct summary *s,
                           const struct report_meta *m)
{
    const char *scn[LABELS_MAX], *var[LABELS_MAX], *srv[LABELS_MAX];
    size_t nscn = labels_distinct(s, LABELS_SCENARIO, scn, LABELS_MAX);
    size_t nvar = labels_distinct(s, LABELS_VARIANT, var, LABELS_MAX);
    size_t nsrv = labels_distinct(s, LABELS_SERVER, srv, LABELS_MAX);
    fprintf(out, "Median of %u average throughputs per server, Mb/s (10^6 bit/s, wget's average)%s\n\n",
            m ? m->runs : 0, m && m->interrupted ? " — interrupted, finished runs only" : "");
    char e1[ESC_NAME_MAX], e2[ESC_NAME_MAX], e3[ESC_NAME_MAX];
    fprintf(out, "| scenario |");
    for (size_t v = 0; v < nvar; v++)
        for (size_t i = 0; i < nsrv; i++) {
            char title[512]; /* what the server is: reported, plus the lab's host settings */
            labels_server_title(rs, m, srv[i], title, sizeof title);
            if (var[v])
                fprintf(out, " Srv %s (%s) |", esc(e1, sizeof e1, title), esc(e2, sizeof e2, var[v]));
            else
                fprintf(out, " Srv %s |", esc(e1, sizeof e1, title));
        }
    fprintf(out, "\n|---|");
    for (size_t c = 0; c < nvar * nsrv; c++)
        fprintf(out, "---|");
    fprintf(out, "\n");
    for (size_t r = 0; r < nscn; r++) {
        fprintf(out, "| %s |", scn[r] ? esc(e1, sizeof e1, scn[r]) : "measured");
        for (size_t v = 0; v < nvar; v++)
            for (size_t i = 0; i < nsrv; i++) {
                const struct server_summary *g = labels_find(s, scn[r], var[v], srv[i]);
                char med[32] = "-";
                if (g)
                    units_format_mbps(g->median_mbps, med, sizeof med);
                fprintf(out, " %s |", med);
            }
        fprintf(out, "\n");
    }
    fprintf(out, "\n| %sserver | runs ok | failed | median (Mb/s) | min (Mb/s) | max (Mb/s) | slow start (s) | "
                 "RTT (ms) | ratio [95%% CI] | p (Mann-Whitney) |\n",
            nscn > 1 || scn[0] || nvar > 1 || var[0] ? "scenario | client | " : "");
    fprintf(out, "|%s---|---|---|---|---|---|---|---|---|---|\n", nscn > 1 || scn[0] || nvar > 1 || var[0] ? "---|---|" : "");
    for (size_t k = 0; k < s->n; k++) {
        const struct server_summary *g = &s->rows[k];
        struct row_cells c;
        fmt_cells(g, s, 0, &c);
        fprintf(out, "| ");
        if (nscn > 1 || scn[0] || nvar > 1 || var[0])
            fprintf(out, "%s | %s | ", g->scenario ? esc(e1, sizeof e1, g->scenario) : "-",
                    g->variant ? esc(e2, sizeof e2, g->variant) : "-");
        fprintf(out, "%s | %u | %u | %s | %s | %s | %s | %s | %s | %s |\n", esc(e3, sizeof e3, g->server), g->runs_ok,
                g->runs_failed,
                c.med, c.mn, c.mx, c.ss, c.rtt, c.ratio, c.p);
    }
    write_verdicts(out, rs, s, "\nLimited by (" SUMMARY_VERDICT_NOTE "):\n\n", "- ");
    fprintf(out, "\nMethod: %s.\n", method_note(rs));
    write_footnotes(out, s, "\n");
    write_server_configs(out, rs, "\nServers, as they reported themselves (X-Debit-* headers):\n\n", "- ");
    if (m && m->nnotes) {
        fprintf(out, "\nClient settings per cell:\n\n");
        write_notes(out, m, "- ");
    }
}

/* A CSV field (RFC 4180 quoting), escaped first: a CSV is cat'ed to terminals too, and
 * after escaping it holds no line break. */
static void csv_field(FILE *out, const char *raw)
{
    if (!raw)
        return;
    char *s = escape_needed(raw) ? escape_dup(raw) : NULL;
    const char *t = s ? s : raw;
    if (t == raw && escape_needed(raw))
        return; /* out of memory: an empty field, never the raw bytes */
    if (strpbrk(t, ",\"")) {
        fputc('"', out);
        for (const char *p = t; *p; p++) {
            if (*p == '"')
                fputc('"', out);
            fputc(*p, out);
        }
        fputc('"', out);
    } else {
        fputs(t, out);
    }
    free(s);
}

static void csv_num(FILE *out, double v, const char *f)
{
    fputc(',', out);
    if (isfinite(v))
        fprintf(out, f, v);
}

static void write_csv(FILE *out, const struct summary *s)
{
    fprintf(out, "scenario,variant,server,url,runs_ok,runs_failed,median_mbps,min_mbps,max_mbps,median_total_mbps,"
                 "median_slow_start_s,median_rtt_ms,ratio,ci95_low,ci95_high,p_value,p_method,limited_by,"
                 "limited_by_runs,predicted_mbps\n");
    for (size_t k = 0; k < s->n; k++) {
        const struct server_summary *g = &s->rows[k];
        csv_field(out, g->scenario);
        fputc(',', out);
        csv_field(out, g->variant);
        fputc(',', out);
        csv_field(out, g->server);
        fputc(',', out);
        csv_field(out, g->url);
        fprintf(out, ",%u,%u", g->runs_ok, g->runs_failed);
        csv_num(out, g->median_mbps, "%.3f");
        csv_num(out, g->min_mbps, "%.3f");
        csv_num(out, g->max_mbps, "%.3f");
        csv_num(out, g->median_total_mbps, "%.3f");
        csv_num(out, g->median_slow_start_s, "%.3f");
        csv_num(out, g->median_rtt_ms, "%.3f");
        csv_num(out, g->has_comparison ? g->ratio : NAN, "%.6f");
        csv_num(out, g->has_comparison ? g->ci_lo : NAN, "%.6f");
        csv_num(out, g->has_comparison ? g->ci_hi : NAN, "%.6f");
        csv_num(out, g->has_comparison ? g->mw.p : NAN, "%.6g");
        fputc(',', out);
        if (g->has_comparison)
            csv_field(out, g->mw.method == STATS_MW_EXACT ? "exact" : "normal");
        fputc(',', out);
        csv_field(out, g->limited_by);
        fputc(',', out);
        if (g->limited_by)
            fprintf(out, "%u", g->limited_by_runs);
        csv_num(out, g->median_predicted_mbps, "%.3f");
        fputc('\n', out);
    }
}

json_t *report_to_json(const struct result_set *rs, const struct summary *s, const struct report_meta *m)
{
    char when[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_t *runs = json_array();
    for (size_t i = 0; i < rs->n; i++)
        json_array_append_new(runs, result_to_json(rs->runs[i]));
    json_t *o = json_object();
    json_object_set_new(o, "debit_version", json_string(DEBIT_VERSION));
    json_object_set_new(o, "generated_at", json_string(when));
    if (m) {
        json_object_set_new(o, "order", json_string(m->order ? m->order : ""));
        json_object_set_new(o, "seed", m->seed_used ? json_integer((json_int_t)m->seed) : json_null());
        json_object_set_new(o, "runs_per_server", json_integer(m->runs));
        json_object_set_new(o, "interrupted", json_boolean(m->interrupted));
        if (m->extra)
            json_object_update(o, m->extra);
    }
    json_object_set_new(o, "unit", json_string("Mb/s = 10^6 bit/s"));
    json_object_set_new(o, "method", json_string(method_note(rs)));
    json_object_set_new(o, "runs", runs);
    json_object_set_new(o, "summary", summary_to_json(s));
    return o;
}

int report_write(FILE *out, enum report_format f, const struct result_set *rs, const struct summary *s,
                 const struct report_meta *m)
{
    switch (f) {
    case REPORT_TABLE:
        write_table(out, rs, s, m);
        break;
    case REPORT_MARKDOWN:
        write_markdown(out, rs, s, m);
        break;
    case REPORT_CSV:
        write_csv(out, s);
        break;
    case REPORT_JSON: {
        json_t *o = report_to_json(rs, s, m);
        int rc = o ? json_dumpf(o, out, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) : -1;
        json_decref(o);
        if (rc != 0)
            return -1;
        fputc('\n', out);
        break;
    }
    }
    return ferror(out) ? -1 : 0;
}

int report_check_output(const char *path, char *err, size_t errlen)
{
    if (strcmp(path, "-") == 0)
        return 0;
    /* The kernel's wording ("Is a directory"), as for every other reason -o is refused. */
    return outfile_check(path, err, errlen);
}

int report_write_file(const char *path, enum report_format f, const struct result_set *rs,
                      const struct summary *s, const struct report_meta *m, char *err, size_t errlen)
{
    if (strcmp(path, "-") == 0) {
        if (report_write(stdout, f, rs, s, m) != 0 || fflush(stdout) != 0) {
            int e = errno;
            err_set(err, errlen, "stdout: %s", strerror(e));
            errno = e;
            return -1;
        }
        return 0;
    }
    struct outfile a;
    FILE *fp = outfile_open(&a, path, err, errlen);
    if (!fp)
        return -1;
    if (report_write(fp, f, rs, s, m) != 0) {
        int e = errno ? errno : EIO;
        outfile_abort(&a);
        return err_set(err, errlen, "%s: %s", path, strerror(e));
    }
    return outfile_commit(&a, err, errlen);
}
