/* http_conn: what debitd remembers per connection, so that a kept-alive connection's
 * responses do not read again what cannot have changed, and the sender's byte counts that
 * go with it. */
#include "http_internal.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys.h"
#include "tcp_info.h"

uint64_t http_tcp_bytes_acked(int sock)
{
    struct tcp_info_sample ti;
    char err[128];
    if (sock < 0 || tcp_info_read(sock, &ti, err, sizeof err) < 0)
        return 0;
    return ti.bytes_acked;
}

/* One table per worker thread (a connection stays with one libmicrohttpd worker), indexed
 * by descriptor, each entry keyed by its connection; http_conn_closed forgets an entry when
 * its connection closes. Reading the facts for every response was 3 syscalls (getsockopt
 * TCP_CONGESTION and SO_MAX_PACING_RATE, getsockname), about 9 % of debitd's CPU per small
 * request, and the start's TCP_INFO another 4 % (docs/performance.md). */
struct conn_entry {
    const struct MHD_Connection *conn; /* NULL: empty */
    struct http_conn_facts facts;
    struct conn_reuse *reuse; /* the last small file response (http_conn_reuse_get), or NULL */
};

/* A response kept for the connection's next request, with one reference of its own. */
struct conn_reuse {
    struct MHD_Response *resp;
    char *id_at; /* libmicrohttpd's copy of its X-Debit-Transfer value, NULL when it has none */
    size_t sig_len, cap;
    char sig[]; /* http_file_head_sig and the body, cap bytes */
};

static void reuse_drop(struct conn_entry *e)
{
    if (e->reuse) {
        if (e->reuse->resp)
            MHD_destroy_response(e->reuse->resp);
        e->reuse->resp = NULL;
        e->reuse->sig_len = 0;
    }
}
#define CONN_FACTS_MAX 65536 /* descriptors beyond this are read every time */
static pthread_key_t facts_key;
static pthread_once_t facts_once = PTHREAD_ONCE_INIT;
struct facts_table {
    size_t n;
    struct conn_entry *e;
};
static __thread struct facts_table *facts;

static void facts_free(void *p)
{
    struct facts_table *t = p;
    if (t) {
        for (size_t i = 0; i < t->n; i++) {
            reuse_drop(&t->e[i]);
            free(t->e[i].reuse);
        }
        free(t->e);
    }
    free(t);
}

static void facts_init(void)
{
    if (pthread_key_create(&facts_key, facts_free) != 0)
        facts_key = (pthread_key_t)-1;
}

/* The entry of SOCK in this thread's table (grown as needed), or NULL (no memory). */
static struct conn_entry *facts_slot(int sock)
{
    if (sock < 0 || sock >= CONN_FACTS_MAX)
        return NULL;
    pthread_once(&facts_once, facts_init);
    if (facts_key == (pthread_key_t)-1)
        return NULL;
    if (!facts) {
        facts = calloc(1, sizeof *facts);
        if (!facts || pthread_setspecific(facts_key, facts) != 0) {
            free(facts);
            facts = NULL;
            return NULL;
        }
    }
    if ((size_t)sock >= facts->n) {
        size_t n = facts->n ? facts->n : 64;
        while (n <= (size_t)sock)
            n *= 2;
        struct conn_entry *e = realloc(facts->e, n * sizeof *e);
        if (!e)
            return NULL;
        memset(e + facts->n, 0, (n - facts->n) * sizeof *e);
        facts->e = e;
        facts->n = n;
    }
    return &facts->e[sock];
}

struct http_conn_facts *http_conn_facts(struct MHD_Connection *conn, int sock)
{
    struct conn_entry *e = facts_slot(sock);
    if (!e)
        return NULL;
    if (e->conn != conn) { /* a new connection on this descriptor: nothing known yet */
        e->conn = conn;
        memset(&e->facts, 0, sizeof e->facts);
        reuse_drop(e);
    }
    return &e->facts;
}

/* The client's address and port, and "ADDR:PORT" or "[ADDR]:PORT" ("" when unknown). */
static void client_name(struct MHD_Connection *conn, struct http_client *c)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    c->addr[0] = c->remote[0] = 0;
    c->port = 0;
    if (!ci || !ci->client_addr)
        return;
    if (ci->client_addr->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)ci->client_addr;
        inet_ntop(AF_INET, &a->sin_addr, c->addr, sizeof c->addr);
        c->port = ntohs(a->sin_port);
        snprintf(c->remote, sizeof c->remote, "%s:%u", c->addr, c->port);
    } else if (ci->client_addr->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ci->client_addr;
        inet_ntop(AF_INET6, &a->sin6_addr, c->addr, sizeof c->addr);
        c->port = ntohs(a->sin6_port);
        snprintf(c->remote, sizeof c->remote, "[%s]:%u", c->addr, c->port);
    }
}

const struct http_client *http_conn_client(struct MHD_Connection *conn, int sock, struct http_client *scratch)
{
    struct http_conn_facts *f = http_conn_facts(conn, sock);
    struct http_client *c = f ? &f->client : scratch;
    if (!f || !f->client_read) {
        client_name(conn, c);
        c->have_peer = http_peer(conn, &c->peer) == 0;
        if (f)
            f->client_read = 1;
    }
    return c;
}

void http_conn_closed(int sock)
{
    if (facts && sock >= 0 && (size_t)sock < facts->n) {
        facts->e[sock].conn = NULL;
        reuse_drop(&facts->e[sock]); /* our reference on its kept response */
    }
}

/* This thread's entry of CONN on SOCK, or NULL (never creates one) */
static struct conn_entry *entry_of(const struct MHD_Connection *conn, int sock)
{
    if (!facts || sock < 0 || (size_t)sock >= facts->n || facts->e[sock].conn != conn)
        return NULL;
    return &facts->e[sock];
}

struct MHD_Response *http_conn_reuse_get(struct MHD_Connection *conn, int sock, const char *sig, size_t len,
                                         char **id_at)
{
    struct conn_entry *e = entry_of(conn, sock);
    if (!e || !e->reuse || !e->reuse->resp)
        return NULL;
    struct conn_reuse *u = e->reuse;
    if (u->sig_len != len || memcmp(u->sig, sig, len) != 0) {
        reuse_drop(e); /* something changed (a reload, the offload state, another file) */
        return NULL;
    }
    *id_at = u->id_at;
    return u->resp;
}

int http_conn_reuse_put(struct MHD_Connection *conn, int sock, struct MHD_Response *resp, const char *sig,
                        size_t len, char *id_at)
{
    struct conn_entry *e = entry_of(conn, sock);
    if (!e)
        return -1;
    struct conn_reuse *u = e->reuse;
    if (!u || u->resp != resp) { /* a new response: the old one's reference goes */
        reuse_drop(e);
        if (!u || u->cap < len) {
            struct conn_reuse *n = realloc(u, sizeof *n + len);
            if (!n)
                return -1;
            e->reuse = u = n;
            u->cap = len;
        }
        u->resp = resp;
    }
    memcpy(u->sig, sig, len);
    u->sig_len = len;
    u->id_at = id_at;
    return 0;
}

/* This thread's facts of CONN on SOCK, or NULL when it has none (never creates them) */
static struct http_conn_facts *facts_of(const struct MHD_Connection *conn, int sock)
{
    struct conn_entry *e = entry_of(conn, sock);
    return e ? &e->facts : NULL;
}

int http_conn_written(struct MHD_Connection *conn, int sock, uint64_t *written)
{
    struct http_conn_facts *f = facts_of(conn, sock);
    if (!f || !f->written_known)
        return -1;
    *written = f->written;
    return 0;
}

void http_conn_note_end(struct MHD_Connection *conn, int sock, const struct tcp_info_sample *ti)
{
    struct http_conn_facts *f = facts_of(conn, sock);
    if (!f)
        return;
    /* every byte written so far is acknowledged, in flight or not yet sent: the unique
     * bytes sent (all sent minus resent) plus the unsent ones */
    f->written_known = ti && (ti->have & TCP_INFO_HAVE_SENT) && (ti->have & TCP_INFO_HAVE_MIN_RTT) &&
                       ti->bytes_sent >= ti->bytes_retrans;
    f->written = f->written_known ? ti->bytes_sent - ti->bytes_retrans + ti->notsent_bytes : 0;
}
