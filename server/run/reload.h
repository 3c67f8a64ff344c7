/* reload: SIGHUP re-reads debitd's configuration and applies what changed without dropping
 * a connection (docs/server.md, "Reload"). The new file goes through the very path of the
 * start (defaults, file, command line, the same setters and FILE:LINE errors, the same
 * cross-checks); a configuration that fails, or that changes what only a restart can
 * (config_diff.h), is refused as a whole and the running one stays in force. An accepted
 * one becomes a new snapshot (snapshot.h) swapped in under the server's write lock, so that
 * libmicrohttpd's callbacks, which hold the read lock while they run, see either the old
 * configuration or the new one, never a mix; responses under way keep the snapshot they
 * started with (their file, their content region) until they end. Runs in main's thread. */
#ifndef DEBITD_RELOAD_H
#define DEBITD_RELOAD_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "offload_ctl.h"

struct server;
struct snapshot;

/* What the command line set: applied over the file at start and on every reload. */
struct reload_args {
    const char *config_path;     /* NULL: the built-in defaults */
    const char *const *listens;  /* --listen, replacing the file's listeners when n_listen > 0 */
    size_t n_listen;
    const char *log_level;       /* --log-level, NULL: the file's */
    const struct config_ids *ids; /* set once debitd started: user and group are not looked up again */
};

/* Fill *C as debitd's start does: config_defaults, the file, the command line, then
 * config_validate and a test open of the access log (as nginx -t does: a log that cannot be
 * opened is a configuration error). C is always initialised (config_free it). An action:
 * 0, or -1 with err ("FILE:LINE: setting: reason", "--listen: ..."). */
int reload_load_config(struct config *c, const struct reload_args *a, char *err, size_t errlen);

/* What /status "config" and /metrics show: written by main under the write lock. */
struct reload_state {
    double loaded_wall;   /* when the configuration in force was read (sys_wall_s) */
    uint64_t generation;  /* 1 at start, +1 per applied reload */
    uint64_t ok, refused; /* reloads since start */
    int have_last;        /* a reload happened */
    double last_wall;
    int last_ok;
    char last_error[1200]; /* the refusal's message, "" when last_ok */
};

/* Re-read the configuration (SIGHUP) and apply it to S, OFF being the offload control main
 * started with. MSG receives the one-line outcome (what changed, or "reload refused:
 * FILE:LINE: ..."), which debitd logs and tells systemd. Returns 0 applied, -1 refused. */
int reload_run(struct server *s, const struct reload_args *a, struct offload_ctl *off, char *msg, size_t msglen);

/* The TLS part of a reload (listen[].tls certificates, server/run/tls.c): called in main's
 * thread once the new configuration is valid and everything else debitd prepares for it
 * (content, digests, access log) is ready, before the offloads are changed and before the
 * swap, so that a certificate that cannot be loaded refuses the reload. What it loads must
 * be put in force by itself (the one later step that can still refuse the reload is an
 * offload change that fails). It re-reads every HTTPS listener's certificate and key
 * (tls_reload: new handshakes get them, open connections keep theirs). An action: 0, or -1
 * with err ("listen[N].tls: ..."). */
int reload_tls(struct server *s, const struct config *new_cfg, char *err, size_t errlen);

/* The row of FILE (an index in AT's configuration) in S's current configuration, found by
 * URL path: a transfer that started before a reload is counted in its file's row of the
 * metrics now rendered. SIZE_MAX when the reload removed it. Under the read lock. */
size_t reload_file_row(const struct server *s, const struct snapshot *at, size_t file);

#endif
