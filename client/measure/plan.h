/* plan: the measurement loop as an API. A plan is one cell of an experiment: a list of
 * servers, N runs each, an order (alternate A B A B…, sequential, or seeded random), a
 * pause between downloads and the download options. plan_execute() runs it download by
 * download and hands every finished run to a callback (JSONL, progress, tables), so the
 * command line (one cell) and the scenario runner (many cells, settings applied around
 * each) share the same loop. */
#ifndef DEBIT_PLAN_H
#define DEBIT_PLAN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "download.h"
#include "result.h"

enum plan_order {
    PLAN_ORDER_ALTERNATE = 0,
    PLAN_ORDER_SEQUENTIAL,
    PLAN_ORDER_RANDOM,
};

/* "alternate" ... -> enum: 0, or -1 for an unknown name (o untouched). */
int plan_order_parse(const char *s, enum plan_order *o);
const char *plan_order_name(enum plan_order o);

struct plan_server {
    const char *name;
    const char *url;
    uint64_t upload;  /* > 0: this server gets an upload of that size, whatever dl says */
    int family;       /* 4 or 6: this server over IPv4 or IPv6 only (--families); 0: dl's */
};

struct plan {
    const struct plan_server *servers;
    size_t nservers;
    unsigned runs;             /* per server */
    enum plan_order order;
    uint64_t seed;             /* for PLAN_ORDER_RANDOM */
    double pause_s;            /* between downloads (not before the first) */
    const struct dl_options *dl;
    const char *scenario;      /* labels copied into every result; may be NULL */
    const char *variant;
};

/* One step of the order: which server, which of its runs (1-based). */
struct plan_step {
    size_t server;
    unsigned run;
};

/* The order of the plan's downloads: nservers * runs steps into a new array (caller
 * frees), or NULL on allocation failure. Random order is a seeded Fisher-Yates shuffle
 * of the alternate order; each server's runs keep increasing numbers. */
struct plan_step *plan_steps(const struct plan *p, size_t *n);

struct plan_hooks {
    /* Before each download: step index (0-based) of total. May be NULL. */
    void (*run_start)(const struct plan *p, size_t step, size_t total, const struct plan_step *s, void *ud);
    /* After each finished download (not an interrupted one); r is owned by the result set. */
    void (*run_done)(const struct plan *p, const struct run_result *r, size_t step, size_t total, void *ud);
    dl_progress_fn progress;   /* live progress during a download; may be NULL */
    dl_interval_fn interval;   /* --interval: each closed interval of the run; may be NULL */
    void *ud;
    volatile sig_atomic_t *stop; /* set by a signal handler: stop after/abort the current run */
};

/* How plan_execute ended (common/err.h: more than done/failed, so a named enum). Its
 * callers turn it into their own outcome; nothing prints it, so it has no _name. */
enum plan_status {
    PLAN_DONE = 0,  /* every download ran (each run's own failure is data in its result) */
    PLAN_STOPPED,   /* *hooks->stop was set: the interrupted download is discarded */
    PLAN_FAILED,    /* out of memory: the runs so far are in rs */
};

/* Run every download of p, appending finished runs to rs (seq continues from rs->n). */
enum plan_status plan_execute(const struct plan *p, struct result_set *rs, const struct plan_hooks *hooks);

#endif
