/* http_pages: the pages that are not files: the HTML index of / and of each folder (like a
 * mirror's directory listing), /status (JSON) and /transfers/ID (JSON). */
#include "http_internal.h"
#include "http_body.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "nopush.h"
#include "offload.h"
#include "sendstep.h"
#include "tcp_profile.h"
#include "tls.h"
#include "units.h"
#include "wire.h"

struct buf {
    char *p;
    size_t len, cap;
    int oom;
};

static void bprintf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(struct buf *b, const char *fmt, ...)
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

/* Config paths exclude < > " and controls; & and ' still need escaping in HTML. */
static void bescape(struct buf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '&')
            bprintf(b, "&amp;");
        else if (s[i] == '\'')
            bprintf(b, "&#39;");
        else
            bprintf(b, "%c", s[i]);
    }
}

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

enum MHD_Result http_index(struct listener *l, struct MHD_Connection *conn, const char *folder)
{
    const struct config *c = l->srv->snap->cfg;
    size_t flen = strlen(folder);
    struct entry *e = calloc(c->n_files + 1, sizeof *e);
    size_t n = 0;
    if (!e)
        return MHD_NO;
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
    struct buf b = {0};
    bprintf(&b, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Index of ");
    bescape(&b, folder, flen);
    bprintf(&b, "</title></head>\n<body>\n<h1>Index of ");
    bescape(&b, folder, flen);
    bprintf(&b, "</h1><hr><pre>\n");
    if (strcmp(folder, "/") != 0)
        bprintf(&b, "<a href=\"../\">../</a>\n");
    for (size_t i = 0; i < n; i++) {
        bprintf(&b, "<a href=\"");
        bescape(&b, e[i].name, e[i].len);
        bprintf(&b, "\">");
        bescape(&b, e[i].name, e[i].len);
        bprintf(&b, "</a>");
        if (e[i].file) {
            char human[32];
            units_format_size(e[i].file->size, human, sizeof human);
            int pad = 40 - (int)e[i].len;
            bprintf(&b, "%*s %20llu  %-10s <a href=\"", pad > 1 ? pad : 1, "",
                    (unsigned long long)e[i].file->size, human);
            bescape(&b, e[i].name, e[i].len);
            bprintf(&b, ".sha256\">sha256</a>");
        }
        bprintf(&b, "\n");
    }
    bprintf(&b, "</pre><hr><p>debitd/%s &mdash; <a href=\"%s\">status</a></p>\n</body></html>\n",
            DEBIT_VERSION, WIRE_STATUS_PATH);
    free(e);
    if (b.oom) {
        free(b.p);
        return MHD_NO;
    }
    return http_reply_buffer(l, conn, 200, b.p, b.len, "text/html; charset=utf-8");
}

static void iso_time(double wall, char *buf, size_t len)
{
    time_t t = (time_t)wall;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* "config": which configuration is in force and how the last reload went (reload.h). */
static json_t *config_json(const struct server *s)
{
    char loaded[48], last[48];
    const struct reload_state *r = &s->reload;
    iso_time(r->loaded_wall, loaded, sizeof loaded);
    json_t *lr = json_null();
    if (r->have_last) {
        iso_time(r->last_wall, last, sizeof last);
        lr = json_pack("{s:s, s:b, s:o}", "time", last, "ok", r->last_ok, "error",
                       r->last_ok ? json_null() : json_string(r->last_error));
    }
    return json_pack("{s:s, s:s, s:I, s:I, s:I, s:o}", "source", s->snap->cfg->source, "loaded", loaded, "generation",
                     (json_int_t)r->generation, "reloads_ok", (json_int_t)r->ok, "reloads_refused",
                     (json_int_t)r->refused, "last_reload", lr);
}

json_t *http_listener_json(struct listener *l)
{
    struct server *s = l->srv;
    json_t *o = json_pack("{s:s, s:s, s:i, s:o}", "name", l->name, "address", l->cfg->address, "port",
                          (int)l->cfg->port, "tcp", tcp_profile_to_json(&l->cfg->tcp));
    char cc[TCP_PROFILE_CC_LEN], err[128];
    /* The header names the algorithm the socket really uses; so does /status, where a
     * listener without `congestion` gets the netns default. */
    struct tcp_profile shown = l->cfg->tcp;
    if (!l->cfg->tcp.congestion[0] && tcp_cc_default(cc, sizeof cc, err, sizeof err) == 0) {
        json_object_set_new(json_object_get(o, "tcp"), "congestion_default", json_string(cc));
        snprintf(shown.congestion, sizeof shown.congestion, "%s", cc);
    }
    char hdr[160];
    tcp_profile_format(&shown, hdr, sizeof hdr);
    json_object_set_new(o, "x_debit_tcp", json_string(hdr));
    /* libmicrohttpd's pool per connection: the header block's bound, an upload's read
     * size; a limit, hidden with the others (privacy.details) */
    if (s->snap->cfg->details)
        json_object_set_new(o, "connection_memory", json_integer((json_int_t)l->cfg->conn_memory));
    /* HTTPS: the certificate in use; libmicrohttpd encrypts in user space, so no sendfile */
    json_object_set_new(o, "tls", l->tls ? tls_listener_json(l->tls) : json_null());
    /* the path of a large file body within the region now (generated until it is complete) */
    json_object_set_new(o, "send_path", json_string(send_path_name(send_path_large(s->snap->content, l->tls != NULL))));
    /* the offload state of the interface this listener serves through */
    char ifname[IF_NAMESIZE + 1] = "";
    if (s->snap->cfg->offload.interface)
        snprintf(ifname, sizeof ifname, "%s", s->snap->cfg->offload.interface);
    else /* a listener on one address serves through that address's interface */
        http_address_interface(&l->cfg->sa, ifname, sizeof ifname);
    if (s->snap->cfg->details)
        json_object_set_new(o, "interface", ifname[0] ? json_string(ifname) : json_null());
    struct offload_state st;
    enum offload_err e = ifname[0] ? offload_get(ifname, &st, err, sizeof err) : OFFLOAD_ERR_ARG;
    if (e == OFFLOAD_OK) {
        json_object_set_new(o, "offload", offload_to_json(&st));
        offload_format(&st, hdr, sizeof hdr);
        json_object_set_new(o, "x_debit_offload", json_string(hdr));
    } else {
        json_object_set_new(o, "offload", json_null());
        /* why there is no state: the kind of error, the same for every request */
        if (ifname[0])
            json_object_set_new(o, "offload_error", json_string(offload_strerror(e)));
    }
    return o;
}

enum MHD_Result http_status(struct listener *l, struct MHD_Connection *conn)
{
    struct server *s = l->srv;
    const struct config *c = s->snap->cfg;
    const struct counters *k = &s->counters;
    uint64_t region = content_region_size(s->snap->content);
    /* files go out zero-copy only once "ready"; before, computed per response */
    enum content_state cst = content_state(s->snap->content);
    const char *state_name = cst == CONTENT_READY ? "ready" : cst == CONTENT_FAILED ? "failed" : "generating";
    json_t *listeners = json_array();
    for (size_t i = 0; i < s->n_listeners; i++) {
        struct listener *li = &s->listeners[i];
        json_t *lj = http_listener_json(li);
        /* how this listener's file bodies went out: sendfile from the memfd or a copy */
        json_object_set_new(lj, "zero_copy", json_pack("{s:b, s:I, s:I}", "sendfile_available",
                                                       MHD_is_feature_supported(MHD_FEATURE_SENDFILE) == MHD_YES,
                                                       "transfers", (json_int_t)li->zero_copy_transfers,
                                                       "copy_transfers", (json_int_t)li->copy_transfers));
        /* whether this listener's file bodies leave with their headers (nopush.h):
         * "interposed" false means libmicrohttpd's calls do not reach debitd's setsockopt */
        json_object_set_new(lj, "tcp_nopush", json_pack("{s:b, s:b, s:I}", "enabled", li->cfg->tcp_nopush,
                                                        "interposed", nopush_interposed(), "responses",
                                                        (json_int_t)li->nopush_responses));
        /* small file responses (sent with their headers) built, and sent again on a
         * kept-alive connection with only a new transfer ID (http_conn.c) */
        json_object_set_new(lj, "response_reuse", json_pack("{s:I, s:I}", "built", (json_int_t)li->responses_built,
                                                            "reused", (json_int_t)li->responses_reused));
        /* the acceptor (acceptor.h): connections spread over `workers` by descriptor */
        struct acceptor_stats as;
        acceptor_stats(li->acceptor, &as);
        json_t *aj = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "workers", (json_int_t)s->threads, "limit",
                               (json_int_t)c->max_connections, "open", (json_int_t)as.open, "accepted",
                               (json_int_t)as.accepted, "refused", (json_int_t)as.refused, "paused_at_limit",
                               (json_int_t)as.at_limit, "errors", (json_int_t)as.errors);
        if (!c->details) /* a limit, hidden with the others (below) */
            json_object_del(aj, "limit");
        json_object_set_new(lj, "accept", aj);
        json_array_append_new(listeners, lj);
    }
    json_t *files = json_array();
    for (size_t i = 0; i < c->n_files; i++) {
        const struct file_cfg *f = &c->files[i];
        char hex[65], etag[96];
        http_etag(s, f, etag, sizeof etag);
        int repeats = f->size > region;
        json_array_append_new(files, json_pack("{s:s, s:I, s:s, s:b, s:s, s:o}", "path", f->path,
                                               "size", (json_int_t)f->size, "etag", etag,
                                               "repeats_region", repeats, "send_path", send_path_name(send_path_for(s->snap->content, 0, f->size, 0)),
                                               "sha256", digest_cached(s->snap->digest, f->size, hex)
                                                             ? json_string(hex) : json_null()));
    }
    char started[48];
    time_t st = (time_t)s->start_wall;
    struct tm tm;
    gmtime_r(&st, &tm);
    strftime(started, sizeof started, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_t *j = json_pack(
        "{s:s, s:i, s:f, s:s, s:s, s:i,"
        " s:{s:I, s:I, s:I, s:s, s:I, s:o, s:o, s:s},"
        " s:o, s:o, s:o,"
        " s:{s:I, s:i, s:i, s:I, s:f, s:f},"
        " s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}}",
        "version", DEBIT_VERSION, "pid", (int)getpid(), "uptime_s", server_uptime(s), "started", started,
        "kernel", s->kernel, "threads_per_listener", (int)s->threads,
        "content", "seed", (json_int_t)c->seed, "region_bytes", (json_int_t)region, "ram_cap",
        (json_int_t)c->ram, "state", state_name, "generated_bytes", (json_int_t)content_generated_bytes(s->snap->content),
        "generated_in_s", cst == CONTENT_GENERATING ? json_null() : json_real(content_gen_seconds(s->snap->content)),
        "error", content_failure(s->snap->content) ? json_string(content_failure(s->snap->content)) : json_null(), "backing",
        content_backing(s->snap->content),
        "listeners", listeners, "files", files,
        "upload", c->upload_path ? json_pack("{s:s, s:I}", "path", c->upload_path, "max_size",
                                             (json_int_t)c->upload_max)
                                 : json_null(),
        "limits", "connections", (json_int_t)c->max_connections, "per_ip", (int)c->per_ip, "idle_timeout_s",
        (int)c->idle_timeout, "per_ip_bytes", (json_int_t)c->per_ip_bytes, "per_ip_window_s",
        (double)c->per_ip_window_ms / 1000, "drain_timeout_s", (double)c->drain_timeout_ms / 1000,
        "counters", "requests", (json_int_t)k->requests, "bytes_sent", (json_int_t)k->bytes_sent,
        "active_connections", (json_int_t)k->active, "connections", (json_int_t)k->connections,
        "transfers", (json_int_t)transfers_count(s->transfers), "uploads", (json_int_t)k->uploads,
        "upload_bytes", (json_int_t)k->upload_bytes, "responses_2xx", (json_int_t)counters_responses(k, 2),
        "responses_4xx", (json_int_t)counters_responses(k, 4), "responses_5xx", (json_int_t)counters_responses(k, 5),
        "quota_refused", (json_int_t)k->quota_refused);
    /* sendfile calls of file bodies, and those sendstep.h widened for a worker with few
     * bodies in flight (process-wide: the steps do not know their listener) */
    uint64_t sf_calls, sf_widened;
    sendstep_stats(&sf_calls, &sf_widened);
    json_t *counters = json_object_get(j, "counters");
    json_object_set_new(counters, "sendfile_calls", json_integer((json_int_t)sf_calls));
    json_object_set_new(counters, "sendfile_widened", json_integer((json_int_t)sf_widened));
    /* Connections closed or refused since start, by reason (the refusal log's totals). */
    json_t *refusals = json_object();
    for (int r = 0; r < REFUSAL_N; r++)
        json_object_set_new(refusals, refusal_reason_name((enum refusal_reason)r),
                            json_integer((json_int_t)watchdog_total(s->watchdog, (enum refusal_reason)r)));
    json_object_set_new(json_object_get(j, "counters"), "refusals", refusals);
    json_object_set_new(j, "config", config_json(s));
    /* debitd's CPU budget, as X-Debit-Cpu says it, with cpu.stat's totals */
    json_object_set_new(j, "cpu", cpu_budget_json(s->cpu, c->details));
    if (j && !c->details) { /* privacy.details = false: what fingerprints the host (docs/server.md) */
        json_object_del(j, "pid");
        json_object_del(j, "kernel");
        json_object_del(j, "limits");
        json_object_del(json_object_get(j, "config"), "source"); /* a path on the host */
    }
    return http_reply_json(l, conn, 200, j);
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
