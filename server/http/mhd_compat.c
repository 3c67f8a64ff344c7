/* mhd_compat: see mhd_compat.h; the tricks' state and the descriptor table are in
 * mhd_compat_state.c. */
#include "mhd_compat.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "array.h"
#include "conn.h"
#include "log.h"
#include "nopush.h"
#include "sendstep.h"
#include "sys.h"
#include "tls.h"

static _Atomic unsigned seen; /* mhd_compat_seen */

static void mark_seen(unsigned bit)
{
    if (!(atomic_load_explicit(&seen, memory_order_relaxed) & bit)) /* read-mostly: no shared write per call */
        atomic_fetch_or_explicit(&seen, bit, memory_order_relaxed);
}

unsigned mhd_compat_seen(void)
{
    return atomic_load_explicit(&seen, memory_order_relaxed);
}

void mhd_compat_seen_reset(void)
{
    atomic_store_explicit(&seen, 0, memory_order_relaxed);
}

/* Interposes on libc's setsockopt for the whole process: the dynamic linker resolves
 * libmicrohttpd's calls to the executable's definition (the Makefile exports it). A held
 * descriptor's TCP_CORK/TCP_NODELAY is answered by nopush; every other call goes to the
 * kernel. */
int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
    mark_seen(MHD_TRICK_SETSOCKOPT);
    if (level == IPPROTO_TCP && (name == TCP_CORK || name == TCP_NODELAY) && nopush_intercept(mhd_compat_fd(fd)))
        return 0;
    return mhd_compat_kernel_setsockopt(fd, level, name, val, len);
}

/* Interposes on libc's sendfile64 (x86-64: the same entry as sendfile), as setsockopt: a
 * step of a noted socket's body may be widened (sendstep); the kernel's is called by number. */
ssize_t sendfile64(int out_fd, int in_fd, off64_t *offset, size_t count)
{
    mark_seen(MHD_TRICK_SENDFILE);
    if (offset)
        count = sendstep_step(mhd_compat_fd(out_fd), (uint64_t)*offset, count);
    return (ssize_t)syscall(SYS_sendfile, out_fd, in_fd, offset, count);
}

void mhd_compat_describe(unsigned set, char *buf, size_t len)
{
    static const char *const names[] = {
        "setsockopt interposer", "sendfile64 interposer", "header value rewrite",
        "query cut", "read buffer layout", "log texts", "TLS session pointer", "Expect blanking",
        "TLS session at connection start", "TLS session written by ndt7", "upgrade relay read by ndt7",
    };
    size_t at = 0;
    buf[0] = 0;
    for (size_t i = 0; i < ARRAY_SIZE(names); i++)
        if (set & (1u << i)) {
            int n = snprintf(buf + at, len - at, "%s%s", at ? ", " : "", names[i]);
            if (n < 0 || (size_t)n >= len - at)
                return;
            at += (size_t)n;
        }
    if (!at)
        sys_strcpy(buf, len, "none");
}

unsigned mhd_compat_probe(void)
{
    unsigned set = mhd_compat_tricks();
    char on[600], off[600];
    mhd_compat_describe(set, on, sizeof on);
    mhd_compat_describe(MHD_TRICK_ALL & ~set, off, sizeof off);
    const char *plain = mhd_compat_plain_reason();
    if (plain)
        log_warn("libmicrohttpd %s: %s (verified: %s): its public API only, off: %s", MHD_get_version(), plain,
                 MHD_COMPAT_VERIFIED, off);
    else if (set != MHD_TRICK_ALL)
        log_warn("libmicrohttpd %s: beneath its API: %s; off in this build: %s", MHD_get_version(), on, off);
    else
        log_info("libmicrohttpd %s: beneath its API: %s", MHD_get_version(), on);
    return set;
}

char *mhd_compat_header_at(struct MHD_Response *resp, const char *name)
{
    /* libmicrohttpd's own copy (add_response_entry allocates it, 0.9.75 to 1.0.1) */
    return (char *)MHD_get_response_header(resp, name);
}

char *mhd_compat_header_replace(struct MHD_Response *resp, const char *name, char *at, const char *value)
{
    /* Written over in place: the value is libmicrohttpd's own copy, with its length beside
     * it, copied into the connection's buffer only when the response is queued (after
     * this); deleting and adding walked the header list and made three frees and three
     * allocations, 3.5-4.3 % of a 4 KiB request's samples (docs/performance.md). */
    size_t n = strlen(value);
    if (at && n && strlen(at) == n && mhd_compat_on(MHD_TRICK_HEADER_WRITE)) {
        memcpy(at, value, n);
        return at;
    }
    if (at) {
        char *old = strdup(at); /* the deletion frees AT */
        if (!old)
            return at;
        MHD_del_response_header(resp, name, old);
        free(old);
    }
    if (!n)
        return NULL;
    MHD_add_response_header(resp, name, value);
    return mhd_compat_header_at(resp, name);
}

int mhd_compat_cut_query(const char *uri)
{
    /* 0.9.75 hands the URI log callback the target in its read buffer, just before
     * MHD_parse_arguments_ reads the query from there (connection.c,
     * parse_initial_message_line) */
    char *q = strchr(uri, '?');
    if (!q || !mhd_compat_on(MHD_TRICK_QUERY_CUT))
        return 0;
    q[1] = '\0';
    return 1;
}

int mhd_compat_expect_blank(const char *v)
{
    /* 0.9.75 decides on 100 Continue after the access handler's first call, reading the
     * header's value from its own pool (connection.c, need_100_continue): an empty value
     * is no expectation */
    if (!v || !mhd_compat_on(MHD_TRICK_EXPECT_BLANK))
        return 0;
    ((char *)v)[0] = '\0';
    return 1;
}

/* libmicrohttpd 0.9.75's texts (daemon.c, connection.c, connection_https.c), by their start */
static const struct {
    const char *prefix;
    enum refusal_reason reason;
} log_texts[] = {
    {"Server reached connection limit", REFUSAL_LIMIT},
    {"Connection was closed by remote side with incomplete request", REFUSAL_INCOMPLETE},
    {"Socket has been disconnected when reading request", REFUSAL_INCOMPLETE},
    {"Connection socket is closed when reading request", REFUSAL_INCOMPLETE},
    {"Error: received handshake message out of context", REFUSAL_TLS},
    /* a client's malformed request, answered by libmicrohttpd before any callback */
    {"Error processing request (HTTP response code is", REFUSAL_MALFORMED},
    {"Failed to parse `Content-Length' header", REFUSAL_MALFORMED},
    {"Too large value of 'Content-Length' header", REFUSAL_MALFORMED},
    {"Received HTTP/1.1 request without `Host' header", REFUSAL_MALFORMED},
    {"Not enough memory in pool to parse cookies", REFUSAL_MALFORMED},
    {"Not enough memory in pool to allocate header record", REFUSAL_MALFORMED},
};

enum refusal_reason mhd_compat_log_reason(const char *msg)
{
    if (!mhd_compat_on(MHD_TRICK_LOG_TEXT))
        return REFUSAL_N;
    for (size_t i = 0; i < ARRAY_SIZE(log_texts); i++)
        if (strncmp(msg, log_texts[i].prefix, strlen(log_texts[i].prefix)) == 0)
            return log_texts[i].reason;
    return REFUSAL_N;
}

size_t mhd_compat_log_texts(void)
{
    return ARRAY_SIZE(log_texts);
}

const char *mhd_compat_log_text(size_t i, enum refusal_reason *reason)
{
    if (i >= ARRAY_SIZE(log_texts))
        return NULL;
    if (reason)
        *reason = log_texts[i].reason;
    return log_texts[i].prefix;
}

/* A 304's body reader: never called (the write position starts at the end). Were it ever
 * called, the connection would be closed rather than bytes sent where none belong. */
static ssize_t no_body(void *cls, uint64_t pos, char *buf, size_t max)
{
    (void)cls, (void)pos, (void)buf, (void)max;
    return MHD_CONTENT_READER_END_WITH_ERROR;
}

struct MHD_Response *mhd_compat_response_304(uint64_t size)
{
    /* libmicrohttpd writes a Content-Length into every 304, from the response's size, and
     * can leave it out only by closing the connection: the size is the 200's */
    return MHD_create_response_from_callback(size, 64, no_body, NULL, NULL);
}

struct MHD_Connection *mhd_compat_tls_connection(gnutls_session_t session)
{
    /* 0.9.75 to 1.0.1: daemon.c, new_connection_process_ (gnutls_session_set_ptr) */
    return mhd_compat_on(MHD_TRICK_TLS_SESSION) ? gnutls_session_get_ptr(session) : NULL;
}

int mhd_compat_tls_cert(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
                        const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length, gnutls_pcert_st **pcert,
                        unsigned int *pcert_length, gnutls_privkey_t *privkey)
{
    (void)req_ca_dn, (void)nreqs, (void)pk_algos, (void)pk_algos_length;
    struct MHD_Connection *mc = mhd_compat_tls_connection(session);
    if (!mhd_compat_on(MHD_TRICK_TLS_SESSION))
        return tls_thread_cert(pcert, pcert_length, privkey);
    struct conn *c = mc ? conn_of(mc) : NULL;
    return tls_creds_cert(c ? c->creds : NULL, pcert, pcert_length, privkey);
}

/* GnuTLS hook after the client's Finished has been read: acknowledge it at once. A client
 * without TCP_NODELAY writes its Finished and then its first request, which Nagle's
 * algorithm holds until the Finished is acknowledged; OpenSSL (nginx) sends its session
 * tickets after the client's Finished, and they carry the ACK, but GnuTLS 3.7 sends them
 * in its first flight, before, so the server had nothing to send and the kernel delayed
 * the ACK (about 40 ms on the first request of every TLS 1.3 connection). TCP_QUICKACK
 * set while an ACK is pending sends it now (tcp_sock_set_quickack). */
static int finished_hook(gnutls_session_t session, unsigned int htype, unsigned when, unsigned int incoming,
                         const gnutls_datum_t *msg)
{
    (void)htype, (void)when, (void)msg;
    /* the session's transport is the socket: 0.9.75 to 1.0.1, daemon.c
     * new_connection_prepare_ (gnutls_transport_set_int) */
    int fd = incoming ? gnutls_transport_get_int(session) : -1;
    if (fd >= 0) {
        int one = 1;
        mark_seen(MHD_TRICK_TLS_START);
        (void)mhd_compat_kernel_setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one); /* a hint */
    }
    return 0;
}

int mhd_compat_tls_started(struct MHD_Connection *conn, struct tls_listener *t)
{
    /* 0.9.75 to 1.0.1: gnutls_init in new_connection_prepare_, NOTIFY_STARTED at the end of
     * new_connection_process_, the first handshake byte read after it */
    if (!mhd_compat_on(MHD_TRICK_TLS_START))
        return 0;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    if (!ci || !ci->tls_session)
        return 0;
    tls_session_tickets(t, ci->tls_session);
    gnutls_handshake_set_hook_function(ci->tls_session, GNUTLS_HANDSHAKE_FINISHED, GNUTLS_HOOK_POST, finished_hook);
    return 1;
}

gnutls_session_t mhd_compat_upgraded_session(struct MHD_Connection *conn)
{
    /* 0.9.75: process_urh calls gnutls_record_send only with what it read from the
     * socketpair (out_buffer_used > 0), and gnutls_record_recv on the worker: with nothing
     * written to the socketpair, the thread that writes is the session's only sender */
    if (!mhd_compat_on(MHD_TRICK_TLS_WRITE))
        return NULL;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
    return ci ? ci->tls_session : NULL;
}

/* libmicrohttpd 0.9.75's struct MHD_UpgradeResponseHandle (internal.h, HTTPS_SUPPORT and
 * EPOLL_SUPPORT, as Debian builds it), up to the fields debitd reads (and in_buffer_size,
 * which it writes) */
struct urh_0975 {
    struct MHD_Connection *connection;
    void *next, *prev, *next_e, *prev_e;
    bool in_eready_list;
    char *in_buffer, *out_buffer;
    size_t in_buffer_size, out_buffer_size, in_buffer_used, out_buffer_used;
    struct {
        void *urh;
        int socket;
        int celi;
    } app, mhd;
    char e_buf[8]; /* RESERVE_EBUF_SIZE */
};

int mhd_compat_relay_recv_off(struct MHD_Connection *conn, struct MHD_UpgradeResponseHandle *urh, int sock)
{
    /* 0.9.75: MHD_response_execute_upgrade_ (response.c) hands the relay
     * MHD_pool_get_free(pool), which is 0 there (build_header_response took the whole pool
     * for the 101's write buffer, connection_maximize_write_buffer; 0.9.77 gives it back), so
     * its 8-byte e_buf, split in two; then it calls the upgrade handler on the worker, before
     * process_urh first runs there. process_urh receives from TLS only while
     * in_buffer_used < in_buffer_size, and ends the forwarding when both sizes are 0 (the
     * out size becomes 0 at MHD_upgrade_action(CLOSE)). Each field is checked first, so
     * that a handle of another shape is left alone. */
    static _Atomic int warned;
    struct urh_0975 *u = (struct urh_0975 *)urh;
    if (!mhd_compat_on(MHD_TRICK_RELAY_RECV) || !mhd_compat_on(MHD_TRICK_TLS_WRITE))
        return 0;
    if (u->connection != conn || u->app.urh != u || u->mhd.urh != u || u->app.socket != sock || u->mhd.socket < 0 ||
        u->mhd.socket == sock || u->in_buffer != u->e_buf || u->out_buffer != u->e_buf + 4 ||
        u->in_buffer_size != 4 || u->out_buffer_size != 4 || u->in_buffer_used || u->out_buffer_used) {
        if (!atomic_exchange(&warned, 1))
            log_warn("libmicrohttpd %s: an upgrade's relay handle is not as expected: the relay receives (wss "
                     "uploads at its rate)", MHD_get_version());
        return 0;
    }
    u->in_buffer_size = 0;
    return 1;
}
