/* history: see history.h. Options are parsed here (the subcommand has its own set), the
 * store is read through client/store/store_history.h, and printed by history_out.c. */
#include "history.h"

#include "cliopt.h"
#include "err.h"
#include "history_by.h"
#include "history_out.h"
#include "stats.h"
#include "store.h"
#include "store_history.h"
#include "store_record.h"
#include "units.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct hopts {
    struct store_spec spec;
    int spec_given;
    struct store_filter f;
    double every_s;
    int runs, by;
    enum report_format format;
    const char *plot, *import, *vantage_import;
};

void history_usage(FILE *out)
{
    fputs("Usage: debit history [OPTIONS]\n"
          "Read back the runs kept in the store (docs/store.md).\n"
          "  (default)            per-server summary: n, median, p10, p90 of the runs' Mb/s\n"
          "      --runs           list the runs instead\n"
          "      --by vantage,server  median polish of log rate: each server's and vantage's\n"
          "                       effect as a factor (1 = the overall median), and residuals\n"
          "      --every DUR      summaries per time window (1d, 6h, ...)\n"
          "      --server NAME    --vantage NAME  --scenario NAME (latency, variant or \"L / V\")\n"
          "      --since TIME     --until TIME  (2026-12-01, 2026-12-01T10:00, or 7d for 7 days ago)\n"
          "  -f, --format FMT     table (default), markdown, csv, json\n"
          "      --plot FILE      Mb/s over time, one line per server (.png or .svg; gnuplot)\n"
          "      --import FILE    store the runs of a --jsonl file (repeating it adds nothing)\n"
          "      --vantage-import NAME  the vantage of imported runs (default: this host's name)\n"
          "      --db SPEC        the store: PATH, sqlite:PATH, postgresql://..., (default:\n"
          "                       $DEBIT_DB, else $XDG_DATA_HOME/debit/results.db)\n"
          "  -h, --help\n",
          out);
}

/* "2026-12-01", "2026-12-01T10:00[:SS]" (UTC), or a duration ago ("7d"). */
static int parse_when(const char *opt, const char *arg, double *t, char *err, size_t errlen)
{
    uint64_t us;
    if (units_parse_duration(arg, &us) == UNITS_OK) {
        *t = (double)time(NULL) - us / 1e6;
        return 0;
    }
    struct tm tm = {0};
    const char *end = strptime(arg, "%Y-%m-%d", &tm);
    if (end && *end == 'T')
        end = strptime(end + 1, "%H:%M", &tm);
    if (end && *end == ':')
        end = strptime(end + 1, "%S", &tm);
    if (end && *end == 'Z')
        end++;
    if (!end || *end)
        return cliopt_error(err, errlen, opt, arg, "not a time (2026-12-01, 2026-12-01T10:00 UTC, or 7d ago)");
    *t = (double)timegm(&tm);
    return 0;
}

enum { O_RUNS = 256, O_BY, O_EVERY, O_SERVER, O_VANTAGE, O_SCENARIO, O_SINCE, O_UNTIL, O_PLOT, O_IMPORT, O_DB, O_VIMP };

static int parse_one(struct hopts *o, int c, const char *arg, char *err, size_t errlen)
{
    uint64_t us;
    switch (c) {
    case O_RUNS:
        o->runs = 1;
        return 0;
    case O_BY:
        if (strcmp(arg, "vantage,server") != 0 && strcmp(arg, "server,vantage") != 0)
            return cliopt_error(err, errlen, "--by", arg, "only vantage,server");
        o->by = 1;
        return 0;
    case O_EVERY:
        if (units_parse_duration(arg, &us) != UNITS_OK || us < 1000000)
            return cliopt_error(err, errlen, "--every", arg, "not a duration of 1 s or more (1d, 6h, 30min)");
        o->every_s = us / 1e6;
        return 0;
    case O_SERVER:
        o->f.server = arg;
        return 0;
    case O_VANTAGE:
        o->f.vantage = arg;
        return 0;
    case O_SCENARIO:
        o->f.scenario = arg;
        return 0;
    case O_SINCE:
        return parse_when("--since", arg, &o->f.since, err, errlen);
    case O_UNTIL:
        return parse_when("--until", arg, &o->f.until, err, errlen);
    case 'f':
        if (report_format_parse(arg, &o->format) != 0)
            return cliopt_error(err, errlen, "--format", arg, "table, markdown, csv or json");
        return 0;
    case O_PLOT:
        o->plot = arg;
        return 0;
    case O_IMPORT:
        o->import = arg;
        return 0;
    case O_VIMP:
        o->vantage_import = arg;
        return 0;
    case O_DB:
        o->spec_given = 1;
        if (store_spec_parse(arg, &o->spec, err, errlen) != 0)
            return err_prefix(err, errlen, "--db");
        return 0;
    default:
        return err_set(err, errlen, "unknown option (debit history --help)");
    }
}

/* Returns 0 to go on, 1 after --help, -1 (err) for a usage error. */
static int parse_args(struct hopts *o, int argc, char **argv, char *err, size_t errlen)
{
    static const struct option lo[] = {
        {"runs", no_argument, NULL, O_RUNS},        {"by", required_argument, NULL, O_BY},
        {"every", required_argument, NULL, O_EVERY}, {"server", required_argument, NULL, O_SERVER},
        {"vantage", required_argument, NULL, O_VANTAGE}, {"scenario", required_argument, NULL, O_SCENARIO},
        {"since", required_argument, NULL, O_SINCE}, {"until", required_argument, NULL, O_UNTIL},
        {"format", required_argument, NULL, 'f'},    {"plot", required_argument, NULL, O_PLOT},
        {"import", required_argument, NULL, O_IMPORT}, {"vantage-import", required_argument, NULL, O_VIMP},
        {"db", required_argument, NULL, O_DB},       {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    *o = (struct hopts){.f = {.since = NAN, .until = NAN}};
    opterr = 0;
    optind = 1;
    int c;
    while ((c = getopt_long(argc, argv, ":f:h", lo, NULL)) != -1) {
        if (c == 'h')
            return 1;
        if (c == '?')
            return err_set(err, errlen, "%s: unknown option (debit history --help)", argv[optind - 1]);
        if (c == ':')
            return err_set(err, errlen, "%s: needs a value", argv[optind - 1]);
        if (parse_one(o, c, optarg, err, errlen) != 0)
            return -1;
    }
    if (optind < argc)
        return err_set(err, errlen, "%s: unexpected argument", argv[optind]);
    if (o->by + o->runs > 1 || (o->every_s > 0 && (o->by || o->runs)))
        return err_set(err, errlen, "--runs, --by and --every choose different tables: give one");
    if (o->plot && o->by)
        return err_set(err, errlen, "--plot draws runs over time, not --by's fit: give one");
    if (!o->spec_given && store_spec_default(&o->spec, err, errlen) != 0)
        return -1;
    if (o->spec.kind == STORE_NONE)
        return err_set(err, errlen, "--db none: no store to read");
    return 0;
}

static void fmt_num(char *buf, size_t len, double v, const char *fmt)
{
    if (isfinite(v))
        snprintf(buf, len, fmt, v);
    else
        buf[0] = '\0';
}

static void fmt_time(char *buf, size_t len, double t)
{
    time_t s = (time_t)t;
    struct tm tm;
    if (gmtime_r(&s, &tm))
        strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
    else
        buf[0] = '\0';
}

/* --- --runs ---------------------------------------------------------------------- */

static const char *const run_head[] = {"started_at", "vantage", "server", "scenario", "variant", "direction",
                                       "streams", "ok", "avg_mbps", "rtt_ms", "limited_by", "predicted_mbps",
                                       "run_id"};
static const int run_numeric[] = {0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 0, 1, 0};

struct runs_acc {
    struct htable t;
    struct hpoint *pts;
    size_t npts, cap;
    char **names; /* owned series names of the points */
    int failed;
};

static int acc_point(struct runs_acc *a, const char *series, double t, double mbps)
{
    if (a->npts == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 256;
        struct hpoint *p = realloc(a->pts, cap * sizeof *p);
        char **n = realloc(a->names, cap * sizeof *n);
        if (p)
            a->pts = p;
        if (n)
            a->names = n;
        if (!p || !n)
            return -1;
        a->cap = cap;
    }
    a->names[a->npts] = strdup(series);
    a->pts[a->npts] = (struct hpoint){a->names[a->npts], t, mbps};
    a->npts++;
    return a->names[a->npts - 1] ? 0 : -1;
}

static int on_run(void *ud, const struct store_run_row *r)
{
    struct runs_acc *a = ud;
    char at[32], streams[16], mbps[32], rtt[32], pred[32];
    fmt_time(at, sizeof at, r->started_at);
    snprintf(streams, sizeof streams, "%d", r->streams);
    fmt_num(mbps, sizeof mbps, r->avg_mbps, "%.3f");
    fmt_num(rtt, sizeof rtt, r->rtt_ms, "%.3f");
    fmt_num(pred, sizeof pred, r->predicted_mbps, "%.3f");
    const char *row[] = {at, r->vantage, r->server, r->scenario, r->variant, r->direction, streams,
                         r->ok ? "1" : "0", mbps, rtt, r->limited_by, pred, r->run_id};
    if (htable_add(&a->t, row) != 0)
        return a->failed = 1;
    if (r->ok && isfinite(r->avg_mbps) && acc_point(a, r->server, r->started_at, r->avg_mbps) != 0)
        return a->failed = 1;
    return 0;
}

static int cmp_point(const void *x, const void *y)
{
    const struct hpoint *a = x, *b = y;
    int c = strcmp(a->series, b->series);
    return c ? c : (a->t > b->t) - (a->t < b->t);
}

/* --- summaries (default, --every) ------------------------------------------------- */

/* The runs' rates per (server, window), windows of every_s seconds from the epoch. */
struct group {
    char *server;
    double window;
    double *v;
    size_t n, cap;
};

static struct group *find_group(struct group **gs, size_t *ng, const char *server, double window)
{
    for (size_t i = *ng; i-- > 0;)
        if ((*gs)[i].window == window && strcmp((*gs)[i].server, server) == 0)
            return &(*gs)[i];
    struct group *g = realloc(*gs, (*ng + 1) * sizeof *g);
    if (!g)
        return NULL;
    *gs = g;
    g = &g[(*ng)++];
    *g = (struct group){.server = strdup(server), .window = window};
    return g->server ? g : NULL;
}

static int cmp_group(const void *x, const void *y)
{
    const struct group *a = x, *b = y;
    int c = strcmp(a->server, b->server);
    return c ? c : (a->window > b->window) - (a->window < b->window);
}

static int summarise(const struct hopts *o, struct runs_acc *a, struct htable *out)
{
    struct group *gs = NULL;
    size_t ng = 0;
    int rc = 0;
    for (size_t i = 0; i < a->npts && rc == 0; i++) {
        double w = o->every_s > 0 ? floor(a->pts[i].t / o->every_s) * o->every_s : 0;
        struct group *g = find_group(&gs, &ng, a->pts[i].series, w);
        if (!g) {
            rc = -1;
            break;
        }
        if (g->n == g->cap) {
            size_t cap = g->cap ? g->cap * 2 : 16;
            double *v = realloc(g->v, cap * sizeof *v);
            if (!v) {
                rc = -1;
                break;
            }
            g->v = v;
            g->cap = cap;
        }
        g->v[g->n++] = a->pts[i].mbps;
    }
    if (ng) /* qsort's array may not be NULL, even for no element */
        qsort(gs, ng, sizeof *gs, cmp_group);
    for (size_t i = 0; i < ng && rc == 0; i++) {
        char win[32] = "", n[16], med[32], p10[32], p90[32];
        if (o->every_s > 0)
            fmt_time(win, sizeof win, gs[i].window);
        snprintf(n, sizeof n, "%zu", gs[i].n);
        fmt_num(med, sizeof med, stats_median(gs[i].v, gs[i].n), "%.3f");
        fmt_num(p10, sizeof p10, stats_quantile(gs[i].v, gs[i].n, 0.1), "%.3f");
        fmt_num(p90, sizeof p90, stats_quantile(gs[i].v, gs[i].n, 0.9), "%.3f");
        const char *row5[] = {gs[i].server, n, med, p10, p90};
        const char *row6[] = {win, gs[i].server, n, med, p10, p90};
        rc = htable_add(out, o->every_s > 0 ? row6 : row5);
    }
    for (size_t i = 0; i < ng; i++) {
        free(gs[i].server);
        free(gs[i].v);
    }
    free(gs);
    return rc;
}

static void acc_free(struct runs_acc *a)
{
    htable_free(&a->t);
    for (size_t i = 0; i < a->npts; i++)
        free(a->names[i]);
    free(a->names);
    free(a->pts);
}

/* The default table, --every and --runs; --plot beside any of them. */
static int show_runs(const struct hopts *o, struct store *st)
{
    static const char *const sum_head[] = {"server", "n", "median_mbps", "p10_mbps", "p90_mbps"};
    static const char *const win_head[] = {"window", "server", "n", "median_mbps", "p10_mbps", "p90_mbps"};
    static const int sum_num[] = {0, 1, 1, 1, 1}, win_num[] = {0, 0, 1, 1, 1, 1};
    char err[1024];
    struct runs_acc a = {0};
    htable_init(&a.t, 13, run_head, run_numeric);
    if (store_history_runs(st, &o->f, on_run, &a, err, sizeof err) != 0 || a.failed) {
        fprintf(stderr, "debit: history: %s\n", a.failed ? "out of memory" : err);
        acc_free(&a);
        return 1;
    }
    int rc = 0;
    if (o->runs) {
        rc = htable_print(stdout, o->format, &a.t) == 0 ? 0 : 1;
    } else {
        struct htable s;
        if (o->every_s > 0)
            htable_init(&s, 6, win_head, win_num);
        else
            htable_init(&s, 5, sum_head, sum_num);
        rc = summarise(o, &a, &s) == 0 && htable_print(stdout, o->format, &s) == 0 ? 0 : 1;
        htable_free(&s);
    }
    if (o->plot) {
        if (a.npts)
            qsort(a.pts, a.npts, sizeof *a.pts, cmp_point);
        if (history_plot(o->plot, a.pts, a.npts, err, sizeof err) != 0) {
            fprintf(stderr, "debit: --plot: %s\n", err);
            rc = 1;
        } else {
            fprintf(stderr, "debit: plot written to %s\n", o->plot);
        }
    }
    acc_free(&a);
    return rc;
}

/* --- --import ---------------------------------------------------------------------- */

/* Each line of a --jsonl file is one run (docs/schema/debit-run.schema.json); its id is
 * derived from the line, so importing the same file twice adds nothing. */
static int import_file(const struct hopts *o, struct store *st)
{
    FILE *fp = strcmp(o->import, "-") == 0 ? stdin : fopen(o->import, "r");
    if (!fp) {
        fprintf(stderr, "debit: --import: %s: %m\n", o->import);
        return 2;
    }
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    struct store_context ctx = {.vantage = o->vantage_import ? o->vantage_import : host};
    json_t **recs = NULL;
    size_t n = 0, cap = 0, lineno = 0;
    char *line = NULL, err[1024];
    size_t lcap = 0;
    ssize_t len;
    int code = 0;
    while (code == 0 && (len = getline(&line, &lcap, fp)) > 0) {
        lineno++;
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (!len)
            continue;
        json_error_t je;
        json_t *run = json_loads(line, 0, &je);
        char id[40] = "imp-";
        store_content_id(line, (size_t)len, id + 4);
        json_t *rec = run ? store_record_run(run, &ctx, id, NULL, err, sizeof err) : NULL;
        json_decref(run);
        if (!rec) {
            fprintf(stderr, "debit: --import: %s:%zu: %s\n", o->import, lineno, run ? err : je.text);
            code = 1;
            break;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 256;
            json_t **p = realloc(recs, cap * sizeof *p);
            if (!p) {
                json_decref(rec);
                fprintf(stderr, "debit: out of memory\n");
                code = 1;
                break;
            }
            recs = p;
        }
        recs[n++] = rec;
    }
    free(line);
    if (fp != stdin)
        fclose(fp);
    long added = code ? 0 : store_insert(st, "runs", recs, n, err, sizeof err);
    if (added < 0) {
        fprintf(stderr, "debit: --import: %s\n", err);
        code = 1;
    } else if (!code) {
        fprintf(stderr, "debit: --import: %zu run%s read, %ld new\n", n, n == 1 ? "" : "s", added);
    }
    for (size_t i = 0; i < n; i++)
        json_decref(recs[i]);
    free(recs);
    return code;
}

int history_main(int argc, char **argv)
{
    struct hopts o;
    char err[1024] = "";
    int pr = parse_args(&o, argc, argv, err, sizeof err);
    if (pr == 1) {
        history_usage(stdout);
        return 0;
    }
    if (pr != 0) {
        fprintf(stderr, "debit: history: %s\n", err);
        return 2;
    }
    if (o.spec.kind == STORE_SQLITE && !o.import && access(o.spec.target, F_OK) != 0) {
        fprintf(stderr, "debit: history: %s: no store there yet (debit keeps its runs there)\n", o.spec.target);
        return 1;
    }
    if (o.spec.kind == STORE_SQLITE && store_mkdirs(o.spec.target, err, sizeof err) != 0) {
        fprintf(stderr, "debit: history: %s\n", err);
        return 1;
    }
    struct store *st = store_open(&o.spec, err, sizeof err);
    if (!st) {
        char shown[4200];
        store_spec_display(&o.spec, shown, sizeof shown);
        fprintf(stderr, "debit: history: %s: %s\n", shown, err);
        return 1;
    }
    int code;
    if (o.import)
        code = import_file(&o, st);
    else if (o.by)
        code = history_by(st, &o.f, o.format);
    else
        code = show_runs(&o, st);
    store_close(st);
    return code;
}
