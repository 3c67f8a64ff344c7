/* http_html: a growing buffer for the HTML pages (the folder indexes, /status for a
 * browser), with printf and escaping. */
#ifndef DEBITD_HTTP_HTML_H
#define DEBITD_HTTP_HTML_H

#include <stddef.h>

struct html_buf {
    char *p; /* malloc'd, NUL-terminated; the caller frees it */
    size_t len, cap;
    int oom; /* an allocation failed: the rest was dropped */
};

/* Append FMT's output (printf) to B. */
void html_printf(struct html_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Append the N bytes of S with & < > " ' written as character references: safe in text and
 * in a quoted attribute. */
void html_escape(struct html_buf *b, const char *s, size_t n);

#endif
