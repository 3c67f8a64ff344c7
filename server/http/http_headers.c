/* http_headers: what debitd tells clients about how it serves: the headers of every file
 * response (one function adds them all), and the interface that serves an address. Values are
 * read back from the live socket and interface (once per connection: http_conn.c), never
 * copied from the configuration. */
#include "http_headers.h"
#include "http_conn.h"
#include "http_reply.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "offload.h"
#include "sys.h"
#include "tcp_info.h"
#include "tcp_profile.h"
#include "tls.h"
#include "wire.h"

void http_address_interface(const struct sockaddr_storage *ss, char *ifname, size_t len)
{
    ifname[0] = 0;
    struct in_addr v4 = {0};
    int is_v4 = ss->ss_family == AF_INET;
    const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)ss;
    if (ss->ss_family == AF_INET6) {
        if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) { /* IPv4 client on a dual-stack listener */
            memcpy(&v4, &a6->sin6_addr.s6_addr[12], 4);
            is_v4 = 1;
        } else if (IN6_IS_ADDR_UNSPECIFIED(&a6->sin6_addr)) {
            return;
        }
    } else if (is_v4) {
        v4 = ((const struct sockaddr_in *)ss)->sin_addr;
        if (v4.s_addr == htonl(INADDR_ANY))
            return;
    } else {
        return;
    }
    struct ifaddrs *ifa = NULL;
    if (getifaddrs(&ifa) < 0)
        return;
    for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
        if (!i->ifa_addr)
            continue;
        int match = 0;
        if (is_v4 && i->ifa_addr->sa_family == AF_INET)
            match = ((const struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == v4.s_addr;
        else if (!is_v4 && i->ifa_addr->sa_family == AF_INET6)
            match = memcmp(&((const struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, &a6->sin6_addr, 16) == 0;
        if (match) {
            snprintf(ifname, len, "%s", i->ifa_name);
            break;
        }
    }
    freeifaddrs(ifa);
}

static void local_interface(int sock, char *ifname, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof ss;
    ifname[0] = 0;
    if (sock >= 0 && getsockname(sock, (struct sockaddr *)&ss, &sl) == 0)
        http_address_interface(&ss, ifname, len);
}

/* "tso=off gso=off gro=on" of the interface that serves: the configured offload interface,
 * else the one holding the connection's local address. "" when unreadable. */
static void offload_lookup(const struct server *s, int sock, char *buf, size_t len, char *ifname, size_t iflen)
{
    struct offload_state st;
    char err[256];
    buf[0] = 0;
    if (s->snap->cfg->offload.interface)
        snprintf(ifname, iflen, "%s", s->snap->cfg->offload.interface);
    else
        local_interface(sock, ifname, iflen);
    if (!ifname[0] || offload_get(ifname, &st, err, sizeof err) != OFFLOAD_OK)
        return;
    offload_format(&st, buf, len);
}

/* offload_lookup, remembered per worker thread for OFFLOAD_TTL_S per local address: the
 * lookup is a netlink dump of every link and address (getifaddrs) plus an ethtool query,
 * and done for every response it cut small-file requests/s by 2-3x (docs/server.md, "Many
 * clients"). The header is then at most that old. */
#define OFFLOAD_TTL_S 0.1
/* The local address of SOCK with port 0 (the port does not matter, the address decides the
 * interface): 0, or -1 if unreadable. */
static int local_address(int sock, struct sockaddr_storage *ss)
{
    socklen_t sl = sizeof *ss;
    memset(ss, 0, sizeof *ss);
    if (sock < 0 || getsockname(sock, (struct sockaddr *)ss, &sl) < 0)
        return -1;
    if (ss->ss_family == AF_INET)
        ((struct sockaddr_in *)ss)->sin_port = 0;
    else if (ss->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)ss)->sin6_port = 0;
    return 0;
}

/* LOCAL: the connection's local address (local_address), NULL if unreadable */
static void offload_header(const struct server *s, int sock, const struct sockaddr_storage *local, char *buf,
                           size_t len, char *ifname, size_t iflen)
{
    static __thread struct {
        const struct server *srv;
        struct sockaddr_storage local;
        double at;
        char hdr[256], ifname[IF_NAMESIZE + 1];
    } c;
    if (!local) {
        offload_lookup(s, sock, buf, len, ifname, iflen);
        return;
    }
    const struct sockaddr_storage ss = *local;
    double now = sys_mono_s();
    if (c.srv != s || memcmp(&c.local, &ss, sizeof ss) != 0 || now - c.at >= OFFLOAD_TTL_S) {
        offload_lookup(s, sock, c.hdr, sizeof c.hdr, c.ifname, sizeof c.ifname);
        c.srv = s;
        c.local = ss;
        c.at = now;
    }
    /* copied, not snprintf'ed: for every request, formatting was 3 % of a small one's CPU */
    sys_strcpy(buf, len, c.hdr);
    sys_strcpy(ifname, iflen, c.ifname);
}

void http_file_head(struct listener *l, struct MHD_Connection *conn, const char *etag, struct file_head *h)
{
    struct server *s = l->srv;
    h->etag = etag;
    h->last_modified = s->last_modified;
    h->kernel = s->kernel;
    h->details = s->snap->cfg->details;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    int sock = ci ? ci->connect_fd : -1;
    struct http_conn_facts mine = {0}, *f = http_conn_facts(conn);
    if (!f)
        f = &mine;
    if (!f->filled) { /* the connection's first response (or no table): read them */
        f->filled = 1;
        f->have_local = local_address(sock, &f->local) == 0;
        /* the profile really in force on the socket (docs/server.md, "TCP profiles") */
        struct tcp_profile p;
        char err[160];
        if (sock < 0 || tcp_profile_read(sock, &l->cfg->tcp, &p, err, sizeof err) < 0)
            tcp_profile_defaults(&p); /* what could not be read is not claimed */
        tcp_profile_format(&p, f->tcp, sizeof f->tcp);
    }
    _Static_assert(sizeof h->tcp == sizeof f->tcp, "X-Debit-Tcp is copied whole");
    memcpy(h->tcp, f->tcp, sizeof h->tcp);
    offload_header(s, sock, f->have_local ? &f->local : NULL, h->offload, sizeof h->offload, h->ifname,
                   sizeof h->ifname);
    cpu_budget_header(s->cpu, s->snap->cfg->details, h->cpu, sizeof h->cpu);
    tls_conn_describe(conn, h->tls, sizeof h->tls);
}

void http_file_head_add(const struct file_head *h, struct MHD_Response *resp, int not_modified)
{
    http_headers_common(resp);
    /* a 304 says nothing about a body it does not carry (RFC 9110 15.4.5; nginx drops
     * these two as well) */
    if (!not_modified)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store, no-transform");
    if (!not_modified)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ACCEPT_RANGES, "bytes");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, h->etag);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_LAST_MODIFIED, h->last_modified);
    http_file_head_add_debit(h, resp);
}

void http_file_head_add_debit(const struct file_head *h, struct MHD_Response *resp)
{
    if (h->offload[0]) {
        MHD_add_response_header(resp, WIRE_HDR_OFFLOAD, h->offload);
        if (h->details)
            MHD_add_response_header(resp, WIRE_HDR_INTERFACE, h->ifname);
    }
    MHD_add_response_header(resp, WIRE_HDR_TCP, h->tcp);
    MHD_add_response_header(resp, WIRE_HDR_CPU, h->cpu);
    if (h->details)
        MHD_add_response_header(resp, WIRE_HDR_KERNEL, h->kernel);
    MHD_add_response_header(resp, WIRE_HDR_TLS, h->tls);
}

/* Appends S and a newline (which no header value holds) at *P, before END; -1 if no room. */
static int sig_put(char **p, const char *end, const char *str)
{
    size_t n = strlen(str);
    if ((size_t)(end - *p) < n + 1)
        return -1;
    memcpy(*p, str, n);
    (*p)[n] = '\n';
    *p += n + 1;
    return 0;
}

size_t http_file_head_sig(const struct file_head *h, const char *extra, char *buf, size_t len)
{
    char *p = buf, *end = buf + len;
    const char *parts[] = {h->etag, h->last_modified, h->offload, h->details ? h->ifname : "",
                           h->tcp, h->cpu, h->details ? h->kernel : "", h->tls, extra};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (sig_put(&p, end, parts[i]) < 0)
            return 0;
    return (size_t)(p - buf);
}
