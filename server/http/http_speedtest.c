/* http_speedtest: the speed-test protocols' answers (speedtest.h, docs/server.md "Speed-test
 * protocols"). LibreSpeed: garbage (ckSize MiB of the content region, as a file of that size
 * is sent: sendfile when it fits in the region), empty (200, no body, after the whole POST
 * body), getIP. Cloudflare: __down?bytes=N (exactly N bytes), __up (answered after the whole
 * body, with the server's own time in Server-Timing). Each download and upload is a transfer
 * with a record (X-Debit-Transfer), charged to the address's quota and counted in
 * speedtest.per_ip while it runs. */
#include "http_speedtest.h"
#include "http_conn.h"
#include "http_headers.h"
#include "http_log.h"
#include "http_peer.h"
#include "http_reply.h"
#include "http_req.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "http_body.h"
#include "ip_limit.h"
#include "isp_map.h"
#include "sendstep.h"
#include "speedtest.h"
#include "sys.h"
#include "tcp_info.h"
#include "units.h"
#include "wire.h"

/* LibreSpeed's PHP sends two Cache-Control lines; one with both values means the same. */
#define LS_NO_CACHE "no-store, no-cache, must-revalidate, max-age=0, s-maxage=0, post-check=0, pre-check=0"
/* What a cross-origin page may read of a Cloudflare answer (Fetch's safelist has none of
 * these): the server time, the cf-meta-* that speed.cloudflare.com sends (the client's
 * address, country, city and ASN, the serving site's colo, the request time) and debitd's
 * record of the transfer. */
#define CF_EXPOSE                                                                                                  \
    "Server-Timing, cf-meta-request-time, cf-meta-colo, cf-meta-ip, cf-meta-country, cf-meta-city, cf-meta-asn, "  \
    "X-Debit-Transfer"

/* The methods each endpoint takes, for a preflight (the route table's, http_handler.c). */
static const char *const allow[SPEEDTEST_N_ENDPOINTS] = {
    [SPEEDTEST_GARBAGE] = "GET, HEAD, OPTIONS", [SPEEDTEST_EMPTY] = "GET, HEAD, POST, OPTIONS",
    [SPEEDTEST_GETIP] = "GET, HEAD, POST, OPTIONS", [SPEEDTEST_DOWN] = "GET, HEAD, OPTIONS",
    [SPEEDTEST_UP] = "POST, OPTIONS",          [SPEEDTEST_TELEMETRY] = "POST, OPTIONS",
    [SPEEDTEST_RESULTS] = "GET, HEAD, OPTIONS",
};

int http_speedtest_early(int endpoint, const char *method)
{
    return (endpoint == SPEEDTEST_EMPTY || endpoint == SPEEDTEST_UP) && strcmp(method, MHD_HTTP_METHOD_POST) == 0;
}

/* The query of the request as it was sent ("" when none). */
static const char *query_of(const struct req *r)
{
    const char *q = r->log_target ? strchr(r->log_target, '?') : NULL;
    return q ? q + 1 : "";
}

/* CONN's client address as LibreSpeed and Cloudflare name it: an IPv4-mapped address as
 * IPv4 (getIP.php strips "::ffff:"). A pointer into WHO. */
static const char *client_ip(const struct http_client *who)
{
    const char *ip = who->addr;
    if (strncmp(ip, "::ffff:", 7) == 0 && strchr(ip, '.'))
        ip += 7;
    return ip;
}

/* Cloudflare's cf-meta-* on RESP: the request's time (epoch ms: its LoggingBandwidthEngine
 * reads it), the site's colo (speedtest.colo), the client's address and, where the
 * operator's map (speedtest.isp_map) knows it, the client's country, city and AS number. */
static void cf_meta(struct listener *l, struct MHD_Connection *conn, struct MHD_Response *resp)
{
    char v[32];
    snprintf(v, sizeof v, "%.0f", sys_wall_s() * 1e3);
    MHD_add_response_header(resp, "cf-meta-request-time", v);
    const char *colo = l->srv->snap->cfg->speedtest.colo;
    if (colo && colo[0])
        MHD_add_response_header(resp, "cf-meta-colo", colo);
    struct http_client scratch;
    const struct http_client *who = http_conn_client(conn, &scratch);
    if (!who->addr[0])
        return;
    const char *ip = client_ip(who);
    MHD_add_response_header(resp, "cf-meta-ip", ip);
    const struct isp_entry *e = isp_map_lookup(l->srv->snap->cfg->speedtest.isp, ip);
    if (!e) /* Cloudflare's are of its geo database; debitd knows what the operator's map says */
        return;
    if (e->country[0])
        MHD_add_response_header(resp, "cf-meta-country", e->country);
    if (e->city[0])
        MHD_add_response_header(resp, "cf-meta-city", e->city);
    if (e->asn) {
        snprintf(v, sizeof v, "%u", (unsigned)e->asn);
        MHD_add_response_header(resp, "cf-meta-asn", v);
    }
}

/* The protocol's headers on RESP: Cloudflare's CORS, Timing-Allow-Origin, cf-meta-* and
 * server time (T0: when debitd had the request, or the end of its body; Server-Timing says
 * the milliseconds from then to now), LibreSpeed's no-cache and, when asked (CORS), its
 * CORS. */
static void proto_headers(struct listener *l, struct MHD_Connection *conn, struct MHD_Response *resp,
                          enum speedtest_endpoint e, int cors, double t0)
{
    http_headers_common(resp);
    if (speedtest_protocol_of(e) == SPEEDTEST_CLOUDFLARE) {
        char v[64];
        double ms = (sys_mono_s() - t0) * 1e3;
        snprintf(v, sizeof v, "cfRequestDuration;dur=%.3f", ms > 0.001 ? ms : 0.001);
        MHD_add_response_header(resp, "Server-Timing", v);
        cf_meta(l, conn, resp);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ACCESS_CONTROL_ALLOW_ORIGIN, "*");
        MHD_add_response_header(resp, "Timing-Allow-Origin", "*");
        MHD_add_response_header(resp, "Access-Control-Expose-Headers", CF_EXPOSE);
        return;
    }
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, LS_NO_CACHE);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_PRAGMA, "no-cache");
    if (cors) {
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ACCESS_CONTROL_ALLOW_ORIGIN, "*");
        MHD_add_response_header(resp, "Access-Control-Allow-Methods", "GET, POST");
        if (e == SPEEDTEST_EMPTY)
            MHD_add_response_header(resp, "Access-Control-Allow-Headers", "Content-Encoding, Content-Type");
    }
}

static enum MHD_Result answer(struct listener *l, struct MHD_Connection *conn, struct req *r, enum speedtest_endpoint e,
                              unsigned status, const char *body, size_t len, const char *type, const char *name,
                              const char *value)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!resp)
        return MHD_NO;
    http_log_body(conn, len);
    struct speedtest_query q;
    speedtest_query_parse(query_of(r), &q);
    proto_headers(l, conn, resp, e, q.cors, r->up_t0 ? r->up_t0 : r->log_t0);
    if (type)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (name)
        MHD_add_response_header(resp, name, value);
    return http_reply(l, conn, status, resp);
}

enum MHD_Result http_speedtest_answer(struct listener *l, struct MHD_Connection *conn, struct req *r, int e,
                                      unsigned status, const char *body, size_t len, const char *type,
                                      const char *name, const char *value)
{
    return answer(l, conn, r, (enum speedtest_endpoint)e, status, body, len, type, name, value);
}

/* A refusal: "STATUS Reason: WHY" as text, with the protocol's headers (a page must be able
 * to read it), counted in debitd_speedtest_refused_total. */
static enum MHD_Result refuse(struct listener *l, struct MHD_Connection *conn, struct req *r, enum speedtest_endpoint e,
                              unsigned status, const char *why, const char *name, const char *value)
{
    char body[256];
    const char *reason = MHD_get_reason_phrase_for(status);
    int n = snprintf(body, sizeof body, "%u %s: %s\n", status, reason ? reason : "", why);
    counters_speedtest_refused(&l->srv->counters, (size_t)e - 1);
    return answer(l, conn, r, e, status, body, (size_t)n, "text/plain; charset=utf-8", name, value);
}

/* A CORS preflight: any origin, the endpoint's methods, the headers the page asks for. */
static enum MHD_Result preflight(struct listener *l, struct MHD_Connection *conn, struct req *r,
                                 enum speedtest_endpoint e)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    proto_headers(l, conn, resp, e, 1, r->log_t0);
    if (speedtest_protocol_of(e) == SPEEDTEST_CLOUDFLARE) /* LibreSpeed's are in proto_headers */
        MHD_add_response_header(resp, "Access-Control-Allow-Methods", allow[e]);
    const char *asked = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, "Access-Control-Request-Headers");
    int printable = asked != NULL;
    for (const char *p = asked; p && *p; p++)
        printable &= *p >= ' ' && *p <= '~';
    if (printable) /* Content-Type, Authorization (Cloudflare's authorizationEnabled) ... */
        MHD_add_response_header(resp, "Access-Control-Allow-Headers", asked);
    MHD_add_response_header(resp, "Access-Control-Max-Age", "86400");
    return http_reply(l, conn, 204, resp);
}

/* Count the test in speedtest.per_ip: 0, or -1 (nothing held) when its address has that
 * many tests under way. */
static int hold(struct listener *l, struct MHD_Connection *conn, struct req *r)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ci ? ci->client_addr : NULL;
    if (!sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
        return 0;
    socklen_t len = sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
    if (ip_limit_acquire(l->srv->speed_per_ip, sa, len) != 1)
        return -1;
    memcpy(&r->speed_addr, sa, len);
    r->speed_addr_len = len;
    r->speed_held = 1;
    return 0;
}

void http_speedtest_end(struct listener *l, struct req *r, uint64_t bytes)
{
    if (r->speed_held) {
        ip_limit_release(l->srv->speed_per_ip, (const struct sockaddr *)&r->speed_addr, r->speed_addr_len);
        r->speed_held = 0;
    }
    if (r->kind == REQ_SPEED_UP)
        http_quota_settle(l, r, bytes);
    if (r->speed > SPEEDTEST_NONE && r->speed < SPEEDTEST_N_ENDPOINTS)
        counters_speedtest(&l->srv->counters, (size_t)r->speed - 1, bytes);
}

/* A transfer record for R's response RESP of LEN bytes sent by SEND_PATH (an upload: LEN
 * bytes received, "received", recorded as done at once), its ID in X-Debit-Transfer. */
static void record(struct listener *l, struct MHD_Connection *conn, struct req *r, struct MHD_Response *resp,
                   uint64_t len, const char *send_path)
{
    struct server *s = l->srv;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    int sock = ci ? ci->connect_fd : -1;
    struct http_client scratch;
    const struct http_client *who = http_conn_client(conn, &scratch);
    int upload = r->kind == REQ_SPEED_UP;
    struct tcp_info_sample ti;
    char terr[128];
    int have_ti = !upload && sock >= 0 && tcp_info_read(sock, &ti, terr, sizeof terr) == 0;
    struct transfer_evidence ev = {.initial_cwnd = have_ti ? ti.snd_cwnd : 0, .sndbuf_setting = l->cfg->tcp.sndbuf,
                                   .tcp_wmem_max = l->tcp_wmem_max};
    struct transfer_start ts = {r->log_path ? r->log_path : "", who->remote, l->name, 0, len, 200,
                                upload ? -1 : sock, who->have_peer ? &who->peer : NULL, send_path, &ev, 0, upload};
    char id[TRANSFER_ID_LEN] = "";
    uint64_t seq = transfers_begin(s->transfers, &ts, id);
    if (!seq)
        return;
    MHD_add_response_header(resp, WIRE_HDR_TRANSFER, id);
    if (upload) {
        transfers_finish(s->transfers, seq, "done", len, NULL, NULL);
        return;
    }
    r->seq = seq;
    r->sock = sock;
    r->acked0 = have_ti ? ti.bytes_acked : 0;
    if (len >= EVIDENCE_MIN_BYTES)
        evidence_begin(&r->mark, s->cpu, len, http_peer_addr(conn));
}

/* garbage or __down: LEN bytes of the region, as a file of that size leaves. */
static enum MHD_Result download(struct listener *l, struct MHD_Connection *conn, struct req *r,
                                enum speedtest_endpoint e, uint64_t len, int head)
{
    struct server *s = l->srv;
    char retry[24];
    if (!head && hold(l, conn, r) < 0)
        return refuse(l, conn, r, e, 429, "too many speed tests under way from this address (speedtest.per_ip)",
                      MHD_HTTP_HEADER_RETRY_AFTER, "1");
    if (!head && http_quota_refused(l, conn, r, len, retry, sizeof retry)) /* its hold: released at the end */
        return refuse(l, conn, r, e, 429, "quota (limits.per_ip_bytes)", MHD_HTTP_HEADER_RETRY_AFTER, retry);
    enum send_path path;
    struct MHD_Response *resp = http_body_new(s->snap->content, 0, len, l->tls != NULL, &path);
    if (!resp)
        return http_reply_text(l, conn, 503, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    struct speedtest_query q;
    speedtest_query_parse(query_of(r), &q);
    proto_headers(l, conn, resp, e, q.cors, r->log_t0);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
    if (e == SPEEDTEST_GARBAGE) { /* garbage.php's */
        MHD_add_response_header(resp, "Content-Description", "File Transfer");
        MHD_add_response_header(resp, "Content-Disposition", "attachment; filename=random.dat");
        MHD_add_response_header(resp, "Content-Transfer-Encoding", "binary");
    }
    struct file_head h;
    http_file_head(l, conn, "", &h);
    http_file_head_add_debit(&h, resp);
    r->speed = e;
    if (!head) {
        r->kind = REQ_FILE;
        if (!r->snap) /* the body may be the region's memory: keep it until the request ends */
            r->snap = snapshot_get(s->snap);
        r->body_len = len;
        r->file = SIZE_MAX; /* no file's row in debitd_sent_bytes_total: the speedtest rows */
        r->t0 = sys_mono_s();
        if (path == SEND_SENDFILE) {
            l->zero_copy_transfers++;
            const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
            r->sock = ci ? ci->connect_fd : -1; /* sendstep_end's, in http_completed */
            sendstep_begin(r->sock, len); /* one more body in flight on this worker (sendstep.h) */
            r->stepped = 1;
        } else
            l->copy_transfers++;
        record(l, conn, r, resp, len, send_path_name(path));
    }
    return http_reply(l, conn, 200, resp);
}

/* The first call of a POST to empty or __up: refused before its body when it is announced
 * larger than speedtest.max_bytes (413), over the quota or speedtest.per_ip (429), then
 * drained to its end. Refusals close the connection (the body is not read). */
static enum MHD_Result upload_begin(struct listener *l, struct MHD_Connection *conn, struct req *r,
                                    enum speedtest_endpoint e)
{
    uint64_t max = l->srv->snap->cfg->speedtest.max_bytes, cl = 0;
    const char *v = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    int have_cl = v && units_parse_uint(v, 0, UINT64_MAX, &cl) == UNITS_OK;
    char retry[24];
    if (have_cl && cl > max)
        return refuse(l, conn, r, e, 413, "body above speedtest.max_bytes", MHD_HTTP_HEADER_CONNECTION, "close");
    if (hold(l, conn, r) < 0)
        return refuse(l, conn, r, e, 429, "too many speed tests under way from this address (speedtest.per_ip)",
                      MHD_HTTP_HEADER_CONNECTION, "close");
    /* a chunked body is charged the most it may be, and refunded the rest at its end */
    if (http_quota_refused(l, conn, r, have_cl ? cl : max, retry, sizeof retry))
        return refuse(l, conn, r, e, 429, "quota (limits.per_ip_bytes)", MHD_HTTP_HEADER_CONNECTION, "close");
    r->kind = REQ_SPEED_UP;
    r->speed = e;
    return MHD_YES;
}

/* A later call of an upload: count the body's piece, or answer at its end. */
static enum MHD_Result upload_more(struct listener *l, struct MHD_Connection *conn, struct req *r,
                                   size_t *upload_data_size)
{
    if (*upload_data_size) {
        r->up_bytes += *upload_data_size;
        *upload_data_size = 0;
        /* a chunked body past the cap: cut (no answer can be queued in the middle of it) */
        return r->up_bytes > l->srv->snap->cfg->speedtest.max_bytes ? MHD_NO : MHD_YES;
    }
    r->up_t0 = sys_mono_s(); /* Server-Timing: from the body's end */
    struct MHD_Response *resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    struct speedtest_query q;
    speedtest_query_parse(query_of(r), &q);
    proto_headers(l, conn, resp, (enum speedtest_endpoint)r->speed, q.cors, r->up_t0);
    struct file_head h;
    http_file_head(l, conn, "", &h);
    http_file_head_add_debit(&h, resp);
    record(l, conn, r, resp, r->up_bytes, "received");
    return http_reply(l, conn, 200, resp);
}

/* getIP.php's JSON for IP: with ISP asked, what the operator's map (speedtest.isp_map) says
 * of it ("IP - ISP, COUNTRY" and the entry, as LibreSpeed's offline database answers), else
 * what the PHP says of a local or private address (" - localhost IPv4 access"); the bare
 * address otherwise. debitd asks no third party. The map comes first: an operator who names
 * a private network knows better than a pattern. PHP's json_encode escapes '/' and
 * non-ASCII, so does this. NULL when out of memory. */
static char *getip_json(const char *ip, int isp_asked, const struct isp_map *map)
{
    const struct isp_entry *e = isp_asked ? isp_map_lookup(map, ip) : NULL;
    char text[512];
    json_t *raw = NULL;
    if (e) {
        snprintf(text, sizeof text, "%s - %s%s%s", ip, e->isp, e->country[0] ? ", " : "", e->country);
        raw = json_object();
        char asn[16];
        snprintf(asn, sizeof asn, "AS%u", (unsigned)e->asn);
        if (raw && e->asn)
            json_object_set_new(raw, "asn", json_string(asn));
        if (raw)
            json_object_set_new(raw, "as_name", json_string(e->isp));
        if (raw && e->country[0])
            json_object_set_new(raw, "country", json_string(e->country));
        if (raw && e->city[0])
            json_object_set_new(raw, "city", json_string(e->city));
    } else {
        snprintf(text, sizeof text, "%s%s", ip, isp_asked ? speedtest_ip_note(ip) : "");
        raw = json_string("");
    }
    return http_php_json(raw ? json_pack("{s:s, s:o}", "processedString", text, "rawIspInfo", raw) : NULL);
}

char *http_php_json(json_t *j)
{
    char *body = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII | JSON_ESCAPE_SLASH) : NULL;
    json_decref(j);
    for (char *p = body; p && *p; p++) { /* PHP writes \u00e9 where jansson writes \u00E9 */
        if (*p != '\\' || !p[1])
            continue;
        for (int k = 2; p[1] == 'u' && k <= 5 && p[k]; k++)
            p[k] = (char)tolower((unsigned char)p[k]);
        p++; /* the escaped character: never the start of another escape */
    }
    return body;
}

static enum MHD_Result getip(struct listener *l, struct MHD_Connection *conn, struct req *r)
{
    struct http_client scratch;
    const char *ip = client_ip(http_conn_client(conn, &scratch));
    struct speedtest_query q;
    speedtest_query_parse(query_of(r), &q);
    char *body = getip_json(ip, q.isp, l->srv->snap->cfg->speedtest.isp);
    if (!body)
        return http_reply_text(l, conn, 500, NULL, NULL);
    r->speed = SPEEDTEST_GETIP;
    enum MHD_Result res = answer(l, conn, r, SPEEDTEST_GETIP, 200, body, strlen(body),
                                 "application/json; charset=utf-8", NULL, NULL);
    free(body);
    return res;
}

enum MHD_Result http_speedtest(struct listener *l, struct MHD_Connection *conn, struct req *r, int endpoint,
                               const char *method, const char *upload_data, size_t *upload_data_size)
{
    (void)upload_data;
    enum speedtest_endpoint e = (enum speedtest_endpoint)endpoint;
    if (r->kind == REQ_SPEED_UP)
        return upload_more(l, conn, r, upload_data_size);
    if (e <= SPEEDTEST_NONE || e >= SPEEDTEST_N_ENDPOINTS)
        return http_reply_text(l, conn, 404, NULL, NULL);
    if (strcmp(method, MHD_HTTP_METHOD_OPTIONS) == 0)
        return preflight(l, conn, r, e);
    if (http_speedtest_early(e, method))
        return upload_begin(l, conn, r, e);
    int head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    struct speedtest_query q;
    speedtest_query_parse(query_of(r), &q);
    uint64_t max = l->srv->snap->cfg->speedtest.max_bytes;
    switch (e) {
    case SPEEDTEST_GARBAGE: /* clamped, as LibreSpeed's PHP clamps ckSize */
        return download(l, conn, r, e, speedtest_garbage_bytes(&q, max), head);
    case SPEEDTEST_DOWN: /* refused: the client counts on exactly the bytes it asked for */
        if (q.has_bytes && !q.bytes_ok)
            return refuse(l, conn, r, e, 400, "bytes is not a whole number of bytes", NULL, NULL);
        if (q.bytes > max) {
            char why[96];
            snprintf(why, sizeof why, "bytes above speedtest.max_bytes (%llu)", (unsigned long long)max);
            return refuse(l, conn, r, e, 400, why, NULL, NULL);
        }
        return download(l, conn, r, e, q.bytes, head);
    case SPEEDTEST_GETIP:
        return getip(l, conn, r);
    default: /* empty: GET, HEAD, or a POST whose body was dropped elsewhere; __up is POST only */
        r->speed = e;
        return answer(l, conn, r, e, 200, "", 0, NULL, NULL, NULL);
    }
}
