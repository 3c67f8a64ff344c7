/* offload_int: internals shared by offload.c and offload_session.c only. */
#ifndef DEBIT_OFFLOAD_INT_H
#define DEBIT_OFFLOAD_INT_H

#include "offload.h"

/* Build, in advance, the ETHTOOL_SFEATURES request that puts every changeable tso/gso/gro
 * bit of BEFORE back to its requested value, so that it can be sent later from a signal
 * handler with a bare ioctl. *REQ receives a malloc'ed struct ethtool_sfeatures (caller
 * frees). */
enum offload_err offload_prepare_restore(const struct offload_state *before, void **req,
                                         char *err, size_t errlen);

#endif
