/* metrics: the bytes sent per file and listener (atomics, updated on the request threads:
 * rows of one configuration, carried over by a reload) and the rendering of every metric in
 * the text exposition format 0.0.4 (GET /metrics, docs/server.md). The totals come from
 * struct counters (counters.h), the same /status shows; what other modules count
 * (refusals, acceptors) and what is read live (offloads, TCP profiles) comes in a struct
 * metrics_view at render time. */
#ifndef DEBITD_METRICS_H
#define DEBITD_METRICS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "counters.h"
#include "verdict.h"

struct metrics;

/* Counters for N_LISTENERS x N_FILES byte counters, all zero. NULL when out of memory. */
struct metrics *metrics_new(size_t n_listeners, size_t n_files);
void metrics_free(struct metrics *m);
/* A reload's new rows TO take over FROM's: the bytes row of each of TO's files whose
 * FILE_FROM entry is an index in FROM (SIZE_MAX: a new file, zero), listeners unchanged.
 * Call while nobody updates FROM. */
void metrics_carry(struct metrics *to, const struct metrics *from, const size_t *file_from);
/* A file transfer ended: BYTES of file FILE sent through listener LISTENER (its total and
 * duration: counters_transfer). Out-of-range indexes are ignored. */
void metrics_file_bytes(struct metrics *m, size_t listener, size_t file, uint64_t bytes);

/* A file transfer on listener LISTENER ended with debitd's verdict KIND
 * (debitd_transfers_total{listener,limited_by}). Out-of-range indexes are ignored. */
void metrics_verdict(struct metrics *m, size_t listener, enum verdict_kind kind);

struct metrics_offload { /* debitd_offload_enabled{interface,feature} */
    const char *interface, *feature;
    int on;
};
struct metrics_tcp { /* debitd_tcp_profile_info{listener,cc,pacing,sndbuf,notsent_lowat} */
    const char *listener, *cc, *pacing, *sndbuf, *notsent_lowat;
};

struct metrics_accept { /* a listener's acceptor (acceptor.h), debitd_accept* families */
    const char *listener;
    uint64_t handed, refused, paused, errors;
    unsigned open;
};

/* What is rendered beside the counters of struct metrics. Arrays may be empty. */
struct metrics_view {
    const char *version;
    /* names of the counters' rows: those beyond metrics_new's counts are not rendered, nor
     * counters beyond these counts (a configuration that changed since) */
    const char *const *listeners;
    size_t n_listeners;
    const char *const *files; /* URL paths */
    size_t n_files;
    double uptime_s;
    const char *const *refusal_names;
    const uint64_t *refusals;
    size_t n_refusals;
    const struct metrics_offload *offload;
    size_t n_offload;
    const struct metrics_tcp *tcp;
    size_t n_tcp;
    const struct metrics_accept *accept;
    size_t n_accept;
    /* protocol and endpoint label of each speed-test row (2 x n_speedtest strings) */
    const char *const *speedtest_labels;
    size_t n_speedtest;
    uint64_t config_generation, reloads_ok, reloads_refused; /* reload.h */
    /* the per-address quota's table (quota.h): entries, size, takeovers */
    uint64_t quota_entries, quota_capacity, quota_overflow;
    /* debitd's cgroup CPU budget (cpu_budget.h): quota_ratio <= 0 = no quota (no sample);
     * the throttling counters only when cpu.stat was read (have_cpu_stat) */
    double cpu_quota_ratio;
    int have_cpu_stat;
    double cpu_throttled_s;
    uint64_t cpu_nr_throttled;
};

/* Write every metric family (# HELP, # TYPE, samples) of M's rows, C's totals and V to OUT.
 * Returns 0, or -1 if a write failed. */
int metrics_render(const struct metrics *m, const struct counters *c, const struct metrics_view *v, FILE *out);

#endif
