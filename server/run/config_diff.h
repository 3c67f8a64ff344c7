/* config_diff: what a reload changes (SIGHUP, reload.h): the settings a running debitd can
 * take over (files, limits, TCP profiles, offloads, logs, metrics, privacy, content) and
 * the ones it cannot without a restart (listeners, threads, limits.connections,
 * limits.idle_timeout, transfers, user, group, seccomp, the offload interface). Pure:
 * compares two validated configurations, no system call; unit-tested by table. */
#ifndef DEBITD_CONFIG_DIFF_H
#define DEBITD_CONFIG_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

struct config_diff {
    /* the first setting that needs a restart ("listen", "threads", ...), NULL if none */
    const char *restart;
    size_t files_added, files_removed, files_resized; /* by URL path */
    int content;   /* seed or region size (ram, the largest file): a new region */
    int sizes;     /* a file size the old configuration did not have: a new digest */
    int limits;    /* per_ip, per_ip_bytes/window, drain, header, body rate, upload, speedtest caps */
    int upload;    /* upload path or size */
    uint64_t tcp;  /* bit i: listener i's TCP profile (same listeners: restart otherwise) */
    int offload;   /* tso/gso/gro wishes (same interface) */
    int log_level, access_log, access_format;
    int other;     /* privacy, http.strict, metrics, speedtest protocols */
};

/* Compare OLD and NEW into *D. */
void config_diff(const struct config *old, const struct config *new, struct config_diff *d);
/* 1 when D changes anything (restart aside). */
int config_diff_any(const struct config_diff *d);
/* One line of what D changes, as debitd logs it: "+1 file, -0, 0 resized, limits changed,
 * tcp profile of 127.0.0.1:8080 changed" ("nothing changed" when nothing did). NEW names
 * the listeners. Truncated to LEN. */
void config_diff_format(const struct config_diff *d, const struct config *new, char *buf, size_t len);

#endif
