/* store_record: a run, or an invocation, as the record store_insert() takes: one JSON
 * object whose members are the table's columns (docs/store.md), the run's whole JSON
 * (result_to_json, docs/schema/debit-run.schema.json) in "run". Live runs, imported
 * --jsonl lines and the spool all go through these. */
#ifndef DEBIT_STORE_RECORD_H
#define DEBIT_STORE_RECORD_H

#include <jansson.h>
#include <stddef.h>

/* What holds for every run of one invocation (strings borrowed). */
struct store_context {
    const char *invocation_id; /* store_new_id(); NULL for imported runs */
    const char *vantage;       /* --vantage, default the host name */
    const char *kernel;        /* "Linux 6.1.0-18-amd64 x86_64"; NULL: unknown */
};

/* A fresh unique id (128 random bits in hex, 32 characters + NUL in buf[33]). Returns 0
 * or -1 (err) when the kernel gives no randomness. */
int store_new_id(char buf[33], char *err, size_t errlen);
/* A stable id derived from text (two FNV-1a 64-bit hashes): the same imported line gets
 * the same id, so an import repeated adds nothing. */
void store_content_id(const char *text, size_t len, char buf[33]);

/* The client's kernel as store_context.kernel wants it ("Linux RELEASE MACHINE"). */
void store_kernel(char *buf, size_t len);
/* The offloads of the client's interfaces now ("eth0 tso=on gso=on gro=on; ..."), every
 * interface that is up but loopback; "" when none can be read. */
void store_offloads(char *buf, size_t len);

/* The runs record of one run's JSON object (borrowed; a reference is kept in "run"),
 * with run_id and offloads (NULL: unknown) given. NULL with err when run lacks what a
 * row needs (server, started_at). */
json_t *store_record_run(json_t *run, const struct store_context *ctx, const char *run_id, const char *offloads,
                         char *err, size_t errlen);

/* The invocations record: times in seconds since the epoch, argv joined by spaces,
 * summary (borrowed, may be NULL). */
json_t *store_record_invocation(const struct store_context *ctx, double started_at, double finished_at,
                                const char *offloads, const char *argv, long runs, long runs_ok, json_t *summary);

/* "2026-12-06T01:02:03.456Z" -> seconds since the epoch. Returns 0 or -1. */
int store_parse_time(const char *iso, double *t);

#endif
