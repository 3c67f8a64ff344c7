/* transfers: a ring of the most recent file transfers, each with an ID sent to the client in
 * X-Debit-Transfer, served as JSON at /transfers/ID and written to the access log when done.
 * An entry is created "sending" when a response starts and becomes "done" (or "aborted")
 * when it ends. Its "tcp" object is the sender's TCP_INFO: sampled while it sends
 * (transfers_sample, from the server's sampler thread every 100 ms) and once more at the
 * end, so that "max_snd_cwnd" is the largest cwnd seen, not the last one. An ID is 128
 * random bits (getrandom) in 32 lowercase hex digits: it cannot be guessed from another
 * one, so a visitor learns nothing about other visitors' transfers from their own ID, and
 * an ID from a previous run of debitd is never mistaken for a current one. A record is
 * given only to its owner (the address that made the transfer) unless the caller asks for
 * any (privacy.public_transfers). Thread-safe: the ring is locked in stripes, so that
 * workers serving different transfers rarely wait for each other. */
#ifndef DEBITD_TRANSFERS_H
#define DEBITD_TRANSFERS_H

#include <jansson.h>
#include <stdint.h>

#include "ack_watch.h"
#include "evidence.h"
#include "peer.h"
#include "tcp_info.h"
#include "verdict.h"

#define TRANSFER_ID_HEX 32                   /* hex digits of an ID (128 bits) */
#define TRANSFER_ID_LEN (TRANSFER_ID_HEX + 1) /* buffer size, NUL included */

struct transfers;

struct transfer_start {
    const char *path;     /* URL path of the file */
    const char *remote;   /* client address "ADDR:PORT" or "[ADDR]:PORT" */
    const char *listener; /* listener it arrived on */
    uint64_t first;       /* first byte offset of the body */
    uint64_t length;      /* body bytes the response carries */
    int status;           /* HTTP status (200, 206) */
    int sock;             /* the connection's socket, sampled while sending; -1 = none */
    const struct peer *owner; /* who may read the record; NULL = nobody but "any" readers */
    const char *send_path; /* "sendfile" (zero-copy), "iovec", "pread" or "buffer" (static) */
    const struct transfer_evidence *ev; /* what is known at the start (initial_cwnd, sndbuf); NULL none */
    int nopush;           /* headers sent with the body under TCP_CORK (nopush.h) */
    int upload;           /* debitd receives (the upload sink, __up, ndt7 upload): the rate
                           * is what arrived, the verdict the receiver's (verdict.h) */
};

/* A ring of KEEP entries (>= 1). The caller owns the result (transfers_free). */
struct transfers *transfers_new(unsigned keep);
/* Release every entry. NULL is fine. */
void transfers_free(struct transfers *t);

/* Record a transfer that starts now; writes its ID into id and returns its sequence number
 * (what transfers_end takes, never 0). Returns 0 with id "" when no random ID could be
 * drawn (getrandom failed): the transfer then has no record. */
uint64_t transfers_begin(struct transfers *t, const struct transfer_start *s, char id[TRANSFER_ID_LEN]);

/* Read TCP_INFO of every sending transfer's socket and fold it into the record
 * (tcp_info_track: the latest sample, with the largest cwnd seen; evidence_sample: the
 * "sampled" counts).
 * Returns how many were sampled. The socket is read under its stripe's lock and only while
 * the entry is "sending": transfers_end runs before the connection's socket is closed,
 * so a descriptor is never read after it was closed or reused. */
unsigned transfers_sample(struct transfers *t);

/* Complete entry SEQ (ignored if already evicted): STATE is "done" or "aborted", BYTES the
 * body bytes sent, LAST the sender's final TCP_INFO (folded into "tcp", not into "sampled";
 * NULL when unreadable), EV the server's side of it (evidence_end's part; NULL none).
 * Decides what limited the transfer from the record (common/verdict.h): "limited_by",
 * "limited_by_evidence", "predicted_mbps", "predicted_note" in its JSON, the access log's
 * line included.
 * Returns a new reference to the completed entry's JSON for the access log (without the
 * server's side: "cpu", "sampled", "cgroup", "sndbuf", "initial_cwnd" are only in
 * transfers_get's), or NULL if the entry was evicted meanwhile. */
json_t *transfers_end(struct transfers *t, uint64_t seq, const char *state, uint64_t bytes,
                      const struct tcp_info_sample *last, const struct transfer_evidence *ev);
/* transfers_end without the JSON (no access log to write it to): the record, some 80 JSON
 * values, is built only when someone reads it. Returns the verdict's kind (VERDICT_UNKNOWN
 * when the entry was evicted), for the /metrics counter. */
enum verdict_kind transfers_finish(struct transfers *t, uint64_t seq, const char *state, uint64_t bytes,
                                   const struct tcp_info_sample *last, const struct transfer_evidence *ev);

/* The entry for ID as a new JSON object, or NULL if unknown, evicted, malformed, or not
 * READER's: READER NULL reads any record, otherwise only one whose owner is the same
 * address (peer_same). The three cases look alike on purpose: a stranger cannot tell an
 * ID that exists from one that does not. */
json_t *transfers_get(struct transfers *t, const char *id, const struct peer *reader);

/* The acknowledgement of entry SEQ's last byte (ack_watch.h), shown in /transfers/ID as
 * "acked_s", "acked_mbps" and "acked_note" (docs/server.md). transfers_watching marks the
 * entry as watched (call it before ack_watch_add); transfers_acked has the signature of
 * ack_watch_done_fn, CTX the struct transfers: RESULT, and for ACK_OK the monotonic time
 * (sys_mono_s) of the acknowledgement. An entry never marked shows "not_watched". */
void transfers_watching(struct transfers *t, uint64_t seq);
void transfers_acked(void *ctx, uint64_t seq, enum ack_result result, double acked_mono);

/* Number of transfers begun so far. */
uint64_t transfers_count(struct transfers *t);

#endif
