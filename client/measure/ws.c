/* ws: a WebSocket client over libcurl's connect-only mode and libwslay. */
#include "ws.h"

#include <errno.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <wslay/wslay.h>

#include "err.h"
#include "sys.h"
#include "ws_frame.h"

#define TEXT_MAX (1 << 20) /* a measurement message longer than this is not one */
#define HEAD_MAX 16384     /* the 101's header block */
#define RBUF (256 * 1024)  /* one read: large, so that a fast download is few system calls */
#define RECV_MAX ((1u << 24) + 64) /* the spec's largest message, which a receiver MUST accept */

struct ws_conn {
    CURL *h;
    curl_socket_t sock;
    wslay_event_context_ptr ws;
    struct ws_handlers hd;
    unsigned char *pre; /* bytes read past the 101's headers */
    size_t pre_len, pre_off;
    struct ws_rx rx;    /* reading is ws_frame's, writing libwslay's */
    unsigned char *rbuf;
    char *text;         /* the text message being received */
    size_t text_len;
    unsigned char ctl[125]; /* the control frame being received */
    size_t ctl_len;
    int close_received, close_code;
};

/* wslay only writes (ws_frame reads): its read side is never driven */
static ssize_t ws_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags, void *user)
{
    (void)buf, (void)len, (void)flags, (void)user;
    wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
    return -1;
}

static ssize_t ws_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags, void *user)
{
    (void)flags;
    struct ws_conn *c = user;
    size_t sent = 0;
    CURLcode rc = curl_easy_send(c->h, data, len, &sent);
    if (rc == CURLE_OK)
        return (ssize_t)sent;
    wslay_event_set_error(ctx, rc == CURLE_AGAIN ? WSLAY_ERR_WOULDBLOCK : WSLAY_ERR_CALLBACK_FAILURE);
    return -1;
}

static int ws_genmask(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, void *user)
{
    (void)ctx, (void)user;
    return getrandom(buf, len, 0) == (ssize_t)len ? 0 : -1;
}

static void rx_payload(unsigned op, unsigned msg_op, const unsigned char *data, size_t n, void *ud)
{
    struct ws_conn *c = ud;
    if (op & 0x8) { /* a control frame: at most 125 bytes (ws_frame checked) */
        memcpy(c->ctl + c->ctl_len, data, n);
        c->ctl_len += n;
    } else if (msg_op == WS_OP_BINARY) {
        if (c->hd.binary)
            c->hd.binary(n, c->hd.ud);
    } else if (c->text_len + n <= TEXT_MAX) { /* longer: not a measurement, dropped */
        char *t = realloc(c->text, c->text_len + n + 1);
        if (t) {
            c->text = t;
            memcpy(t + c->text_len, data, n);
            c->text_len += n;
        }
    }
}

static void rx_frame_end(unsigned op, unsigned msg_op, int fin, void *ud)
{
    struct ws_conn *c = ud;
    if (op == WS_OP_CLOSE && !c->close_received) {
        c->close_received = 1;
        c->close_code = c->ctl_len >= 2 ? c->ctl[0] << 8 | c->ctl[1] : 0;
        if (!wslay_event_get_close_sent(c->ws)) /* answer with its code (RFC 6455 5.5.1) */
            wslay_event_queue_close(c->ws, c->close_code ? (uint16_t)c->close_code : WSLAY_CODE_NORMAL_CLOSURE,
                                    NULL, 0);
    } else if (op == WS_OP_PING) {
        struct wslay_event_msg m = {WSLAY_PONG, c->ctl, c->ctl_len};
        wslay_event_queue_msg(c->ws, &m);
    } else if (!(op & 0x8) && msg_op == WS_OP_TEXT && fin) {
        if (c->hd.text)
            c->hd.text(c->text ? c->text : "", c->text_len, c->hd.ud);
        c->text_len = 0;
    }
    if (op & 0x8)
        c->ctl_len = 0;
}

/* base64(SHA-1(KEY + RFC 6455's GUID)) into OUT (29 bytes). */
static void accept_of(const char *key, char out[29])
{
    char buf[128];
    int n = snprintf(buf, sizeof buf, "%s258EAFA5-E914-47DA-95CA-C5AB0DC85B11", key);
    unsigned char sha[SHA_DIGEST_LENGTH];
    SHA1((const unsigned char *)buf, (size_t)n, sha);
    EVP_EncodeBlock((unsigned char *)out, sha, SHA_DIGEST_LENGTH);
}

/* The value of header NAME in the header block HEAD (case-insensitive), into OUT. */
static int header_value(const char *head, const char *name, char *out, size_t len)
{
    size_t nl = strlen(name);
    for (const char *p = strstr(head, "\r\n"); p; p = strstr(p + 2, "\r\n")) {
        const char *l = p + 2;
        if (strncasecmp(l, name, nl) == 0 && l[nl] == ':') {
            const char *v = l + nl + 1, *e = strstr(v, "\r\n");
            while (*v == ' ' || *v == '\t')
                v++;
            size_t vl = e ? (size_t)(e - v) : strlen(v);
            while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
                vl--;
            snprintf(out, len, "%.*s", (int)vl, v);
            return 1;
        }
    }
    return 0;
}

/* Every X-Debit-* header of HEAD as NAME -> value. */
static json_t *debit_headers(const char *head)
{
    json_t *o = json_object();
    for (const char *p = strstr(head, "\r\n"); o && p; p = strstr(p + 2, "\r\n")) {
        const char *l = p + 2, *colon = strchr(l, ':'), *e = strstr(l, "\r\n");
        if (!colon || (e && colon > e) || strncasecmp(l, "X-Debit-", 8) != 0)
            continue;
        char name[64], value[512];
        snprintf(name, sizeof name, "%.*s", (int)(colon - l), l);
        if (header_value(p, name, value, sizeof value))
            json_object_set_new(o, name, json_string(value));
    }
    return o;
}

/* Send ALL of BUF, waiting (bounded by DEADLINE, monotonic s) when the socket is full. */
static int send_all(struct ws_conn *c, const char *buf, size_t len, double deadline)
{
    while (len) {
        size_t n = 0;
        CURLcode rc = curl_easy_send(c->h, buf, len, &n);
        if (rc == CURLE_AGAIN) {
            if (sys_mono_s() > deadline)
                return -1;
            sys_sleep_ms(1);
            continue;
        }
        if (rc != CURLE_OK)
            return -1;
        buf += n;
        len -= n;
    }
    return 0;
}

/* Read the 101's header block (bounded by DEADLINE) into HEAD; what follows goes to c->pre. */
static int read_head(struct ws_conn *c, char *head, size_t cap, double deadline)
{
    size_t have = 0;
    for (;;) {
        size_t n = 0;
        CURLcode rc = curl_easy_recv(c->h, head + have, cap - 1 - have, &n);
        if (rc == CURLE_AGAIN) {
            if (sys_mono_s() > deadline)
                return -1;
            sys_sleep_ms(1);
            continue;
        }
        if (rc != CURLE_OK || n == 0)
            return -1;
        have += n;
        head[have] = 0;
        char *end = strstr(head, "\r\n\r\n");
        if (end) {
            size_t used = (size_t)(end + 4 - head);
            if (have > used && (c->pre = malloc(have - used))) {
                memcpy(c->pre, end + 4, have - used);
                c->pre_len = have - used;
            }
            end[2] = 0; /* the block, with the last line's CRLF */
            return 0;
        }
        if (have + 1 >= cap)
            return -1;
    }
}

/* The http(s):// twin of a ws(s):// URL (new string), for libcurl. */
static char *http_url(const char *url)
{
    int tls = strncasecmp(url, "wss://", 6) == 0;
    const char *rest = url + (tls ? 6 : 5);
    size_t n = strlen(rest) + 9;
    char *u = malloc(n);
    if (u)
        snprintf(u, n, "%s%s", tls ? "https://" : "http://", rest);
    return u;
}

static int handshake(struct ws_conn *c, const char *url, const char *protocol, struct ws_open_info *info,
                     double t0, char *err, size_t errlen)
{
    CURLU *u = curl_url();
    char *host = NULL, *path = NULL, *query = NULL, *hurl = http_url(url);
    int ok = u && hurl && curl_url_set(u, CURLUPART_URL, hurl, 0) == CURLUE_OK &&
             curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
             curl_url_get(u, CURLUPART_PATH, &path, 0) == CURLUE_OK;
    if (ok)
        curl_url_get(u, CURLUPART_QUERY, &query, 0);
    char *port = NULL;
    if (ok)
        curl_url_get(u, CURLUPART_PORT, &port, 0);
    unsigned char nonce[16];
    char key[32], want[29], req[4096], head[HEAD_MAX], v[256];
    if (ok && getrandom(nonce, sizeof nonce, 0) != (ssize_t)sizeof nonce)
        ok = 0;
    if (ok) {
        EVP_EncodeBlock((unsigned char *)key, nonce, sizeof nonce);
        accept_of(key, want);
        snprintf(req, sizeof req,
                 "GET %s%s%s HTTP/1.1\r\nHost: %s%s%s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: %s\r\n"
                 "User-Agent: debit/" DEBIT_VERSION "\r\n\r\n",
                 path, query ? "?" : "", query ? query : "", host, port ? ":" : "", port ? port : "", key, protocol);
    }
    curl_free(host), curl_free(path), curl_free(query), curl_free(port);
    curl_url_cleanup(u);
    free(hurl);
    if (!ok)
        return err_set(err, errlen, "%s: not a WebSocket URL", url);
    double deadline = sys_mono_s() + 10;
    if (send_all(c, req, strlen(req), deadline) < 0 || read_head(c, head, sizeof head, deadline) < 0)
        return err_set(err, errlen, "%s: no answer to the WebSocket upgrade", url);
    info->upgraded_s = sys_mono_s() - t0;
    info->status = strncmp(head, "HTTP/1.1 ", 9) == 0 ? strtol(head + 9, NULL, 10) : 0;
    info->debit = debit_headers(head);
    if (info->status != 101)
        return err_set(err, errlen, "%s: HTTP %ld instead of 101 Switching Protocols", url, info->status);
    if (!header_value(head, "Sec-WebSocket-Accept", v, sizeof v) || strcmp(v, want) != 0)
        return err_set(err, errlen, "%s: wrong Sec-WebSocket-Accept", url);
    if (!header_value(head, "Sec-WebSocket-Protocol", v, sizeof v) || strcmp(v, protocol) != 0)
        return err_set(err, errlen, "%s: the server did not accept the subprotocol %s", url, protocol);
    return 0;
}

struct ws_conn *ws_open(const char *url, const char *protocol, const struct dl_options *o,
                        const struct ws_handlers *hd, struct ws_open_info *info, char *err, size_t errlen)
{
    memset(info, 0, sizeof *info);
    struct ws_conn *c = calloc(1, sizeof *c);
    char *hurl = http_url(url), iface[128];
    double t0 = sys_mono_s();
    if (!c || !hurl || !(c->h = curl_easy_init())) {
        err_set(err, errlen, "out of memory");
        goto fail;
    }
    c->hd = *hd;
    const char *bad = dl_setopt_network(c->h, o, iface, sizeof iface);
    if (bad) {
        err_set(err, errlen, "%s: refused by this libcurl", bad);
        goto fail;
    }
    curl_easy_setopt(c->h, CURLOPT_URL, hurl);
    curl_easy_setopt(c->h, CURLOPT_CONNECT_ONLY, 1L);
    /* curl_easy_recv reads at most CURLOPT_BUFFERSIZE (default 16 KiB) whatever it is asked:
     * 16 KiB reads made an ndt7 download on loopback ~0.5x an HTTP one (each read's window
     * update ACK made this process transmit the server's next segments, bench/ndt7.sh) */
    curl_easy_setopt(c->h, CURLOPT_BUFFERSIZE, (long)RBUF);
    if (o->connect_timeout_s > 0)
        curl_easy_setopt(c->h, CURLOPT_CONNECTTIMEOUT_MS, (long)(o->connect_timeout_s * 1000));
    CURLcode rc = curl_easy_perform(c->h);
    if (rc != CURLE_OK) {
        err_set(err, errlen, "%s: %s", url, curl_easy_strerror(rc));
        goto fail;
    }
    info->connect_s = sys_mono_s() - t0;
    char *ip = NULL;
    if (curl_easy_getinfo(c->h, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK && ip)
        snprintf(info->remote_ip, sizeof info->remote_ip, "%s", ip);
    if (curl_easy_getinfo(c->h, CURLINFO_ACTIVESOCKET, &c->sock) != CURLE_OK || c->sock == CURL_SOCKET_BAD) {
        err_set(err, errlen, "%s: no socket", url);
        goto fail;
    }
    if (strncasecmp(url, "wss://", 6) == 0) {
        struct curl_tlssessioninfo *ti = NULL;
        if (curl_easy_getinfo(c->h, CURLINFO_TLS_SSL_PTR, &ti) == CURLE_OK && ti && ti->internals)
            snprintf(info->tls_version, sizeof info->tls_version, "%s", "TLS");
    }
    if (handshake(c, url, protocol, info, t0, err, errlen) < 0)
        goto fail;
    struct wslay_event_callbacks cb = {.recv_callback = ws_recv, .send_callback = ws_send,
                                       .genmask_callback = ws_genmask};
    ws_rx_init(&c->rx);
    if (!(c->rbuf = malloc(RBUF)) || wslay_event_context_client_init(&c->ws, &cb, c) != 0) {
        err_set(err, errlen, "out of memory");
        goto fail;
    }
    free(hurl);
    return c;
fail:
    free(hurl);
    ws_free(c);
    return NULL;
}

int ws_socket(const struct ws_conn *c)
{
    return (int)c->sock;
}

int ws_queue(struct ws_conn *c, int text, const void *data, size_t len)
{
    struct wslay_event_msg m = {text ? WSLAY_TEXT_FRAME : WSLAY_BINARY_FRAME, data, len};
    return wslay_event_queue_msg(c->ws, &m) == 0 ? 0 : -1;
}

void ws_close(struct ws_conn *c)
{
    wslay_event_queue_close(c->ws, WSLAY_CODE_NORMAL_CLOSURE, NULL, 0);
}

/* Read what the socket has (bounded: writing must get its turn): 0, or -1 with err. */
static int read_some(struct ws_conn *c, char *err, size_t errlen)
{
    static const struct ws_rx_cb cb = {rx_payload, rx_frame_end};
    if (c->pre_off < c->pre_len) { /* what came with the 101 */
        size_t n = c->pre_len - c->pre_off;
        c->pre_off = c->pre_len;
        if (ws_rx_feed(&c->rx, c->pre, n, RECV_MAX, &cb, c) < 0)
            return err_set(err, errlen, "the server's framing: %s", c->rx.error);
    }
    for (int i = 0; i < 64 && !c->close_received; i++) {
        size_t got = 0;
        CURLcode rc = curl_easy_recv(c->h, c->rbuf, RBUF, &got);
        if (rc == CURLE_AGAIN)
            return 0;
        if (rc != CURLE_OK || got == 0)
            return err_set(err, errlen, "the connection broke while reading");
        if (ws_rx_feed(&c->rx, c->rbuf, got, RECV_MAX, &cb, c) < 0)
            return err_set(err, errlen, "the server's framing: %s", c->rx.error);
    }
    return 0;
}

int ws_pump(struct ws_conn *c, int readable, char *err, size_t errlen)
{
    if ((readable || c->pre_off < c->pre_len) && read_some(c, err, errlen) < 0)
        return -1;
    if (wslay_event_want_write(c->ws) && wslay_event_send(c->ws) != 0)
        return err_set(err, errlen, "the connection broke while writing");
    return 0;
}

size_t ws_queued(const struct ws_conn *c)
{
    return wslay_event_get_queued_msg_length(c->ws);
}

int ws_want_write(const struct ws_conn *c)
{
    return wslay_event_want_write(c->ws);
}

int ws_closed(const struct ws_conn *c, int *code)
{
    *code = c->close_received ? c->close_code : 0;
    return c->close_received && wslay_event_get_close_sent(c->ws);
}

void ws_free(struct ws_conn *c)
{
    if (!c)
        return;
    if (c->ws)
        wslay_event_context_free(c->ws);
    if (c->h)
        curl_easy_cleanup(c->h);
    free(c->pre);
    free(c->rbuf);
    free(c->text);
    free(c);
}
