/* http_status_html: /status as a page for a browser (every index page links it), made from
 * the very JSON object the JSON answer carries: what privacy.details hides there is not in
 * it either. Every key and value is escaped; the page loads nothing from elsewhere (its
 * style is inline). */

#include "http_status_html.h"
#include <stdlib.h>
#include <string.h>

#include "http_html.h"

static void value_html(struct html_buf *b, const json_t *v);

/* A scalar as the JSON answer writes it (a string without its quotes). */
static void scalar_html(struct html_buf *b, const json_t *v)
{
    if (json_is_string(v)) {
        html_escape(b, json_string_value(v), json_string_length(v));
        return;
    }
    char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_REAL_PRECISION(9));
    if (!t) {
        b->oom = 1;
        return;
    }
    html_printf(b, "<code>");
    html_escape(b, t, strlen(t));
    html_printf(b, "</code>");
    free(t);
}

static void object_html(struct html_buf *b, const json_t *o)
{
    const char *key;
    const json_t *v;
    html_printf(b, "<table>\n");
    json_object_foreach((json_t *)o, key, v) {
        html_printf(b, "<tr><th>");
        html_escape(b, key, strlen(key));
        html_printf(b, "</th><td>");
        value_html(b, v);
        html_printf(b, "</td></tr>\n");
    }
    html_printf(b, "</table>\n");
}

static void value_html(struct html_buf *b, const json_t *v)
{
    if (json_is_object(v)) {
        object_html(b, v);
    } else if (json_is_array(v)) {
        size_t i;
        const json_t *e;
        if (!json_array_size(v)) {
            html_printf(b, "<code>[]</code>");
            return;
        }
        html_printf(b, "<ol start=\"0\">\n");
        json_array_foreach((json_t *)v, i, e) {
            html_printf(b, "<li>");
            value_html(b, e);
            html_printf(b, "</li>\n");
        }
        html_printf(b, "</ol>\n");
    } else {
        scalar_html(b, v);
    }
}

char *http_status_html(const json_t *j, size_t *len)
{
    struct html_buf b = {0};
    const char *version = json_string_value(json_object_get(j, "version"));
    html_printf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
                    "<meta name=\"viewport\" content=\"width=device-width\"><title>debitd ");
    html_escape(&b, version ? version : "", version ? strlen(version) : 0);
    html_printf(&b, " status</title>\n<style>body{font-family:sans-serif;margin:1em 2em}"
                    "table{border-collapse:collapse;margin:.2em 0}th,td{border:1px solid #ccc;padding:.1em .5em;"
                    "text-align:left;vertical-align:top}th{background:#f3f3f3;font-weight:normal}"
                    "ol{margin:0;padding-left:1.5em}code{font-size:100%%}</style></head>\n<body>\n<h1>debitd ");
    html_escape(&b, version ? version : "", version ? strlen(version) : 0);
    html_printf(&b, " status</h1>\n<p><a href=\"/\">index</a> &mdash; the same as JSON: "
                    "<code>curl -H 'Accept: application/json' URL</code></p>\n");
    /* the top's scalars (version, uptime, ...) in one table, then a section per object */
    const char *key;
    const json_t *v;
    html_printf(&b, "<h2 id=\"server\">server</h2>\n<table>\n");
    json_object_foreach((json_t *)j, key, v) {
        if (json_is_object(v) || json_is_array(v))
            continue;
        html_printf(&b, "<tr><th>");
        html_escape(&b, key, strlen(key));
        html_printf(&b, "</th><td>");
        scalar_html(&b, v);
        html_printf(&b, "</td></tr>\n");
    }
    html_printf(&b, "</table>\n");
    json_object_foreach((json_t *)j, key, v) {
        if (!json_is_object(v) && !json_is_array(v))
            continue;
        html_printf(&b, "<h2 id=\"");
        html_escape(&b, key, strlen(key));
        html_printf(&b, "\">");
        html_escape(&b, key, strlen(key));
        html_printf(&b, "</h2>\n");
        value_html(&b, v);
    }
    html_printf(&b, "</body></html>\n");
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    *len = b.len;
    return b.p;
}
