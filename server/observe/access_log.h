/* access_log: one line per HTTP request, in the format log.access_format names: "json" (one
 * object a line, the download's transfer record merged in) or "combined" (the nginx/Apache
 * combined format that log tools read). Formatting only: no I/O, no libmicrohttpd, so it is
 * unit-tested on its own; server_access_log writes the line. */
#ifndef DEBITD_ACCESS_LOG_H
#define DEBITD_ACCESS_LOG_H

#include <jansson.h>
#include <stdint.h>

enum access_format {
    ACCESS_FORMAT_JSON = 0,
    ACCESS_FORMAT_COMBINED,
};

/* What is known of one request when it ends. Strings may be NULL (unknown or absent). */
struct access_entry {
    double time;            /* wall clock when the request arrived (Unix seconds) */
    const char *addr;       /* client address, IPv6 without brackets */
    unsigned port;          /* client port */
    const char *listener;   /* listener name */
    const char *method;
    const char *target;     /* the request target as sent (raw, undecoded) */
    const char *path;       /* the path as routed (decoded, without the query) */
    const char *version;    /* "HTTP/1.1" */
    unsigned status;        /* 0: no response was queued (the connection ended first) */
    uint64_t bytes;         /* response body bytes sent */
    uint64_t received;      /* request body bytes read (uploads) */
    double duration_s;      /* arrival to completion */
    const char *user_agent;
    const char *referer;
    json_t *transfer;       /* borrowed: the download's transfer record, or NULL */
    json_t *telemetry;      /* borrowed: a LibreSpeed result kept (telemetry.h), or NULL: "telemetry" in a JSON line */
};

/* "json" or "combined" into *OUT: 0, or -1 with the reason in ERR. */
int access_log_parse_format(const char *name, enum access_format *out, char *err, size_t errlen);
/* The configuration name of FMT. */
const char *access_log_format_name(enum access_format fmt);

/* The log line for E in FMT, newline-terminated, NUL-terminated (caller frees), or NULL when
 * out of memory. Never invalid output: bytes a format cannot carry are escaped ("\xHH" for
 * invalid UTF-8 in JSON; quotes, backslashes, control and non-ASCII bytes in combined, as
 * nginx escapes them). */
char *access_log_line(enum access_format fmt, const struct access_entry *e);

#endif
