/* speedtest: the HTTP speed-test protocols debitd speaks beside its test files (issue 33,
 * docs/server.md "Speed-test protocols"): LibreSpeed's backend (garbage, empty, getIP, with
 * and without ".php", at / and /backend/, as speedtest-go serves them) and Cloudflare's
 * __down/__up. Pure functions, no I/O: which endpoint a path is, what its query asks, how
 * many bytes that is. Unit-tested in tests/unit/server/content/test_speedtest.c, fuzzed by
 * fuzz/fuzz_speedtest_query.c. */
#ifndef DEBITD_SPEEDTEST_H
#define DEBITD_SPEEDTEST_H

#include <stddef.h>
#include <stdint.h>

enum speedtest_endpoint {
    SPEEDTEST_NONE = 0,
    SPEEDTEST_GARBAGE, /* LibreSpeed download: ckSize x 1 MiB */
    SPEEDTEST_EMPTY,   /* LibreSpeed upload sink and ping: 200, empty body */
    SPEEDTEST_GETIP,   /* LibreSpeed client address: {"processedString", "rawIspInfo"} */
    SPEEDTEST_DOWN,    /* Cloudflare __down?bytes=N: exactly N bytes */
    SPEEDTEST_UP,      /* Cloudflare __up: answered after the whole body */
    SPEEDTEST_TELEMETRY, /* LibreSpeed results/telemetry.php: a POSTed result kept, "id N" */
    SPEEDTEST_RESULTS,   /* LibreSpeed results/json.php?id=N: a kept result */
    SPEEDTEST_N_ENDPOINTS,
};

enum speedtest_protocol { SPEEDTEST_LIBRESPEED = 0, SPEEDTEST_CLOUDFLARE, SPEEDTEST_N_PROTOCOLS };

/* The endpoint that normalized PATH names, or SPEEDTEST_NONE. */
enum speedtest_endpoint speedtest_endpoint(const char *path);
/* The protocol of endpoint E (SPEEDTEST_LIBRESPEED for NONE). */
enum speedtest_protocol speedtest_protocol_of(enum speedtest_endpoint e);
/* "librespeed", "cloudflare"; "garbage", "empty", "getip", "down", "up", "telemetry",
 * "results" ("" for NONE). */
const char *speedtest_protocol_name(enum speedtest_protocol p);
const char *speedtest_endpoint_name(enum speedtest_endpoint e);

/* What a query string asks (the arguments the protocols define; others, as r, measId and
 * during, are ignored). */
struct speedtest_query {
    int has_cksize;   /* ckSize present (any value) */
    int64_t cksize;   /* its value as PHP's intval reads it: leading digits, 0 if none */
    int has_bytes;    /* bytes present */
    int bytes_ok;     /* bytes is a plain decimal number that fits in 64 bits */
    uint64_t bytes;
    int cors;         /* cors present (any value): LibreSpeed's multi-server mode */
    int isp;          /* isp present (any value): getIP's ISP information is asked */
    uint64_t id;      /* id: a whole decimal number (results/json.php), else 0 */
};

/* Read QUERY (what follows '?', without it; NULL or "" = none) into *Q. Percent-escapes in
 * names and values are decoded. Never fails: what it cannot read counts as absent. */
void speedtest_query_parse(const char *query, struct speedtest_query *q);

/* garbage.php's body length: ckSize MiB as LibreSpeed's PHP reads it (absent, 0 or not a
 * number: 4; above 1024: 1024; negative: 1), then at most CAP bytes, in whole MiB (at least
 * 1 MiB whatever CAP). */
uint64_t speedtest_garbage_bytes(const struct speedtest_query *q, uint64_t cap);

#define SPEEDTEST_MIB (1024u * 1024u)
#define SPEEDTEST_CKSIZE_DEFAULT 4
#define SPEEDTEST_CKSIZE_MAX 1024

/* What LibreSpeed's getIP.php (librespeed/speedtest 04cdce6) says, with isp asked, of
 * address IP besides the address itself: " - localhost IPv4 access", " - private IPv4
 * access", " - link-local IPv6 access", " - ULA IPv6 access", ..., speedtest-go's " - CGNAT
 * IPv4 access" for 100.64.0.0/10, or "" for any other. A leading "::ffff:" is not expected
 * (the caller strips it). */
const char *speedtest_ip_note(const char *ip);

#endif
