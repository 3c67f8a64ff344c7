/* telemetry: the results LibreSpeed's web client reports when its telemetry_level is above
 * "disabled" (POST results/telemetry.php, docs/server.md "LibreSpeed telemetry"), kept in a
 * ring bounded in count and in bytes (as the transfers are), each readable by the address
 * that sent it (or by anyone with privacy.public_transfers), in the shape of LibreSpeed's
 * speedtest_users table (results/telemetry_db.php: id, timestamp, ip, ispinfo, extra, ua,
 * lang, dl, ul, ping, jitter, log; the figures kept as the text the client sent). An ID is
 * a number from 1, as the PHP's AUTOINCREMENT: it starts again with the daemon (as
 * speedtest-go's memory database). Thread-safe (one lock: reports are rare). The pure
 * helpers below are LibreSpeed's own formatting and redaction. Unit-tested in
 * tests/unit/server/observe/test_telemetry.c. */
#ifndef DEBITD_TELEMETRY_H
#define DEBITD_TELEMETRY_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "peer.h"

/* The ring's byte budget (debitd's), and the largest report body taken (a larger one gets
 * 413): LibreSpeed's debug log (telemetry_level "debug") is the largest field. */
#define TELEMETRY_RING_BYTES (32u << 20)
#define TELEMETRY_MAX_BODY (1u << 20)

/* The fields of one report, as the client sent them (NULL = absent, kept as ""). */
struct telemetry_report {
    const char *ip, *ispinfo, *extra, *ua, *lang, *dl, *ul, *ping, *jitter, *log;
};
#define TELEMETRY_N_FIELDS 10

struct telemetry;

/* A ring of at most KEEP (>= 1) reports holding at most MAX_BYTES of text together: the
 * oldest are dropped to make room. NULL when out of memory. */
struct telemetry *telemetry_new(unsigned keep, size_t max_bytes);
void telemetry_free(struct telemetry *t);

/* Keep REP, made at WALL (epoch seconds) by OWNER (NULL: readable by "any" readers only),
 * its text redacted as LibreSpeed's redact_ip_addresses does when REDACT. Returns its ID
 * (>= 1), 0 when out of memory or when it alone is larger than the ring. */
uint64_t telemetry_add(struct telemetry *t, const struct telemetry_report *rep, const struct peer *owner,
                       double wall, int redact);

/* Report ID as the row LibreSpeed's database keeps ({"id", "timestamp", "ip", "ispinfo",
 * "extra", "ua", "lang", "dl", "ul", "ping", "jitter", "log"}), a new object, or NULL when
 * unknown, dropped, or not READER's (READER NULL: any). The cases look alike on purpose. */
json_t *telemetry_get(struct telemetry *t, uint64_t id, const struct peer *reader);

/* LibreSpeed's results/json.php answer of ROW (telemetry_get's): {"timestamp", "download",
 * "upload", "ping", "jitter", "ispinfo"}, the figures formatted as its format() does. */
json_t *telemetry_public_json(const json_t *row);

/* results/json.php's format(): TEXT read as PHP's (float) cast reads it, then 2 decimals
 * below 10, 1 below 100, none above, into BUF. */
const char *telemetry_format(const char *text, char *buf, size_t len);
/* results/json.php's ISP: processedString of the JSON ISPINFO from 2 characters after its
 * first '-', cut before its last '(' ("" when no '-' or not JSON), into BUF. */
const char *telemetry_isp(const char *ispinfo, char *buf, size_t len);
/* telemetry.php's redaction, a new string: every IPv4 and IPv6 address in S becomes
 * "0.0.0.0", every "hostname":"..." value "REDACTED". NULL when out of memory. */
char *telemetry_redact(const char *s);

#endif
