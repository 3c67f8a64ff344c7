/* transfers: a ring of the most recent file transfers, each with an ID sent to the client in
 * X-Debit-Transfer, served as JSON at /transfers/ID and written to the access log when done.
 * An entry is created "sending" when a response starts and becomes "done" (or "aborted")
 * with the sender's TCP_INFO when it ends. IDs are "BOOT-SEQ": BOOT is random per start, so
 * an ID from a previous run of debitd is never mistaken for a current one. Thread-safe. */
#ifndef DEBITD_TRANSFERS_H
#define DEBITD_TRANSFERS_H

#include <jansson.h>
#include <stdint.h>

#define TRANSFER_ID_LEN 32

struct transfers;

struct transfer_start {
    const char *path;     /* URL path of the file */
    const char *remote;   /* client address "ADDR:PORT" or "[ADDR]:PORT" */
    const char *listener; /* listener it arrived on */
    uint64_t first;       /* first byte offset of the body */
    uint64_t length;      /* body bytes the response carries */
    int status;           /* HTTP status (200, 206) */
};

/* A ring of KEEP entries (>= 1). The caller owns the result (transfers_free). */
struct transfers *transfers_new(unsigned keep);
/* Release every entry. NULL is fine. */
void transfers_free(struct transfers *t);

/* Record a transfer that starts now; writes its ID into id and returns its sequence number
 * (what transfers_end takes). */
uint64_t transfers_begin(struct transfers *t, const struct transfer_start *s, char id[TRANSFER_ID_LEN]);

/* Complete entry SEQ (ignored if already evicted): STATE is "done" or "aborted", BYTES the
 * body bytes sent, TCP a JSON object of the sender's TCP_INFO (stolen; may be NULL).
 * Returns a new reference to the completed entry's JSON (for the access log), or NULL if
 * the entry was evicted meanwhile. */
json_t *transfers_end(struct transfers *t, uint64_t seq, const char *state, uint64_t bytes, json_t *tcp);

/* The entry for ID as a new JSON object, or NULL if unknown or evicted. */
json_t *transfers_get(struct transfers *t, const char *id);

/* Number of transfers begun so far. */
uint64_t transfers_count(struct transfers *t);

#endif
