/* Unit tests for server/http/mhd_compat.c, against the installed libmicrohttpd: one case
 * per assumption debitd makes beneath its API (mhd_compat.h), so that an upgrade is a
 * one-file audit (docs/architecture.md, "Upgrading libmicrohttpd"). Each case runs a real
 * daemon on loopback and checks the bytes on the wire or what the callbacks saw; each
 * trick's fallback (the version treated as unknown) is run too. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <curl/curl.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "conn.h"
#include "mhd_compat.h"
#include "nopush.h"
#include "sendstep.h"
#include "testlib.h"
#include "testlib_tls.h"
#include "tls.h"

#define BODY_SIZE (4u << 20) /* an fd body: sendfile steps of 128 KiB */

/* What the callbacks saw of the last request (one request at a time). */
static struct {
    const char *uri;       /* the URI log callback's pointer */
    size_t uri_len;
    int cut;               /* mhd_compat_cut_query cut it */
    int args;              /* query arguments libmicrohttpd stored */
    int version_follows;   /* version == uri + uri_len + 1 */
    int fields_in_place;   /* every header: NUL for the colon, blanks, then the value */
    int gaps_clean;        /* between lines: one or two NULs */
    int fields;
    struct MHD_Connection *started; /* the last NOTIFY_STARTED */
    struct MHD_Connection *tls_conn; /* what the certificate callback found */
    int sock;
    int in_place;          /* /hdr: the value was written over where it was */
    int nopush_begun;      /* /file: nopush_begin returned 0 */
    int conn_found;        /* conn_of (MHD_CONNECTION_INFO_SOCKET_CONTEXT) gave NOTIFY_STARTED's struct conn */
    int expect_blanked;    /* /expect: mhd_compat_expect_blank blanked the Expect value */
    int transport_is_sock; /* NOTIFY_STARTED: the GnuTLS session exists, its transport is the socket */
    int tls_started;       /* ... and mhd_compat_tls_started set it up */
} seen_req;

#define UP_CLIENT_BYTES (1u << 20) /* /up: what the client sends after the 101, and the server */
#define UP_SERVER_BYTES (1u << 20)
#define UP_RELAY_BYTES (64u << 10) /* ... through libmicrohttpd's 4-byte relay steps */

/* What the upgrade handler of /up and its thread saw. */
static struct {
    struct MHD_Connection *conn;
    struct MHD_UpgradeResponseHandle *urh;
    int sock, tcp;
    gnutls_session_t session; /* mhd_compat_upgraded_session */
    int recv_off;             /* mhd_compat_relay_recv_off */
    size_t want_in, want_out; /* bytes to receive, then to send */
    size_t got;               /* received */
    int intact;               /* the received bytes are the client's pattern */
    int sent;                 /* every byte went out */
    int pair_silent;          /* recv_off: nothing came through the socketpair */
    pthread_t thread;
    int running;
} up;

static unsigned char pattern(size_t i, int dir)
{
    return (unsigned char)(i * 7 + 3 + (size_t)dir * (i >> 9));
}

static int memfd = -1;
static struct tls_listener *tls_l;
static char dir[64];

static void *uri_log(void *cls, const char *uri, struct MHD_Connection *c)
{
    (void)cls, (void)c;
    seen_req.uri = uri;
    seen_req.uri_len = strlen(uri);
    seen_req.cut = strstr(uri, "cut=1") ? mhd_compat_cut_query(uri) : 0;
    return NULL;
}

static const char *prev_end;
static enum MHD_Result field(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                             const char *value, size_t value_size)
{
    (void)cls, (void)kind;
    seen_req.fields++;
    int in_place = value > key + key_size && key[key_size] == 0 && value - (key + key_size) < 16;
    for (const char *p = key + key_size + 1; in_place && p < value; p++)
        in_place = *p == ' ' || *p == '\t';
    if (!in_place)
        seen_req.fields_in_place = 0;
    if (prev_end) {
        ptrdiff_t gap = key - prev_end;
        if (!((gap == 1 && prev_end[0] == 0) || (gap == 2 && prev_end[0] == 0 && prev_end[1] == 0)))
            seen_req.gaps_clean = 0;
    }
    prev_end = value + value_size;
    return MHD_YES;
}

static void notify(void *cls, struct MHD_Connection *c, void **sc, enum MHD_ConnectionNotificationCode toe)
{
    (void)cls;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (toe == MHD_CONNECTION_NOTIFY_STARTED) { /* as debitd's http_connection */
        seen_req.started = c;
        struct conn *cn = conn_new(ci->connect_fd);
        assert_non_null(cn);
        if (tls_l) {
            cn->creds = tls_creds_take(tls_l);
            const union MHD_ConnectionInfo *ts = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
            seen_req.transport_is_sock = ts && ts->tls_session &&
                                         gnutls_transport_get_int(ts->tls_session) == ci->connect_fd;
            seen_req.tls_started = mhd_compat_tls_started(c, tls_l);
        }
        *sc = cn;
    } else if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        conn_free(*sc);
        *sc = NULL;
    }
}

static void completed(void *cls, struct MHD_Connection *c, void **req_cls, enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)c, (void)req_cls, (void)toe;
    char err[160];
    nopush_end(seen_req.sock, err, sizeof err);
    sendstep_end(seen_req.sock);
}

/* Wait (bounded: 10 s) until FD has EVENTS: 1, or 0 on the timeout (no cmocka assertion:
 * /up's thread calls it). */
static int wait_fd(int fd, short events)
{
    struct pollfd p = {.fd = fd, .events = events};
    return poll(&p, 1, 10000) == 1;
}

/* /up's thread, as http_ndt7_run's: receive the client's bytes (from the session itself,
 * or through the socketpair), then send ours (into the session, or the socketpair), then
 * close. */
static void *up_run(void *arg)
{
    (void)arg;
    static unsigned char buf[65536];
    up.intact = 1;
    while (up.got < up.want_in) {
        ssize_t n;
        if (up.recv_off) {
            if (gnutls_record_check_pending(up.session) == 0 && !wait_fd(up.tcp, POLLIN))
                break;
            n = gnutls_record_recv(up.session, buf, sizeof buf);
            if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED)
                continue;
        } else {
            if (!wait_fd(up.sock, POLLIN))
                break;
            n = recv(up.sock, buf, sizeof buf, 0);
            if (n < 0 && (errno == EAGAIN || errno == EINTR))
                continue;
        }
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            if (buf[i] != pattern(up.got + (size_t)i, 0))
                up.intact = 0;
        up.got += (size_t)n;
    }
    size_t off = 0;
    while (off < up.want_out) {
        size_t k = up.want_out - off < sizeof buf ? up.want_out - off : sizeof buf;
        for (size_t i = 0; i < k; i++)
            buf[i] = pattern(off + i, 1);
        ssize_t n = up.session ? gnutls_record_send(up.session, buf, k) : send(up.sock, buf, k, MSG_NOSIGNAL);
        if (n == GNUTLS_E_AGAIN || (n < 0 && errno == EAGAIN)) {
            if (!wait_fd(up.session ? up.tcp : up.sock, POLLOUT))
                break;
            continue;
        }
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    up.sent = off == up.want_out;
    char b;
    up.pair_silent = recv(up.sock, &b, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN;
    MHD_upgrade_action(up.urh, MHD_UPGRADE_ACTION_CLOSE);
    return NULL;
}

static void upgraded(void *cls, struct MHD_Connection *c, void *req_cls, const char *extra_in, size_t extra_in_size,
                     MHD_socket sock, struct MHD_UpgradeResponseHandle *urh)
{
    (void)cls, (void)req_cls, (void)extra_in;
    assert_int_equal(extra_in_size, 0); /* the client sends only after the 101 */
    up.conn = c;
    up.urh = urh;
    up.sock = sock;
    up.tcp = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD)->connect_fd;
    up.session = mhd_compat_upgraded_session(c);
    up.recv_off = up.session && mhd_compat_relay_recv_off(c, urh, sock);
    fcntl(sock, F_SETFL, fcntl(sock, F_GETFL) | O_NONBLOCK);
    up.running = pthread_create(&up.thread, NULL, up_run, NULL) == 0;
}

/* /file: the memfd body with tcp_nopush and the sendfile steps as debitd does them;
 * /304: mhd_compat_response_304(12345); /hdr: a header rewritten before queueing;
 * anything else: "ok". */
static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *data, size_t *data_size, void **req_cls)
{
    (void)cls, (void)method, (void)data, (void)data_size;
    static int marker;
    if (!*req_cls) {
        *req_cls = &marker;
        const char *v = NULL;
        size_t n = 0;
        /* as http_guard_expect: on the first call, before libmicrohttpd decides on a 100 */
        if (strcmp(url, "/expect") == 0 &&
            MHD_lookup_connection_value_n(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_EXPECT, strlen(MHD_HTTP_HEADER_EXPECT),
                                          &v, &n) == MHD_YES)
            seen_req.expect_blanked = mhd_compat_expect_blank(v);
        return MHD_YES;
    }
    seen_req.version_follows = version == seen_req.uri + seen_req.uri_len + 1;
    seen_req.args = MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, NULL, NULL);
    seen_req.fields_in_place = seen_req.gaps_clean = 1;
    seen_req.fields = 0;
    prev_end = version + strlen(version);
    MHD_get_connection_values_n(c, MHD_HEADER_KIND, field, NULL);
    seen_req.in_place = seen_req.nopush_begun = 0;
    seen_req.conn_found = conn_of(c) != NULL && conn_of(c)->sock == MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD)->connect_fd;
    seen_req.sock = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD)->connect_fd;
    struct MHD_Response *r;
    unsigned status = 200;
    if (strcmp(url, "/file") == 0) {
        r = MHD_create_response_from_fd_at_offset64(BODY_SIZE, dup(memfd), 0);
        char err[160];
        seen_req.nopush_begun = nopush_begin(seen_req.sock, err, sizeof err) == 0;
        sendstep_begin(seen_req.sock, BODY_SIZE);
    } else if (strcmp(url, "/up") == 0) {
        r = MHD_create_response_for_upgrade(upgraded, NULL);
        MHD_add_response_header(r, MHD_HTTP_HEADER_UPGRADE, "debit-test");
        status = MHD_HTTP_SWITCHING_PROTOCOLS;
    } else if (strcmp(url, "/304") == 0) {
        r = mhd_compat_response_304(12345);
        status = 304;
    } else if (strcmp(url, "/hdr") == 0) {
        r = MHD_create_response_from_buffer(2, (void *)"ok", MHD_RESPMEM_PERSISTENT);
        MHD_add_response_header(r, "X-T", "aaaaaaaa");
        char *at = mhd_compat_header_at(r, "X-T");
        char *now = mhd_compat_header_replace(r, "X-T", at, "bbbbbbbb");
        seen_req.in_place = now == at;
    } else
        r = MHD_create_response_from_buffer(2, (void *)"ok", MHD_RESPMEM_PERSISTENT);
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static struct MHD_Daemon *start(unsigned flags, unsigned *port, struct MHD_OptionItem *extra)
{
    int fd = testlib_listen(port);
    struct MHD_OptionItem none[] = {{MHD_OPTION_END, 0, NULL}};
    struct MHD_Daemon *d = MHD_start_daemon(
        MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | flags, 0, NULL, NULL, answer, NULL, MHD_OPTION_LISTEN_SOCKET,
        fd, MHD_OPTION_URI_LOG_CALLBACK, uri_log, NULL, MHD_OPTION_NOTIFY_CONNECTION, notify, NULL,
        MHD_OPTION_NOTIFY_COMPLETED, completed, NULL, MHD_OPTION_SIGPIPE_HANDLED_BY_APP, 1, MHD_OPTION_ARRAY,
        extra ? extra : none, MHD_OPTION_END);
    assert_non_null(d);
    return d;
}

/* Send REQ on a fresh connection to PORT, read until the peer closes (or 10 s): the bytes
 * in BUF (NUL-terminated, truncated to LEN), their count returned. */
static size_t roundtrip(unsigned port, const char *req, char *buf, size_t len)
{
    int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(s, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(send(s, req, strlen(req), MSG_NOSIGNAL), (ssize_t)strlen(req));
    size_t got = 0, total = 0;
    for (;;) {
        struct pollfd p = {.fd = s, .events = POLLIN};
        assert_int_equal(poll(&p, 1, 10000), 1);
        char tmp[65536];
        ssize_t n = recv(s, tmp, sizeof tmp, 0);
        assert_true(n >= 0);
        if (n == 0)
            break;
        total += (size_t)n;
        size_t k = (size_t)n < len - 1 - got ? (size_t)n : len - 1 - got;
        memcpy(buf + got, tmp, k);
        got += k;
    }
    buf[got] = 0;
    close(s);
    return total;
}

/* REQ answered by a plain daemon with the tricks on (UNKNOWN = 0) or off: as roundtrip. */
static size_t serve(int unknown, const char *req, char *buf, size_t len)
{
    mhd_compat_force_unknown(unknown);
    unsigned port;
    struct MHD_Daemon *d = start(0, &port, NULL);
    size_t n = roundtrip(port, req, buf, len);
    MHD_stop_daemon(d);
    return n;
}

static int setup(void **state)
{
    (void)state;
    signal(SIGPIPE, SIG_IGN); /* as debitd's main: MHD_OPTION_SIGPIPE_HANDLED_BY_APP */
    memfd = memfd_create("mhd-compat-body", 0);
    if (memfd < 0 || ftruncate(memfd, BODY_SIZE) != 0)
        return -1;
    snprintf(dir, sizeof dir, "/tmp/debit-test-mhdc.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char p[128];
    snprintf(p, sizeof p, "%s/a.crt", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/a.key", dir);
    unlink(p);
    rmdir(dir);
    close(memfd);
    mhd_compat_force_unknown(0);
    return 0;
}

/* The installed version is the verified one, and every trick is on in this binary (the
 * Makefile exports setsockopt and sendfile64 from test binaries too); unknown, none is. */
static void test_probe(void **state)
{
    (void)state;
    mhd_compat_force_unknown(0);
    assert_string_equal(MHD_get_version(), MHD_COMPAT_VERIFIED);
    assert_int_equal(mhd_compat_probe(), MHD_TRICK_ALL);
    mhd_compat_force_unknown(1);
    assert_int_equal(mhd_compat_probe(), 0);
    mhd_compat_force_unknown(0);
    setenv(MHD_COMPAT_ENV, "plain", 1);
    assert_int_equal(mhd_compat_probe(), 0);
    unsetenv(MHD_COMPAT_ENV);
    mhd_compat_force_unknown(0);
    assert_true(mhd_compat_on(MHD_TRICK_TLS_SESSION));
    char d[400];
    mhd_compat_describe(MHD_TRICK_SETSOCKOPT | MHD_TRICK_LOG_TEXT, d, sizeof d);
    assert_string_equal(d, "setsockopt interposer, log texts");
    mhd_compat_describe(0, d, sizeof d);
    assert_string_equal(d, "none");
}

/* Each log text mhd_compat knows is in the installed library's binary, and classifies as
 * the refusal log expects; with the trick off nothing is classified. */
static void test_log_texts(void **state)
{
    (void)state;
    Dl_info info;
    assert_int_not_equal(dladdr((void *)MHD_get_version, &info), 0);
    int fd = open(info.dli_fname, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    struct stat st;
    assert_int_equal(fstat(fd, &st), 0);
    const char *lib = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    assert_true(lib != MAP_FAILED);
    for (size_t i = 0; i < mhd_compat_log_texts(); i++) {
        const char *t = mhd_compat_log_text(i, NULL);
        if (!memmem(lib, (size_t)st.st_size, t, strlen(t)))
            fail_msg("\"%s\" is not in %s", t, info.dli_fname);
    }
    munmap((void *)lib, (size_t)st.st_size);
    close(fd);
    assert_null(mhd_compat_log_text(mhd_compat_log_texts(), NULL));

    static const struct {
        const char *msg;
        enum refusal_reason want;
    } rows[] = {
        {"Server reached connection limit. Closing inbound connection.", REFUSAL_LIMIT},
        {"Connection was closed by remote side with incomplete request.", REFUSAL_INCOMPLETE},
        {"Socket has been disconnected when reading request.", REFUSAL_INCOMPLETE},
        {"Connection socket is closed when reading request due to the error: ECONNRESET", REFUSAL_INCOMPLETE},
        {"Error: received handshake message out of context.", REFUSAL_TLS},
        {"Error processing request (HTTP response code is 505 ('<html>...</html>')). Closing connection.",
         REFUSAL_MALFORMED},
        {"Failed to parse `Content-Length' header. Closing connection.", REFUSAL_MALFORMED},
        {"Too large value of 'Content-Length' header. Closing connection.", REFUSAL_MALFORMED},
        {"Received HTTP/1.1 request without `Host' header.", REFUSAL_MALFORMED},
        {"Not enough memory in pool to allocate header record!", REFUSAL_MALFORMED},
        {"Application used invalid status code for 'upgrade' response!", REFUSAL_N},
        {"Failed to bind to port 80: Address already in use", REFUSAL_N},
        {"", REFUSAL_N},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++)
        if (mhd_compat_log_reason(rows[i].msg) != rows[i].want)
            fail_msg("\"%s\": got %d, want %d", rows[i].msg, mhd_compat_log_reason(rows[i].msg), rows[i].want);
    mhd_compat_force_unknown(1);
    assert_int_equal(mhd_compat_log_reason(rows[0].msg), REFUSAL_N);
    mhd_compat_force_unknown(0);
}

/* libmicrohttpd's setsockopt (cork, no-delay) and sendfile64 calls reach debitd's: an fd
 * response under tcp_nopush has its cork/no-delay calls answered in place, and its steps
 * widened; with the tricks off the same response is served in libmicrohttpd's order. */
static void test_interposers(void **state)
{
    (void)state;
    for (int unknown = 0; unknown <= 1; unknown++) {
        uint64_t held0 = nopush_calls_held(), c0, w0, c1, w1;
        sendstep_stats(&c0, &w0);
        mhd_compat_seen_reset();
        static char buf[1024];
        size_t n = serve(unknown, "GET /file HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", buf, sizeof buf);
        char *eoh = strstr(buf, "\r\n\r\n");
        assert_non_null(eoh);
        assert_int_equal(n - (size_t)(eoh + 4 - buf), BODY_SIZE);
        sendstep_stats(&c1, &w1);
        /* entered whatever the tricks' state: the interposition is the linker's */
        assert_int_equal(mhd_compat_seen() & (MHD_TRICK_SETSOCKOPT | MHD_TRICK_SENDFILE),
                         MHD_TRICK_SETSOCKOPT | MHD_TRICK_SENDFILE);
        assert_int_equal(seen_req.nopush_begun, !unknown);
        if (!unknown) {
            assert_true(nopush_calls_held() > held0); /* libmicrohttpd's push, answered */
            assert_true(c1 > c0);                      /* its steps, on the noted socket */
            assert_true(w1 > w0);
        } else {
            assert_int_equal(nopush_calls_held(), held0);
            assert_int_equal(c1, c0);
        }
    }
    mhd_compat_force_unknown(0);
}

/* The request line and header lines lie in the read buffer as http_guard.c reads them. */
static void test_layout(void **state)
{
    (void)state;
    char buf[1024];
    serve(0, "GET /a?x=1&y=2 HTTP/1.1\r\nHost: x\r\nX-A:  v1\r\nX-B:\tv2\r\nConnection: close\r\n\r\n", buf,
          sizeof buf);
    assert_non_null(strstr(buf, "200 OK"));
    assert_true(seen_req.conn_found);
    assert_true(seen_req.version_follows);
    assert_int_equal(seen_req.fields, 4);
    assert_true(seen_req.fields_in_place);
    assert_true(seen_req.gaps_clean);
    assert_int_equal(seen_req.args, 2);
}

/* A query cut at its '?' in the URI log callback is never parsed; the fallback cuts nothing. */
static void test_query_cut(void **state)
{
    (void)state;
    for (int unknown = 0; unknown <= 1; unknown++) {
        char buf[1024];
        serve(unknown, "GET /q?cut=1&b=2&c=3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", buf, sizeof buf);
        assert_non_null(strstr(buf, "200 OK"));
        assert_int_equal(seen_req.cut, !unknown);
        assert_int_equal(seen_req.args, unknown ? 3 : 0);
    }
    mhd_compat_force_unknown(0);
}

/* A header value written over in libmicrohttpd's copy goes out as written (and so does the
 * fallback's delete and add). */
static void test_header_write(void **state)
{
    (void)state;
    for (int unknown = 0; unknown <= 1; unknown++) {
        char buf[1024];
        serve(unknown, "GET /hdr HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", buf, sizeof buf);
        if (!unknown) /* (the fallback's new copy may land at the freed address) */
            assert_true(seen_req.in_place);
        assert_non_null(strstr(buf, "\r\nX-T: bbbbbbbb\r\n"));
        assert_null(strstr(buf, "aaaa"));
    }
    mhd_compat_force_unknown(0);
}

/* A body-less GET with "Expect: 100-continue" whose value is blanked on the first call gets
 * no 100, and the request pipelined after it is answered too (0.9.75 reads the value from
 * its own copy when it decides). With the tricks off nothing is blanked. */
static void test_expect_blank(void **state)
{
    (void)state;
    static const char req[] = "GET /expect HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n"
                              "GET /expect HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    char buf[4096];
    seen_req.expect_blanked = -1;
    serve(0, req, buf, sizeof buf);
    assert_int_equal(seen_req.expect_blanked, 1);
    assert_null(strstr(buf, "100 Continue"));
    const char *second = strstr(buf, "HTTP/1.1 200");
    assert_non_null(second);
    assert_non_null(strstr(second + 1, "HTTP/1.1 200"));
    mhd_compat_force_unknown(1);
    assert_int_equal(mhd_compat_expect_blank("x"), 0);
    mhd_compat_force_unknown(0);
}

/* A 304 carries the response's size as its Content-Length and nothing after its headers. */
static void test_304(void **state)
{
    (void)state;
    char buf[1024];
    size_t n = serve(0, "GET /304 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", buf, sizeof buf);
    assert_int_equal(strncmp(buf, "HTTP/1.1 304 ", 13), 0);
    assert_non_null(strstr(buf, "\r\nContent-Length: 12345\r\n"));
    char *eoh = strstr(buf, "\r\n\r\n");
    assert_non_null(eoh);
    assert_int_equal(n, (size_t)(eoh + 4 - buf));
}

/* The certificate callback: notes the connection mhd_compat finds, then answers as debitd's. */
static int cert_cb(gnutls_session_t s, const gnutls_datum_t *dn, int nreqs, const gnutls_pk_algorithm_t *pk,
                   int npk, gnutls_pcert_st **pcert, unsigned int *n, gnutls_privkey_t *key)
{
    seen_req.tls_conn = mhd_compat_tls_connection(s);
    return mhd_compat_tls_cert(s, dn, nreqs, pk, npk, pcert, n, key);
}

static size_t sink(char *p, size_t sz, size_t n, void *ud)
{
    (void)p, (void)ud;
    return sz * n;
}

/* A TLS daemon of the test's answer, with tls_l's credentials (and upgrades). */
static struct MHD_Daemon *start_tls(unsigned *port)
{
    struct MHD_OptionItem opts[4];
    int k = 0;
    tls_mhd_options(tls_l, cert_cb, opts, &k);
    opts[k++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
    return start(tls_mhd_flags() | MHD_ALLOW_UPGRADE, port, opts);
}

/* tls_l: a listener with a new certificate, DIR/a.crt. */
static void tls_listener_up(void)
{
    char crt[128], key[128], err[256];
    testlib_tls_cert(dir, "a");
    snprintf(crt, sizeof crt, "%s/a.crt", dir);
    snprintf(key, sizeof key, "%s/a.key", dir);
    tls_l = tls_listener_new(crt, key, NULL, err, sizeof err);
    assert_non_null(tls_l);
}

/* The GnuTLS session's user pointer is the MHD_Connection NOTIFY_STARTED named; the
 * fallback (the worker thread's listener) hands out the same certificate. */
static void test_tls_session(void **state)
{
    (void)state;
    char crt[128];
    snprintf(crt, sizeof crt, "%s/a.crt", dir);
    for (int unknown = 0; unknown <= 1; unknown++) {
        mhd_compat_force_unknown(unknown);
        tls_listener_up();
        unsigned port;
        struct MHD_Daemon *d = start_tls(&port);
        seen_req.started = seen_req.tls_conn = NULL;
        char url[64];
        snprintf(url, sizeof url, "https://127.0.0.1:%u/", port);
        CURL *h = curl_easy_init();
        curl_easy_setopt(h, CURLOPT_URL, url);
        curl_easy_setopt(h, CURLOPT_CAINFO, crt);
        curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L); /* the certificate names no IP; its chain is checked */
        curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
        curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, sink);
        long code = 0;
        CURLcode rc = curl_easy_perform(h);
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
        curl_easy_cleanup(h);
        MHD_stop_daemon(d);
        tls_listener_free(tls_l);
        tls_l = NULL;
        assert_int_equal(rc, CURLE_OK);
        assert_int_equal(code, 200);
        assert_non_null(seen_req.started);
        assert_ptr_equal(seen_req.tls_conn, unknown ? NULL : seen_req.started);
    }
    mhd_compat_force_unknown(0);
}

/* A GnuTLS client's session on a new connection to PORT, its handshake done (with RESUME's
 * session data when given); *FD its socket (blocking). */
static gnutls_session_t tls_client(unsigned port, gnutls_certificate_credentials_t cred, const gnutls_datum_t *resume,
                                   int *fd)
{
    gnutls_session_t s;
    *fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(*fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(gnutls_init(&s, GNUTLS_CLIENT), 0);
    assert_int_equal(gnutls_set_default_priority(s), 0);
    assert_int_equal(gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred), 0);
    if (resume)
        assert_int_equal(gnutls_session_set_data(s, resume->data, resume->size), 0);
    struct timeval tv = {.tv_sec = 10}; /* a read that never ends fails the test instead */
    setsockopt(*fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    gnutls_transport_set_int(s, *fd);
    gnutls_handshake_set_timeout(s, 10000);
    int r;
    do
        r = gnutls_handshake(s);
    while (r < 0 && !gnutls_error_is_fatal(r));
    assert_int_equal(r, 0);
    return s;
}

static void tls_send_all(gnutls_session_t s, const void *p, size_t n)
{
    for (size_t off = 0; off < n;) {
        ssize_t k = gnutls_record_send(s, (const char *)p + off, n - off);
        assert_true(k > 0);
        off += (size_t)k;
    }
}

/* Read S until the peer ends it or WANT bytes came: the byte count, the first LEN - 1
 * bytes in BUF; each byte checked against pattern(i, DIR) unless DIR < 0. */
static size_t tls_read_all(gnutls_session_t s, char *buf, size_t len, int dir, size_t want)
{
    size_t got = 0;
    char tmp[16384];
    int idle = 0;
    while (got < want) {
        errno = 0;
        ssize_t n = gnutls_record_recv(s, tmp, want - got < sizeof tmp ? want - got : sizeof tmp);
        if ((n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED) && errno != EAGAIN)
            continue; /* a post-handshake message (a session ticket), read */
        if (n == GNUTLS_E_AGAIN && ++idle < 2)
            continue; /* SO_RCVTIMEO: 10 s without a byte, twice */
        if (n <= 0) /* 0: close_notify; or the socket closed without one */
            break;
        for (ssize_t i = 0; dir >= 0 && i < n; i++)
            if ((unsigned char)tmp[i] != pattern(got + (size_t)i, dir))
                fail_msg("byte %zu differs", got + (size_t)i);
        if (buf && got < len - 1)
            memcpy(buf + got, tmp, (size_t)n < len - 1 - got ? (size_t)n : len - 1 - got);
        got += (size_t)n;
    }
    if (buf)
        buf[got < len - 1 ? got : len - 1] = 0;
    return got;
}

/* At NOTIFY_STARTED the GnuTLS session exists with the socket as its transport and no
 * handshake yet: tickets set then let a second connection resume with the first's, and
 * the Finished hook runs. With the trick off neither happens and HTTPS still works. */
static void test_tls_start(void **state)
{
    (void)state;
    char crt[128];
    snprintf(crt, sizeof crt, "%s/a.crt", dir);
    for (int unknown = 0; unknown <= 1; unknown++) {
        mhd_compat_force_unknown(unknown);
        tls_listener_up();
        unsigned port;
        struct MHD_Daemon *d = start_tls(&port);
        gnutls_certificate_credentials_t cred;
        assert_int_equal(gnutls_certificate_allocate_credentials(&cred), 0);
        gnutls_datum_t ticket = {0};
        for (int i = 0; i < 2; i++) {
            int fd;
            mhd_compat_seen_reset();
            seen_req.transport_is_sock = seen_req.tls_started = -1;
            gnutls_session_t s = tls_client(port, cred, i ? &ticket : NULL, &fd);
            static const char req[] = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
            tls_send_all(s, req, sizeof req - 1);
            char buf[512];
            tls_read_all(s, buf, sizeof buf, -1, SIZE_MAX);
            assert_non_null(strstr(buf, "200 OK"));
            assert_int_equal(seen_req.transport_is_sock, 1); /* the assumption, whatever the trick */
            assert_int_equal(seen_req.tls_started, !unknown);
            assert_int_equal(!!(mhd_compat_seen() & MHD_TRICK_TLS_START), !unknown);
            assert_int_equal(gnutls_session_is_resumed(s), i && !unknown);
            if (!i)
                assert_int_equal(gnutls_session_get_data2(s, &ticket), 0);
            gnutls_deinit(s);
            close(fd);
        }
        gnutls_free(ticket.data);
        gnutls_certificate_free_credentials(cred);
        MHD_stop_daemon(d);
        tls_listener_free(tls_l);
        tls_l = NULL;
    }
    mhd_compat_force_unknown(0);
}

/* After an upgrade on HTTPS: with both tricks the thread receives the client's bytes from
 * the GnuTLS session itself (the relay reads none: the socketpair stays silent) and sends
 * into it; with MHD_TRICK_RELAY_RECV off the relay brings the client's bytes 4 at a time
 * (why the trick exists) while the thread sends; with every trick off both directions go
 * through the relay. The bytes arrive whole and in order every time. */
static void test_upgrade(void **state)
{
    (void)state;
    static const struct {
        int unknown;
        unsigned off;
        int session, recv_off;
        size_t in, out;
    } rows[] = {
        {0, 0, 1, 1, UP_CLIENT_BYTES, UP_SERVER_BYTES},
        {0, MHD_TRICK_RELAY_RECV, 1, 0, UP_RELAY_BYTES, UP_SERVER_BYTES},
        {1, 0, 0, 0, UP_RELAY_BYTES, UP_RELAY_BYTES},
    };
    static unsigned char out[UP_CLIENT_BYTES];
    for (size_t i = 0; i < sizeof out; i++)
        out[i] = pattern(i, 0);
    for (size_t row = 0; row < sizeof rows / sizeof rows[0]; row++) {
        mhd_compat_force_unknown(rows[row].unknown);
        mhd_compat_force_off(rows[row].off);
        tls_listener_up();
        unsigned port;
        struct MHD_Daemon *d = start_tls(&port);
        gnutls_certificate_credentials_t cred;
        assert_int_equal(gnutls_certificate_allocate_credentials(&cred), 0);
        memset(&up, 0, sizeof up);
        up.want_in = rows[row].in;
        up.want_out = rows[row].out;
        int fd;
        gnutls_session_t s = tls_client(port, cred, NULL, &fd);
        static const char req[] = "GET /up HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: debit-test\r\n\r\n";
        tls_send_all(s, req, sizeof req - 1);
        char head[1024];
        size_t hl = 0;
        while (!memmem(head, hl, "\r\n\r\n", 4)) { /* the 101 alone: the server sends after our bytes */
            ssize_t n = gnutls_record_recv(s, head + hl, sizeof head - 1 - hl);
            if (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED) /* a session ticket, read */
                continue;
            if (n <= 0)
                fail_msg("no 101: %s", gnutls_strerror((int)n));
            hl += (size_t)n;
        }
        head[hl] = 0;
        assert_int_equal(strncmp(head, "HTTP/1.1 101 ", 13), 0);
        assert_int_equal((size_t)(strstr(head, "\r\n\r\n") + 4 - head), hl);
        tls_send_all(s, out, up.want_in);
        /* as an ndt7 client, which closes once it has all: 0.9.75's relay, receiving, may
         * miss the application's close (it marks the handle closed after its shutdown) and
         * then ends only on an event of the client's */
        size_t got = tls_read_all(s, NULL, 0, 1, up.want_out);
        gnutls_deinit(s);
        close(fd);
        if (up.running)
            pthread_join(up.thread, NULL);
        MHD_stop_daemon(d);
        tls_listener_free(tls_l);
        tls_l = NULL;
        gnutls_certificate_free_credentials(cred);
        assert_true(up.running);
        assert_int_equal(up.session != NULL, rows[row].session);
        assert_int_equal(up.recv_off, rows[row].recv_off);
        assert_int_equal(up.got, up.want_in);
        assert_true(up.intact);
        assert_true(up.sent);
        assert_int_equal(got, up.want_out);
        if (up.recv_off)
            assert_true(up.pair_silent);
    }
    mhd_compat_force_off(0);
    mhd_compat_force_unknown(0);
}

int main(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_probe),       cmocka_unit_test(test_log_texts),   cmocka_unit_test(test_interposers),
        cmocka_unit_test(test_layout),      cmocka_unit_test(test_query_cut),   cmocka_unit_test(test_header_write),
        cmocka_unit_test(test_304),         cmocka_unit_test(test_tls_session), cmocka_unit_test(test_expect_blank),
        cmocka_unit_test(test_tls_start),   cmocka_unit_test(test_upgrade),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
