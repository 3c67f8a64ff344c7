/* plot: see plot.h. The run of gnuplot itself (a child process, bounded in time, in a
 * private folder): gnuplot_run.h. */
#include "plot.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "err.h"
#include "gnuplot_run.h"
#include "labels.h"
#include "plot_int.h"
#include "sys.h"
#include "units.h"

int plot_check(char *err, size_t errlen)
{
    char path[PATH_MAX];
    if (sys_find_in_path("gnuplot", path, sizeof path))
        return 0;
    return err_set(err, errlen, "gnuplot not found in PATH (Debian: apt-get install gnuplot-nox)");
}

void plot_qstr(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', fp);
        fputc(*s, fp);
    }
    fputc('"', fp);
}

void plot_axes_init(struct plot_axes *a, const struct summary *s)
{
    a->ns = labels_distinct(s, LABELS_SCENARIO, a->scn, LABELS_MAX);
    a->nv = labels_distinct(s, LABELS_VARIANT, a->var, LABELS_MAX);
    a->nr = labels_distinct(s, LABELS_SERVER, a->srv, LABELS_MAX);
}

/* One look per (server, variant), the same in both panels: the colour says which server
 * (Okabe-Ito palette: distinct for colour-blind readers too), the dash type of a line and
 * the fill of a bar say which client variant. Twelve series are then 2 colours x 2 dash
 * types in 3 panels instead of 12 colours that gnuplot's default cycle of 8 repeats. More
 * than 8 servers reuse colours with the next dash type / fill. */
static const char *const palette[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7",
                                      "#D55E00", "#56B4E9", "#000000", "#999999"};
#define NPALETTE ARRAY_SIZE(palette)
/* Client variants told apart by gnuplot's five dash types, and as many bar fills. */
#define NSTYLES 5

const char *plot_colour(size_t r)
{
    return palette[r % NPALETTE];
}

unsigned plot_dash(size_t v, size_t r)
{
    return (unsigned)((v + r / NPALETTE) % NSTYLES) + 1; /* solid, dashed, dotted, dash-dot, dash-dot-dot */
}

static void style_fill(FILE *fp, size_t v, size_t r)
{
    static const char *const fills[NSTYLES] = {"solid 0.85", "pattern 4", "solid 0.35", "pattern 2", "pattern 6"};
    fprintf(fp, "fs %s border lc rgb \"%s\"", fills[(v + r / NPALETTE) % NSTYLES], plot_colour(r));
}

void plot_key_title(FILE *fp, const struct plot_axes *a, size_t v, size_t r)
{
    char t[512];
    snprintf(t, sizeof t, "%s%s%s", a->srv[r], a->var[v] ? ", " : "", a->var[v] ? a->var[v] : "");
    plot_qstr(fp, t);
}

void plot_runs_ok(const struct summary *s, const struct plot_axes *a, size_t v, size_t r, unsigned *ok,
                  unsigned *all)
{
    *ok = *all = 0;
    for (size_t k = 0; k < s->n; k++) {
        const struct server_summary *g = &s->rows[k];
        if (labels_same(g->server, a->srv[r]) && labels_same(g->variant, a->var[v])) {
            *ok += g->runs_ok;
            *all += g->runs_ok + g->runs_failed;
        }
    }
}

void plot_key_title_runs(FILE *fp, const struct summary *s, const struct plot_axes *a, size_t v, size_t r)
{
    unsigned ok, all;
    plot_runs_ok(s, a, v, r, &ok, &all);
    char t[600];
    snprintf(t, sizeof t, "%s%s%s", a->srv[r], a->var[v] ? ", " : "", a->var[v] ? a->var[v] : "");
    if (ok < all) {
        size_t l = strlen(t);
        snprintf(t + l, sizeof t - l, " (%u/%u ok)", ok, all);
    }
    plot_qstr(fp, t);
}

void plot_measurement_line(const struct result_set *rs, char *buf, size_t len)
{
    unsigned runs = 0;
    double t0 = 0;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; rs && i < rs->n; i++) {
        const struct run_result *r = rs->runs[i];
        runs = r->run > runs ? r->run : runs;
        if (r->started_at > 0 && (t0 == 0 || r->started_at < t0))
            t0 = r->started_at;
        if (!r->ok)
            continue;
        /* the file's size: Content-Length (a Range answer's is the range), else what arrived */
        uint64_t size = r->content_length > 0 && !r->ranged ? (uint64_t)r->content_length : r->bytes;
        lo = size < lo ? size : lo;
        hi = size > hi ? size : hi;
    }
    char a[32] = "", b[32] = "", files[80] = "no file received", date[40] = "date unknown";
    if (hi) {
        units_format_size(lo, a, sizeof a);
        units_format_size(hi, b, sizeof b);
        if (lo == hi)
            snprintf(files, sizeof files, "file %s", a);
        else
            snprintf(files, sizeof files, "files %s to %s", a, b);
    }
    time_t t = (time_t)t0;
    struct tm tm;
    if (t0 > 0 && gmtime_r(&t, &tm))
        strftime(date, sizeof date, "%Y-%m-%d %H:%M UTC", &tm);
    snprintf(buf, len, "%u run%s per server, %s, %s", runs, runs == 1 ? "" : "s", files, date);
}

/* Bars of one group side by side over 80% of the gap between groups, no wider than
 * a quarter of it. */
static double bar_width(size_t ncol)
{
    double w = 0.8 / (double)ncol;
    return w > 0.25 ? 0.25 : w;
}

/* bars: one block (gnuplot index) per (variant, server) column, in key order; each line
 * "x median min max label" for a scenario with a result; x is the bar's centre (group i
 * at i, bars side by side inside it). An empty block holds a missing point. */
static int write_bars(const char *file, const struct summary *s, const struct plot_axes *a)
{
    FILE *fp = fopen(file, "w");
    if (!fp)
        return -1;
    size_t ncol = a->nv * a->nr;
    double w = bar_width(ncol);
    for (size_t v = 0; v < a->nv; v++)
        for (size_t r = 0; r < a->nr; r++) {
            size_t c = v * a->nr + r, lines = 0;
            for (size_t i = 0; i < a->ns; i++) {
                const struct server_summary *g = labels_find(s, a->scn[i], a->var[v], a->srv[r]);
                if (!g || !isfinite(g->median_mbps))
                    continue;
                char lab[32];
                units_format_mbps(g->median_mbps, lab, sizeof lab);
                fprintf(fp, "%.6f %.6g %.6g %.6g \"%s\"\n", (double)i + ((double)c - (double)(ncol - 1) / 2) * w,
                        g->median_mbps, g->min_mbps, g->max_mbps, lab);
                lines++;
            }
            if (!lines)
                fputs("? ? ? ? \"\"\n", fp);
            fputs("\n\n", fp);
        }
    return fclose(fp);
}

/* The points of a run's step line: n samples, the last one `*last` (see write_series). A
 * last partial interval shorter than half an interval is merged into the one before: a
 * few bytes over a few ms would otherwise draw a spike far above the bottleneck (bursty
 * arrival), which is noise, not the transfer's rate. */
static size_t series_points(const struct run_result *r, double *last)
{
    double iv = r->series_interval_s > 0 ? r->series_interval_s : 0.1;
    size_t n = r->nseries;
    *last = n ? r->series[n - 1] : 0;
    if (n >= 2) {
        double dt = r->body_s - (double)(n - 1) * iv;
        if (dt >= 0 && dt < iv / 2) {
            *last = (r->series[n - 2] * iv + r->series[n - 1] * dt) / (iv + dt);
            n--;
        }
    }
    return n;
}

/* series: one block per summary row with a median run, in row order: "t rate" lines as
 * steps, each sample from the start of its interval, the last one held until the last
 * byte (body_s). */
static int write_series(const char *file, const struct result_set *rs, const struct summary *s)
{
    FILE *fp = fopen(file, "w");
    if (!fp)
        return -1;
    for (size_t k = 0; k < s->n; k++) {
        const struct server_summary *g = &s->rows[k];
        if (g->median_run == SIZE_MAX)
            continue;
        const struct run_result *r = rs->runs[g->median_run];
        double iv = r->series_interval_s > 0 ? r->series_interval_s : 0.1, last;
        size_t n = series_points(r, &last);
        for (size_t i = 0; i < n; i++)
            fprintf(fp, "%.4f %.6g\n", (double)i * iv, i + 1 == n ? last : r->series[i]);
        if (n)
            fprintf(fp, "%.4f %.6g\n", r->body_s, last);
        else
            fputs("? ?\n", fp);
        fputs("\n\n", fp);
    }
    return fclose(fp);
}

/* The bars' scale: up to the highest max of any row. */
static double bars_max(const struct summary *s)
{
    double m = 0;
    for (size_t k = 0; k < s->n; k++)
        if (isfinite(s->rows[k].max_mbps) && s->rows[k].max_mbps > m)
            m = s->rows[k].max_mbps;
    return m;
}

void plot_panel_ranges(const struct result_set *rs, const struct summary *s, const char *scenario, double *tmax,
                       double *ymax)
{
    *tmax = *ymax = 0;
    for (size_t k = 0; k < s->n; k++) {
        const struct server_summary *row = &s->rows[k];
        if (!rs || row->median_run == SIZE_MAX || !labels_same(row->scenario, scenario))
            continue;
        const struct run_result *r = rs->runs[row->median_run];
        double last;
        size_t n = series_points(r, &last);
        for (size_t i = 0; i < n; i++) {
            double v = i + 1 == n ? last : r->series[i];
            if (v > *ymax)
                *ymax = v;
        }
        if (n && r->body_s > *tmax)
            *tmax = r->body_s;
    }
}

/* Plot areas in screen coordinates (0..1 of the canvas): the bars on top, the time
 * panels below them, the time panels' shared key at the bottom. */
#define BARS_TOP 0.935
#define BARS_BOTTOM 0.585
#define LEFT 0.075
#define RIGHT 0.985
#define BARS_RIGHT 0.70
#define TIME_TOP 0.44
#define PANEL_GAP 0.02

static void margins(FILE *fp, double l, double r, double b, double t)
{
    fprintf(fp, "set lmargin at screen %.4f\nset rmargin at screen %.4f\nset bmargin at screen %.4f\n"
                "set tmargin at screen %.4f\n",
            l, r, b, t);
}

/* The bars' value labels must not run into each other: horizontal when a bar's pitch
 * holds a label ("12017" at 10 pt, ~7 characters of ~6 px), else standing (rotated, one
 * character high), else none. The canvas is 1200 px wide. */
enum bar_labels { LABELS_NONE, LABELS_ROTATED, LABELS_FLAT };

static enum bar_labels bar_labels(const struct plot_axes *a, double w)
{
    double pitch_px = (BARS_RIGHT - LEFT) * 1200 * w / ((double)a->ns + 0.1);
    return pitch_px >= 46 ? LABELS_FLAT : pitch_px >= 16 ? LABELS_ROTATED : LABELS_NONE;
}

/* A column none of whose runs succeeded has no bar: a cross at its place with "0/3 ok"
 * above it, in its colour, so that it never passes for a missing key entry. */
static void failed_marks(FILE *fp, const struct summary *s, const struct plot_axes *a, double w)
{
    size_t ncol = a->nv * a->nr, tag = 200;
    for (size_t i = 0; i < a->ns; i++)
        for (size_t v = 0; v < a->nv; v++)
            for (size_t r = 0; r < a->nr; r++) {
                const struct server_summary *g = labels_find(s, a->scn[i], a->var[v], a->srv[r]);
                if (!g || g->runs_ok > 0)
                    continue;
                double x = (double)i + ((double)(v * a->nr + r) - (double)(ncol - 1) / 2) * w;
                fprintf(fp, "set label %zu \"%u/%u ok\" at %.6f, first 0 center point pt 2 ps 2.5 lw 2 lc rgb \"%s\" "
                            "offset 0,1.6 tc rgb \"%s\" font \",9\" front\n",
                        tag++, g->runs_ok, g->runs_ok + g->runs_failed, x, plot_colour(r), plot_colour(r));
            }
}

static void script_bars(FILE *fp, const struct summary *s, const struct plot_axes *a, const char *bars_dat,
                        double ymax)
{
    size_t ncol = a->nv * a->nr;
    double w = bar_width(ncol);
    enum bar_labels lab = ncol * a->ns <= 40 ? bar_labels(a, w) : LABELS_NONE;
    /* Titles short enough for the canvas: the axes and the key name the rest. */
    fputs("set title \"Median of each download's average throughput, per server (bar and value); min to max "
          "(whisker)\" font \",12\"\n"
          "set ylabel \"Throughput (Mb/s = 10^6 bit/s)\"\nset grid ytics\nset xtics nomirror scale 0\n",
          fp);
    margins(fp, LEFT, BARS_RIGHT, BARS_BOTTOM, BARS_TOP);
    /* room above the highest whisker for its value, standing labels need more */
    fprintf(fp, "set xrange [-0.55:%.2f]\nset yrange [0:%.6g]\n", (double)a->ns - 0.45,
            ymax > 0 ? ymax * (lab == LABELS_ROTATED ? 1.3 : 1.12) : 1);
    fprintf(fp, "set xlabel %s\nset xtics (", a->ns > 1 || a->scn[0] ? "\"Latency scenario\"" : "\"\"");
    for (size_t i = 0; i < a->ns; i++) {
        fprintf(fp, "%s", i ? ", " : "");
        plot_qstr(fp, a->scn[i] ? a->scn[i] : "measured");
        fprintf(fp, " %zu", i);
    }
    fputs(")\n", fp);
    fprintf(fp, "set key at screen %.3f, %.3f left top vertical Left reverse samplen 2 spacing 1.3 title %s\n",
            BARS_RIGHT + 0.02, BARS_TOP, a->var[0] || a->nv > 1 ? "\"server, client setting\"" : "\"server\"");
    if (ymax <= 0)
        fputs("set label 1 \"no successful run\" at graph 0.5, graph 0.6 center\n", fp);
    failed_marks(fp, s, a, w);
    /* The key from dummy plots, so that it lists every column: a box for one with a bar,
     * the failed mark (a cross) for one without, its runs counted when some failed. */
    fputs("plot ", fp);
    for (size_t v = 0; v < a->nv; v++)
        for (size_t r = 0; r < a->nr; r++) {
            unsigned ok, all;
            plot_runs_ok(s, a, v, r, &ok, &all);
            fprintf(fp, "%s", v || r ? ", \\\n  " : "");
            if (ok == 0 && all > 0) {
                fprintf(fp, "NaN with points pt 2 ps 2 lw 2 lc rgb \"%s\"", plot_colour(r));
            } else {
                fprintf(fp, "NaN with boxes lc rgb \"%s\" ", plot_colour(r));
                style_fill(fp, v, r);
            }
            fputs(" title ", fp);
            plot_key_title_runs(fp, s, a, v, r);
        }
    for (size_t v = 0; v < a->nv; v++)
        for (size_t r = 0; r < a->nr; r++) {
            size_t c = v * a->nr + r;
            fputs(", \\\n  ", fp);
            plot_qstr(fp, bars_dat);
            fprintf(fp, " index %zu using 1:2:(%.6f) with boxes lc rgb \"%s\" ", c, w * 0.92, plot_colour(r));
            style_fill(fp, v, r);
            fputs(" notitle, \\\n  ", fp);
            plot_qstr(fp, bars_dat);
            /* A flat candlestick: a line at the median, whiskers from min to max. */
            fprintf(fp, " index %zu using 1:2:3:4:2:(%.6f) with candlesticks whiskerbars fs empty lc rgb \"black\" "
                        "lw 1 notitle",
                    c, w * 0.4);
            if (lab != LABELS_NONE) {
                fputs(", \\\n  ", fp);
                plot_qstr(fp, bars_dat);
                fprintf(fp, " index %zu using 1:4:5 with labels %s font \",%d\" notitle", c,
                        lab == LABELS_FLAT ? "offset 0,0.7" : "rotate by 90 left offset 0,0.4",
                        ncol * a->ns <= 16 ? 10 : 8);
            }
        }
    fputs("\nunset label\n", fp);
}

/* One latency panel of the time plot: each server's median download, on the panel's own
 * scales (a 10 ms panel and a 100 ms one differ by an order of magnitude). */
static void script_panel(FILE *fp, const struct result_set *rs, const struct summary *s, const struct plot_axes *a,
                         const char *series_dat, size_t i)
{
    double tmax, ymax;
    plot_panel_ranges(rs, s, a->scn[i], &tmax, &ymax);
    fprintf(fp, "set xrange [0:%.6g]\nset yrange [0:%.6g]\n", tmax > 0 ? tmax * 1.02 : 1, ymax > 0 ? ymax * 1.08 : 1);
    fputs("set title ", fp);
    plot_qstr(fp, a->scn[i] ? a->scn[i] : "");
    fputs(" font \",11\"\nset xlabel \"Time since the response headers (s)\"\nset format y \"%g\"\n", fp);
    fputs(i % 3 == 0 ? "set ylabel \"Throughput (Mb/s)\"\n" : "set ylabel \"\"\n", fp);
    fputs("unset key\nunset label 1\n", fp);
    if (ymax <= 0)
        fputs("set label 1 \"no successful run\" at graph 0.5, graph 0.5 center\n", fp);
    fputs("plot ", fp);
    int first = 1;
    size_t idx = 0;
    for (size_t k = 0; k < s->n; k++) {
        const struct server_summary *g = &s->rows[k];
        if (g->median_run == SIZE_MAX)
            continue;
        if (labels_same(g->scenario, a->scn[i])) {
            size_t v = labels_index(a->var, a->nv, g->variant), r = labels_index(a->srv, a->nr, g->server);
            fprintf(fp, "%s", first ? "" : ", \\\n  ");
            plot_qstr(fp, series_dat);
            fprintf(fp, " index %zu using 1:2 with steps lw 2 lc rgb \"%s\" dt %u notitle", idx, plot_colour(r),
                    plot_dash(v, r));
            first = 0;
        }
        idx++;
    }
    if (first)
        fputs("NaN notitle", fp);
    fputc('\n', fp);
}

/* 1 when (v, r) has a line in some panel: a median run. */
static int has_line(const struct summary *s, const struct plot_axes *a, size_t v, size_t r)
{
    for (size_t k = 0; k < s->n; k++)
        if (s->rows[k].median_run != SIZE_MAX && labels_same(s->rows[k].server, a->srv[r]) &&
            labels_same(s->rows[k].variant, a->var[v]))
            return 1;
    return 0;
}

static void script_time(FILE *fp, const struct result_set *rs, const struct summary *s, const struct plot_axes *a,
                        const char *series_dat)
{
    size_t ncols = a->ns < 3 ? a->ns : 3, nrows = (a->ns + ncols - 1) / ncols;
    /* Key: one column per client variant (rows = servers), or servers four to a row. */
    size_t keyrows = a->nv > 1 ? a->nr : (a->nr + 3) / 4;
    double bottom = 0.035 + 0.026 * (double)keyrows + 0.055;
    double rowh = (TIME_TOP - bottom - 0.075 * (double)(nrows - 1)) / (double)nrows;
    double colw = (RIGHT - LEFT - PANEL_GAP * 3 * (double)(ncols - 1)) / (double)ncols;
    fprintf(fp, "unset label\nset grid xtics ytics\nset xtics autofreq mirror scale 1\nset key title \"\"\n");
    fprintf(fp, "set label 100 \"Throughput over time of each server's median download, 100 ms samples%s\" "
                "at screen 0.5, %.4f center font \",12\"\n",
            a->ns > 1 ? ", one panel (and scale) per latency scenario" : "", TIME_TOP + 0.06);
    for (size_t i = 0; i < a->ns; i++) {
        size_t col = i % ncols, row = i / ncols;
        /* each panel has its own y tics now: a wider gap for them */
        double l = LEFT + (double)col * (colw + PANEL_GAP * 3), t = TIME_TOP - (double)row * (rowh + 0.075);
        margins(fp, l, l + colw, t - rowh, t);
        if (i > 0)
            fputs("unset label 100\n", fp);
        script_panel(fp, rs, s, a, series_dat, i);
    }
    /* The panels' shared key, drawn once, below them, by a plot of its own as wide as the
     * canvas (a panel's key may not be wider than the panel): only the lines drawn (a
     * (server, variant) without a successful run has its mark in the bars instead). */
    fputs("unset title\nunset xlabel\nunset ylabel\nunset border\nunset tics\nunset grid\nunset label\n"
          "set xrange [0:1]\nset yrange [0:1]\n",
          fp);
    margins(fp, LEFT, RIGHT, 0.0, 0.035 + 0.026 * (double)keyrows);
    fprintf(fp, "set key at screen 0.5, 0.012 center bottom horizontal Left reverse maxrows %zu samplen 4 "
                "spacing 1.2\n",
            keyrows);
    /* Nothing but the entries in this plot: a placeholder "NaN notitle" would be an
     * element of its own (an empty gnuplot_plot_N group in SVG) that is no key entry;
     * it stands only when no line is drawn at all, for plot needs something to plot. */
    fputs("plot ", fp);
    int first = 1;
    for (size_t v = 0; v < a->nv; v++)
        for (size_t r = 0; r < a->nr; r++) {
            if (!has_line(s, a, v, r))
                continue;
            fprintf(fp, "%sNaN with lines lw 2 lc rgb \"%s\" dt %u title ", first ? "" : ", \\\n  ", plot_colour(r),
                    plot_dash(v, r));
            plot_key_title(fp, a, v, r);
            first = 0;
        }
    if (first)
        fputs("NaN notitle", fp);
    fputc('\n', fp);
}

/* The gnuplot script drawing into `out` in the format `target`'s extension names (.svg,
 * else PNG), reading the data files bars_dat and series_dat. Returns 0 or -1 (fp's error). */
static int plot_script(FILE *fp, const char *target, const char *out, const struct result_set *rs,
                       const struct summary *s, const char *bars_dat, const char *series_dat)
{
    struct plot_axes a;
    plot_axes_init(&a, s);
    gnuplot_terminal(fp, target, out, 1200, 1000);
    /* what was measured, when: the first line of the picture */
    char line[160];
    plot_measurement_line(rs, line, sizeof line);
    fputs("set datafile missing \"?\"\nset multiplot title ", fp);
    plot_qstr(fp, line);
    fputs(" font \",10\"\n", fp);
    if (a.ns > 0) {
        script_bars(fp, s, &a, bars_dat, bars_max(s));
        script_time(fp, rs, s, &a, series_dat);
    } else {
        fputs("unset key\nset label 1 \"no result\" at graph 0.5, graph 0.5 center\nplot NaN notitle\n", fp);
    }
    fputs("unset multiplot\n", fp);
    return ferror(fp) ? -1 : 0;
}

/* plot_write's picture: the measurement and the data files' names. */
struct main_plot {
    const struct result_set *rs;
    const struct summary *s;
    char bars[96], series[96];
};

static int main_data(void *ctx, const char *dir)
{
    struct main_plot *p = ctx;
    struct plot_axes a;
    plot_axes_init(&a, p->s);
    snprintf(p->bars, sizeof p->bars, "%s/bars.dat", dir);
    snprintf(p->series, sizeof p->series, "%s/series.dat", dir);
    return write_bars(p->bars, p->s, &a) != 0 || write_series(p->series, p->rs, p->s) != 0 ? -1 : 0;
}

static int main_script(void *ctx, FILE *fp, const char *path, const char *out)
{
    const struct main_plot *p = ctx;
    return plot_script(fp, path, out, p->rs, p->s, p->bars, p->series);
}

int plot_write(const char *path, const struct result_set *rs, const struct summary *s, char *err, size_t errlen)
{
    if (plot_check(err, errlen) != 0)
        return -1;
    static const struct gnuplot_writer w = {main_data, main_script};
    struct main_plot p = {.rs = rs, .s = s};
    return gnuplot_render(path, "plot", &w, &p, err, errlen);
}
