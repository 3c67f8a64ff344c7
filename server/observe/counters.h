/* counters: debitd's totals since start (requests, responses by status class, bytes and
 * durations of file transfers, connections, uploads, quota refusals): one set of atomics,
 * updated on the request threads, read by /status and /metrics alike. The server's, not a
 * configuration's: a reload keeps them (docs/server.md, "Metrics"). */
#ifndef DEBITD_COUNTERS_H
#define DEBITD_COUNTERS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Upper bounds (seconds) of the transfer-duration histogram: test files take from
 * milliseconds (1 MB on a LAN) to minutes (10 GB on a slow path). */
#define COUNTERS_DURATION_BUCKETS {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}
#define COUNTERS_N_BUCKETS 14

/* Rows of the speed-test counters (debitd_speedtest_*), named by the metrics view. */
#define COUNTERS_SPEEDTEST_ROWS 8

struct counters {
    _Atomic uint64_t requests;     /* requests whose headers arrived */
    _Atomic uint64_t responses[5]; /* responses queued, by status class 1xx..5xx */
    _Atomic uint64_t bytes_sent;   /* file bodies (an aborted one: what the peer acknowledged) */
    _Atomic uint64_t transfer_buckets[COUNTERS_N_BUCKETS + 1]; /* per bucket, not cumulative; last +Inf */
    _Atomic uint64_t transfer_ns;  /* sum of the transfers' durations */
    _Atomic uint64_t connections, active; /* accepted since start, open now */
    _Atomic uint64_t uploads, upload_bytes;
    _Atomic uint64_t quota_refused; /* 429 answers (limits.per_ip_bytes) */
    /* per speed-test endpoint (row = speedtest.h's endpoint - 1): tests answered, their
     * body bytes sent or received, and refusals */
    _Atomic uint64_t speedtest_tests[COUNTERS_SPEEDTEST_ROWS], speedtest_bytes[COUNTERS_SPEEDTEST_ROWS],
        speedtest_refused[COUNTERS_SPEEDTEST_ROWS];
    _Atomic uint64_t ndt7_tests[2][2]; /* ndt7 tests ended: [upload][done] */
    _Atomic uint64_t ndt7_bytes[2];    /* ndt7 payload bytes: [upload] (sent, or received) */
};

/* The bounds of the histogram's buckets (COUNTERS_N_BUCKETS of them, the last +Inf not
 * included). */
extern const double counters_bucket_le[COUNTERS_N_BUCKETS];

/* One response queued with STATUS (100-599; others are not counted). */
void counters_response(struct counters *c, unsigned status);
/* The responses of STATUS's class (2 for 2xx). */
uint64_t counters_responses(const struct counters *c, unsigned class_digit);
/* A file transfer ended: BYTES sent in SECONDS. */
void counters_transfer(struct counters *c, uint64_t bytes, double seconds);
/* A speed test of row ROW ended: BYTES of body sent (a download) or received (an upload).
 * Out-of-range rows are ignored. */
void counters_speedtest(struct counters *c, size_t row, uint64_t bytes);
/* A speed test of row ROW was refused (speedtest.per_ip, speedtest.max_bytes, the quota). */
void counters_speedtest_refused(struct counters *c, size_t row);
/* An ndt7 test ended: UPLOAD or download, BYTES of payload, DONE (a close handshake) or
 * aborted. */
void counters_ndt7(struct counters *c, int upload, uint64_t bytes, int done);
/* Transfers counted by counters_transfer (the histogram's count). */
uint64_t counters_transfers(const struct counters *c);

#endif
