/* accept: how much a request's Accept header (RFC 9110 12.5.1) wants a media type: the q
 * of the most specific media range that matches it (the type and subtype, over the type
 * with any subtype, over any type). Pure functions, no I/O: unit-tested in tests/unit/server/content/test_accept.c. */
#ifndef DEBITD_ACCEPT_H
#define DEBITD_ACCEPT_H

/* The weight (0 to 1000, q x 1000) ACCEPT gives TYPE ("text/html"): the q of the most
 * specific range matching it, 1000 when the range has no q, 0 when none matches. A NULL or
 * empty ACCEPT accepts everything (1000). Case-insensitive; a malformed member is skipped;
 * a malformed q counts as 0 (the member is ignored). */
int accept_weight(const char *accept, const char *type);
/* ACCEPT prefers TYPE A to TYPE B: A's weight is higher (a tie is not a preference). */
int accept_prefers(const char *accept, const char *a, const char *b);

#endif
