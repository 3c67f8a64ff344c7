/* http_status_html: /status as an HTML page for a browser. */
#ifndef DEBITD_HTTP_STATUS_HTML_H
#define DEBITD_HTTP_STATUS_HTML_H

#include <jansson.h>
#include <stddef.h>

/* J (http_status_json's) as an HTML page: a table per section, every key and value
 * escaped, nothing loaded from elsewhere. Malloc'd, *LEN bytes; NULL when out of memory. */
char *http_status_html(const json_t *j, size_t *len);

#endif
