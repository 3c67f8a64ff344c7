/* http_www: debitd's front page (/) and its files (/speedtest/NAME). The page is
 * server/http/www/index.html with its markers filled: <!--debit:config--> by the settings
 * the page's script needs (the upload sink, the files), <!--debit:files--> by the root's
 * listing (http_index_list), <!--debit:version--> by debitd's version. The page uses
 * /__down and /__up when speedtest.cloudflare is on (http_speedtest.c), else the files and
 * the upload sink. Its files are the
 * bytes tools/embed put in the binary: nothing is read from disk, nothing is fetched from
 * another origin (the Content-Security-Policy says so to the browser). */
#include "http_log.h"
#include "http_pages.h"
#include "http_reply.h"
#include "http_html.h"
#include "http_www.h"

#include <stdlib.h>
#include <string.h>

#include "wire.h"

/* What the page may load and connect to: this origin only. */
#define WWW_CSP "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'"

const struct www_asset *www_find(const char *name)
{
    for (size_t i = 0; i < www_n_assets; i++)
        if (strcmp(www_assets[i].name, name) == 0)
            return &www_assets[i];
    return NULL;
}

enum MHD_Result http_www_asset(struct listener *l, struct MHD_Connection *conn, const char *name)
{
    const struct www_asset *a = www_find(name);
    if (!a || strcmp(name, "index.html") == 0) /* the template is served filled, as / */
        return http_reply_text(l, conn, 404, NULL, NULL);
    struct MHD_Response *resp = MHD_create_response_from_buffer(a->len, (void *)a->data, MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    http_log_body(conn, a->len);
    http_headers_common(resp);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, a->type);
    /* the same build serves the same bytes; a new debitd may serve others */
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    return http_reply(l, conn, 200, resp);
}

/* The page's settings as JSON inside a <script> element: '<' is written \u003c so that no
 * path can end the element. */
static void config_json(struct html_buf *b, const struct config *c)
{
    json_t *files = json_array();
    for (size_t i = 0; i < c->n_files; i++)
        json_array_append_new(files, json_pack("{s:s, s:I}", "path", c->files[i].path, "size",
                                               (json_int_t)c->files[i].size));
    /* the Cloudflare-style endpoints: each request a transfer with its record, uploads too */
    json_t *cf = c->speedtest.cloudflare ? json_pack("{s:s, s:s, s:I, s:I}", "down", "/__down", "up", "/__up",
                                                     "max_bytes", (json_int_t)c->speedtest.max_bytes, "per_ip",
                                                     (json_int_t)c->speedtest.per_ip)
                                         : json_null();
    json_t *j = json_pack("{s:s, s:o, s:I, s:s, s:s, s:o, s:o}", "version", DEBIT_VERSION, "upload",
                          c->upload_path ? json_string(c->upload_path) : json_null(), "upload_max",
                          (json_int_t)c->upload_max, "status", WIRE_STATUS_PATH, "transfers",
                          WIRE_TRANSFERS_PATH, "files", files, "cloudflare", cf);
    char *text = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(j);
    if (!text) {
        b->oom = 1;
        return;
    }
    html_printf(b, "<script type=\"application/json\" id=\"debit-config\">");
    for (const char *p = text; *p; p++)
        if (*p == '<')
            html_printf(b, "\\u003c");
        else
            html_printf(b, "%c", *p);
    html_printf(b, "</script>");
    free(text);
}

static void fill(struct html_buf *b, const struct config *c, const char *name, size_t n)
{
    if (n == 6 && memcmp(name, "config", 6) == 0)
        config_json(b, c);
    else if (n == 5 && memcmp(name, "files", 5) == 0)
        http_index_list(b, c, "/");
    else if (n == 7 && memcmp(name, "version", 7) == 0)
        html_printf(b, "%s", DEBIT_VERSION);
}

enum MHD_Result http_front_page(struct listener *l, struct MHD_Connection *conn)
{
    const struct www_asset *t = www_find("index.html");
    if (!t) /* tools/embed always writes it: a build without it is broken */
        return http_reply_text(l, conn, 500, NULL, NULL);
    static const char mark[] = "<!--debit:";
    struct html_buf b = {0};
    const char *p = (const char *)t->data, *end = p + t->len;
    while (p < end) {
        const char *m = strstr(p, mark), *close = m ? strstr(m, "-->") : NULL;
        if (!m || !close) {
            html_printf(&b, "%.*s", (int)(end - p), p);
            break;
        }
        html_printf(&b, "%.*s", (int)(m - p), p);
        fill(&b, l->srv->snap->cfg, m + sizeof mark - 1, (size_t)(close - m) - (sizeof mark - 1));
        p = close + 3;
    }
    if (b.oom) {
        free(b.p);
        return MHD_NO;
    }
    struct MHD_Response *resp = MHD_create_response_from_buffer(b.len, b.p, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        free(b.p);
        return MHD_NO;
    }
    http_log_body(conn, b.len);
    http_headers_common(resp);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/html; charset=utf-8");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(resp, "Content-Security-Policy", WWW_CSP);
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    return http_reply(l, conn, 200, resp);
}
