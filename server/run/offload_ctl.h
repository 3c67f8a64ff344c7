/* offload_ctl: debitd owns the TSO/GSO/GRO state of its serving interface (config
 * `offload = {...}`): it recovers a state left by a crashed debitd, applies and verifies the
 * configured state before serving, and puts the original back at exit (common/offload_session
 * does the crash-safe part: state file, atexit). Used by main only. */
#ifndef DEBITD_OFFLOAD_CTL_H
#define DEBITD_OFFLOAD_CTL_H

#include <stddef.h>

#include "config.h"

struct offload_session;

struct offload_ctl {
    struct offload_session *session; /* restore = true: the crash-safe session */
    int applied;                     /* a change is in force */
};

/* How offload_ctl_start ended (err.h: three outcomes, so a named enum). */
enum offload_ctl_status {
    OFFLOAD_CTL_OK = 0,  /* applied and verified, or nothing to do */
    OFFLOAD_CTL_WARNING, /* failed, but offload.required is false: err holds the warning */
    OFFLOAD_CTL_FAILED,  /* failed and required: err holds the error */
};

/* `debitd -t`: whether cfg->offload's interface exists in this network namespace, without
 * reading or changing it (no privilege needed): what a start would fail on first. */
enum offload_ctl_status offload_ctl_check(const struct config *cfg, char *err, size_t errlen);
/* Apply cfg->offload (nothing when no interface is configured). */
enum offload_ctl_status offload_ctl_start(struct offload_ctl *ctl, const struct config *cfg, char *err,
                                          size_t errlen);
/* A reload changed offload.tso/gso/gro or required (same interface, restore and state
 * file: config_diff.h): apply CFG's wishes. The state restored at exit stays the original
 * one, from before debitd's first change; wishes the reload removed leave the interface as
 * it is until then. Needs CAP_NET_ADMIN, which debitd keeps after its privilege drop only
 * while an offload change of its own is to be restored (privdrop.h). */
enum offload_ctl_status offload_ctl_change(struct offload_ctl *ctl, const struct config *cfg, char *err,
                                           size_t errlen);
/* Restore the original state if configured to (idempotent). An action: 0, or -1 with err. */
int offload_ctl_stop(struct offload_ctl *ctl, char *err, size_t errlen);

/* `debitd --restore-offload`: restore what a dead debitd left in the state file. An action:
 * 0 (restored, or nothing to do; note says which) or -1 with err. */
int offload_ctl_recover(const struct config *cfg, char *note, size_t notelen, char *err, size_t errlen);

#endif
