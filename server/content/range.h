/* range: HTTP Range / If-Range interpretation for one resource of known size
 * (RFC 9110 section 14). Pure functions, no I/O: unit-tested in tests/unit/server/content/test_range.c. */
#ifndef DEBITD_RANGE_H
#define DEBITD_RANGE_H

#include <stdint.h>

enum range_kind {
    RANGE_NONE = 0,        /* no Range header, or one we must ignore (bad syntax, other unit): 200 */
    RANGE_ONE,             /* exactly one satisfiable range: 206 with [first, last] */
    RANGE_MULTI,           /* several ranges: debitd answers 200 with the whole resource */
    RANGE_UNSATISFIABLE,   /* valid syntax, nothing inside [0, size): 416 */
};

struct range {
    uint64_t first; /* inclusive */
    uint64_t last;  /* inclusive */
};

/* Interpret the value of a Range header (NULL = absent) against a resource of SIZE bytes.
 * On RANGE_ONE, *out holds the clamped range. */
enum range_kind range_parse(const char *header, uint64_t size, struct range *out);

/* If-Range (RFC 9110 13.1.5): returns 1 when the Range header may be honoured, that is when
 * IF_RANGE is NULL, or equals the strong ETAG exactly, or is an HTTP-date (any of the three
 * formats, cond_parse_date) of the same second as LAST_MODIFIED. A weak entity tag never
 * matches. */
int range_if_range_ok(const char *if_range, const char *etag, const char *last_modified);

#endif
