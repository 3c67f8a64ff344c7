/* ndt7_measure: the text messages an ndt7 server sends while it measures (M-Lab's
 * spec/ndt7-protocol.md, "Measurement message"): AppInfo, ConnectionInfo, Origin, Test and
 * TCPInfo with the spec's field names and units (microseconds, bytes), from debitd's one
 * TCP_INFO reader (common/tcp_info.h), plus what only debitd says, under names of its
 * own: "DebitTCP" (the record's TCP vocabulary, docs/tcp_info.md), "DebitOffload" and
 * "DebitInterface" (X-Debit-Offload and X-Debit-Interface of a file response). Pure:
 * unit-tested in tests/unit/server/observe/test_ndt7_measure.c. */
#ifndef DEBITD_NDT7_MEASURE_H
#define DEBITD_NDT7_MEASURE_H

#include <jansson.h>
#include <stdint.h>

#include "tcp_info.h"

struct ndt7_figures {
    const char *test;       /* "download" or "upload" */
    uint64_t elapsed_us;    /* since the handshake's end */
    uint64_t num_bytes;     /* payload bytes sent (download) or received (upload) so far */
    const struct tcp_info_sample *ti; /* the connection's TCP_INFO now; NULL: unreadable */
    /* ConnectionInfo; NULL: not sent in this message */
    const char *client, *server; /* "ADDR:PORT" / "[ADDR]:PORT" */
    const char *uuid;            /* the test's transfer ID (/transfers/UUID) */
    const char *start_time;      /* RFC 3339 UTC */
    const char *offload, *ifname; /* "" or NULL: left out */
};

/* The measurement of F as a new JSON object (NULL when out of memory). */
json_t *ndt7_measurement(const struct ndt7_figures *f);
/* The same, serialized compactly into a new string (free()), or NULL. */
char *ndt7_measurement_text(const struct ndt7_figures *f);

#endif
