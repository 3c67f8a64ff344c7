/* plot_rtt: the throughput-against-RTT picture of --plot (plot.h): per (server, client
 * variant) its measured points — the median of each latency cell at that cell's median
 * RTT — labelled with the cell's verdict, and the curve its settings predict over the
 * RTT range (predict.h with the RTT replaced, from the group's median run), so that a
 * server falling with RTT as buffer / RTT says shows as points on a hyperbola. */
#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "gnuplot_run.h"
#include "plot_int.h"
#include "sys.h"
#include "units.h"
#include "verdict_input.h"

#define CURVE_POINTS 120

int plot_rtt_path(const char *plot, char *buf, size_t len)
{
    const char *dot = strrchr(plot, '.'), *slash = strrchr(plot, '/');
    if (!dot || (slash && dot < slash))
        dot = plot + strlen(plot);
    int n = snprintf(buf, len, "%.*s-rtt%s", (int)(dot - plot), plot, dot);
    return n > 0 && (size_t)n < len ? 0 : -1;
}

/* A row's RTT: the base RTT (min_rtt) the prediction uses, else the smoothed one. */
static double row_rtt(const struct server_summary *g)
{
    return isfinite(g->median_min_rtt_ms) ? g->median_min_rtt_ms : g->median_rtt_ms;
}

struct rtt_ranges {
    double xmax, ymax;
    double xscale;          /* 1: ms on the axis; 1000: µs, for RTTs below 1 ms (loopback) */
    unsigned char drawn[LABELS_MAX * LABELS_MAX][2]; /* per (variant, server): points, curve */
    double curve_min[LABELS_MAX * LABELS_MAX];       /* the curve's lowest rate: above the scale, not drawn */
};

/* Below this every RTT is a loopback's or a LAN's: the axis goes to µs, so that the
 * points do not all sit in its first tick. */
#define RTT_US_BELOW_MS 1.0
/* The top of the y axis: room above the highest point for its verdict. */
#define RTT_YRANGE(rg) ((rg)->ymax > 0 ? (rg)->ymax * 1.3 : 1)

static void rtt_ranges(const struct summary *s, struct rtt_ranges *r)
{
    *r = (struct rtt_ranges){0};
    for (size_t k = 0; k < s->n; k++) {
        const struct server_summary *g = &s->rows[k];
        double x = row_rtt(g);
        if (!isfinite(x) || !isfinite(g->median_mbps))
            continue;
        r->xmax = x > r->xmax ? x : r->xmax;
        r->ymax = g->median_mbps > r->ymax ? g->median_mbps : r->ymax;
    }
    r->xscale = r->xmax > 0 && r->xmax < RTT_US_BELOW_MS ? 1000 : 1;
    r->xmax = r->xmax > 0 ? r->xmax * 1.25 : 1;
}

/* The data: per (variant, server) two blocks, the points "rtt mbps verdict" and the
 * curve "rtt mbps" ("? ?" when there is none). The y range grows to show each curve's
 * end at the largest RTT, up to 3 times the highest point (a loopback prediction of
 * Tb/s would flatten every point). */
static int write_data(const char *file, const struct result_set *rs, const struct summary *s,
                      const struct plot_axes *a, struct rtt_ranges *rg)
{
    FILE *fp = fopen(file, "w");
    if (!fp)
        return -1;
    double points_max = rg->ymax;
    for (size_t v = 0; v < a->nv; v++)
        for (size_t r = 0; r < a->nr; r++) {
            const struct run_result *rep = NULL;
            size_t pts = 0;
            for (size_t k = 0; k < s->n; k++) {
                const struct server_summary *g = &s->rows[k];
                if (!labels_same(g->server, a->srv[r]) || !labels_same(g->variant, a->var[v]))
                    continue;
                if (!rep && g->median_run < rs->n)
                    rep = rs->runs[g->median_run];
                if (!isfinite(row_rtt(g)) || !isfinite(g->median_mbps))
                    continue;
                fprintf(fp, "%.6g %.6g \"%s\"\n", row_rtt(g) * rg->xscale, g->median_mbps,
                        g->limited_by ? g->limited_by : "");
                pts++;
            }
            if (!pts)
                fputs("? ? \"\"\n", fp);
            fputs("\n\n", fp);
            size_t cpts = 0;
            rg->curve_min[v * a->nr + r] = INFINITY;
            if (rep) {
                struct verdict_in in;
                verdict_in_from_run(rep, &in);
                for (int i = 1; i <= CURVE_POINTS; i++) {
                    double rtt = rg->xmax * i / CURVE_POINTS;
                    struct predict_in p;
                    struct predict_out o;
                    verdict_predict_in(&in, rtt, &p);
                    if (!predict_rate(&p, &o))
                        break;
                    fprintf(fp, "%.6g %.6g\n", rtt * rg->xscale, o.avg_bps / 1e6);
                    cpts++;
                    if (o.avg_bps / 1e6 < rg->curve_min[v * a->nr + r])
                        rg->curve_min[v * a->nr + r] = o.avg_bps / 1e6;
                    /* a curve may raise the scale, but not so far that the points flatten */
                    double cap = (rg->xscale > 1 ? 1.5 : 3) * points_max;
                    if (i == CURVE_POINTS && o.avg_bps / 1e6 > rg->ymax)
                        rg->ymax = o.avg_bps / 1e6 < cap ? o.avg_bps / 1e6 : cap;
                }
            }
            if (!cpts)
                fputs("? ?\n", fp);
            fputs("\n\n", fp);
            rg->drawn[v * a->nr + r][0] = pts > 0;
            rg->drawn[v * a->nr + r][1] = cpts > 0;
        }
    return fclose(fp);
}

/* One (variant, server) of the picture: its points and verdicts, its predicted curve,
 * a key entry for each only when it is drawn, and a cross "(0/3 ok)" in the key when
 * none of its runs succeeded. */
static void script_series(FILE *fp, const struct summary *s, const char *dat, const struct plot_axes *a,
                          const struct rtt_ranges *rg, size_t v, size_t r, size_t idx)
{
    const unsigned char *d = rg->drawn[v * a->nr + r];
    unsigned ok, all;
    plot_runs_ok(s, a, v, r, &ok, &all);
    fputs(", \\\n  ", fp);
    if (!d[0] && ok == 0 && all > 0) {
        fprintf(fp, "NaN with points pt 2 ps 2 lw 2 lc rgb \"%s\" title ", plot_colour(r));
        plot_key_title_runs(fp, s, a, v, r);
        return;
    }
    if (!d[0])
        return;
    plot_qstr(fp, dat);
    fprintf(fp, " index %zu using 1:2 with points pt 7 ps 1.6 lc rgb \"%s\" title ", idx, plot_colour(r));
    plot_key_title_runs(fp, s, a, v, r);
    fputs(", \\\n  ", fp);
    plot_qstr(fp, dat);
    fprintf(fp, " index %zu using 1:2:3 with labels offset 0,1.1 font \",9\" notitle", idx);
    /* a curve wholly above the scale (a loopback's Tb/s) is not drawn: no key entry either */
    if (!d[1] || rg->curve_min[v * a->nr + r] > RTT_YRANGE(rg))
        return;
    char t[600];
    snprintf(t, sizeof t, "%s%s%s predicted", a->srv[r], a->var[v] ? ", " : "", a->var[v] ? a->var[v] : "");
    fputs(", \\\n  ", fp);
    plot_qstr(fp, dat);
    fprintf(fp, " index %zu using 1:2 with lines lw 2 dt %u lc rgb \"%s\" title ", idx + 1, plot_dash(v, r) + 1,
            plot_colour(r));
    plot_qstr(fp, t);
}

static int write_script(FILE *fp, const struct result_set *rs, const struct summary *s, const char *target,
                        const char *out, const char *dat, const struct plot_axes *a, const struct rtt_ranges *rg)
{
    gnuplot_terminal(fp, target, out, 1200, 700);
    char line[160];
    plot_measurement_line(rs, line, sizeof line);
    /* gnuplot's "\n" in a double-quoted string is the line break, '.' joins strings */
    fputs("set datafile missing \"?\"\n"
          "set title \"Throughput against RTT: median per latency cell (point, its verdict) and what the settings "
          "predict (line)\\n\".",
          fp);
    plot_qstr(fp, line);
    fprintf(fp, " font \",12\"\nset xlabel \"RTT (%s, the cell's median min_rtt%s)\"\n"
                "set ylabel \"Throughput (Mb/s = 10^6 bit/s)\"\n"
                "set grid\nset key outside right top vertical Left reverse samplen 3 spacing 1.2\n",
            rg->xscale > 1 ? "µs" : "ms", rg->xscale > 1 ? "; below 1 ms: a loopback or LAN path" : "");
    fprintf(fp, "set xrange [0:%.6g]\nset yrange [0:%.6g]\n", rg->xmax * rg->xscale, RTT_YRANGE(rg));
    if (rg->ymax <= 0)
        fputs("set label 1 \"no successful run\" at graph 0.5, graph 0.5 center\n", fp);
    fputs("plot NaN notitle", fp);
    size_t idx = 0;
    for (size_t v = 0; v < a->nv; v++)
        for (size_t r = 0; r < a->nr; r++, idx += 2)
            script_series(fp, s, dat, a, rg, v, r, idx);
    fputc('\n', fp);
    return ferror(fp) ? -1 : 0;
}

/* plot_rtt_write's picture: the measurement, its axes and ranges, the data file's name. */
struct rtt_plot {
    const struct result_set *rs;
    const struct summary *s;
    struct plot_axes a;
    struct rtt_ranges rg;
    char dat[96];
};

static int rtt_data(void *ctx, const char *dir)
{
    struct rtt_plot *p = ctx;
    snprintf(p->dat, sizeof p->dat, "%s/rtt.dat", dir);
    return write_data(p->dat, p->rs, p->s, &p->a, &p->rg);
}

static int rtt_script(void *ctx, FILE *fp, const char *path, const char *out)
{
    const struct rtt_plot *p = ctx;
    return write_script(fp, p->rs, p->s, path, out, p->dat, &p->a, &p->rg);
}

int plot_rtt_write(const char *path, const struct result_set *rs, const struct summary *s, char *err, size_t errlen)
{
    static const struct gnuplot_writer w = {rtt_data, rtt_script};
    struct rtt_plot p = {.rs = rs, .s = s};
    plot_axes_init(&p.a, s);
    rtt_ranges(s, &p.rg);
    return gnuplot_render(path, "plot-rtt", &w, &p, err, errlen);
}
