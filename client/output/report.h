/* report: a measurement's results in the four output formats — a console table, the
 * seed's Markdown table, CSV and JSON — and the atomic file writer behind -o. Figures in
 * Mb/s are formatted by units_format_mbps. */
#ifndef DEBIT_REPORT_H
#define DEBIT_REPORT_H

#include <stdio.h>

#include "result.h"
#include "summary.h"

enum report_format {
    REPORT_TABLE = 0,
    REPORT_MARKDOWN,
    REPORT_CSV,
    REPORT_JSON,
};

int report_format_parse(const char *s, enum report_format *f);

/* What the outputs say about the measurement as a whole. Strings are borrowed. */
struct report_meta {
    const char *order;
    unsigned long long seed; /* meaningful for random order */
    int seed_used;
    unsigned runs;           /* per server and cell */
    int interrupted;
    json_t *extra;           /* members merged into the top-level JSON object (borrowed), or NULL */
    const char *const *notes; /* lines printed under the table and Markdown (client settings per cell) */
    size_t nnotes;
    const struct report_server_note *server_notes; /* the lab's host settings per server, or NULL */
    size_t nserver_notes;
};

/* What a lab set on a server's host (a scenario's `lab` group, in words: "cpu 1%, mtu
 * 1500"), shown next to what the server reported of itself. Strings are borrowed. */
struct report_server_note {
    const char *server;
    const char *host;
};

/* Write rs and its summary s in format f to out. Returns 0 or -1 (write error). */
int report_write(FILE *out, enum report_format f, const struct result_set *rs, const struct summary *s,
                 const struct report_meta *m);

/* The whole measurement as the JSON document of --format json (new reference; NULL on
 * allocation failure). Its keys are described by docs/schema/debit.schema.json. */
json_t *report_to_json(const struct result_set *rs, const struct summary *s, const struct report_meta *m);

/* Write to path atomically and durably (sys_atomic_open/commit: a reader sees the old
 * file or the whole new one). "-" writes to stdout. Returns 0 or -1 (err); for "-",
 * errno is then stdio's (EPIPE when stdout's reader went away: main ends quietly). */
int report_write_file(const char *path, enum report_format f, const struct result_set *rs,
                      const struct summary *s, const struct report_meta *m, char *err, size_t errlen);

/* Before a measurement: can path be written as report_write_file() will
 * (sys_atomic_check)? "-" is fine. Returns 0 or -1 (err), so that a bad -o fails at once,
 * not after an hour of downloads. */
int report_check_output(const char *path, char *err, size_t errlen);

#endif
