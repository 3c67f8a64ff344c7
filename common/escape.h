/* escape: text from elsewhere (a server's headers and reason phrase, a redirect target, a
 * scenario file) made safe to print on a terminal. A hostile server could otherwise send
 * ESC sequences that retitle the window, rewrite earlier lines (CR, cursor moves), hide
 * text or, on some terminals, answer back into the input (OSC 52, DECRQSS).
 *
 * What passes unchanged: printable ASCII and valid UTF-8 outside C1. What is escaped:
 *   \\ for a backslash (so that an escape in the output is never ambiguous),
 *   \t \n \r for those three, \xHH for every other C0 control, DEL (0x7f), each byte of
 *   a C1 control encoded in UTF-8 (U+0080..U+009F: \xc2\x9b) and every byte that is not
 *   part of a valid UTF-8 sequence (stray 0x80..0xff: 8-bit C1, Latin-1, overlong forms,
 *   surrogates, above U+10FFFF).
 * The result is printable on any UTF-8 terminal and says exactly which bytes came. JSON
 * outputs are not escaped: jansson already writes \u001b, and they must stay exact. */
#ifndef DEBIT_ESCAPE_H
#define DEBIT_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* Escape src into dst (dstlen bytes, always NUL-terminated when dstlen > 0), as snprintf
 * does: returns the length the whole escaped text needs (without the NUL), so a return
 * >= dstlen means it was cut. It is cut only between escapes or whole UTF-8 characters,
 * never inside one. src NULL counts as "". */
size_t escape_text(char *dst, size_t dstlen, const char *src);

/* The escaped text of src in a new string (caller frees), NULL when out of memory or src
 * is NULL. */
char *escape_dup(const char *src);

/* Whether src needs escaping at all (1) or prints as it is (0). */
int escape_needed(const char *src);

/* Write src escaped to out. Returns 0, or EOF on a write error (as fputs). */
int escape_fputs(const char *src, FILE *out);

#endif
