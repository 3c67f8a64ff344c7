/* debit: the measurement client. main() only wires the modules together: options, the
 * plan (measurement loop), the journal, progress, outputs, and the exit status. */
#include <curl/curl.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "jsonl.h"
#include "log.h"
#include "netcfg.h"
#include "offload_session.h"
#include "opts.h"
#include "plan.h"
#include "plot.h"
#include "scenario.h"
#include "progress.h"
#include "report.h"
#include "result.h"
#include "summary.h"

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
};

static void on_run_start(const struct plan *p, size_t step, size_t total, const struct plan_step *s, void *ud)
{
    struct run_ctx *c = ud;
    c->progress.step = step + 1;
    c->progress.total = total;
    c->progress.server = p->servers[s->server].name;
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
    if (c->quiet)
        return;
    char cell[256] = "";
    if (r->scenario || r->variant)
        snprintf(cell, sizeof cell, " (%s / %s)", r->scenario ? r->scenario : "-", r->variant ? r->variant : "-");
    if (r->ok) {
        char rate[32];
        report_fmt_mbps(r->avg_mbps, rate, sizeof rate);
        fprintf(stderr, "debit: [%zu/%zu]%s %s run %u: %s Mb/s, %llu bytes in %.3f s\n", step + 1, total, cell,
                r->server, r->run, rate, (unsigned long long)r->bytes, r->body_s);
    } else {
        fprintf(stderr, "debit: [%zu/%zu]%s %s run %u: FAILED: %s\n", step + 1, total, cell, r->server, r->run,
                r->error);
    }
}

static void on_cell_start(const char *latency, const char *variant, const char *settings, void *ud)
{
    struct run_ctx *c = ud;
    if (c->quiet)
        return;
    /* Same "(latency / variant)" form as each run's line, so a reader can grep a cell. */
    fprintf(stderr, "debit: cell (%s / %s)%s%s\n", latency ? latency : "-", variant ? variant : "-",
            settings && *settings ? ": " : "", settings ? settings : "");
}

/* -t/--check: what would run, like `nginx -t`. */
static void print_plan(const struct client_opts *o, const struct scenario *scn)
{
    printf("debit: configuration OK%s%s\n", scn ? ": " : "", scn ? o->scenario : "");
    for (size_t i = 0; i < o->nservers; i++)
        printf("server %s: %s\n", o->servers[i].name, o->servers[i].url);
    printf("runs: %u per server%s, order %s, pause %g s", o->runs, scn ? " and cell" : "", plan_order_name(o->order),
           o->pause_s);
    if (o->dl.max_bytes)
        printf(", max-bytes %llu", (unsigned long long)o->dl.max_bytes);
    if (o->dl.stall_s > 0)
        printf(", stall %g s", o->dl.stall_s);
    if (o->dl.max_time_s > 0)
        printf(", max-time %g s", o->dl.max_time_s);
    printf("\n");
    size_t cells = 1;
    if (scn) {
        size_t nl = scn->nlat ? scn->nlat : 1, nv = scn->nvar ? scn->nvar : 1;
        cells = nl * nv;
        for (size_t i = 0; i < scn->nlat; i++) {
            const struct scenario_latency *l = &scn->lat[i];
            printf("latency %s: ", l->name);
            if (l->delay_us)
                printf("+%g ms on %s%s\n", l->delay_us / 1000.0, l->device,
                       if_nametoindex(l->device) ? "" : " (warning: no such interface here)");
            else
                printf("nothing added\n");
        }
        for (size_t i = 0; i < scn->nvar; i++) {
            const struct scenario_variant *v = &scn->var[i];
            char w[128] = "nothing changed";
            if (v->device)
                offload_wish_format(&v->wish, w, sizeof w);
            printf("variant %s: %s%s%s%s\n", v->name, w, v->device ? " on " : "", v->device ? v->device : "",
                   v->device && !if_nametoindex(v->device) ? " (warning: no such interface here)" : "");
        }
    }
    for (size_t i = 0; i < o->noffloads; i++)
        printf("offload: %s\n", o->offloads[i]);
    if (o->delay_dev)
        printf("delay: +%g ms on %s\n", o->delay_s * 1000, o->delay_dev);
    printf("downloads: %zu (%zu cell%s x %zu server%s x %u runs)\n", cells * o->nservers * o->runs, cells,
           cells == 1 ? "" : "s", o->nservers, o->nservers == 1 ? "" : "s", o->runs);
}

/* --offload and --delay, applied before the first download. Returns 0, or -1 after
 * printing the error (what was applied is undone by the caller's netcfg_free). */
static int apply_settings(const struct client_opts *o, struct netcfg *net)
{
    char err[512];
    for (size_t i = 0; i < o->noffloads; i++)
        if (netcfg_offload_spec(net, o->offloads[i], err, sizeof err) != 0) {
            fprintf(stderr, "debit: --offload: %s\n", err);
            return -1;
        } else if (*netcfg_note(net)) {
            fprintf(stderr, "debit: %s\n", netcfg_note(net));
        }
    if (o->delay_dev && netcfg_delay(net, o->delay_dev, (uint64_t)(o->delay_s * 1e6 + 0.5), err, sizeof err) != 0) {
        fprintf(stderr, "debit: --delay: %s\n", err);
        return -1;
    }
    if ((o->noffloads || o->delay_dev) && !o->quiet) {
        netcfg_describe(net, err, sizeof err);
        fprintf(stderr, "debit: client settings: %s\n", err);
    }
    return 0;
}

int main(int argc, char **argv)
{
    log_set_prog("debit");
    struct client_opts o;
    opts_defaults(&o);
    char err[1024] = "";
    switch (opts_parse(&o, argc, argv, err, sizeof err)) {
    case OPTS_HELP:
        opts_usage(stdout);
        opts_free(&o);
        return 0;
    case OPTS_VERSION:
        printf("debit %s (%s)\n", DEBIT_VERSION, curl_version());
        opts_free(&o);
        return 0;
    case OPTS_ERROR:
        fprintf(stderr, "debit: %s\n", err);
        opts_free(&o);
        return 2;
    case OPTS_RUN:
        break;
    }
    struct scenario *scn = NULL;
    if (o.scenario) {
        scn = scenario_load(o.scenario, &o, err, sizeof err);
        if (!scn) {
            fprintf(stderr, "debit: --scenario: %s\n", err);
            opts_free(&o);
            return 2;
        }
        if (!opts_given(&o, "format"))
            o.format = REPORT_MARKDOWN; /* the seed's table */
    }
    if (o.check) {
        print_plan(&o, scn);
        scenario_free(scn);
        opts_free(&o);
        return 0;
    }
    /* A plot that cannot be written must fail now, not after an hour of measurement. */
    if (o.plot && (plot_check(err, sizeof err) != 0 || report_check_output(o.plot, err, sizeof err) != 0)) {
        fprintf(stderr, "debit: --plot: %s\n", err);
        scenario_free(scn);
        opts_free(&o);
        return 2;
    }
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        fprintf(stderr, "debit: libcurl initialisation failed\n");
        scenario_free(scn);
        opts_free(&o);
        return 1;
    }
    if (o.quiet)
        log_set_level(LOG_LEVEL_ERROR);

    struct run_ctx ctx = {.quiet = o.quiet};
    ctx.progress.out = stderr;
    ctx.progress.enabled = o.progress == 1 || (o.progress == -1 && !o.quiet && isatty(STDERR_FILENO));
    if (o.jsonl) {
        ctx.journal = jsonl_open(o.jsonl, err, sizeof err);
        if (!ctx.journal) {
            fprintf(stderr, "debit: --jsonl: %s\n", err);
            scenario_free(scn);
            opts_free(&o);
            curl_global_cleanup();
            return 2;
        }
    }
    if (o.output && report_check_output(o.output, err, sizeof err) != 0) {
        fprintf(stderr, "debit: --output: %s\n", err);
        jsonl_close(ctx.journal);
        scenario_free(scn);
        opts_free(&o);
        curl_global_cleanup();
        return 2;
    }
    if (o.order == PLAN_ORDER_RANDOM && !o.seed_given) {
        struct timeval tv;
        gettimeofday(&tv, NULL);
        o.seed = ((uint64_t)tv.tv_sec * 1000003u) ^ (uint64_t)tv.tv_usec ^ ((uint64_t)getpid() << 32);
    }
    if (o.order == PLAN_ORDER_RANDOM && !o.quiet)
        fprintf(stderr, "debit: random order, seed %llu (--seed %llu repeats it)\n", (unsigned long long)o.seed,
                (unsigned long long)o.seed);

    struct plan_server servers[OPTS_MAX_SERVERS];
    for (size_t i = 0; i < o.nservers; i++)
        servers[i] = (struct plan_server){o.servers[i].name, o.servers[i].url};
    struct plan plan = {
        .servers = servers,
        .nservers = o.nservers,
        .runs = o.runs,
        .order = o.order,
        .seed = o.seed,
        .pause_s = o.pause_s,
        .dl = &o.dl,
    };
    struct plan_hooks hooks = {
        .run_start = on_run_start,
        .run_done = on_run_done,
        .progress = progress_draw,
        .ud = &ctx,
        .stop = &g_stop,
    };
    struct result_set rs;
    result_set_init(&rs);
    install_signals();
    /* SIGQUIT restores offloads from a handler; SIGINT/SIGTERM/SIGHUP come back here. */
    offload_session_handle_signals();
    struct netcfg *net = netcfg_new();
    if (!net || apply_settings(&o, net) != 0) {
        netcfg_free(net);
        jsonl_close(ctx.journal);
        scenario_free(scn);
        opts_free(&o);
        curl_global_cleanup();
        return 2;
    }
    json_t *extra = json_object();
    char **notes = NULL;
    size_t nnotes = 0;
    int prc, setting_failed = 0;
    if (scn) {
        json_t *cells = json_array();
        struct scenario_hooks sh = {.plan = hooks, .cell_start = on_cell_start};
        prc = scenario_run(scn, &o, &rs, &sh, cells, err, sizeof err);
        if (prc < 0) {
            fprintf(stderr, "debit: --scenario: %s\n", err);
            setting_failed = 1;
            prc = 0;
        }
        json_object_set_new(extra, "scenario", json_pack("{s:s, s:O}", "file", o.scenario, "cells", cells));
        /* One note per cell that changed something: which delay mechanism ran, offloads. */
        size_t nc = json_array_size(cells);
        notes = calloc(nc + 2, sizeof *notes);
        for (size_t i = 0; notes && i < nc; i++) {
            json_t *c = json_array_get(cells, i);
            const char *d = json_string_value(json_object_get(c, "description"));
            const char *sc = json_string_value(json_object_get(c, "scenario"));
            const char *va = json_string_value(json_object_get(c, "variant"));
            if (!d || !*d)
                continue;
            char *line = NULL;
            if (asprintf(&line, "%s / %s: %s", sc ? sc : "-", va ? va : "-", d) >= 0)
                notes[nnotes++] = line;
        }
        json_decref(cells);
    } else {
        prc = plan_execute(&plan, &rs, &hooks);
    }
    progress_clear(&ctx.progress);
    /* --offload / --delay hold for every run: say so (and which delay mechanism ran). */
    char desc[512] = "";
    netcfg_describe(net, desc, sizeof desc);
    if (desc[0]) {
        char **n2 = realloc(notes, (nnotes + 1) * sizeof *notes);
        if (n2) {
            notes = n2;
            if (asprintf(&notes[nnotes], "every run: %s", desc) >= 0)
                nnotes++;
        }
    }
    json_object_set_new(extra, "client_settings", netcfg_to_json(net));
    if (netcfg_end(net, err, sizeof err) != 0) {
        fprintf(stderr, "debit: could not restore client settings: %s\n", err);
        setting_failed = 1;
    } else if ((o.noffloads || o.delay_dev) && !o.quiet) {
        fprintf(stderr, "debit: client settings restored\n");
    }
    netcfg_free(net);
    int interrupted = prc == 1;
    if (interrupted && !o.quiet)
        fprintf(stderr, "debit: interrupted: summary of the %zu finished run%s\n", rs.n, rs.n == 1 ? "" : "s");

    struct summary sum;
    int rc = 0;
    if (prc < 0 || summary_compute(&rs, scn ? NULL : servers, scn ? 0 : o.nservers, &sum) != 0) {
        fprintf(stderr, "debit: out of memory\n");
        rc = 1;
    } else {
        struct report_meta meta = {
            .order = plan_order_name(o.order),
            .seed = o.seed,
            .seed_used = o.order == PLAN_ORDER_RANDOM,
            .runs = o.runs,
            .interrupted = interrupted,
            .extra = extra,
            .notes = (const char *const *)notes,
            .nnotes = nnotes,
        };
        if (report_write_file(o.output ? o.output : "-", o.format, &rs, &sum, &meta, err, sizeof err) != 0) {
            fprintf(stderr, "debit: --output: %s\n", err);
            rc = 1;
        }
        if (o.output && !o.quiet)
            report_write(stderr, scn ? REPORT_MARKDOWN : REPORT_TABLE, &rs, &sum, &meta);
        if (o.plot && plot_write(o.plot, &rs, &sum, err, sizeof err) != 0) {
            fprintf(stderr, "debit: --plot: %s\n", err);
            rc = 1;
        } else if (o.plot && !o.quiet) {
            fprintf(stderr, "debit: plot written to %s\n", o.plot);
        }
        for (size_t i = 0; i < rs.n; i++)
            if (!rs.runs[i]->ok)
                rc = 1;
        if (ctx.journal_failed || setting_failed)
            rc = 1;
        summary_free(&sum);
    }
    json_decref(extra);
    for (size_t i = 0; i < nnotes; i++)
        free(notes[i]);
    free(notes);
    scenario_free(scn);
    result_set_clear(&rs);
    jsonl_close(ctx.journal);
    opts_free(&o);
    curl_global_cleanup();
    if (interrupted)
        return 128 + (g_stop ? g_stop : SIGINT);
    return rc;
}
