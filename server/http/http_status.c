/* http_status: GET /status, in sections (h2o's status handler): about, content,
 * listeners, files, upload, limits, counters, config, cpu. Each section adds its private
 * fields (what fingerprints the host: pid, kernel, limits, paths, interface names) only
 * when privacy.details is on, so that nothing is built and then deleted. */
#include "http_files.h"
#include "http_headers.h"
#include "http_reply.h"
#include "http_status_html.h"
#include "http_body.h"
#include "http_status.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "accept.h"
#include "config_json.h"
#include "nopush.h"
#include "offload.h"
#include "sendstep.h"
#include "tcp_profile.h"
#include "tls.h"

static void set_int(json_t *o, const char *key, uint64_t v)
{
    json_object_set_new(o, key, json_integer((json_int_t)v));
}

static void iso_time(double wall, char *buf, size_t len)
{
    time_t t = (time_t)wall;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* version, pid, uptime, start, kernel, worker threads: at the top of the object. */
static void status_about(json_t *j, const struct server *s, int details)
{
    char started[48];
    iso_time(s->start_wall, started, sizeof started);
    json_object_set_new(j, "version", json_string(DEBIT_VERSION));
    if (details)
        set_int(j, "pid", (uint64_t)getpid());
    json_object_set_new(j, "uptime_s", json_real(server_uptime(s)));
    json_object_set_new(j, "started", json_string(started));
    if (details)
        json_object_set_new(j, "kernel", json_string(s->kernel));
    set_int(j, "threads_per_listener", s->threads);
}

/* "content": the region files are served from; zero-copy only once "ready", before that
 * computed per response. */
static json_t *status_content_json(const struct server *s)
{
    const struct content *ct = s->snap->content;
    const struct config *c = s->snap->cfg;
    enum content_state cst = content_state(ct);
    json_t *o = json_object();
    set_int(o, "seed", c->seed);
    set_int(o, "region_bytes", content_region_size(ct));
    set_int(o, "ram_cap", c->ram);
    json_object_set_new(o, "state", json_string(cst == CONTENT_READY    ? "ready"
                                                : cst == CONTENT_FAILED ? "failed"
                                                                        : "generating"));
    set_int(o, "generated_bytes", content_generated_bytes(ct));
    json_object_set_new(o, "generated_in_s",
                        cst == CONTENT_GENERATING ? json_null() : json_real(content_gen_seconds(ct)));
    json_object_set_new(o, "error", content_failure(ct) ? json_string(content_failure(ct)) : json_null());
    json_object_set_new(o, "backing", json_string(content_backing(ct)));
    return o;
}

int http_listener_tcp(const struct listener *l, struct tcp_profile *shown)
{
    char err[128];
    *shown = l->cfg->tcp;
    return !shown->congestion[0] && tcp_cc_default(shown->congestion, sizeof shown->congestion, err, sizeof err) == 0;
}

/* The listener's configuration as it is live: address, TCP profile and the X-Debit-Tcp it
 * gives, TLS, send path, offloads of the interface it serves through. */
static void listener_config(json_t *o, struct listener *l, int details)
{
    struct server *s = l->srv;
    json_object_set_new(o, "name", json_string(l->name));
    json_object_set_new(o, "address", json_string(l->cfg->address));
    json_object_set_new(o, "port", json_integer(l->cfg->port));
    json_object_set_new(o, "tcp", tcp_profile_to_json(&l->cfg->tcp));
    char err[128];
    struct tcp_profile shown;
    if (http_listener_tcp(l, &shown))
        json_object_set_new(json_object_get(o, "tcp"), "congestion_default", json_string(shown.congestion));
    char hdr[160];
    tcp_profile_format(&shown, hdr, sizeof hdr);
    json_object_set_new(o, "x_debit_tcp", json_string(hdr));
    /* libmicrohttpd's pool per connection: the header block's bound, an upload's read
     * size; a limit, hidden with the others (privacy.details) */
    if (details)
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
    if (details)
        json_object_set_new(o, "interface", ifname[0] ? json_string(ifname) : json_null());
    struct offload_state st;
    enum offload_err e = ifname[0] ? offload_get(ifname, &st, err, sizeof err) : OFFLOAD_ERR_ARG;
    if (e == OFFLOAD_OK) {
        json_t *off = offload_to_json(&st);
        if (!details) /* the interface's name fingerprints the host, as above */
            json_object_del(off, "interface");
        json_object_set_new(o, "offload", off);
        offload_format(&st, hdr, sizeof hdr);
        json_object_set_new(o, "x_debit_offload", json_string(hdr));
    } else {
        json_object_set_new(o, "offload", json_null());
        /* why there is no state: the kind of error, the same for every request */
        if (ifname[0])
            json_object_set_new(o, "offload_error", json_string(offload_strerror(e)));
    }
}

/* What the listener did: how its file bodies went out, under tcp_nopush, reused, and its
 * acceptor. */
static void listener_activity(json_t *o, struct listener *l, int details)
{
    struct server *s = l->srv;
    /* how this listener's file bodies went out: sendfile from the memfd or a copy */
    json_object_set_new(o, "zero_copy", json_pack("{s:b, s:I, s:I}", "sendfile_available",
                                                  MHD_is_feature_supported(MHD_FEATURE_SENDFILE) == MHD_YES,
                                                  "transfers", (json_int_t)l->zero_copy_transfers,
                                                  "copy_transfers", (json_int_t)l->copy_transfers));
    /* whether this listener's file bodies leave with their headers (nopush.h):
     * "interposed" false means libmicrohttpd's calls do not reach debitd's setsockopt */
    json_object_set_new(o, "tcp_nopush", json_pack("{s:b, s:b, s:I}", "enabled", l->cfg->tcp_nopush, "interposed",
                                                   nopush_interposed(), "responses",
                                                   (json_int_t)l->nopush_responses));
    /* small file responses (sent with their headers) built, and sent again on a
     * kept-alive connection with only a new transfer ID (http_conn.c) */
    json_object_set_new(o, "response_reuse", json_pack("{s:I, s:I}", "built", (json_int_t)l->responses_built,
                                                       "reused", (json_int_t)l->responses_reused));
    /* the acceptor (acceptor.h): connections spread over `workers` by descriptor */
    struct acceptor_stats as;
    acceptor_stats(l->acceptor, &as);
    json_t *a = json_object();
    set_int(a, "workers", s->threads);
    if (details) /* a limit, hidden with the others */
        set_int(a, "limit", s->snap->cfg->max_connections);
    set_int(a, "open", as.open);
    set_int(a, "accepted", as.accepted);
    set_int(a, "refused", as.refused);
    set_int(a, "paused_at_limit", as.at_limit);
    set_int(a, "errors", as.errors);
    json_object_set_new(o, "accept", a);
}

json_t *http_listener_json(struct listener *l, int details)
{
    json_t *o = json_object();
    listener_config(o, l, details);
    listener_activity(o, l, details);
    return o;
}

static json_t *status_files_json(const struct server *s)
{
    const struct config *c = s->snap->cfg;
    uint64_t region = content_region_size(s->snap->content);
    json_t *files = json_array();
    for (size_t i = 0; i < c->n_files; i++) {
        const struct file_cfg *f = &c->files[i];
        char hex[65], etag[96];
        http_etag(s, f, etag, sizeof etag);
        json_t *o = json_object();
        json_object_set_new(o, "path", json_string(f->path));
        set_int(o, "size", f->size);
        json_object_set_new(o, "etag", json_string(etag));
        json_object_set_new(o, "repeats_region", json_boolean(f->size > region));
        json_object_set_new(o, "send_path", json_string(send_path_name(send_path_for(s->snap->content, 0, f->size, 0))));
        json_object_set_new(o, "sha256",
                            digest_cached(s->snap->digest, f->size, hex) ? json_string(hex) : json_null());
        json_array_append_new(files, o);
    }
    return files;
}

static json_t *status_upload_json(const struct config *c)
{
    if (!c->upload_path)
        return json_null();
    return json_pack("{s:s, s:I}", "path", c->upload_path, "max_size", (json_int_t)c->upload_max);
}

/* "counters": struct counters (the same /metrics renders), transfer records kept, the
 * sendfile steps and the refusal log's totals. */
static json_t *status_counters_json(struct server *s)
{
    const struct counters *k = &s->counters;
    json_t *o = json_object();
    set_int(o, "requests", k->requests);
    set_int(o, "bytes_sent", k->bytes_sent);
    set_int(o, "active_connections", k->active);
    set_int(o, "connections", k->connections);
    set_int(o, "transfers", transfers_count(s->transfers));
    set_int(o, "uploads", k->uploads);
    set_int(o, "upload_bytes", k->upload_bytes);
    set_int(o, "responses_2xx", counters_responses(k, 2));
    set_int(o, "responses_4xx", counters_responses(k, 4));
    set_int(o, "responses_5xx", counters_responses(k, 5));
    set_int(o, "quota_refused", k->quota_refused);
    /* sendfile calls of file bodies, and those sendstep.h widened for a worker with few
     * bodies in flight (process-wide: the steps do not know their listener) */
    uint64_t sf_calls, sf_widened;
    sendstep_stats(&sf_calls, &sf_widened);
    set_int(o, "sendfile_calls", sf_calls);
    set_int(o, "sendfile_widened", sf_widened);
    /* connections closed or refused since start, by reason (the refusal log's totals) */
    json_t *refusals = json_object();
    for (int r = 0; r < REFUSAL_N; r++)
        set_int(refusals, refusal_reason_name((enum refusal_reason)r),
                watchdog_total(s->watchdog, (enum refusal_reason)r));
    json_object_set_new(o, "refusals", refusals);
    return o;
}

/* "config": which configuration is in force and how the last reload went (reload.h); its
 * source and a refusal's message name paths on the host (private). */
static json_t *status_config_json(const struct server *s, int details)
{
    char loaded[48], last[48];
    const struct reload_state *r = &s->reload;
    iso_time(r->loaded_wall, loaded, sizeof loaded);
    json_t *lr = json_null();
    if (r->have_last) {
        iso_time(r->last_wall, last, sizeof last);
        lr = json_pack("{s:s, s:b}", "time", last, "ok", r->last_ok);
        if (details) /* a refusal's message names the configuration's and certificates' paths */
            json_object_set_new(lr, "error", r->last_ok ? json_null() : json_string(r->last_error));
    }
    json_t *o = json_object();
    if (details)
        json_object_set_new(o, "source", json_string(s->snap->cfg->source));
    json_object_set_new(o, "loaded", json_string(loaded));
    set_int(o, "generation", r->generation);
    set_int(o, "reloads_ok", r->ok);
    set_int(o, "reloads_refused", r->refused);
    json_object_set_new(o, "last_reload", lr);
    return o;
}

json_t *http_status_json(struct server *s)
{
    const struct config *c = s->snap->cfg;
    int details = c->details; /* privacy.details: what fingerprints the host (docs/server.md) */
    json_t *j = json_object();
    if (!j)
        return NULL;
    status_about(j, s, details);
    json_object_set_new(j, "content", status_content_json(s));
    json_t *listeners = json_array();
    for (size_t i = 0; i < s->n_listeners; i++)
        json_array_append_new(listeners, http_listener_json(&s->listeners[i], details));
    json_object_set_new(j, "listeners", listeners);
    json_object_set_new(j, "files", status_files_json(s));
    json_object_set_new(j, "upload", status_upload_json(c));
    /* "limits", every one private (they tell what it takes to exhaust the host): the
     * settings table's "limits" rows (config_json.h) */
    if (details)
        json_object_set_new(j, "limits", config_json_group(c, "limits"));
    json_object_set_new(j, "counters", status_counters_json(s));
    json_object_set_new(j, "config", status_config_json(s, details));
    /* debitd's CPU budget, as X-Debit-Cpu says it, with cpu.stat's totals */
    json_object_set_new(j, "cpu", cpu_budget_json(s->cpu, details));
    return j;
}

enum MHD_Result http_status(struct listener *l, struct MHD_Connection *conn)
{
    json_t *j = http_status_json(l->srv);
    /* a browser (its Accept weighs text/html above application/json) gets a page; curl's
     * Accept: * / *, a script's application/json or no Accept at all get JSON, as before */
    const char *accept = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
    if (!j || !accept_prefers(accept, "text/html", "application/json"))
        return http_reply_json(l, conn, 200, j);
    size_t len = 0;
    char *page = http_status_html(j, &len);
    json_decref(j);
    if (!page)
        return http_reply_text(l, conn, 500, NULL, NULL);
    return http_reply_buffer(l, conn, 200, page, len, "text/html; charset=utf-8");
}
