/* testfile: is what a run fetched a test file at all? A wrong URL (a folder that
 * redirects to an HTML index, a 200 error page, a typo caught by a portal) must fail
 * as "not a test file" rather than be reported as a throughput. */
#ifndef DEBIT_TESTFILE_H
#define DEBIT_TESTFILE_H

#include <stddef.h>
#include <stdint.h>

/* 1 when the body looks like a test file, 0 when not (why: "not a test file: ..."), for
 * a body of Content-Type content_type (NULL or "": none), of `bytes` received of
 * content_length (-1: unknown). cut_short: the run stopped on purpose before the end
 * (--duration, --max-bytes), so the file's size is content_length, not bytes.
 * min_bytes 0 accepts everything; otherwise text/html, or a file under min_bytes, is not
 * a test file. */
int testfile_check(const char *content_type, uint64_t bytes, int64_t content_length, int cut_short,
                   uint64_t min_bytes, char *why, size_t whylen);

#endif
