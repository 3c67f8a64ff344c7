/* ndt7: an ndt7 test as one run (download or upload) over ws.c's WebSocket. */
#include "ndt7.h"

#include <math.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>

#include "err.h"
#include "series.h"
#include "server_record.h"
#include "sock_bytes.h"
#include "sys.h"
#include "tcp_info.h"
#include "ws.h"

#define MSG_MIN (1u << 13)
#define MSG_MAX (1u << 20)

struct test {
    struct run_result *r;
    const struct dl_hooks *h;
    struct series agg;
    struct sock_bytes ks; /* the kernel's count: the series' basis when ok (sock_bytes.h) */
    uint64_t bytes;      /* payload received (download) or written (upload) */
    uint64_t queued;     /* upload: payload handed to wslay */
    unsigned messages;   /* measurement messages from the server */
    json_t *last;        /* the last one (owned) */
    double t_up, t_progress;
};

int ndt7_is_url(const char *url)
{
    return strncasecmp(url, "ws://", 5) == 0 || strncasecmp(url, "wss://", 6) == 0;
}

static void on_text(const char *msg, size_t len, void *ud)
{
    struct test *t = ud;
    json_t *m = json_loadb(msg, len, 0, NULL);
    if (!json_is_object(m)) {
        json_decref(m);
        return;
    }
    t->messages++;
    json_decref(t->last);
    t->last = m;
}

static void on_binary(size_t n, void *ud)
{
    struct test *t = ud;
    t->bytes += n;
    if (!t->ks.ok)
        series_add(&t->agg, sys_mono_s(), n);
}

static void progress(struct test *t, double now)
{
    if (!t->h || !t->h->progress || now - t->t_progress < 0.2)
        return;
    t->t_progress = now;
    struct dl_progress p = {.bytes = t->bytes, .expected = -1, .elapsed_s = now - t->t_up,
                            .rate_mbps = now > t->t_up ? t->bytes * 8 / (now - t->t_up) / 1e6 : 0};
    t->h->progress(&p, t->h->ud);
}

/* Upload: keep about two messages queued, sized as the spec says (8 KiB, doubled while
 * under 1/16 of what was sent, at most 1 MiB), of random bytes (one buffer). */
static void feed(struct ws_conn *c, struct test *t, const unsigned char *buf, uint64_t *size, uint64_t *queued)
{
    while (ws_queued(c) < 2 * *size) {
        uint64_t sent = *queued - ws_queued(c);
        if (*size < MSG_MAX && *size < sent / 16)
            *size *= 2;
        if (ws_queue(c, 0, buf, *size) < 0)
            return;
        *queued += *size;
    }
    (void)t;
}

/* The loop: returns 0 when the test ended with a close handshake, -1 with err. */
static int run_loop(struct ws_conn *c, struct test *t, int upload, char *err, size_t errlen)
{
    unsigned char *buf = upload ? malloc(MSG_MAX) : NULL;
    if (upload && (!buf || getrandom(buf, MSG_MAX, 0) != (ssize_t)MSG_MAX)) {
        free(buf);
        return err_set(err, errlen, "no random bytes for the upload");
    }
    uint64_t size = MSG_MIN, counted = 0;
    int closing = 0, rc = -1, code = 0;
    for (;;) {
        double now = sys_mono_s(), el = now - t->t_up;
        if (t->h && t->h->stop && *t->h->stop) {
            err_set(err, errlen, "interrupted");
            break;
        }
        if (el > NDT7_MAX_S) {
            err_set(err, errlen, "the server did not end the test within %.0f s", NDT7_MAX_S);
            break;
        }
        if (upload) {
            if (!closing && el < NDT7_UPLOAD_S)
                feed(c, t, buf, &size, &t->queued);
            else if (!closing) {
                ws_close(c); /* after what is queued */
                closing = 1;
            }
            uint64_t sent = t->queued - ws_queued(c);
            if (sent > counted && !t->ks.ok)
                series_add(&t->agg, now, sent - counted);
            counted = sent > counted ? sent : counted;
            t->bytes = counted;
        }
        sock_bytes_poll(&t->ks, now, t->bytes, 0, &t->agg);
        progress(t, now);
        struct pollfd p = {ws_socket(c), POLLIN | (ws_want_write(c) ? POLLOUT : 0), 0};
        int n = poll(&p, 1, 50);
        if (ws_pump(c, n > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR)), err, errlen) < 0) {
            /* a server that closes the connection after its close frame ended the test */
            ws_closed(c, &code);
            if (code)
                rc = 0;
            break;
        }
        if (ws_closed(c, &code)) {
            rc = 0;
            break;
        }
    }
    if (upload) /* exact once the close went out: it was queued after every message */
        t->bytes = t->queued - ws_queued(c);
    free(buf);
    return rc;
}

/* The receiver's (download) or sender's (upload) TCP_INFO and buffer of the connection. */
static void socket_facts(struct ws_conn *c, struct run_result *r)
{
    int fd = ws_socket(c);
    int v = 0;
    socklen_t len = sizeof v;
    tcp_info_read(fd, &r->tcp, NULL, 0);
    r->so_rcvbuf = getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, &len) == 0 ? v : -1;
}

static void figures(struct test *t, struct run_result *r, double t0, double t_end)
{
    r->bytes = t->bytes;
    r->total_s = t_end - t0;
    r->body_s = t_end - t->t_up;
    if (r->body_s > 0)
        r->avg_mbps = (double)r->bytes * 8 / r->body_s / 1e6;
    if (r->total_s > 0)
        r->total_mbps = (double)r->bytes * 8 / r->total_s / 1e6;
    series_finish(&t->agg, t_end);
    /* The kernel counts frame headers and TLS records too: rescale to the payload. */
    if (t->ks.ok && t->agg.total > 0 && t->bytes > 0)
        series_scale(&t->agg, (double)t->bytes / t->agg.total);
    if (t->agg.n)
        r->series_basis = !t->ks.ok ? RESULT_BASIS_APP : r->upload ? RESULT_BASIS_ACKED : RESULT_BASIS_RECEIVED;
    r->peak_mbps = series_peak(&t->agg);
    r->slow_start_s = series_slow_start(&t->agg, SERIES_SLOW_START_FRACTION);
    r->series_interval_s = t->agg.interval_s;
    r->series = t->agg.mbps;
    r->nseries = t->agg.n;
    t->agg.mbps = NULL;
}

void ndt7_perform(const char *url, const struct dl_options *o, const struct dl_hooks *h, struct run_result *r)
{
    const char *slash = strrchr(url, '/');
    int upload = slash && strncmp(slash, "/upload", 7) == 0 && (slash[7] == 0 || slash[7] == '?');
    r->started_at = sys_wall_s();
    r->upload = upload;
    r->parallel = 1;
    struct test t = {.r = r, .h = h, .ks = {.fd = -1}};
    series_init(&t.agg, o->interval_s > 0 ? o->interval_s : SERIES_INTERVAL_S);
    struct ws_handlers hd = {on_text, upload ? NULL : on_binary, &t};
    struct ws_open_info info;
    char err[512] = "";
    double t0 = sys_mono_s();
    struct ws_conn *c = ws_open(url, NDT7_PROTOCOL, o, &hd, &info, err, sizeof err);
    r->http_status = info.status;
    r->connect_s = info.connect_s;
    r->ttfb_s = info.upgraded_s;
    if (info.remote_ip[0])
        r->remote_ip = strdup(info.remote_ip);
    json_decref(r->server_config);
    r->server_config = info.debit; /* X-Debit-Transfer: the record fetched below */
    snprintf(r->tls_version, sizeof r->tls_version, "%s", info.tls_version);
    /* the record lives on the http(s):// twin of the URL (server_record.c) */
    free(r->effective_url);
    size_t ul = strlen(url) + 2;
    if ((r->effective_url = malloc(ul)))
        snprintf(r->effective_url, ul, "http%s", url + 2);
    if (!c) {
        result_fail(r, RESULT_ERR_OTHER, "ndt7: %s", err);
        series_free(&t.agg);
        return;
    }
    t.t_up = sys_mono_s();
    series_start(&t.agg, t.t_up);
    sock_bytes_begin(&t.ks, ws_socket(c), upload, t.t_up, 0);
    int rc = run_loop(c, &t, upload, err, sizeof err);
    double t_end = sys_mono_s();
    /* the test is over: what the kernel received (or had acked) by now is all of it */
    sock_bytes_poll(&t.ks, t_end, t.bytes, 1, &t.agg);
    socket_facts(c, r);
    int code = 0;
    ws_closed(c, &code);
    ws_free(c);
    figures(&t, r, t0, t_end);
    series_free(&t.agg);
    r->ndt7 = json_pack("{s:s, s:s, s:i, s:o, s:o}", "protocol", NDT7_PROTOCOL, "subtest",
                        upload ? "upload" : "download", "measurements", (int)t.messages, "close_code",
                        code ? json_integer(code) : json_null(), "server_last", t.last ? t.last : json_null());
    if (rc < 0) {
        result_fail(r, RESULT_ERR_OTHER, "ndt7: %s", err);
        return;
    }
    r->ok = 1;
    char rerr[512];
    if (server_record_fetch(r, o, rerr, sizeof rerr) < 0)
        r->server_record_error = strdup(rerr);
}
