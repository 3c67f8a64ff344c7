/* http_ndt7_run: an ndt7 test after the upgrade, on a thread of its own (libmicrohttpd's
 * upgrade handler must not block its worker). WebSocket framing is libwslay's (the
 * measurement text messages, control frames, and every frame the client sends, unmasked
 * and checked by it), but for the download's binary messages: a server's frame is not
 * masked, so its payload is the content region's bytes as they are, sent with sendfile()
 * behind a 4- or 10-byte header on a plain listener (zero-copy, as a file body), or
 * written from the region's map into the connection's TLS session on HTTPS (out()). Such a
 * frame is begun only when wslay has nothing half-sent, so frames never interleave. On
 * HTTPS the test sends and receives on libmicrohttpd's GnuTLS session itself where
 * mhd_compat allows it (MHD_TRICK_TLS_WRITE, MHD_TRICK_RELAY_RECV), else through the
 * upgrade's socketpair and libmicrohttpd's relay. Message sizes as ndt-server's: 8 KiB,
 * doubled while under 1/16 of the bytes sent so far, at most 1 MiB. The server closes at
 * 10 s (status 1000) and cuts at 13 s. */


#include "http_ndt7_run.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>
#include <gnutls/gnutls.h>
#include <wslay/wslay.h>

#include "log.h"
#include "mhd_compat.h"
#include "ndt7_measure.h"
#include "sys.h"

#define MSG_MIN (1u << 13)
#define MSG_MAX (1u << 20)       /* ndt-server's MaxScaledMessageSize */
#define RECV_MAX ((1u << 24) + 64) /* the spec's largest message, which a receiver MUST accept */

struct test {
    struct ndt7_run *run;
    struct server *s;
    wslay_event_context_ptr ws;
    double t0;
    /* the binary frame being written (download) */
    unsigned char hdr[10];
    size_t hdr_len, hdr_off;
    uint64_t body_left, src_off; /* payload still to go, from region offset src_off */
    uint64_t msg_size;
    uint64_t next_src;           /* where the next message's payload starts in the region */
    int region_fd;
    const unsigned char *map;
    uint64_t region;
    int closing;                 /* our close is queued (10 s, or the quota) */
    int quota_out;               /* limits.per_ip_bytes refused the next message */
    int data_frame;              /* the frame being received is text, binary or a continuation */
};

/* Write to the client: on HTTPS straight into libmicrohttpd's TLS session when mhd_compat
 * gave it (its relay of the socketpair runs 4 bytes at a time in 0.9.75: docs/server.md
 * "ndt7"), else to the socket (the TCP socket, or the upgrade's socketpair). -1 with errno
 * EAGAIN when the socket is full (call again with the same bytes, as gnutls_record_send
 * wants). */
static ssize_t out(struct test *t, const void *p, size_t n, int more)
{
    if (!t->run->tls_session)
        return send(t->run->fd, p, n, MSG_NOSIGNAL | (more ? MSG_MORE : 0));
    ssize_t r = gnutls_record_send(t->run->tls_session, p, n);
    if (r >= 0)
        return r;
    errno = r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED ? EAGAIN : EPIPE;
    return -1;
}

static ssize_t ws_recv(wslay_event_context_ptr ctx, uint8_t *buf, size_t len, int flags, void *user)
{
    (void)flags;
    struct test *t = user;
    struct ndt7_run *run = t->run;
    if (run->extra_off < run->extra_len) { /* what libmicrohttpd read past the request */
        size_t n = run->extra_len - run->extra_off < len ? run->extra_len - run->extra_off : len;
        memcpy(buf, run->extra + run->extra_off, n);
        run->extra_off += n;
        return (ssize_t)n;
    }
    if (run->tls_recv) {
        ssize_t r = gnutls_record_recv(run->tls_session, buf, len);
        if (r > 0)
            return r;
        wslay_event_set_error(ctx, r == GNUTLS_E_AGAIN || r == GNUTLS_E_INTERRUPTED ? WSLAY_ERR_WOULDBLOCK
                                                                                     : WSLAY_ERR_CALLBACK_FAILURE);
        return -1;
    }
    ssize_t n = recv(run->fd, buf, len, 0);
    if (n > 0)
        return n;
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        wslay_event_set_error(ctx, WSLAY_ERR_WOULDBLOCK);
    else
        wslay_event_set_error(ctx, WSLAY_ERR_CALLBACK_FAILURE);
    return -1;
}

static ssize_t ws_send(wslay_event_context_ptr ctx, const uint8_t *data, size_t len, int flags, void *user)
{
    (void)flags;
    struct test *t = user;
    ssize_t n = out(t, data, len, 0);
    if (n >= 0)
        return n;
    wslay_event_set_error(ctx, errno == EAGAIN || errno == EINTR ? WSLAY_ERR_WOULDBLOCK : WSLAY_ERR_CALLBACK_FAILURE);
    return -1;
}

static void ws_start(wslay_event_context_ptr ctx, const struct wslay_event_on_frame_recv_start_arg *arg, void *user)
{
    (void)ctx;
    struct test *t = user;
    t->data_frame = !wslay_is_ctrl_frame(arg->opcode);
}

/* Charge N received bytes to the client's quota (limits.per_ip_bytes), the first 8 KiB
 * prepaid at the start as a download's first message: 0, or -1 when the quota refuses
 * (the test ends as a download's does: our close, issue 33). */
static int upload_charge(struct test *t, uint64_t n)
{
    struct ndt7_run *run = t->run;
    uint64_t paid = run->prepaid < n ? run->prepaid : n;
    run->prepaid -= paid;
    return run->quota_on && n > paid &&
                   quota_take(t->s->quota, run->quota_key, n - paid, (uint64_t)sys_mono_ms(), NULL, NULL) == QUOTA_OVER
               ? -1
               : 0;
}

/* Every data frame's payload the client sends (wslay does not buffer: no_buffering). */
static void ws_chunk(wslay_event_context_ptr ctx, const struct wslay_event_on_frame_recv_chunk_arg *arg, void *user)
{
    (void)ctx;
    struct test *t = user;
    if (t->run->upload && t->data_frame) { /* not a close's or a ping's payload */
        t->run->bytes += arg->data_length;
        t->quota_out = t->quota_out || upload_charge(t, arg->data_length) < 0;
    }
}

static void ws_msg(wslay_event_context_ptr ctx, const struct wslay_event_on_msg_recv_arg *arg, void *user)
{
    (void)ctx, (void)arg, (void)user; /* close and ping are answered by wslay itself */
}

/* Queue one measurement message (a text frame). */
static void measure(struct test *t, int first)
{
    struct ndt7_run *run = t->run;
    struct tcp_info_sample ti;
    char err[128];
    int have = tcp_info_read(run->tcp_fd, &ti, err, sizeof err) == 0;
    struct ndt7_figures f = {
        .test = run->upload ? "upload" : "download",
        .elapsed_us = (uint64_t)((sys_mono_s() - t->t0) * 1e6),
        .num_bytes = run->bytes,
        .ti = have ? &ti : NULL,
        .offload = run->offload,
        .ifname = run->ifname,
    };
    (void)first; /* ConnectionInfo in every message: a client may start reading at any one */
    f.client = run->client;
    f.server = run->server;
    f.uuid = run->id[0] ? run->id : "";
    f.start_time = run->start_time;
    char *text = ndt7_measurement_text(&f);
    if (!text)
        return;
    struct wslay_event_msg m = {WSLAY_TEXT_FRAME, (const uint8_t *)text, strlen(text)};
    wslay_event_queue_msg(t->ws, &m); /* copied by wslay */
    free(text);
}

/* Begin the next binary message: its header, its payload's place in the region. 0, or -1
 * when the quota refuses it (the test ends). */
static int frame_begin(struct test *t)
{
    struct ndt7_run *run = t->run;
    uint64_t size = t->msg_size;
    if (size < MSG_MAX && size < run->bytes / 16) /* spec: double while size < total/16 */
        t->msg_size = size = size * 2 > MSG_MAX ? MSG_MAX : size * 2;
    if (size > t->region)
        size = t->region;
    uint64_t paid = run->prepaid < size ? run->prepaid : size;
    if (run->quota_on && size > paid &&
        quota_take(t->s->quota, run->quota_key, size - paid, (uint64_t)sys_mono_ms(), NULL, NULL) == QUOTA_OVER)
        return -1;
    run->prepaid -= paid;
    t->hdr[0] = 0x82; /* FIN, binary */
    if (size < 126) {
        t->hdr[1] = (unsigned char)size;
        t->hdr_len = 2;
    } else if (size < 65536) {
        t->hdr[1] = 126;
        t->hdr[2] = (unsigned char)(size >> 8);
        t->hdr[3] = (unsigned char)size;
        t->hdr_len = 4;
    } else {
        t->hdr[1] = 127;
        for (int i = 0; i < 8; i++)
            t->hdr[2 + i] = (unsigned char)(size >> (56 - 8 * i));
        t->hdr_len = 10;
    }
    t->hdr_off = 0;
    if (t->next_src + size > t->region)
        t->next_src = 0;
    t->src_off = t->next_src;
    t->next_src += size;
    t->body_left = size;
    run->frames++;
    return 0;
}

/* Push the frame being written: 1 when it is out, 0 when the socket is full, -1 broken. */
static int frame_push(struct test *t)
{
    int fd = t->run->fd;
    while (t->hdr_off < t->hdr_len) {
        /* MSG_MORE: the header goes with the payload's first segment */
        ssize_t n = out(t, t->hdr + t->hdr_off, t->hdr_len - t->hdr_off, 1);
        if (n < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        t->hdr_off += (size_t)n;
    }
    while (t->body_left) {
        size_t want = t->body_left > (1u << 20) ? 1u << 20 : (size_t)t->body_left;
        ssize_t n;
        if (t->run->tls) {
            n = out(t, t->map + t->src_off, want, 0);
        } else {
            off_t off = (off_t)t->src_off;
            n = sendfile(fd, t->region_fd, &off, want);
        }
        if (n < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        if (n == 0)
            return -1;
        t->src_off += (uint64_t)n;
        t->body_left -= (uint64_t)n;
        t->run->bytes += (uint64_t)n;
    }
    return 1;
}

/* One round of writing: wslay's queue first, then (download) frames until the socket is
 * full or it is time to measure. Returns 1 when it wants POLLOUT, -1 when broken. */
static int write_round(struct test *t, double until)
{
    for (;;) {
        if (t->body_left || t->hdr_off < t->hdr_len) {
            int k = frame_push(t);
            if (k <= 0)
                return k < 0 ? -1 : 1;
            t->hdr_len = t->hdr_off = 0;
        }
        if (wslay_event_want_write(t->ws)) {
            if (wslay_event_send(t->ws) != 0)
                return -1;
            if (wslay_event_want_write(t->ws))
                return 1; /* half-sent: the socket is full */
        }
        if (t->run->upload || t->closing || sys_mono_s() >= until)
            return 0;
        if (frame_begin(t) < 0) {
            log_info("ndt7 %s: %s: quota used: the download ends early", t->run->id, t->run->client);
            t->quota_out = 1;
            return 0;
        }
    }
}

/* The test's loop. Returns 1 when it ended well: a close handshake (either side's), or our
 * close written after the 10 s without the client's answer by 13 s (a loaded client may
 * read it late: the test itself was whole), or the connection gone after our close. */
static int test_loop(struct test *t)
{
    struct ndt7_run *run = t->run;
    double next_measure = t->t0;
    for (;;) {
        double now = sys_mono_s();
        if (now - t->t0 >= NDT7_MAX_S || t->s->ndt7_stop)
            return t->closing && wslay_event_get_close_sent(t->ws) && now - t->t0 >= NDT7_TEST_S;
        if (wslay_event_get_close_received(t->ws) && wslay_event_get_close_sent(t->ws))
            return 1;
        /* wslay found a protocol error: its close (1002) is out, and it reads no more */
        if (!wslay_event_want_read(t->ws) && !wslay_event_want_write(t->ws))
            return 0;
        if (!t->closing && (now - t->t0 >= NDT7_TEST_S || t->quota_out)) {
            t->closing = 1;
            /* after the frame being written: wslay's queue goes first only between frames */
            wslay_event_queue_close(t->ws, WSLAY_CODE_NORMAL_CLOSURE, NULL, 0);
        }
        if (!t->closing && now >= next_measure) {
            measure(t, next_measure == t->t0);
            next_measure += NDT7_MEASURE_S;
        }
        int want_out = write_round(t, next_measure);
        if (want_out < 0)
            return 0;
        int timeout = 50; /* ms: the stop flag, the next measurement */
        double to_measure = next_measure - sys_mono_s();
        if (!t->closing && to_measure * 1000 < timeout)
            timeout = to_measure > 0 ? (int)(to_measure * 1000) + 1 : 0;
        /* HTTPS: ours go to the TCP socket, the client's come from it (tls_recv) or through
         * the socketpair; GnuTLS may hold a record's rest already read */
        int split = run->tls_session != NULL && !run->tls_recv;
        struct pollfd p[2] = {{run->tls_recv ? run->tcp_fd : run->fd, POLLIN | (want_out && !split ? POLLOUT : 0), 0},
                              {run->tcp_fd, want_out ? POLLOUT : 0, 0}};
        int ready = run->extra_off < run->extra_len ||
                    (run->tls_recv && gnutls_record_check_pending(run->tls_session) > 0);
        if (ready)
            timeout = 0;
        int n = poll(p, split ? 2 : 1, timeout);
        if (n < 0 && errno != EINTR)
            return 0;
        if ((p[0].revents & (POLLIN | POLLHUP | POLLERR)) || ready) {
            if (wslay_event_recv(t->ws) != 0)
                return t->closing && wslay_event_get_close_sent(t->ws);
        }
    }
}

static void *test_thread(void *arg)
{
    struct ndt7_run *run = arg;
    struct server *s = run->l->srv;
    struct test t = {.run = run, .s = s, .msg_size = MSG_MIN, .region_fd = -1};
    struct snapshot *snap = run->r->snap; /* held by the request until http_completed */
    t.region_fd = content_fd(snap->content);
    t.map = content_map(snap->content);
    t.region = content_region_size(snap->content);
    struct wslay_event_callbacks cb = {.recv_callback = ws_recv, .send_callback = ws_send,
                                       .on_frame_recv_start_callback = ws_start,
                                       .on_frame_recv_chunk_callback = ws_chunk, .on_msg_recv_callback = ws_msg};
    double t0 = sys_mono_s();
    if ((!run->upload && (!t.map || t.region < MSG_MIN)) || wslay_event_context_server_init(&t.ws, &cb, &t) != 0) {
        log_warn("ndt7 %s: cannot run the test (no test data or no memory)", run->id);
    } else {
        wslay_event_config_set_no_buffering(t.ws, 1);
        wslay_event_config_set_max_recv_msg_length(t.ws, RECV_MAX);
        t.t0 = t0;
        run->ok = test_loop(&t);
        wslay_event_context_free(t.ws);
    }
    run->seconds = sys_mono_s() - t0;
    server_read_lock(s); /* s->metrics and s->cfg: a reload swaps them */
    http_ndt7_finish(run);
    server_read_unlock(s);
    struct MHD_UpgradeResponseHandle *urh = run->urh;
    s->ndt7_running--;
    /* last: libmicrohttpd then closes the connection and calls http_completed, which
     * frees RUN: nothing of it may be touched after this */
    MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
    return NULL;
}

void http_ndt7_upgraded(void *cls, struct MHD_Connection *conn, void *req_cls, const char *extra_in,
                        size_t extra_in_size, MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
    (void)req_cls;
    struct ndt7_run *run = cls;
    struct server *s = run->l->srv;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    run->urh = urh;
    run->fd = sock;
    run->tcp_fd = ci ? ci->connect_fd : sock;
    run->tls = run->l->tls != NULL;
    if (run->tls) {
        run->tls_session = mhd_compat_upgraded_session(conn); /* NULL: the relay carries our frames */
        run->tls_recv = run->tls_session && mhd_compat_relay_recv_off(conn, urh, sock);
    }
    if (extra_in_size && (run->extra = malloc(extra_in_size))) {
        memcpy(run->extra, extra_in, extra_in_size);
        run->extra_len = extra_in_size;
    }
    int fl = fcntl(sock, F_GETFL);
    if (fl >= 0)
        fcntl(sock, F_SETFL, fl | O_NONBLOCK);
    pthread_attr_t a;
    pthread_t th;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 256 * 1024);
    s->ndt7_running++;
    run->started = 1;
    if (s->ndt7_stop || pthread_create(&th, &a, test_thread, run) != 0) {
        run->started = 0;
        s->ndt7_running--;
        log_warn("ndt7 %s: no thread for the test", run->id);
        MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
    }
    pthread_attr_destroy(&a);
}

void http_ndt7_finish(struct ndt7_run *run)
{
    if (run->finished)
        return;
    run->finished = 1;
    struct listener *l = run->l;
    struct server *s = l->srv;
    if (run->peer_len)
        ip_limit_release(s->ndt7_per_ip, (struct sockaddr *)&run->peer, run->peer_len);
    s->in_flight--;
    counters_ndt7(&s->counters, run->upload, run->bytes, run->ok);
    if (!run->seq)
        return;
    struct tcp_info_sample last;
    char err[128];
    int have = run->tcp_fd >= 0 && tcp_info_read(run->tcp_fd, &last, err, sizeof err) == 0;
    const char *state = run->ok ? "done" : "aborted";
    if (s->access && s->snap->cfg->access_format == ACCESS_FORMAT_JSON)
        run->entry = transfers_end(s->transfers, run->seq, state, run->bytes, have ? &last : NULL, NULL);
    else
        transfers_finish(s->transfers, run->seq, state, run->bytes, have ? &last : NULL, NULL);
}
