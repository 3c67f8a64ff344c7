/* debit: the measurement client. main() only wires the modules together: options, the
 * plan (measurement loop), the journal, progress, outputs, and the exit status. */
#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "escape.h"
#include "history.h"
#include "jsonl.h"
#include "log.h"
#include "netcfg.h"
#include "offload_session.h"
#include "opts.h"
#include "plan.h"
#include "plot.h"
#include "progress.h"
#include "plan_json.h"
#include "plan_text.h"
#include "scenario.h"
#include "report.h"
#include "result.h"
#include "settings.h"
#include "store.h"
#include "store_choice.h"
#include "store_session.h"
#include "summary.h"
#include "units.h"
#include "writeout.h"

static volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
    g_stop = sig;
}

static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* A closed terminal or SSH session (SIGHUP) must not leave --delay's netem qdisc on
     * the interface: the orderly path below removes delay and offloads alike, whereas the
     * offload session's fatal-signal handler only knows about offloads. Under nohup
     * (SIGHUP ignored) the measurement goes on, as the user asked. */
    struct sigaction old;
    if (sigaction(SIGHUP, NULL, &old) == 0 && old.sa_handler != SIG_IGN)
        sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

struct run_ctx {
    struct progress progress;
    struct jsonl *journal;
    int quiet;
    int journal_failed;
    char cell[256];
    unsigned run; /* of the download under way, for --interval lines */
    struct store_session *store; /* NULL: --db none */
    int store_lost;
};

static void on_run_start(const struct plan *p, size_t step, size_t total, const struct plan_step *s, void *ud)
{
    struct run_ctx *c = ud;
    c->progress.step = step + 1;
    c->progress.total = total;
    c->progress.server = p->servers[s->server].name;
    c->run = s->run;
    /* Scenario cells: "natural / TSO off" in the live line. */
    if (p->scenario || p->variant)
        snprintf(c->cell, sizeof c->cell, "%s / %s", p->scenario ? p->scenario : "-", p->variant ? p->variant : "-");
    c->progress.cell = p->scenario || p->variant ? c->cell : NULL;
}

static void on_run_done(const struct plan *p, const struct run_result *r, size_t step, size_t total, void *ud)
{
    (void)p;
    struct run_ctx *c = ud;
    progress_clear(&c->progress);
    if (c->journal) {
        char err[512];
        if (jsonl_append(c->journal, r, err, sizeof err) != 0 && !c->journal_failed) {
            log_error("--jsonl: %s", err);
            c->journal_failed = 1;
        }
    }
    if (c->store) {
        char err[512];
        json_t *j = result_to_json(r);
        if (!j || store_session_run(c->store, j, err, sizeof err) == STORE_PUT_LOST) {
            log_error("store: run not kept: %s", j ? err : "out of memory");
            c->store_lost = 1;
        }
        json_decref(j);
    }
    /* -q keeps the why of a failed run: an exit status of 1 alone says nothing. */
    if (c->quiet && r->ok)
        return;
    /* Server names, cells and above all the error (a reason phrase, a redirect target:
     * the server's own text) reach the terminal escaped (escape.h). */
    char cell[256] = "", srv[1100], *why = r->ok ? NULL : escape_dup(r->error);
    if (r->scenario || r->variant)
        snprintf(cell, sizeof cell, " (%s / %s)", r->scenario ? r->scenario : "-", r->variant ? r->variant : "-");
    char ecell[sizeof cell * 4];
    escape_text(ecell, sizeof ecell, cell);
    escape_text(srv, sizeof srv, r->server);
    if (r->ok) {
        char rate[32];
        units_format_mbps(r->avg_mbps, rate, sizeof rate);
        char enc[160] = "";
        if (r->content_encoding)
            escape_text(enc, sizeof enc, r->content_encoding);
        fprintf(stderr, "debit: [%zu/%zu]%s %s run %u: %s Mb/s, %llu bytes in %.3f s%s%s%s%s\n", step + 1, total, ecell,
                srv, r->run, rate, (unsigned long long)r->bytes, r->body_s,
                r->duration_short ? " (the file ended before --duration: a shorter run)" : "",
                enc[0] ? " (Content-Encoding " : "", enc, enc[0] ? ": the encoded bytes are counted)" : "");
    } else {
        fprintf(stderr, "debit: [%zu/%zu]%s %s run %u: FAILED: %s\n", step + 1, total, ecell, srv, r->run,
                why ? why : "(out of memory)");
    }
    free(why);
}

/* --interval: one line per interval, as iperf3 -i. */
static void on_interval(const struct dl_interval *iv, void *ud)
{
    struct run_ctx *c = ud;
    if (c->quiet)
        return;
    progress_clear(&c->progress);
    char rate[32];
    units_format_mbps(iv->mbps, rate, sizeof rate);
    fprintf(stderr, "debit: %s run %u: %6.2f-%.2f s %s Mb/s\n", c->progress.server ? c->progress.server : "?", c->run,
            iv->t_from, iv->t_to, rate);
}

static void on_note(const char *msg, void *ud)
{
    (void)ud;
    fputs("debit: ", stderr);
    escape_fputs(msg, stderr);
    fputc('\n', stderr);
}

static void on_cell_start(const char *latency, const char *variant, const char *settings, void *ud)
{
    struct run_ctx *c = ud;
    if (c->quiet)
        return;
    /* Same "(latency / variant)" form as each run's line, so a reader can grep a cell. */
    char line[2048];
    snprintf(line, sizeof line, "cell (%s / %s)%s%s", latency ? latency : "-", variant ? variant : "-",
             settings && *settings ? ": " : "", settings ? settings : "");
    on_note(line, ud);
}

/* CAP_NET_ADMIN in the effective set (/proc/self/status's CapEff, bit 12): without it
 * an offload change cannot work, and saying so beats the first thing that fails on the
 * way (the state file's folder, /run/debit, which only root can write). */
static int has_net_admin(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long eff = 0;
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f))
        found = sscanf(line, "CapEff: %llx", &eff) == 1;
    if (f)
        fclose(f);
    return !found || (eff >> 12 & 1); /* unknown: let the ioctl say */
}

/* --offload and --delay, applied before the first download. Returns 0, or -1 after
 * printing the error (what was applied is undone by the caller's netcfg_free). */
static int apply_settings(const struct settings *s, struct netcfg *net)
{
    char err[512];
    if (s->noffloads && !has_net_admin()) {
        fprintf(stderr, "debit: --offload: changing %s's offloads needs CAP_NET_ADMIN (run as root)\n",
                s->offloads[0].ifname);
        return -1;
    }
    for (size_t i = 0; i < s->noffloads; i++)
        if (netcfg_offload(net, s->offloads[i].ifname, &s->offloads[i].wish, err, sizeof err) != 0) {
            fprintf(stderr, "debit: --offload: %s\n", err);
            return -1;
        } else if (*netcfg_note(net)) {
            fprintf(stderr, "debit: %s\n", netcfg_note(net));
        }
    if (s->delay_dev && netcfg_delay(net, s->delay_dev, s->delay_us, s->loss_ppm, err, sizeof err) != 0) {
        fprintf(stderr, "debit: %s: %s\n", s->delay_us ? "--delay" : "--loss", err);
        return -1;
    }
    if ((s->noffloads || s->delay_dev) && !s->quiet) {
        netcfg_describe(net, err, sizeof err);
        fprintf(stderr, "debit: client settings: %s\n", err);
    }
    return 0;
}

/* The settings of this invocation: defaults, then the scenario file's (if any), then the
 * command line's, then the checks that need them all. Returns 0, or 2 after printing. */
static int load_settings(const struct client_opts *o, struct settings *s, struct scenario **scn)
{
    char err[1024] = "";
    if (o->scenario) {
        *scn = scenario_load(o->scenario, s, err, sizeof err);
        if (!*scn) {
            fprintf(stderr, "debit: --scenario: %s\n", err);
            return 2;
        }
    }
    if (opts_apply(o, s, err, sizeof err) != 0 || settings_check(s, err, sizeof err) != 0) {
        fprintf(stderr, "debit: %s\n", err);
        return 2;
    }
    return 0;
}

/* -w FORMAT on stdout (parsed again: opts checked it). Returns 0, or -1 after printing
 * a write error other than EPIPE. */
static int write_out(const char *fmt, const struct result_set *rs, const struct summary *sum,
                     const struct report_meta *meta)
{
    char err[1024];
    struct writeout *w = writeout_parse(fmt, err, sizeof err);
    if (!w) {
        fprintf(stderr, "debit: --write-out: %s\n", err);
        return -1;
    }
    int rc = writeout_print(stdout, w, rs, sum, meta);
    int e = errno;
    writeout_free(w);
    if (rc != 0 && e != EPIPE) {
        fprintf(stderr, "debit: --write-out: stdout: %s\n", strerror(e));
        return -1;
    }
    return 0;
}

/* One note per cell that changed something: which delay mechanism ran, offloads. */
static char **cell_notes(const struct scenario_cells *cells, size_t *nnotes)
{
    char **notes = calloc(cells->n + 2, sizeof *notes);
    for (size_t i = 0; notes && i < cells->n; i++) {
        const struct scenario_cell *c = &cells->cell[i];
        if (!c->description[0])
            continue;
        char *line = NULL;
        if (asprintf(&line, "%s / %s: %s", c->latency ? c->latency : "-", c->variant ? c->variant : "-",
                     c->description) >= 0)
            notes[(*nnotes)++] = line;
    }
    return notes;
}

/* -V/--version, as curl -V: debit's and libcurl's versions, then what this libcurl
 * can do (its protocols and features), which decides what a URL or option may ask. */
static void print_version(void)
{
    const curl_version_info_data *v = curl_version_info(CURLVERSION_NOW);
    printf("debit %s (%s)\n", DEBIT_VERSION, curl_version());
    printf("libcurl %s%s%s\n", v->version, v->ssl_version ? ", TLS " : "", v->ssl_version ? v->ssl_version : "");
    printf("Protocols:");
    for (const char *const *p = v->protocols; p && *p; p++)
        printf(" %s", *p);
    printf("\nFeatures:");
#if LIBCURL_VERSION_NUM >= 0x075700 /* 7.87.0: feature_names */
    for (const char *const *f = v->feature_names; f && *f; f++)
        printf(" %s", *f);
#else
    static const struct {
        int bit;
        const char *name;
    } bits[] = {{CURL_VERSION_IPV6, "IPv6"}, {CURL_VERSION_SSL, "SSL"}, {CURL_VERSION_LIBZ, "libz"},
                {CURL_VERSION_HTTP2, "HTTP2"}, {CURL_VERSION_ASYNCHDNS, "AsynchDNS"}, {CURL_VERSION_LARGEFILE, "Largefile"}};
    for (size_t i = 0; i < sizeof bits / sizeof bits[0]; i++)
        if (v->features & bits[i].bit)
            printf(" %s", bits[i].name);
#endif
    printf("\n");
}

/* --jsonl appends: an existing file must be writable, else its directory must take one */
static int check_jsonl(const char *path, char *err, size_t errlen)
{
    if (access(path, F_OK) != 0)
        return report_check_output(path, err, errlen);
    if (access(path, W_OK) == 0)
        return 0;
    snprintf(err, errlen, "%s: %s", path, strerror(errno));
    return -1;
}

/* -t: the files a run would write, checked as the run checks them before it starts
 * (--plot and gnuplot, -o, --jsonl) but without creating any: 0, or 2 with the message
 * printed. */
/* Say that the default store's folder cannot be used (C->problem): the measurement goes
 * on without a store, and debit exits 1 (the runs are not kept). */
static void store_default_unusable(const struct store_choice *c, const char *when)
{
    char dir[4096];
    fprintf(stderr,
            "debit: the default store folder %s cannot be used (%s): %s; choose another store with --db PATH "
            "or DEBIT_DB=PATH, or keep nothing with --db none\n",
            store_choice_dir(c, dir, sizeof dir), c->problem, when);
}

/* -t: the store as the run would choose it, creating nothing. An explicit one (--db,
 * DEBIT_DB) that does not parse or cannot be written: 2 (said); the default folder's
 * problem is only said (a run would go on without keeping its runs): 0. */
static int check_store(const struct settings *s)
{
    char err[1024];
    struct store_choice c;
    if (store_choice_make(s, 0, &c, err, sizeof err) != 0) {
        fprintf(stderr, "debit: %s\n", err);
        return 2;
    }
    if (c.spec.kind == STORE_NONE || !c.problem[0])
        return 0;
    if (c.source != STORE_FROM_DEFAULT) {
        fprintf(stderr, "debit: %s: %s\n", store_choice_source(&c), c.problem);
        return 2;
    }
    store_default_unusable(&c, "a measurement's runs would not be kept");
    return 0;
}

static int check_outputs(const struct settings *s)
{
    char err[1024];
    const char *opt = NULL;
    if (s->plot && (plot_check(err, sizeof err) != 0 || report_check_output(s->plot, err, sizeof err) != 0))
        opt = "--plot";
    else if (s->output && report_check_output(s->output, err, sizeof err) != 0)
        opt = "--output";
    else if (s->jsonl && check_jsonl(s->jsonl, err, sizeof err) != 0)
        opt = "--jsonl";
    if (!opt)
        return check_store(s);
    fprintf(stderr, "debit: %s: %s\n", opt, err);
    return 2;
}

/* The command line and what it names: --help, --version and -t end here. Returns the
 * exit status, or -1 when the measurement should run with s (and *scn). */
static int front_end(int argc, char **argv, struct settings *s, struct scenario **scn)
{
    struct client_opts *o = opts_new();
    char err[1024] = "";
    int code = -1;
    switch (o ? opts_parse(o, argc, argv, err, sizeof err) : OPTS_ERROR) {
    case OPTS_HELP:
        opts_usage(stdout);
        code = 0;
        break;
    case OPTS_VERSION:
        print_version();
        code = 0;
        break;
    case OPTS_ERROR:
        fprintf(stderr, "debit: %s\n", o ? err : "out of memory");
        code = 2;
        break;
    case OPTS_RUN:
        code = load_settings(o, s, scn);
        if (code == 0 && o->check)
            code = check_outputs(s);
        if (code == 0 && o->check && s->format == REPORT_JSON)
            code = plan_json_print(stdout, s, *scn) == 0 ? 0 : 1;
        else if (code == 0 && o->check)
            plan_text_print(stdout, s, *scn);
        else if (code == 0)
            code = -1;
        break;
    }
    opts_free(o);
    return code;
}

/* The store of this invocation (store_choice.h). Returns 0 (ctx->store NULL for --db
 * none, or with ctx->store_lost set when the default folder cannot be used), or 2 after
 * printing what is wrong with an explicit --db or DEBIT_DB (before any measurement). */
static int store_begin(const struct settings *s, int argc, char **argv, struct run_ctx *ctx)
{
    char err[1024], host[256] = "unknown";
    struct store_choice c;
    ctx->store = NULL;
    if (store_choice_make(s, 1, &c, err, sizeof err) != 0) {
        fprintf(stderr, "debit: %s\n", err);
        return 2;
    }
    if (c.spec.kind == STORE_NONE)
        return 0;
    if (c.problem[0] && c.source != STORE_FROM_DEFAULT) {
        fprintf(stderr, "debit: %s: %s\n", store_choice_source(&c), c.problem);
        return 2;
    }
    if (c.problem[0]) {
        store_default_unusable(&c, "this invocation's runs will not be kept");
        ctx->store_lost = 1;
        return 0;
    }
    gethostname(host, sizeof host - 1);
    static char vantage[256];
    snprintf(vantage, sizeof vantage, "%s", s->vantage ? s->vantage : host);
    ctx->store = store_session_begin(&c.spec, vantage, argc, argv, err, sizeof err);
    if (!ctx->store) {
        fprintf(stderr, "debit: %s: %s\n", store_choice_source(&c), err);
        return 2;
    }
    if (*store_session_error(ctx->store))
        fprintf(stderr, "debit: store %s unreachable: %s; runs go to the spool %s\n", c.shown,
                store_session_error(ctx->store), store_session_spool_path(ctx->store));
    if (store_session_flushed(ctx->store) > 0 && !s->quiet)
        fprintf(stderr, "debit: store %s: %ld spooled record%s written first\n", c.shown,
                store_session_flushed(ctx->store), store_session_flushed(ctx->store) == 1 ? "" : "s");
    return 0;
}

/* The invocation's row (its report without the runs, which have rows of their own).
 * Returns 1 when anything of this invocation went to the spool or was lost, else 0. */
static int store_end(struct run_ctx *ctx, json_t *report)
{
    if (!ctx->store) {
        if (ctx->store_lost) /* the default folder could not be used: said before the runs */
            fprintf(stderr, "debit: the runs were not kept (no usable store)\n");
        return ctx->store_lost;
    }
    char err[512];
    if (report)
        json_object_del(report, "runs");
    if (store_session_end(ctx->store, report, err, sizeof err) == STORE_PUT_LOST) {
        fprintf(stderr, "debit: store: the invocation's summary not kept: %s\n", err);
        ctx->store_lost = 1;
    }
    long n = store_session_spooled(ctx->store);
    if (n > 0)
        fprintf(stderr, "debit: store unreachable (%s): %ld record%s kept in the spool %s; the next debit with this "
                "store writes them\n", store_session_error(ctx->store), n, n == 1 ? "" : "s",
                store_session_spool_path(ctx->store));
    return n > 0 || ctx->store_lost;
}

/* Everything one invocation holds, so that main has a single cleanup (run_free). */
struct debit_run {
    int argc;
    char **argv;
    struct settings *s;
    struct scenario *scn;
    struct run_ctx ctx;
    int curl_ready;
    struct netcfg *net;
    struct result_set rs;
    json_t *extra;     /* the report's extra members (scenario, client_settings) */
    char **notes;      /* the report's notes, owned */
    size_t nnotes;
    enum plan_status prc; /* how the measurement ended, in the plan's terms */
    int setting_failed;
};

static void run_free(struct debit_run *r)
{
    json_decref(r->extra);
    for (size_t i = 0; i < r->nnotes; i++)
        free(r->notes[i]);
    free(r->notes);
    netcfg_free(r->net);
    scenario_free(r->scn);
    result_set_clear(&r->rs);
    jsonl_close(r->ctx.journal);
    store_session_free(r->ctx.store);
    settings_free(r->s);
    if (r->curl_ready)
        curl_global_cleanup();
}

/* What must hold before the first download: the plot and output can be written, libcurl
 * starts, the journal opens, a random order has its seed. Returns -1 to go on, else the
 * exit status (the message printed). */
static int run_prepare(struct debit_run *r)
{
    struct settings *s = r->s;
    char err[1024] = "";
    /* A plot that cannot be written must fail now, not after an hour of measurement. */
    if (s->plot && (plot_check(err, sizeof err) != 0 || report_check_output(s->plot, err, sizeof err) != 0)) {
        fprintf(stderr, "debit: --plot: %s\n", err);
        return 2;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "debit: libcurl initialisation failed\n");
        return 1;
    }
    r->curl_ready = 1;
    if (s->quiet)
        log_set_level(LOG_LEVEL_ERROR);
    r->ctx.quiet = s->quiet;
    r->ctx.progress.out = stderr;
    r->ctx.progress.enabled = s->progress == 1 || (s->progress == -1 && !s->quiet && isatty(STDERR_FILENO));
    if (s->jsonl && !(r->ctx.journal = jsonl_open(s->jsonl, err, sizeof err))) {
        fprintf(stderr, "debit: --jsonl: %s\n", err);
        return 2;
    }
    if (s->output && report_check_output(s->output, err, sizeof err) != 0) {
        fprintf(stderr, "debit: --output: %s\n", err);
        return 2;
    }
    if (store_begin(s, r->argc, r->argv, &r->ctx) != 0)
        return 2;
    if (s->order == PLAN_ORDER_RANDOM && !s->seed_given) {
        struct timeval tv;
        gettimeofday(&tv, NULL);
        s->seed = ((uint64_t)tv.tv_sec * 1000003u) ^ (uint64_t)tv.tv_usec ^ ((uint64_t)getpid() << 32);
    }
    if (s->order == PLAN_ORDER_RANDOM && !s->quiet)
        fprintf(stderr, "debit: random order, seed %llu (--seed %llu repeats it)\n", (unsigned long long)s->seed,
                (unsigned long long)s->seed);
    if (!(r->extra = json_object())) {
        fprintf(stderr, "debit: out of memory\n");
        return 1;
    }
    return -1;
}

/* A scenario file's cells, one plan each; their record goes into r->extra and r->notes. */
static void run_scenario(struct debit_run *r, const struct plan_hooks *hooks)
{
    char err[1024] = "";
    struct scenario *scn = r->scn;
    struct scenario_cells *cells = scenario_cells_new();
    struct scenario_hooks sh = {.plan = *hooks, .cell_start = on_cell_start, .note = on_note};
    enum scenario_status st = cells ? scenario_run(scn, r->s, &r->rs, &sh, cells, err, sizeof err) : SCENARIO_ERR_NOMEM;
    r->prc = st == SCENARIO_STOPPED ? PLAN_STOPPED : st == SCENARIO_ERR_NOMEM ? PLAN_FAILED : PLAN_DONE;
    if (st == SCENARIO_ERR_SETTING) {
        fprintf(stderr, "debit: --scenario: %s\n", err);
        r->setting_failed = 1;
    }
    if (cells) {
        json_t *lab = json_array();
        for (size_t i = 0; lab && i < scn->nlab; i++)
            json_array_append_new(lab, scenario_lab_to_json(&scn->lab[i]));
        json_object_set_new(r->extra, "scenario", json_pack("{s:s, s:o*, s:o*}", "file", scn->path, "cells",
                                                            scenario_cells_to_json(cells), "lab", lab));
        r->notes = cell_notes(cells, &r->nnotes);
    }
    scenario_cells_free(cells);
}

/* --offload / --delay hold for every run: say so in the report, then put them back. */
static void run_restore(struct debit_run *r)
{
    char err[1024] = "", desc[512] = "";
    netcfg_describe(r->net, desc, sizeof desc);
    if (desc[0]) {
        char **n2 = realloc(r->notes, (r->nnotes + 1) * sizeof *r->notes);
        if (n2) {
            r->notes = n2;
            if (asprintf(&r->notes[r->nnotes], "every run: %s", desc) >= 0)
                r->nnotes++;
        }
    }
    json_object_set_new(r->extra, "client_settings", netcfg_to_json(r->net));
    if (netcfg_end(r->net, err, sizeof err) != 0) {
        fprintf(stderr, "debit: could not restore client settings: %s\n", err);
        r->setting_failed = 1;
    } else if ((r->s->noffloads || r->s->delay_dev) && !r->s->quiet) {
        fprintf(stderr, "debit: client settings restored\n");
    }
    netcfg_free(r->net);
    r->net = NULL;
}

/* The downloads, with the client settings applied around them. Returns -1 when they
 * ran (r->prc says how they ended), else the exit status. */
static int run_measure(struct debit_run *r)
{
    struct settings *s = r->s;
    struct plan plan = {
        .servers = s->servers,
        .nservers = s->nservers,
        .runs = s->runs,
        .order = s->order,
        .seed = s->seed,
        .pause_s = s->pause_s,
        .dl = &s->dl,
    };
    struct plan_hooks hooks = {
        .run_start = on_run_start,
        .run_done = on_run_done,
        .progress = progress_draw,
        .interval = on_interval,
        .ud = &r->ctx,
        .stop = &g_stop,
    };
    install_signals();
    /* SIGQUIT restores offloads from a handler; SIGINT/SIGTERM/SIGHUP come back here. */
    offload_session_handle_signals();
    r->net = netcfg_new();
    if (!r->net || apply_settings(s, r->net) != 0)
        return 2;
    if (r->scn)
        run_scenario(r, &hooks);
    else
        r->prc = plan_execute(&plan, &r->rs, &hooks);
    progress_clear(&r->ctx.progress);
    run_restore(r);
    if (r->prc == PLAN_STOPPED && !s->quiet)
        fprintf(stderr, "debit: interrupted: summary of the %zu finished run%s\n", r->rs.n, r->rs.n == 1 ? "" : "s");
    return -1;
}

/* --plot FILE and its -rtt sibling. 0, or -1 after printing. */
static int run_plots(const struct debit_run *r, const struct summary *sum)
{
    const struct settings *s = r->s;
    char err[1024] = "", rtt_plot[PATH_MAX] = "";
    if (plot_rtt_path(s->plot, rtt_plot, sizeof rtt_plot) != 0)
        snprintf(err, sizeof err, "%s: name too long for its -rtt picture", s->plot);
    if (!rtt_plot[0] || plot_write(s->plot, &r->rs, sum, err, sizeof err) != 0 ||
        plot_rtt_write(rtt_plot, &r->rs, sum, err, sizeof err) != 0) {
        fprintf(stderr, "debit: --plot: %s\n", err);
        return -1;
    }
    if (!s->quiet)
        fprintf(stderr, "debit: plot written to %s (throughput against RTT: %s)\n", s->plot, rtt_plot);
    return 0;
}

/* The report, -w, the plots, and the exit status the runs earn. */
static int run_report(struct debit_run *r, const struct summary *sum)
{
    const struct settings *s = r->s;
    const struct scenario *scn = r->scn;
    char err[1024] = "";
    int rc = 0;
    /* The lab's host settings per server, for the column titles. */
    struct report_server_note *snotes = scn && scn->nlab ? calloc(scn->nlab, sizeof *snotes) : NULL;
    for (size_t i = 0; snotes && i < scn->nlab; i++)
        snotes[i] = (struct report_server_note){scn->lab[i].server, scn->lab[i].host};
    struct report_meta meta = {
        .order = plan_order_name(s->order),
        .seed = s->seed,
        .seed_used = s->order == PLAN_ORDER_RANDOM,
        .runs = s->runs,
        .interrupted = r->prc == PLAN_STOPPED,
        .extra = r->extra,
        .notes = (const char *const *)r->notes,
        .nnotes = r->nnotes,
        .server_notes = snotes,
        .nserver_notes = snotes ? scn->nlab : 0,
    };
    /* -w replaces the report on stdout (as a cron line); -o still gets it. A reader
     * of stdout that went away (`| head -1`) is not a failed measurement: the exit
     * status stays the runs' own, and nothing is said. */
    if ((s->output || !s->write_out) &&
        report_write_file(s->output ? s->output : "-", s->format, &r->rs, sum, &meta, err, sizeof err) != 0 &&
        (s->output || errno != EPIPE)) {
        /* err says "stdout: ..." when the report went there: no option to name then */
        fprintf(stderr, s->output ? "debit: --output: %s\n" : "debit: %s\n", err);
        rc = 1;
    }
    if (s->write_out && write_out(s->write_out, &r->rs, sum, &meta) != 0)
        rc = 1;
    if (s->output && !s->quiet)
        report_write(stderr, scn ? REPORT_MARKDOWN : REPORT_TABLE, &r->rs, sum, &meta);
    if (s->plot && run_plots(r, sum) != 0)
        rc = 1;
    for (size_t i = 0; i < r->rs.n; i++)
        if (!r->rs.runs[i]->ok)
            rc = 1;
    if (r->ctx.journal_failed || r->setting_failed)
        rc = 1;
    json_t *doc = r->ctx.store ? report_to_json(&r->rs, sum, &meta) : NULL;
    if (store_end(&r->ctx, doc))
        rc = 1;
    json_decref(doc);
    free(snotes);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "history") == 0)
        return history_main(argc - 1, argv + 1);
    log_set_prog("debit");
    struct debit_run r = {.argc = argc, .argv = argv, .s = settings_new()};
    result_set_init(&r.rs);
    int code = 1;
    if (!r.s) {
        fprintf(stderr, "debit: out of memory\n");
        goto out;
    }
    if ((code = front_end(argc, argv, r.s, &r.scn)) >= 0 || (code = run_prepare(&r)) >= 0 ||
        (code = run_measure(&r)) >= 0)
        goto out;
    struct summary sum;
    if (r.prc == PLAN_FAILED ||
        summary_compute(&r.rs, r.scn ? NULL : r.s->servers, r.scn ? 0 : r.s->nservers, &sum) != 0) {
        fprintf(stderr, "debit: out of memory\n");
        code = 1;
    } else {
        code = run_report(&r, &sum);
        summary_free(&sum);
    }
    if (r.prc == PLAN_STOPPED)
        code = 128 + (g_stop ? g_stop : SIGINT);
out:
    run_free(&r);
    return code;
}
