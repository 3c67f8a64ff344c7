/* debitd: the RAM-backed test-file server. Parses the command line, loads the
 * configuration, starts the server and waits for signals: SIGINT/SIGTERM stop it, SIGHUP
 * reloads the configuration (reload.h), SIGUSR1 reopens the access log. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "drain.h"
#include "err.h"
#include "http_daemon.h"
#include "log.h"
#include "notify.h"
#include "offload_ctl.h"
#include "privdrop.h"
#include "reload.h"
#include "server.h"

/* Where debitd looks without -c (the Makefile sets it from SYSCONFDIR). */
#ifndef DEBITD_DEFAULT_CONFIG
#define DEBITD_DEFAULT_CONFIG "/usr/local/etc/debit/debitd.conf"
#endif

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: debitd [OPTIONS]\n"
            "Serve RAM-backed, pseudo-random test files over HTTP (GET, HEAD, Range), with\n"
            "FILE.sha256 checksums, an HTML index, /status and an upload sink.\n"
            "\n"
            "  -c, --config FILE     read settings from FILE (libconfig; see etc/debitd.conf)\n"
            "  -t, --check           validate the configuration, print the effective settings, exit\n"
            "  -l, --listen ADDR:PORT  listen there instead of the configuration's listeners\n"
            "                        (repeatable; [V6ADDR]:PORT for IPv6, PORT alone = [::]:PORT)\n"
            "      --log-level LEVEL error, warn, info or debug (overrides log.level)\n"
            "      --restore-offload put back the offloads a killed debitd left changed (from\n"
            "                        offload.state_file) and exit\n"
            "  -f, --foreground      stay in the foreground (the default: debitd never forks)\n"
            "  -h, --help            show this help and exit\n"
            "  -V, --version         show the version and exit\n"
            "\n"
            "Without -c, debitd reads " DEBITD_DEFAULT_CONFIG " if it exists; else\n"
            "it serves /ram/1GiB.dat and /files/1Gio.dat on [::]:8080 (the built-in defaults).\n"
            "SIGTERM stops gracefully: no new connections, running downloads may finish for up to\n"
            "limits.drain_timeout (10 s by default); SIGINT or a second SIGTERM stops at once.\n"
            "SIGHUP re-reads the configuration and applies it without dropping a connection (an\n"
            "invalid one is refused, the running one stays); SIGUSR1 reopens the access log.\n"
            "Exit status: 0 after SIGINT/SIGTERM, 1 on a runtime failure, 2 on a usage or\n"
            "configuration error (including an address that cannot be bound).\n");
}

/* libmicrohttpd aborts the process on what it takes for an internal error (MHD_PANIC);
 * one was a known race of MHD_quiesce_daemon with an epoll worker (an EPOLL_CTL_DEL
 * answered ENOENT; still in 1.0.1), which debitd no longer calls (its acceptor stops
 * accepting instead, acceptor.h), and a graceful stop may still meet others. The process
 * cannot go on after a panic, but it can put the offloads back first: then exit 0 if it
 * was stopping anyway (the stop the operator asked for happened), 1 otherwise. */
static struct {
    struct offload_ctl *off;
    struct server *srv;
} panic_ctx;

static void on_mhd_panic(void *cls, const char *file, unsigned int line, const char *reason)
{
    (void)cls;
    char err[1200];
    int stopping = panic_ctx.srv && panic_ctx.srv->draining;
    log_error("libmicrohttpd internal error at %s:%u: %s%s", file ? file : "?", line, reason ? reason : "",
              stopping ? " (while stopping)" : "");
    if (panic_ctx.off && offload_ctl_stop(panic_ctx.off, err, sizeof err) < 0)
        log_error("%s", err);
    _exit(stopping ? 0 : 1);
}

/* Without -c: the installed configuration if there is one (as nginx reads its
 * /etc/nginx/nginx.conf), else NULL for the built-in defaults. Only a file that does not
 * exist means "defaults": one that cannot be read is an error, never a silent fallback. */
static const char *default_config(void)
{
    struct stat st;
    if (stat(DEBITD_DEFAULT_CONFIG, &st) < 0 && errno == ENOENT)
        return NULL;
    return DEBITD_DEFAULT_CONFIG;
}

/* What main does after the command line: everything one run of debitd holds, freed once at
 * the end of main (one cleanup path for every exit). */
enum action { ACT_SERVE, ACT_CHECK, ACT_RESTORE, ACT_EXIT };

struct run {
    const char **listens; /* --listen values (argv's strings) */
    struct reload_args args;
    struct config cfg;
    struct config_ids ids; /* the user and group resolved at start, never looked up again */
    struct offload_ctl off;
    struct server *srv;
    sigset_t signals; /* taken by sigwait in serve */
    int exit_code;    /* for ACT_EXIT */
    char err[1200], note[1200];
};

/* The command line into R: which action, or ACT_EXIT with R->exit_code (--help, --version,
 * a usage error, exit 2, already reported). */
static enum action parse_args(struct run *r, int argc, char **argv)
{
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'}, {"check", no_argument, NULL, 't'},
        {"listen", required_argument, NULL, 'l'}, {"log-level", required_argument, NULL, 'L'},
        {"foreground", no_argument, NULL, 'f'},   {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},      {"restore-offload", no_argument, NULL, 'R'},
        {NULL, 0, NULL, 0},
    };
    enum action act = ACT_SERVE;
    int o;
    r->exit_code = 2;
    if (!(r->listens = calloc((size_t)argc, sizeof *r->listens))) {
        fprintf(stderr, "debitd: out of memory\n");
        r->exit_code = 1;
        return ACT_EXIT;
    }
    r->args.listens = r->listens;
    opterr = 0;
    while ((o = getopt_long(argc, argv, ":c:tl:fhV", opts, NULL)) != -1) {
        switch (o) {
        case 'c': r->args.config_path = optarg; break;
        case 't': act = ACT_CHECK; break;
        case 'l': r->listens[r->args.n_listen++] = optarg; break;
        case 'L': r->args.log_level = optarg; break;
        case 'f': break;
        case 'R': if (act != ACT_CHECK) act = ACT_RESTORE; break;
        case 'h': usage(stdout); r->exit_code = 0; return ACT_EXIT;
        case 'V':
            printf("debitd %s (libmicrohttpd %s)\n", DEBIT_VERSION, MHD_get_version());
            r->exit_code = 0;
            return ACT_EXIT;
        case ':': fprintf(stderr, "debitd: option %s needs an argument\n", argv[optind - 1]); return ACT_EXIT;
        default: fprintf(stderr, "debitd: unknown option %s (try --help)\n", argv[optind - 1]); return ACT_EXIT;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "debitd: unexpected argument \"%s\" (try --help)\n", argv[optind]);
        return ACT_EXIT;
    }
    if (!r->args.config_path)
        r->args.config_path = default_config();
    return act;
}

/* MemTotal of /proc/meminfo in bytes, 0 when unknown. */
static uint64_t mem_total(void)
{
    FILE *f = fopen("/proc/meminfo", "re");
    char line[160];
    unsigned long long kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemTotal: %llu kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return (uint64_t)kib * 1024;
}

/* -t: what a start checks first without privilege, so that a -t that passes should start;
 * prints the effective settings. Creates no file (logfile.h). */
static int run_check(struct run *r)
{
    enum offload_ctl_status oc = offload_ctl_check(&r->cfg, r->err, sizeof r->err);
    if (oc == OFFLOAD_CTL_FAILED) {
        log_error("%s", r->err);
        return 2;
    }
    if (oc == OFFLOAD_CTL_WARNING)
        log_warn("%s", r->err);
    if (config_region_warning(&r->cfg, mem_total(), r->note, sizeof r->note))
        log_warn("%s", r->note);
    config_print(&r->cfg, stdout);
    if (!r->args.config_path)
        printf("# no -c and no %s: the built-in defaults\n", DEBITD_DEFAULT_CONFIG);
    fprintf(stderr, "debitd: the configuration %s is valid\n", r->cfg.source);
    return 0;
}

/* --restore-offload. The configuration was valid: a failed restore is a runtime failure. */
static int run_restore(struct run *r)
{
    if (offload_ctl_recover(&r->cfg, r->note, sizeof r->note, r->err, sizeof r->err) < 0) {
        log_error("%s", r->err);
        return 1;
    }
    log_info("%s", r->note);
    return 0;
}

/* Before the server exists: signals, warnings, the offload state directory, the offloads
 * (every response reports them), the descriptor limit. 0, or an exit code with the error
 * logged. */
static int serve_prepare(struct run *r)
{
    const struct config *c = &r->cfg;
    if (r->args.config_path)
        log_info("configuration: %s", r->args.config_path);
    else
        log_info("configuration: the built-in defaults (no -c and no %s)", DEBITD_DEFAULT_CONFIG);
    /* Signals are taken synchronously by sigwait; every thread started after this inherits
     * the mask. SIGPIPE: sendfile to a closed peer must not kill the process. */
    sigemptyset(&r->signals);
    sigaddset(&r->signals, SIGINT);
    sigaddset(&r->signals, SIGTERM);
    sigaddset(&r->signals, SIGHUP);
    sigaddset(&r->signals, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &r->signals, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (geteuid() == 0 && !c->user)
        log_warn("running as root with no user setting: set user = \"NAME\"; to drop root after start-up "
                 "(docs/server.md, \"Least privilege\")");
    if (privdrop_prepare_state_dir(c, r->note, sizeof r->note, r->err, sizeof r->err) < 0) {
        log_error("%s", r->err);
        return 2;
    }
    if (r->note[0])
        log_info("%s", r->note);
    if (c->user && geteuid() != 0 && geteuid() != c->uid)
        log_warn("user = \"%s\" needs debitd to start as root; ignored (running as uid %u)", c->user,
                 (unsigned)geteuid());
    switch (offload_ctl_start(&r->off, c, r->err, sizeof r->err)) {
    case OFFLOAD_CTL_OK: break;
    case OFFLOAD_CTL_WARNING: log_warn("%s", r->err); break;
    case OFFLOAD_CTL_FAILED: log_error("%s", r->err); return 2;
    }
    /* Each connection may hold two descriptors (its socket and a dup of the content memfd):
     * the usual soft limit of 1024 would cap limits.connections far below its default of
     * 10000, so take the hard limit, as nginx's worker_rlimit_nofile lets one do. */
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        rlim_t was = nofile.rlim_cur;
        nofile.rlim_cur = nofile.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &nofile) == 0)
            log_debug("open files limit raised from %llu to %llu", (unsigned long long)was,
                      (unsigned long long)nofile.rlim_cur);
    }
    return 0;
}

/* The server: made and bound with privilege, which is then dropped before any thread
 * starts (every thread inherits the drop); the user and group are pinned first, so that no
 * reload looks them up again. 0, or an exit code (bind errors are configuration errors: 2)
 * with the error logged. */
static int serve_start(struct run *r)
{
    if (config_ids_pin(&r->ids, &r->cfg) < 0) {
        log_error("out of memory");
        return 1;
    }
    r->args.ids = &r->ids;
    if (!(r->srv = server_new(&r->cfg, r->err, sizeof r->err))) {
        log_error("%s", r->err);
        return 1;
    }
    panic_ctx.off = &r->off;
    panic_ctx.srv = r->srv;
    MHD_set_panic_func(on_mhd_panic, NULL);
    enum server_start_err st = server_bind(r->srv, r->err, sizeof r->err);
    if (st == SERVER_START_OK) {
        http_daemon_probe(r->srv);
        struct privdrop_plan plan;
        privdrop_plan_make(&r->cfg, geteuid(), r->off.session != NULL, privdrop_profiles_need_net_admin(&r->cfg),
                           &plan);
        if (privdrop_apply(&plan, r->note, sizeof r->note, r->err, sizeof r->err) < 0) {
            err_prefix(r->err, sizeof r->err, "privilege drop");
            log_error("%s", r->err);
            return 1;
        }
        log_info("%s", r->note);
        st = server_start(r->srv, http_daemon_start, r->err, sizeof r->err);
    }
    if (st != SERVER_START_OK) {
        log_error("%s", r->err);
        return st == SERVER_START_CONFIG ? 2 : 1;
    }
    log_info("debitd %s ready (pid %d)", DEBIT_VERSION, (int)getpid());
    if (notify_send(NOTIFY_READY, "serving", r->err, sizeof r->err) < 0)
        log_warn("%s", r->err);
    return 0;
}

/* SIGHUP: reload (reload.h), telling systemd before and after. */
static void serve_reload(struct run *r)
{
    if (notify_send(NOTIFY_RELOADING, NULL, r->err, sizeof r->err) < 0)
        log_warn("%s", r->err);
    char msg[1400];
    if (reload_run(r->srv, &r->args, &r->off, msg, sizeof msg) == 0)
        log_info("%s", msg);
    else
        log_error("%s", msg);
    if (notify_send(NOTIFY_READY, msg, r->err, sizeof r->err) < 0)
        log_warn("%s", r->err);
}

/* Wait for signals until SIGINT or SIGTERM, which it returns. */
static int serve_signals(struct run *r)
{
    struct server *srv = r->srv;
    for (;;) {
        int sig = 0;
        /* woken every second while a replaced configuration waits for its last response */
        struct timespec tick = {1, 0};
        if (srv->retired)
            sig = sigtimedwait(&r->signals, NULL, &tick);
        else if (sigwait(&r->signals, &sig) != 0)
            sig = -1;
        snapshot_reap(&srv->retired);
        if (sig < 0)
            continue;
        if (sig == SIGHUP) {
            serve_reload(r);
        } else if (sig == SIGUSR1) {
            if (server_reopen_logs(srv, r->err, sizeof r->err) < 0)
                log_error("SIGUSR1: %s", r->err);
            else
                log_info("SIGUSR1: log files reopened");
        } else {
            return sig;
        }
    }
}

/* SIGTERM with a drain timeout: refuse new connections, let running requests end; SIGINT
 * or a second SIGTERM stops at once. */
static void serve_stop(struct run *r, int sig)
{
    struct server *srv = r->srv;
    if (notify_send(NOTIFY_STOPPING, NULL, r->err, sizeof r->err) < 0)
        log_warn("%s", r->err);
    unsigned drain_ms = srv->snap->cfg->drain_timeout_ms; /* as the last reload left it */
    if (sig != SIGTERM || !drain_ms) {
        log_info("%s: stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
        return;
    }
    server_quiesce(srv);
    log_info("SIGTERM: stopping: no new connections; %llu request(s) running may take up to %.3g s "
             "(SIGTERM again: stop now)", (unsigned long long)srv->in_flight, drain_ms / 1000.0);
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    int again = 0;
    switch (server_drain(srv, drain_ms, &stop, &again)) {
    case SERVER_DRAIN_DONE: log_info("drained: no request left"); break;
    case SERVER_DRAIN_TIMEOUT:
        log_info("drain timeout: closing %llu request(s) still running", (unsigned long long)srv->in_flight);
        break;
    case SERVER_DRAIN_SIGNAL:
        log_info("%s: stopping now (%llu request(s) still running)", again == SIGINT ? "SIGINT" : "SIGTERM",
                 (unsigned long long)srv->in_flight);
        break;
    }
}

/* Serve until SIGINT or SIGTERM: 0, or an exit code with the error logged. */
static int serve(struct run *r)
{
    int rc = serve_prepare(r);
    if (rc == 0)
        rc = serve_start(r);
    if (rc == 0)
        serve_stop(r, serve_signals(r));
    return rc;
}

int main(int argc, char **argv)
{
    struct run r;
    memset(&r, 0, sizeof r);
    int rc = 2, served = 0;
    log_set_prog("debitd");
    enum action act = parse_args(&r, argc, argv);
    if (act == ACT_EXIT) {
        rc = r.exit_code;
        goto out;
    }
    /* the same steps at start and on every SIGHUP */
    if (reload_load_config(&r.cfg, &r.args, r.err, sizeof r.err) < 0) {
        log_error("%s", r.err);
        goto out;
    }
    log_set_level(r.cfg.log_level);
    switch (act) {
    case ACT_CHECK: rc = run_check(&r); break;
    case ACT_RESTORE: rc = run_restore(&r); break;
    default: rc = serve(&r); served = rc == 0; break;
    }
out:
    server_free(r.srv);
    panic_ctx.srv = NULL;
    if (offload_ctl_stop(&r.off, r.err, sizeof r.err) < 0) {
        log_error("%s", r.err);
        if (rc == 0)
            rc = 1;
    }
    config_free(&r.cfg);
    config_ids_free(&r.ids);
    free(r.listens);
    if (served)
        log_info("stopped");
    return rc;
}
