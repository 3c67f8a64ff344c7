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
#include "http.h"
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

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'}, {"check", no_argument, NULL, 't'},
        {"listen", required_argument, NULL, 'l'}, {"log-level", required_argument, NULL, 'L'},
        {"foreground", no_argument, NULL, 'f'},   {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},      {"restore-offload", no_argument, NULL, 'R'},
        {NULL, 0, NULL, 0},
    };
    const char *config_path = NULL, *log_level = NULL;
    const char **listens = calloc((size_t)argc, sizeof *listens);
    size_t n_listen = 0;
    int check = 0, restore_only = 0, o;
    log_set_prog("debitd");
    if (!listens)
        return 1;
    opterr = 0;
    while ((o = getopt_long(argc, argv, ":c:tl:fhV", opts, NULL)) != -1) {
        switch (o) {
        case 'c': config_path = optarg; break;
        case 't': check = 1; break;
        case 'l': listens[n_listen++] = optarg; break;
        case 'L': log_level = optarg; break;
        case 'f': break;
        case 'R': restore_only = 1; break;
        case 'h': usage(stdout); free(listens); return 0;
        case 'V': printf("debitd %s (libmicrohttpd %s)\n", DEBIT_VERSION, MHD_get_version()); free(listens); return 0;
        case ':':
            fprintf(stderr, "debitd: option %s needs an argument\n", argv[optind - 1]);
            free(listens);
            return 2;
        default:
            fprintf(stderr, "debitd: unknown option %s (try --help)\n", argv[optind - 1]);
            free(listens);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "debitd: unexpected argument \"%s\" (try --help)\n", argv[optind]);
        free(listens);
        return 2;
    }

    struct config cfg;
    char err[1200], note[1200];
    int rc = 2;
    struct server *srv = NULL;
    struct offload_ctl off = {0};
    if (!config_path)
        config_path = default_config();
    /* the same steps at start and on every SIGHUP */
    struct reload_args args = {config_path, listens, n_listen, log_level};
    if (reload_load_config(&cfg, &args, err, sizeof err) < 0)
        goto fail;
    log_set_level(cfg.log_level);
    if (check) {
        /* what a start checks first without privilege: a -t that passes should start */
        enum offload_ctl_status oc = offload_ctl_check(&cfg, err, sizeof err);
        if (oc == OFFLOAD_CTL_FAILED)
            goto fail;
        if (oc == OFFLOAD_CTL_WARNING)
            log_warn("%s", err);
        config_print(&cfg, stdout);
        if (!config_path)
            printf("# no -c and no %s: the built-in defaults\n", DEBITD_DEFAULT_CONFIG);
        fprintf(stderr, "debitd: the configuration %s is valid\n", cfg.source);
        config_free(&cfg);
        free(listens);
        return 0;
    }

    if (restore_only) {
        /* The configuration was valid: a failed restore is a runtime failure (exit 1). */
        if (offload_ctl_recover(&cfg, note, sizeof note, err, sizeof err) < 0) {
            log_error("%s", err);
            config_free(&cfg);
            free(listens);
            return 1;
        }
        log_info("%s", note);
        config_free(&cfg);
        free(listens);
        return 0;
    }

    if (config_path)
        log_info("configuration: %s", config_path);
    else
        log_info("configuration: the built-in defaults (no -c and no %s)", DEBITD_DEFAULT_CONFIG);
    /* Signals are taken synchronously by sigwait; every thread started after this inherits
     * the mask. SIGPIPE: sendfile to a closed peer must not kill the process. */
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGUSR1);
    pthread_sigmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);

    if (geteuid() == 0 && !cfg.user)
        log_warn("running as root with no user setting: set user = \"NAME\"; to drop root after start-up "
                 "(docs/server.md, \"Least privilege\")");
    if (privdrop_prepare_state_dir(&cfg, note, sizeof note, err, sizeof err) < 0)
        goto fail;
    if (note[0])
        log_info("%s", note);
    if (cfg.user && geteuid() != 0 && geteuid() != cfg.uid)
        log_warn("user = \"%s\" needs debitd to start as root; ignored (running as uid %u)", cfg.user,
                 (unsigned)geteuid());
    /* the interface's offloads before anything is served: every response reports them */
    switch (offload_ctl_start(&off, &cfg, err, sizeof err)) {
    case OFFLOAD_CTL_OK: break;
    case OFFLOAD_CTL_WARNING: log_warn("%s", err); break;
    case OFFLOAD_CTL_FAILED: goto fail;
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
    srv = server_new(&cfg, err, sizeof err);
    if (!srv) {
        rc = 1;
        goto fail;
    }
    panic_ctx.off = &off;
    panic_ctx.srv = srv;
    MHD_set_panic_func(on_mhd_panic, NULL);
    /* what needs root is done (listeners bound, offloads applied): drop it before any
     * thread starts, so that every thread inherits the drop */
    enum server_start_err st = server_bind(srv, err, sizeof err);
    if (st == SERVER_START_OK) {
        http_daemon_probe(srv);
        struct privdrop_plan plan;
        privdrop_plan_make(&cfg, geteuid(), off.session != NULL, privdrop_profiles_need_net_admin(&cfg), &plan);
        if (privdrop_apply(&plan, note, sizeof note, err, sizeof err) < 0) {
            err_prefix(err, sizeof err, "privilege drop");
            rc = 1;
            goto fail;
        }
        log_info("%s", note);
        st = server_start(srv, http_daemon_start, err, sizeof err);
    }
    if (st != SERVER_START_OK) {
        rc = st == SERVER_START_CONFIG ? 2 : 1; /* bind errors are configuration errors: exit 2 */
        goto fail;
    }
    log_info("debitd %s ready (pid %d)", DEBIT_VERSION, (int)getpid());
    if (notify_send(NOTIFY_READY, "serving", err, sizeof err) < 0)
        log_warn("%s", err);
    int sig = 0;
    for (;;) {
        /* woken every second while a replaced configuration waits for its last response */
        struct timespec tick = {1, 0};
        if (srv->retired)
            sig = sigtimedwait(&set, NULL, &tick);
        else if (sigwait(&set, &sig) != 0)
            sig = -1;
        snapshot_reap(&srv->retired);
        if (sig < 0)
            continue;
        if (sig == SIGHUP) {
            if (notify_send(NOTIFY_RELOADING, NULL, err, sizeof err) < 0)
                log_warn("%s", err);
            char msg[1400];
            int ok = reload_run(srv, &args, &off, msg, sizeof msg) == 0;
            if (ok)
                log_info("%s", msg);
            else
                log_error("%s", msg);
            if (notify_send(NOTIFY_READY, msg, err, sizeof err) < 0)
                log_warn("%s", err);
            continue;
        }
        if (sig == SIGUSR1) {
            if (server_reopen_logs(srv, err, sizeof err) < 0)
                log_error("SIGUSR1: %s", err);
            else
                log_info("SIGUSR1: log files reopened");
            continue;
        }
        break;
    }
    if (notify_send(NOTIFY_STOPPING, NULL, err, sizeof err) < 0)
        log_warn("%s", err);
    unsigned drain_ms = srv->snap->cfg->drain_timeout_ms; /* as the last reload left it */
    if (sig == SIGTERM && drain_ms) {
        /* graceful: refuse new connections, let running requests end; SIGINT or a second
         * SIGTERM stops at once */
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
    } else {
        log_info("%s: stopping", sig == SIGINT ? "SIGINT" : "SIGTERM");
    }
    server_free(srv);
    panic_ctx.srv = NULL;
    if (offload_ctl_stop(&off, err, sizeof err) < 0) {
        log_error("%s", err);
        rc = 1;
    } else {
        rc = 0;
    }
    config_free(&cfg);
    free(listens);
    log_info("stopped");
    return rc;
fail:
    log_error("%s", err);
    server_free(srv);
    if (offload_ctl_stop(&off, err, sizeof err) < 0)
        log_error("%s", err);
    config_free(&cfg);
    free(listens);
    return rc;
}
