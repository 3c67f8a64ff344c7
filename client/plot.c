/* plot: see plot.h. gnuplot runs as a child process (posix_spawnp) with its stderr
 * captured; the run is bounded (30 s) so a broken gnuplot cannot hang a measurement. */
#include <stdio.h>

#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define MAXL 64

int plot_check(char *err, size_t errlen)
{
    const char *path = getenv("PATH");
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", path ? path : "/usr/bin:/bin");
    for (char *save = NULL, *d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        char f[4200];
        snprintf(f, sizeof f, "%s/gnuplot", d);
        if (access(f, X_OK) == 0)
            return 0;
    }
    snprintf(err, errlen, "gnuplot not found in PATH (Debian: apt-get install gnuplot-nox)");
    return -1;
}

static int same(const char *a, const char *b)
{
    return (!a || !b) ? a == b : strcmp(a, b) == 0;
}

/* gnuplot string literal: double quotes, backslash-escaped. */
static void qstr(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (; s && *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', fp);
        fputc(*s, fp);
    }
    fputc('"', fp);
}

static size_t distinct(const struct summary *s, int which, const char **vals)
{
    size_t n = 0;
    for (size_t k = 0; k < s->n && n < MAXL; k++) {
        const struct server_summary *g = &s->rows[k];
        const char *v = which == 0 ? g->scenario : which == 1 ? g->variant : g->server;
        size_t i;
        for (i = 0; i < n && !same(vals[i], v); i++)
            ;
        if (i == n)
            vals[n++] = v;
    }
    return n;
}

static const struct server_summary *find(const struct summary *s, const char *scn, const char *var, const char *srv)
{
    for (size_t k = 0; k < s->n; k++)
        if (same(s->rows[k].scenario, scn) && same(s->rows[k].variant, var) && strcmp(s->rows[k].server, srv) == 0)
            return &s->rows[k];
    return NULL;
}

/* bars: one row per scenario: label, then median min max per (variant, server) column. */
static int write_bars(const char *file, const struct summary *s)
{
    FILE *fp = fopen(file, "w");
    if (!fp)
        return -1;
    const char *scn[MAXL], *var[MAXL], *srv[MAXL];
    size_t ns = distinct(s, 0, scn), nv = distinct(s, 1, var), nr = distinct(s, 2, srv);
    for (size_t i = 0; i < ns; i++) {
        /* Data-file strings know no escapes: a double quote becomes a single one. */
        fputc('"', fp);
        for (const char *p = scn[i] ? scn[i] : "measured"; *p; p++)
            fputc(*p == '"' ? '\'' : *p, fp);
        fputc('"', fp);
        for (size_t v = 0; v < nv; v++)
            for (size_t r = 0; r < nr; r++) {
                const struct server_summary *g = find(s, scn[i], var[v], srv[r]);
                if (g && isfinite(g->median_mbps))
                    fprintf(fp, " %.6g %.6g %.6g", g->median_mbps, g->min_mbps, g->max_mbps);
                else
                    fputs(" ? ? ?", fp);
            }
        fputc('\n', fp);
    }
    return fclose(fp);
}

/* series: one block per summary row with a median run: "t rate" lines, blocks separated
 * by two blank lines (gnuplot's index). */
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
        /* Steps: each sample from the start of its interval; the last one held until the
         * last byte (body_s), so a partial interval has its true width. */
        for (size_t i = 0; i < r->nseries; i++)
            fprintf(fp, "%.4f %.6g\n", (double)i * r->series_interval_s, r->series[i]);
        if (r->nseries)
            fprintf(fp, "%.4f %.6g\n", r->body_s, r->series[r->nseries - 1]);
        fputs("\n\n", fp);
    }
    return fclose(fp);
}

static void group_title(FILE *fp, const struct server_summary *g, int with_scenario)
{
    char t[512];
    snprintf(t, sizeof t, "%s%s%s%s%s%s", g->server, g->variant ? ", " : "", g->variant ? g->variant : "",
             with_scenario && g->scenario ? " (" : "", with_scenario && g->scenario ? g->scenario : "",
             with_scenario && g->scenario ? ")" : "");
    qstr(fp, t);
}

int plot_script(FILE *fp, const char *path, const struct result_set *rs, const struct summary *s,
                const char *bars_dat, const char *series_dat)
{
    (void)rs;
    const char *dot = strrchr(path, '.');
    int svg = dot && strcmp(dot, ".svg") == 0;
    const char *scn[MAXL], *var[MAXL], *srv[MAXL];
    size_t ns = distinct(s, 0, scn), nv = distinct(s, 1, var), nr = distinct(s, 2, srv);
    fprintf(fp, "set terminal %s size 1200,1000 font \"sans,11\"\n", svg ? "svg dynamic noenhanced" : "pngcairo noenhanced");
    fputs("set output ", fp);
    qstr(fp, path);
    fputs("\nset datafile missing \"?\"\nset multiplot layout 2,1\n", fp);
    /* (1) grouped bars with min-max whiskers */
    fputs("set title \"Median of each download's average throughput (bars), min to max (whiskers)\"\n"
          "set ylabel \"Throughput (Mb/s, 10^6 bit/s)\"\nset yrange [0:*]\n"
          "set style data histogram\nset style histogram errorbars gap 1 lw 1\n"
          "set style fill solid 0.7 border -1\nset boxwidth 0.9\nset key outside right top vertical\n"
          "set grid ytics\nset xtics nomirror\n",
          fp);
    fprintf(fp, "set xlabel %s\n", ns > 1 || scn[0] ? "\"Latency scenario\"" : "\"\"");
    fputs("plot ", fp);
    size_t col = 2;
    int first = 1;
    for (size_t v = 0; v < nv; v++)
        for (size_t r = 0; r < nr; r++, col += 3) {
            char t[512];
            snprintf(t, sizeof t, "%s%s%s", srv[r], var[v] ? ", " : "", var[v] ? var[v] : "");
            fprintf(fp, "%s", first ? "" : ", ");
            qstr(fp, bars_dat);
            fprintf(fp, " using %zu:%zu:%zu:xtic(1) title ", col, col + 1, col + 2);
            qstr(fp, t);
            first = 0;
        }
    fputc('\n', fp);
    /* (2) throughput over time of each group's median run */
    fputs("unset style\nset style data lines\nset title \"Throughput over time of each server's median run "
          "(100 ms samples from the end of the response headers)\"\n"
          "set xlabel \"Time since the end of the response headers (s)\"\n"
          "set ylabel \"Throughput (Mb/s)\"\nset xrange [0:*]\nset yrange [0:*]\nset xtics mirror\nset key outside right top\n",
          fp);
    size_t idx = 0;
    first = 1;
    for (size_t k = 0; k < s->n; k++) {
        const struct server_summary *g = &s->rows[k];
        if (g->median_run == SIZE_MAX)
            continue;
        fprintf(fp, "%s", first ? "plot " : ", ");
        qstr(fp, series_dat);
        fprintf(fp, " index %zu using 1:2 with steps lw 2 title ", idx++);
        group_title(fp, g, ns > 1 || scn[0] != NULL);
        first = 0;
    }
    if (first)
        fputs("set label 1 \"no successful run\" at graph 0.5, graph 0.5 center\nplot NaN notitle", fp);
    fputs("\nunset multiplot\n", fp);
    return ferror(fp) ? -1 : 0;
}

/* Run gnuplot on script, stderr into errfile, bounded in time. Returns the exit status. */
static int run_gnuplot(const char *script, const char *errfile)
{
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char *argv[] = {(char *)"gnuplot", (char *)script, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return -1;
    for (int i = 0; i < 3000; i++) {
        int st;
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
        if (w < 0 && errno != EINTR)
            return -1;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

int plot_write(const char *path, const struct result_set *rs, const struct summary *s, char *err, size_t errlen)
{
    if (plot_check(err, errlen) != 0)
        return -1;
    char dir[] = "/tmp/debit-plot.XXXXXX";
    if (!mkdtemp(dir)) {
        snprintf(err, errlen, "temporary directory: %s", strerror(errno));
        return -1;
    }
    char bars[64], series[64], script[64], errfile[64], tmpout[4200];
    snprintf(bars, sizeof bars, "%s/bars.dat", dir);
    snprintf(series, sizeof series, "%s/series.dat", dir);
    snprintf(script, sizeof script, "%s/plot.gp", dir);
    snprintf(errfile, sizeof errfile, "%s/err", dir);
    /* Rendered beside the target, then renamed: a reader never sees half a picture. */
    snprintf(tmpout, sizeof tmpout, "%s.tmp%s", path, strrchr(path, '.'));
    int rc = -1;
    FILE *fp = NULL;
    if (write_bars(bars, s) != 0 || write_series(series, rs, s) != 0 || !(fp = fopen(script, "w"))) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        goto out;
    }
    if (plot_script(fp, tmpout, rs, s, bars, series) != 0 || fclose(fp) != 0) {
        fp = NULL;
        snprintf(err, errlen, "%s: %s", script, strerror(errno));
        goto out;
    }
    fp = NULL;
    int st = run_gnuplot(script, errfile);
    if (st != 0) {
        char line[256] = "";
        FILE *ef = fopen(errfile, "r");
        while (ef && fgets(line, sizeof line, ef))
            if (strstr(line, "rror") || strstr(line, "arning"))
                break;
        if (ef)
            fclose(ef);
        line[strcspn(line, "\n")] = 0;
        snprintf(err, errlen, "gnuplot failed (status %d)%s%s", st, line[0] ? ": " : "", line);
        unlink(tmpout);
        goto out;
    }
    if (rename(tmpout, path) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        unlink(tmpout);
        goto out;
    }
    rc = 0;
out:
    if (fp)
        fclose(fp);
    unlink(bars);
    unlink(series);
    unlink(script);
    unlink(errfile);
    rmdir(dir);
    return rc;
}
