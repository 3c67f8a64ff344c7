/* http_html: see http_html.h. */
#include "http_html.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void html_printf(struct html_buf *b, const char *fmt, ...)
{
    if (b->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? b->cap - b->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->oom = 1;
            return;
        }
        if (b->p && b->len + (size_t)n < b->cap) {
            b->len += (size_t)n;
            return;
        }
        size_t cap = (b->cap ? b->cap * 2 : 4096) + (size_t)n;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
}

void html_escape(struct html_buf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        switch (s[i]) {
        case '&': html_printf(b, "&amp;"); break;
        case '<': html_printf(b, "&lt;"); break;
        case '>': html_printf(b, "&gt;"); break;
        case '"': html_printf(b, "&quot;"); break;
        case '\'': html_printf(b, "&#39;"); break;
        default: html_printf(b, "%c", s[i]); break;
        }
    }
}
