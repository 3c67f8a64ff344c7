/* plot_rtt: the throughput-against-RTT picture of --plot (plot.h): per (server, client
 * variant) its measured points — the median of each latency cell at that cell's median
 * RTT — labelled with the cell's verdict, and the curve its settings predict over the
 * RTT range (predict.h with the RTT replaced, from the group's median run), so that a
 * server falling with RTT as buffer / RTT says shows as points on a hyperbola. */
#include "plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "outfile.h"
#include "plot_int.h"
#include "sys.h"
#include "units.h"
#include "verdict.h"

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
};

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
                fprintf(fp, "%.6g %.6g \"%s\"\n", row_rtt(g), g->median_mbps, g->limited_by ? g->limited_by : "");
                pts++;
            }
            if (!pts)
                fputs("? ? \"\"\n", fp);
            fputs("\n\n", fp);
            size_t cpts = 0;
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
                    fprintf(fp, "%.6g %.6g\n", rtt, o.avg_bps / 1e6);
                    cpts++;
                    if (i == CURVE_POINTS && o.avg_bps / 1e6 > rg->ymax)
                        rg->ymax = o.avg_bps / 1e6 < 3 * points_max ? o.avg_bps / 1e6 : 3 * points_max;
                }
            }
            if (!cpts)
                fputs("? ?\n", fp);
            fputs("\n\n", fp);
        }
    return fclose(fp);
}

static int write_script(FILE *fp, const char *target, const char *out, const char *dat, const struct plot_axes *a,
                        const struct rtt_ranges *rg)
{
    const char *dot = strrchr(target, '.');
    int svg = dot && strcmp(dot, ".svg") == 0;
    fprintf(fp, "set terminal %s size 1200,700 font \"sans,11\"\n",
            svg ? "svg dynamic noenhanced background rgb \"white\"" : "pngcairo noenhanced background rgb \"white\"");
    fputs("set output ", fp);
    plot_qstr(fp, out);
    fputs("\nset datafile missing \"?\"\n"
          "set title \"Throughput against RTT: median per latency cell (point, its verdict) and what the "
          "settings predict (line)\" font \",12\"\n"
          "set xlabel \"RTT (ms, the cell's median min_rtt)\"\nset ylabel \"Throughput (Mb/s = 10^6 bit/s)\"\n"
          "set grid\nset key outside right top vertical Left reverse samplen 3 spacing 1.2\n",
          fp);
    fprintf(fp, "set xrange [0:%.6g]\nset yrange [0:%.6g]\n", rg->xmax, rg->ymax > 0 ? rg->ymax * 1.3 : 1);
    if (rg->ymax <= 0)
        fputs("set label 1 \"no successful run\" at graph 0.5, graph 0.5 center\n", fp);
    fputs("plot ", fp);
    size_t idx = 0;
    for (size_t v = 0; v < a->nv; v++)
        for (size_t r = 0; r < a->nr; r++, idx += 2) {
            char t[600];
            snprintf(t, sizeof t, "%s%s%s", a->srv[r], a->var[v] ? ", " : "", a->var[v] ? a->var[v] : "");
            fprintf(fp, "%s", idx ? ", \\\n  " : "");
            plot_qstr(fp, dat);
            fprintf(fp, " index %zu using 1:2 with points pt 7 ps 1.6 lc rgb \"%s\" title ", idx, plot_colour(r));
            plot_key_title(fp, a, v, r);
            fputs(", \\\n  ", fp);
            plot_qstr(fp, dat);
            fprintf(fp, " index %zu using 1:2:3 with labels offset 0,1.1 font \",9\" notitle, \\\n  ", idx);
            plot_qstr(fp, dat);
            fprintf(fp, " index %zu using 1:2 with lines lw 2 dt %u lc rgb \"%s\" title ", idx + 1, plot_dash(v, r) + 1,
                    plot_colour(r));
            strncat(t, " predicted", sizeof t - strlen(t) - 1);
            plot_qstr(fp, t);
        }
    if (!idx)
        fputs("NaN notitle", fp);
    fputc('\n', fp);
    return ferror(fp) ? -1 : 0;
}

int plot_rtt_write(const char *path, const struct result_set *rs, const struct summary *s, char *err, size_t errlen)
{
    char dir[] = "/tmp/debit-plot-rtt.XXXXXX";
    if (!mkdtemp(dir))
        return err_set(err, errlen, "temporary directory: %s", strerror(errno));
    char dat[64], script[64], errfile[64];
    snprintf(dat, sizeof dat, "%s/rtt.dat", dir);
    snprintf(script, sizeof script, "%s/rtt.gp", dir);
    snprintf(errfile, sizeof errfile, "%s/err", dir);
    struct plot_axes a;
    struct rtt_ranges rg;
    plot_axes_init(&a, s);
    rtt_ranges(s, &rg);
    struct outfile pic = {0};
    int rc = -1;
    FILE *fp = NULL;
    if (write_data(dat, rs, s, &a, &rg) != 0 || !(fp = fopen(script, "w"))) {
        err_set(err, errlen, "%s: %s", dir, strerror(errno));
    } else if (outfile_open(&pic, path, err, errlen)) {
        int wrc = write_script(fp, path, outfile_write_path(&pic), dat, &a, &rg);
        wrc |= fclose(fp);
        fp = NULL;
        int st = wrc == 0 ? plot_run_gnuplot(script, errfile) : -1;
        if (wrc != 0)
            err_set(err, errlen, "%s: %s", script, strerror(errno));
        else if (st != 0)
            err_set(err, errlen, "gnuplot failed on %s (status %d)", path, st);
        else
            rc = outfile_commit(&pic, err, errlen);
    }
    outfile_abort(&pic);
    if (fp)
        fclose(fp);
    unlink(dat);
    unlink(script);
    unlink(errfile);
    rmdir(dir);
    return rc;
}
