/* conditional: the preconditions of a GET or HEAD of a file (RFC 9110 section 13):
 * If-Match, If-Unmodified-Since, If-None-Match, If-Modified-Since, evaluated in the RFC's
 * order (13.2.2), and the HTTP-date parser (5.6.7) that If-Range uses too (range.c).
 * Pure functions, no I/O: unit-tested in tests/unit/server/content/test_conditional.c. */
#ifndef DEBITD_CONDITIONAL_H
#define DEBITD_CONDITIONAL_H

#include <time.h>

/* The request's precondition header values; NULL = absent. */
struct cond_headers {
    const char *if_match, *if_none_match, *if_modified_since, *if_unmodified_since;
};

enum cond_result {
    COND_PASS = 0,          /* no precondition decides: serve as usual (Range, If-Range next) */
    COND_NOT_MODIFIED,      /* 304: If-None-Match matched, or not modified since the date */
    COND_PRECONDITION_FAILED, /* 412: If-Match did not match, or modified since the date */
};

/* Evaluate H for a GET or HEAD of a file that exists, whose strong entity tag is ETAG
 * (quoted, as sent in ETag) and whose Last-Modified is LAST_MODIFIED (an HTTP-date as
 * sent; NULL or unparsable: the date preconditions are ignored). RFC 9110 13.2.2:
 *   1. If-Match: false (no strong match; "*" matches) -> 412;
 *   2. else If-Unmodified-Since, a valid date earlier than Last-Modified -> 412;
 *   3. If-None-Match: a weak match (or "*") -> 304;
 *   4. else If-Modified-Since, a valid date not earlier than Last-Modified -> 304.
 * An invalid date is ignored, as the RFC says. A malformed list member never matches. */
enum cond_result cond_evaluate(const struct cond_headers *h, const char *etag, const char *last_modified);

/* Parse S, an HTTP-date in any of its three formats (IMF-fixdate "Sun, 06 Nov 1994
 * 08:49:37 GMT", obsolete RFC 850 "Sunday, 06-Nov-94 08:49:37 GMT", asctime "Sun Nov  6
 * 08:49:37 1994"), with optional blanks around it, into *OUT (seconds since the epoch,
 * UTC). Returns 0, or -1 (nothing stored) when S is NULL or not exactly one such date. */
int cond_parse_date(const char *s, time_t *out);

#endif
