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

/* Apply cfg->offload (nothing when no interface is configured). Returns 0; 1 when it failed
 * but offload.required is false (err holds the warning); -1 when it failed and is required. */
int offload_ctl_start(struct offload_ctl *ctl, const struct config *cfg, char *err, size_t errlen);
/* Restore the original state if configured to (idempotent). Returns 0, or -1 with err. */
int offload_ctl_stop(struct offload_ctl *ctl, char *err, size_t errlen);

/* `debitd --restore-offload`: restore what a dead debitd left in the state file. Returns 0
 * (restored, or nothing to do; note says which) or -1 with err. */
int offload_ctl_recover(const struct config *cfg, char *note, size_t notelen, char *err, size_t errlen);

#endif
