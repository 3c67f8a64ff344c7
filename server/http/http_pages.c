/* http_pages: the pages that are not files: the HTML index of each folder (like a mirror's
 * directory listing; the root's is part of the front page, http_www.c) and /transfers/ID
 * (JSON). /status: http_status.c. */
#include "http_pages.h"
#include "http_peer.h"
#include "http_reply.h"
#include "http_html.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"
#include "wire.h"

struct entry {
    const char *name;
    size_t len;
    const struct file_cfg *file; /* NULL: a subfolder */
};

static int entry_cmp(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (!x->file != !y->file)
        return x->file ? 1 : -1; /* folders first, as in most mirrors */
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->name, y->name, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

void http_index_list(struct html_buf *b, const struct config *c, const char *folder)
{
    size_t flen = strlen(folder);
    struct entry *e = calloc(c->n_files + 1, sizeof *e);
    size_t n = 0;
    if (!e) {
        b->oom = 1;
        return;
    }
    for (size_t i = 0; i < c->n_files; i++) {
        const char *p = c->files[i].path;
        if (strncmp(p, folder, flen) != 0)
            continue;
        const char *rest = p + flen, *slash = strchr(rest, '/');
        struct entry x = {rest, slash ? (size_t)(slash - rest) + 1 : strlen(rest), slash ? NULL : &c->files[i]};
        int dup = 0;
        for (size_t j = 0; j < n && !x.file; j++)
            dup |= !e[j].file && e[j].len == x.len && memcmp(e[j].name, x.name, x.len) == 0;
        if (!dup)
            e[n++] = x;
    }
    qsort(e, n, sizeof *e, entry_cmp);
    html_printf(b, "<pre>\n");
    if (strcmp(folder, "/") != 0)
        html_printf(b, "<a href=\"../\">../</a>\n");
    for (size_t i = 0; i < n; i++) {
        html_printf(b, "<a href=\"");
        html_escape(b, e[i].name, e[i].len);
        html_printf(b, "\">");
        html_escape(b, e[i].name, e[i].len);
        html_printf(b, "</a>");
        if (e[i].file) {
            char human[32];
            units_format_size(e[i].file->size, human, sizeof human);
            int pad = 40 - (int)e[i].len;
            html_printf(b, "%*s %20llu  %-10s <a href=\"", pad > 1 ? pad : 1, "",
                    (unsigned long long)e[i].file->size, human);
            html_escape(b, e[i].name, e[i].len);
            html_printf(b, ".sha256\">sha256</a>");
        }
        html_printf(b, "\n");
    }
    html_printf(b, "</pre>");
    free(e);
}

enum MHD_Result http_index(struct listener *l, struct MHD_Connection *conn, const char *folder)
{
    size_t flen = strlen(folder);
    struct html_buf b = {0};
    html_printf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Index of ");
    html_escape(&b, folder, flen);
    html_printf(&b, "</title></head>\n<body>\n<h1>Index of ");
    html_escape(&b, folder, flen);
    html_printf(&b, "</h1><hr>");
    http_index_list(&b, l->srv->snap->cfg, folder);
    html_printf(&b, "<hr><p>debitd/%s &mdash; <a href=\"%s\">status</a></p>\n</body></html>\n",
            DEBIT_VERSION, WIRE_STATUS_PATH);
    if (b.oom) {
        free(b.p);
        return MHD_NO;
    }
    return http_reply_buffer(l, conn, 200, b.p, b.len, "text/html; charset=utf-8");
}

/* A record is its owner's (the address that made the transfer) unless
 * privacy.public_transfers: anyone else gets the same 404 as for an unknown ID, so that an
 * ID cannot even be confirmed to exist. */
enum MHD_Result http_transfer(struct listener *l, struct MHD_Connection *conn, const char *id)
{
    struct peer reader;
    int anyone = l->srv->snap->cfg->public_transfers;
    json_t *j = NULL;
    if (anyone || http_peer(conn, &reader) == 0)
        j = transfers_get(l->srv->transfers, id, anyone ? NULL : &reader);
    if (!j)
        return http_reply_json(l, conn, 404, json_pack("{s:s, s:s}", "id", id, "error",
                                                       "unknown transfer (or evicted, or made from another address)"));
    return http_reply_json(l, conn, 200, j);
}
