/* plot: see plot.h. gnuplot runs as a child process (posix_spawnp) with its stderr
 * captured; the run is bounded (30 s) so a broken gnuplot cannot hang a measurement. */
#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "array.h"
#include "err.h"
#include "outfile.h"
#include "labels.h"
#include "plot_int.h"
#include "sys.h"
#include "units.h"

extern char **environ;

/* The bound on one gnuplot run. */
#define GNUPLOT_TIMEOUT_MS 30000

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

/* Common axis ranges: bars up to the highest max, every time panel the same scales. */
struct ranges {
    double bars_max, t_max, rate_max;
};

static void ranges_compute(const struct result_set *rs, const struct summary *s, struct ranges *g)
{
    *g = (struct ranges){0};
    for (size_t k = 0; k < s->n; k++) {
        const struct server_summary *row = &s->rows[k];
        if (isfinite(row->max_mbps) && row->max_mbps > g->bars_max)
            g->bars_max = row->max_mbps;
        if (!rs || row->median_run == SIZE_MAX)
            continue;
        const struct run_result *r = rs->runs[row->median_run];
        double last;
        size_t n = series_points(r, &last);
        for (size_t i = 0; i < n; i++) {
            double v = i + 1 == n ? last : r->series[i];
            if (v > g->rate_max)
                g->rate_max = v;
        }
        if (n && r->body_s > g->t_max)
            g->t_max = r->body_s;
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

static void script_bars(FILE *fp, const struct plot_axes *a, const char *bars_dat, double ymax)
{
    /* Titles short enough for the canvas: the axes and the key name the rest. */
    fputs("set title \"Median of each download's average throughput, per server (bar and value); min to max "
          "(whisker)\" font \",12\"\n"
          "set ylabel \"Throughput (Mb/s = 10^6 bit/s)\"\nset grid ytics\nset xtics nomirror scale 0\n",
          fp);
    margins(fp, LEFT, BARS_RIGHT, BARS_BOTTOM, BARS_TOP);
    fprintf(fp, "set xrange [-0.55:%.2f]\nset yrange [0:%.6g]\n", (double)a->ns - 0.45, ymax > 0 ? ymax * 1.12 : 1);
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
        fputs("set label 1 \"no successful run\" at graph 0.5, graph 0.5 center\n", fp);
    size_t ncol = a->nv * a->nr;
    double w = bar_width(ncol);
    /* The key from dummy plots, so that it lists every column even one without data. */
    fputs("plot ", fp);
    for (size_t v = 0; v < a->nv; v++)
        for (size_t r = 0; r < a->nr; r++) {
            fprintf(fp, "%sNaN with boxes lc rgb \"%s\" ", v || r ? ", \\\n  " : "", plot_colour(r));
            style_fill(fp, v, r);
            fputs(" title ", fp);
            plot_key_title(fp, a, v, r);
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
            if (ncol * a->ns <= 40) { /* beyond that the numbers would overlap */
                fputs(", \\\n  ", fp);
                plot_qstr(fp, bars_dat);
                fprintf(fp, " index %zu using 1:4:5 with labels offset 0,0.7 font \",%d\" notitle", c,
                        ncol * a->ns <= 16 ? 10 : 8);
            }
        }
    fputs("\nunset label 1\n", fp);
}

static void script_time(FILE *fp, const struct summary *s, const struct plot_axes *a, const char *series_dat,
                        double tmax, double ymax)
{
    size_t ncols = a->ns < 3 ? a->ns : 3, nrows = (a->ns + ncols - 1) / ncols;
    /* Key: one column per client variant (rows = servers), or servers four to a row. */
    size_t keyrows = a->nv > 1 ? a->nr : (a->nr + 3) / 4;
    double bottom = 0.035 + 0.026 * (double)keyrows + 0.055;
    double rowh = (TIME_TOP - bottom - 0.075 * (double)(nrows - 1)) / (double)nrows;
    double colw = (RIGHT - LEFT - PANEL_GAP * (double)(ncols - 1)) / (double)ncols;
    fprintf(fp, "unset label\nset grid xtics ytics\nset xtics autofreq mirror scale 1\nset key title \"\"\n"
                "set xrange [0:%.6g]\nset yrange [0:%.6g]\n",
            tmax > 0 ? tmax * 1.02 : 1, ymax > 0 ? ymax * 1.08 : 1);
    fprintf(fp, "set label 100 \"Throughput over time of each server's median download, 100 ms samples%s\" "
                "at screen 0.5, %.4f center font \",12\"\n",
            a->ns > 1 ? ", one panel per latency scenario" : "", TIME_TOP + 0.06);
    for (size_t i = 0; i < a->ns; i++) {
        size_t col = i % ncols, row = i / ncols;
        double l = LEFT + (double)col * (colw + PANEL_GAP), t = TIME_TOP - (double)row * (rowh + 0.075);
        margins(fp, l, l + colw, t - rowh, t);
        fputs("set title ", fp);
        plot_qstr(fp, a->scn[i] ? a->scn[i] : "");
        fputs(" font \",11\"\nset xlabel \"Time since the response headers (s)\"\n", fp);
        if (col == 0)
            fputs("set ylabel \"Throughput (Mb/s)\"\nset format y \"%g\"\n", fp);
        else
            fputs("set ylabel \"\"\nset format y \"\"\n", fp);
        fputs("unset key\n", fp);
        if (i > 0)
            fputs("unset label 100\n", fp);
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
    /* The panels' shared key, drawn once, below them, by a plot of its own as wide as the
     * canvas (a panel's key may not be wider than the panel); from dummy plots, so that
     * it lists every (server, variant) even one without a successful run. */
    fputs("unset title\nunset xlabel\nunset ylabel\nunset border\nunset tics\nunset grid\nunset label\n"
          "set xrange [0:1]\nset yrange [0:1]\n",
          fp);
    margins(fp, LEFT, RIGHT, 0.0, 0.035 + 0.026 * (double)keyrows);
    fprintf(fp, "set key at screen 0.5, 0.012 center bottom horizontal Left reverse maxrows %zu samplen 4 "
                "spacing 1.2\n",
            keyrows);
    fputs("plot ", fp);
    for (size_t v = 0; v < a->nv; v++)
        for (size_t r = 0; r < a->nr; r++) {
            fprintf(fp, "%sNaN with lines lw 2 lc rgb \"%s\" dt %u title ", v || r ? ", \\\n  " : "", plot_colour(r),
                    plot_dash(v, r));
            plot_key_title(fp, a, v, r);
        }
    fputc('\n', fp);
}

/* The gnuplot script drawing into `out` in the format `target`'s extension names (.svg,
 * else PNG), reading the data files bars_dat and series_dat. Returns 0 or -1 (fp's error). */
static int plot_script(FILE *fp, const char *target, const char *out, const struct result_set *rs,
                       const struct summary *s, const char *bars_dat, const char *series_dat)
{
    const char *dot = strrchr(target, '.');
    int svg = dot && strcmp(dot, ".svg") == 0;
    struct plot_axes a;
    struct ranges g;
    plot_axes_init(&a, s);
    ranges_compute(rs, s, &g);
    fprintf(fp, "set terminal %s size 1200,1000 font \"sans,11\"\n",
            svg ? "svg dynamic noenhanced background rgb \"white\"" : "pngcairo noenhanced background rgb \"white\"");
    fputs("set output ", fp);
    plot_qstr(fp, out);
    fputs("\nset datafile missing \"?\"\nset multiplot\n", fp);
    if (a.ns > 0) {
        script_bars(fp, &a, bars_dat, g.bars_max);
        script_time(fp, s, &a, series_dat, g.t_max, g.rate_max);
    } else {
        fputs("unset key\nset label 1 \"no result\" at graph 0.5, graph 0.5 center\nplot NaN notitle\n", fp);
    }
    fputs("unset multiplot\n", fp);
    return ferror(fp) ? -1 : 0;
}

int plot_run_gnuplot(const char *script, const char *errfile)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    /* posix_spawnp's argv is char *const[]: writable copies, not casts of const strings */
    char prog[] = "gnuplot", *arg = strdup(script);
    if (!arg) {
        posix_spawn_file_actions_destroy(&fa);
        return -1;
    }
    char *argv[] = {prog, arg, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    free(arg);
    if (rc != 0)
        return -1;
    int st = 0;
    if (!sys_reap_child_ms(pid, GNUPLOT_TIMEOUT_MS, &st))
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int plot_write(const char *path, const struct result_set *rs, const struct summary *s, char *err, size_t errlen)
{
    if (plot_check(err, errlen) != 0)
        return -1;
    char dir[] = "/tmp/debit-plot.XXXXXX";
    if (!mkdtemp(dir))
        return err_set(err, errlen, "temporary directory: %s", strerror(errno));
    char bars[64], series[64], script[64], errfile[64];
    snprintf(bars, sizeof bars, "%s/bars.dat", dir);
    snprintf(series, sizeof series, "%s/series.dat", dir);
    snprintf(script, sizeof script, "%s/plot.gp", dir);
    snprintf(errfile, sizeof errfile, "%s/err", dir);
    int rc = -1;
    FILE *fp = NULL;
    /* gnuplot renders into the temporary file beside the target that `pic` holds open;
     * committing it makes the picture appear whole (a reader never sees half of one). */
    struct outfile pic = {0};
    struct plot_axes a;
    plot_axes_init(&a, s);
    if (write_bars(bars, s, &a) != 0 || write_series(series, rs, s) != 0 || !(fp = fopen(script, "w"))) {
        err_set(err, errlen, "%s: %s", dir, strerror(errno));
        goto out;
    }
    if (!outfile_open(&pic, path, err, errlen))
        goto out;
    /* fclose whatever plot_script returned: the FILE must not leak on a write error. */
    int wrc = plot_script(fp, path, outfile_write_path(&pic), rs, s, bars, series);
    int e = errno;
    if (fclose(fp) != 0 && wrc == 0) {
        wrc = -1;
        e = errno;
    }
    fp = NULL;
    if (wrc != 0) {
        err_set(err, errlen, "%s: %s", script, strerror(e));
        goto out;
    }
    int st = plot_run_gnuplot(script, errfile);
    if (st != 0) {
        char line[256] = "";
        FILE *ef = fopen(errfile, "r");
        while (ef && fgets(line, sizeof line, ef))
            if (strstr(line, "rror") || strstr(line, "arning"))
                break;
        if (ef)
            fclose(ef);
        line[strcspn(line, "\n")] = 0;
        err_set(err, errlen, "gnuplot failed (status %d)%s%s", st, line[0] ? ": " : "", line);
        goto out;
    }
    rc = outfile_commit(&pic, err, errlen);
out:
    outfile_abort(&pic); /* nothing left to do after a commit */
    if (fp)
        fclose(fp);
    unlink(bars);
    unlink(series);
    unlink(script);
    unlink(errfile);
    rmdir(dir);
    return rc;
}
