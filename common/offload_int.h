/* offload_int: internals shared by offload.c, offload_state.c and offload_session.c only. */
#ifndef DEBIT_OFFLOAD_INT_H
#define DEBIT_OFFLOAD_INT_H

#include "offload.h"

/* Fill err (when non-NULL) with the printf-style message and return E: every error path
 * of the offload module is one statement. */
enum offload_err offload_fail(enum offload_err e, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Derive a feature's known/on/partial/fixed from its kernel bits (after reading them from
 * the device or from a state file). */
void offload_feature_summarize(struct offload_feature_state *fs);

/* Build, in advance, the ETHTOOL_SFEATURES request that puts every changeable tso/gso/gro
 * bit of BEFORE back to its requested value, so that it can be sent later from a signal
 * handler with a bare ioctl. *REQ receives a malloc'ed struct ethtool_sfeatures (caller
 * frees). */
enum offload_err offload_prepare_restore(const struct offload_state *before, void **req,
                                         char *err, size_t errlen);

#endif
