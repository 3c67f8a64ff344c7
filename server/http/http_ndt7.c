/* http_ndt7: the opening of an ndt7 test (M-Lab's spec/ndt7-protocol.md): a WebSocket
 * upgrade on /ndt/v7/download or /ndt/v7/upload that offers the subprotocol
 * net.measurementlab.ndt.v7 (refused with 400 and Connection: close otherwise, as
 * ndt-server's handler does; any Origin), the per-address cap on concurrent tests
 * (ndt7.per_ip) and the byte quota (limits.per_ip_bytes), a transfer record whose ID goes
 * in X-Debit-Transfer of the 101 (and in the measurements' ConnectionInfo.UUID), and the
 * 101 itself, whose upgrade hands the socket to http_ndt7_run.c. */
#include "http_conn.h"
#include "http_headers.h"
#include "http_log.h"
#include "http_ndt7_run.h"
#include "http_peer.h"
#include "http_reply.h"
#include "http_req.h"
#include "http_ndt7.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sys.h"
#include "wire.h"
#include "ws_handshake.h"

static const char *header(struct MHD_Connection *conn, const char *name)
{
    return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

/* "ADDR:PORT" of the socket's local end into BUF; "" when unknown. */
static void local_name(int sock, char *buf, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    char a[INET6_ADDRSTRLEN] = "";
    buf[0] = 0;
    if (sock < 0 || getsockname(sock, (struct sockaddr *)&ss, &sl) < 0)
        return;
    if (ss.ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;
        inet_ntop(AF_INET, &in->sin_addr, a, sizeof a);
        snprintf(buf, len, "%s:%u", a, ntohs(in->sin_port));
    } else if (ss.ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof a);
        snprintf(buf, len, "[%s]:%u", a, ntohs(in6->sin6_port));
    }
}

/* A 4xx refusal of the handshake, closing the connection (ndt-server's warnAndClose). */
static enum MHD_Result refuse(struct listener *l, struct MHD_Connection *conn, unsigned status, const char *why,
                              const char *name, const char *value)
{
    char body[160];
    int n = snprintf(body, sizeof body, "%u ndt7: %s\n", status, why);
    struct MHD_Response *resp = MHD_create_response_from_buffer((size_t)n, body, MHD_RESPMEM_MUST_COPY);
    if (!resp)
        return MHD_NO;
    http_log_body(conn, (uint64_t)n);
    http_headers_common(resp);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    if (name)
        MHD_add_response_header(resp, name, value);
    return http_reply(l, conn, status, resp);
}

/* The per-address slot and the first message's quota: 0 admitted, else the refusal's
 * status (429) with RETRY filled. */
static unsigned admit(struct listener *l, struct MHD_Connection *conn, struct ndt7_run *run, char *retry,
                      size_t rlen)
{
    struct server *s = l->srv;
    const union MHD_ConnectionInfo *ad = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ad ? ad->client_addr : NULL;
    snprintf(retry, rlen, "10");
    if (sa) {
        run->peer_len = sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
        memcpy(&run->peer, sa, run->peer_len);
    }
    ip_limit_set_limit(s->ndt7_per_ip, s->snap->cfg->ndt7.per_ip); /* a reload's value, for the tests from now on */
    if (ip_limit_acquire(s->ndt7_per_ip, sa, run->peer_len) != 1) {
        run->peer_len = 0; /* nothing counted */
        return 429;
    }
    struct peer p;
    if (s->snap->cfg->per_ip_bytes && http_peer(conn, &p) == 0) {
        peer_quota_key(&p, run->quota_key);
        uint64_t after = 0;
        /* the first message (8 KiB) must fit; later ones are charged as they go, sent
         * (download) or received (upload: issue 33, what a client sends costs the host too) */
        if (quota_take(s->quota, run->quota_key, 8192, (uint64_t)sys_mono_ms(), NULL, &after) == QUOTA_OVER) {
            s->counters.quota_refused++;
            snprintf(retry, rlen, "%llu", (unsigned long long)after);
            return 429;
        }
        run->quota_on = 1;
        run->prepaid = 8192;
    }
    return 0;
}

/* The transfer record of the test, begun now, and the facts its messages repeat. */
static void begin_record(struct listener *l, struct MHD_Connection *conn, struct ndt7_run *run, int sock)
{
    struct server *s = l->srv;
    struct http_client scratch;
    const struct http_client *who = http_conn_client(conn, &scratch);
    struct file_head h;
    http_file_head(l, conn, NULL, &h);
    snprintf(run->client, sizeof run->client, "%s", who->remote);
    local_name(sock, run->server, sizeof run->server);
    snprintf(run->offload, sizeof run->offload, "%s", h.offload);
    if (h.details)
        snprintf(run->ifname, sizeof run->ifname, "%s", h.ifname);
    sys_iso_time(sys_wall_s(), run->start_time, sizeof run->start_time);
    struct transfer_evidence ev = {.sndbuf_setting = l->cfg->tcp.sndbuf, .tcp_wmem_max = l->tcp_wmem_max};
    struct transfer_start ts = {
        .path = run->upload ? WIRE_NDT7_UPLOAD_PATH : WIRE_NDT7_DOWNLOAD_PATH,
        .remote = who->remote,
        .listener = l->name,
        .status = 101,
        .sock = sock,
        .owner = who->have_peer ? &who->peer : NULL,
        .send_path = run->upload ? "receive" : l->tls ? "tls" : "sendfile", /* the frames' payload */
        .ev = &ev,
        .upload = run->upload,
    };
    run->seq = transfers_begin(s->transfers, &ts, run->id);
}

/* The 101 with the accept value, the subprotocol echoed and the record's ID. */
static struct MHD_Response *upgrade_response(struct listener *l, struct ndt7_run *run, const char *accept)
{
    struct MHD_Response *resp = MHD_create_response_for_upgrade(http_ndt7_upgraded, run);
    if (!resp)
        return NULL;
    http_headers_common(resp);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_UPGRADE, "websocket");
    MHD_add_response_header(resp, "Sec-WebSocket-Accept", accept);
    MHD_add_response_header(resp, "Sec-WebSocket-Protocol", WIRE_NDT7_PROTOCOL);
    if (run->seq)
        MHD_add_response_header(resp, WIRE_HDR_TRANSFER, run->id);
    if (run->offload[0])
        MHD_add_response_header(resp, WIRE_HDR_OFFLOAD, run->offload);
    (void)l;
    return resp;
}

enum MHD_Result http_ndt7(struct listener *l, struct MHD_Connection *conn, struct req *r, int upload)
{
    struct server *s = l->srv;
    struct ws_request h = {header(conn, MHD_HTTP_HEADER_UPGRADE), header(conn, MHD_HTTP_HEADER_CONNECTION),
                           header(conn, "Sec-WebSocket-Version"), header(conn, "Sec-WebSocket-Key"),
                           header(conn, "Sec-WebSocket-Protocol")};
    char accept[WS_ACCEPT_LEN];
    enum ws_verdict v = ws_handshake_check(&h, WIRE_NDT7_PROTOCOL, accept);
    if (v == WS_BAD_VERSION) /* RFC 6455 4.4: say which version we speak */
        return refuse(l, conn, 400, ws_verdict_str(v), "Sec-WebSocket-Version", "13");
    if (v != WS_OK)
        return refuse(l, conn, 400, ws_verdict_str(v), NULL, NULL);
    if (s->draining)
        return refuse(l, conn, 503, "stopping", MHD_HTTP_HEADER_RETRY_AFTER, "10");
    struct content *content = r->snap ? r->snap->content : s->snap->content; /* the one this call sees */
    if (!upload && !content_map(content)) /* the region is still being generated */
        return refuse(l, conn, 503, "test data not ready", MHD_HTTP_HEADER_RETRY_AFTER, "1");
    struct ndt7_run *run = calloc(1, sizeof *run);
    if (!run)
        return refuse(l, conn, 503, "out of memory", MHD_HTTP_HEADER_RETRY_AFTER, "1");
    run->l = l;
    run->r = r;
    run->upload = upload;
    run->fd = run->tcp_fd = -1;
    char retry[24];
    unsigned no = admit(l, conn, run, retry, sizeof retry);
    if (no) {
        const char *why = run->peer_len ? "quota used" : "too many tests from this address";
        if (run->peer_len)
            ip_limit_release(s->ndt7_per_ip, (struct sockaddr *)&run->peer, run->peer_len);
        free(run);
        return refuse(l, conn, no, why, MHD_HTTP_HEADER_RETRY_AFTER, retry);
    }
    r->kind = REQ_NDT7;
    r->ndt7 = run;
    if (!r->snap) /* the region the frames are sent from, whatever a reload does meanwhile */
        r->snap = snapshot_get(s->snap);
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    begin_record(l, conn, run, ci ? ci->connect_fd : -1);
    s->in_flight++; /* a graceful stop waits for the test (http_ndt7_finish) */
    struct MHD_Response *resp = upgrade_response(l, run, accept);
    if (!resp)
        return MHD_NO; /* http_completed settles the run */
    return http_reply(l, conn, MHD_HTTP_SWITCHING_PROTOCOLS, resp);
}

json_t *http_ndt7_completed(struct listener *l, struct req *r, uint64_t *bytes)
{
    (void)l;
    struct ndt7_run *run = r->ndt7;
    *bytes = 0;
    if (!run)
        return NULL;
    r->ndt7 = NULL;
    http_ndt7_finish(run); /* a no-op when the thread did it */
    json_t *entry = run->entry;
    *bytes = run->upload ? 0 : run->bytes;
    r->up_bytes = run->upload ? run->bytes : 0;
    free(run->extra);
    free(run);
    return entry;
}
