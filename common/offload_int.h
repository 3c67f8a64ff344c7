/* offload_int: internals shared by offload.c, offload_fmt.c, offload_state.c and
 * offload_session.c only. Errors follow err.h: the enum says the kind, err the sentence. */
#ifndef DEBIT_OFFLOAD_INT_H
#define DEBIT_OFFLOAD_INT_H

#include "offload.h"

/* "tso", "gso", ... indexed by enum offload_feature (offload_fmt.c). */
extern const char *const offload_names[OFFLOAD_NFEATURES];

/* OFFLOAD_OK, or OFFLOAD_ERR_ARG for an empty, too long or malformed interface name. */
enum offload_err offload_check_ifname(const char *ifname, char *err, size_t errlen);

/* A datagram socket for SIOCETHTOOL in the caller's network namespace (AF_INET, else
 * AF_UNIX where AF_INET is compiled out), close-on-exec; -1 with errno set. */
int offload_ctl_socket(void);

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
