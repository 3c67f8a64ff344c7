/* history_out: see history_out.h. */
#include "history_out.h"

#include "gnuplot_run.h"

#include "err.h"
#include "escape.h"
#include "plot.h"
#include "plot_int.h"
#include "sys.h"

#include <stdlib.h>
#include <string.h>

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
    gnuplot_terminal(fp, target, out, 1200, 700);
    fputs("set xdata time\nset timefmt \"%s\"\nset format x \"%Y-%m-%d\\n%H:%M\"\n"
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

/* history_plot's picture: its points, the data file's name, its series. */
struct hplot {
    const struct hpoint *p;
    size_t n, nseries;
    char dat[96];
};

static int hplot_data(void *ctx, const char *dir)
{
    struct hplot *h = ctx;
    snprintf(h->dat, sizeof h->dat, "%s/points.dat", dir);
    return write_points(h->dat, h->p, h->n, &h->nseries);
}

static int hplot_script(void *ctx, FILE *fp, const char *path, const char *out)
{
    const struct hplot *h = ctx;
    write_script(fp, path, out, h->dat, h->p, h->n, h->nseries);
    return ferror(fp) ? -1 : 0;
}

int history_plot(const char *path, const struct hpoint *p, size_t n, char *err, size_t errlen)
{
    if (plot_check(err, errlen) != 0)
        return -1;
    static const struct gnuplot_writer w = {hplot_data, hplot_script};
    struct hplot h = {.p = p, .n = n};
    return gnuplot_render(path, "hplot", &w, &h, err, errlen);
}
