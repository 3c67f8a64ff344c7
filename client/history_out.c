/* history_out: see history_out.h. */
#include "history_out.h"

#include "outfile.h"

#include "err.h"
#include "escape.h"
#include "plot.h"
#include "plot_int.h"
#include "sys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void htable_init(struct htable *t, size_t ncols, const char *const *head, const int *numeric)
{
    *t = (struct htable){.ncols = ncols, .head = head, .numeric = numeric};
}

int htable_add(struct htable *t, const char *const *row)
{
    if (t->nrows == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 32;
        char **c = realloc(t->cells, cap * t->ncols * sizeof *c);
        if (!c)
            return -1;
        t->cells = c;
        t->cap = cap;
    }
    char **dst = t->cells + t->nrows * t->ncols;
    for (size_t i = 0; i < t->ncols; i++)
        dst[i] = row[i] ? strdup(row[i]) : NULL;
    t->nrows++;
    return 0;
}

void htable_free(struct htable *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    t->cells = NULL;
    t->nrows = t->cap = 0;
}

json_t *htable_json(const struct htable *t)
{
    json_t *a = json_array();
    for (size_t r = 0; a && r < t->nrows; r++) {
        json_t *o = json_object();
        for (size_t c = 0; c < t->ncols; c++) {
            const char *v = t->cells[r * t->ncols + c];
            json_t *j = !v || !*v            ? json_null()
                        : !t->numeric[c]     ? json_string(v)
                        : strpbrk(v, ".eE") ? json_real(strtod(v, NULL))
                                             : json_integer(strtoll(v, NULL, 10));
            json_object_set_new(o, t->head[c], j);
        }
        json_array_append_new(a, o);
    }
    return a;
}

/* CSV: a field with a comma, quote or line break is quoted, quotes doubled (RFC 4180). */
static void csv_field(FILE *out, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

/* Table and Markdown cells reach a terminal: escaped (escape.h), "|" too in Markdown. */
static void text_cell(FILE *out, const char *s, int width, int markdown, int right)
{
    char buf[1024];
    escape_text(buf, sizeof buf, s ? s : "");
    if (markdown)
        for (char *p = buf; *p; p++)
            if (*p == '|')
                *p = '/';
    fprintf(out, right ? "%*s" : "%-*s", width, buf);
}

int htable_print(FILE *out, enum report_format f, const struct htable *t)
{
    if (f == REPORT_JSON) {
        json_t *a = htable_json(t);
        int rc = a ? json_dumpf(a, out, JSON_INDENT(2)) : -1;
        json_decref(a);
        fputc('\n', out);
        return rc == 0 && !ferror(out) ? 0 : -1;
    }
    if (f == REPORT_CSV) {
        for (size_t c = 0; c < t->ncols; c++) {
            fputs(c ? "," : "", out);
            csv_field(out, t->head[c]);
        }
        fputc('\n', out);
        for (size_t r = 0; r < t->nrows; r++) {
            for (size_t c = 0; c < t->ncols; c++) {
                fputs(c ? "," : "", out);
                const char *v = t->cells[r * t->ncols + c];
                csv_field(out, v ? v : "");
            }
            fputc('\n', out);
        }
        return ferror(out) ? -1 : 0;
    }
    int md = f == REPORT_MARKDOWN;
    int w[32] = {0};
    for (size_t c = 0; c < t->ncols && c < 32; c++) {
        w[c] = (int)strlen(t->head[c]);
        for (size_t r = 0; r < t->nrows; r++) {
            const char *v = t->cells[r * t->ncols + c];
            int l = v ? (int)strlen(v) : 0;
            if (l > w[c])
                w[c] = l < 60 ? l : 60;
        }
    }
    for (size_t c = 0; c < t->ncols; c++) {
        fputs(md ? "| " : c ? "  " : "", out);
        text_cell(out, t->head[c], w[c], md, 0);
        fputs(md ? " " : "", out);
    }
    fputs(md ? "|\n" : "\n", out);
    if (md) {
        for (size_t c = 0; c < t->ncols; c++) {
            fputs("| ", out);
            for (int i = 0; i < w[c]; i++)
                fputc(i == w[c] - 1 && t->numeric[c] ? ':' : '-', out);
            fputc(' ', out);
        }
        fputs("|\n", out);
    }
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            fputs(md ? "| " : c ? "  " : "", out);
            text_cell(out, t->cells[r * t->ncols + c], w[c], md, t->numeric[c]);
            fputs(md ? " " : "", out);
        }
        fputs(md ? "|\n" : "\n", out);
    }
    return ferror(out) ? -1 : 0;
}

/* The data file: one gnuplot block (two blank lines apart) per series. */
static int write_points(const char *path, const struct hpoint *p, size_t n, size_t *nseries)
{
    FILE *fp = fopen(path, "w");
    if (!fp)
        return -1;
    *nseries = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || strcmp(p[i].series, p[i - 1].series) != 0)
            fprintf(fp, "%s", (*nseries)++ ? "\n\n" : "");
        fprintf(fp, "%.3f %.6g\n", p[i].t, p[i].mbps);
    }
    return fclose(fp);
}

static void write_script(FILE *fp, const char *target, const char *out, const char *dat, const struct hpoint *p,
                         size_t n, size_t nseries)
{
    const char *dot = strrchr(target, '.');
    int svg = dot && strcmp(dot, ".svg") == 0;
    fprintf(fp, "set terminal %s size 1200,700 font \"sans,11\"\n",
            svg ? "svg dynamic noenhanced background rgb \"white\"" : "pngcairo noenhanced background rgb \"white\"");
    fputs("set output ", fp);
    plot_qstr(fp, out);
    fputs("\nset xdata time\nset timefmt \"%s\"\nset format x \"%Y-%m-%d\\n%H:%M\"\n"
          "set xlabel \"time (UTC)\"\nset ylabel \"Mb/s\"\nset yrange [0:*]\nset grid\n"
          "set key outside bottom center horizontal\nset title \"debit history: throughput over time\"\n",
          fp);
    if (!nseries) {
        fputs("unset key\nset label 1 \"no run\" at graph 0.5, graph 0.5 center\nplot NaN notitle\n", fp);
        return;
    }
    fputs("plot ", fp);
    size_t s = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && strcmp(p[i].series, p[i - 1].series) == 0)
            continue;
        fprintf(fp, "%s", s ? ", \\\n  " : "");
        plot_qstr(fp, dat);
        fprintf(fp, " index %zu using 1:2 with linespoints pt 7 ps 0.6 lc rgb \"%s\" title ", s, plot_colour(s));
        plot_qstr(fp, p[i].series);
        s++;
    }
    fputc('\n', fp);
}

int history_plot(const char *path, const struct hpoint *p, size_t n, char *err, size_t errlen)
{
    if (plot_check(err, errlen) != 0)
        return -1;
    char dir[] = "/tmp/debit-hplot.XXXXXX";
    if (!mkdtemp(dir))
        return err_set(err, errlen, "temporary directory: %s", strerror(errno));
    char dat[64], script[64], errfile[64];
    snprintf(dat, sizeof dat, "%s/points.dat", dir);
    snprintf(script, sizeof script, "%s/plot.gp", dir);
    snprintf(errfile, sizeof errfile, "%s/err", dir);
    int rc = -1;
    size_t nseries = 0;
    struct outfile pic = {0}; /* as --plot: a device or FIFO is written, never replaced */
    FILE *fp = NULL;
    if (write_points(dat, p, n, &nseries) != 0 || !(fp = fopen(script, "w"))) {
        err_set(err, errlen, "%s: %s", dir, strerror(errno));
        goto out;
    }
    if (!outfile_open(&pic, path, err, errlen))
        goto out;
    write_script(fp, path, outfile_write_path(&pic), dat, p, n, nseries);
    if (fclose(fp) != 0) {
        fp = NULL;
        err_set(err, errlen, "%s: %s", script, strerror(errno));
        goto out;
    }
    fp = NULL;
    int st = plot_run_gnuplot(script, errfile);
    if (st != 0) {
        err_set(err, errlen, "gnuplot failed (status %d)", st);
        goto out;
    }
    rc = outfile_commit(&pic, err, errlen);
out:
    outfile_abort(&pic);
    if (fp)
        fclose(fp);
    unlink(dat);
    unlink(script);
    unlink(errfile);
    rmdir(dir);
    return rc;
}
