/* ifstat: see ifstat.h. */
#include "ifstat.h"

#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sys.h"

/* The thread's rtnetlink socket, closed when the thread ends (libmicrohttpd's workers end
 * with their daemon at a reload). */
static pthread_key_t nl_key;
static pthread_once_t nl_once = PTHREAD_ONCE_INIT;
static __thread struct mnl_socket *nl_sock;
static __thread unsigned nl_seq;

static void nl_close(void *p)
{
    mnl_socket_close(p);
}

static void nl_key_make(void)
{
    pthread_key_create(&nl_key, nl_close);
}

static struct mnl_socket *thread_socket(void)
{
    if (nl_sock)
        return nl_sock;
    pthread_once(&nl_once, nl_key_make);
    struct mnl_socket *nl = mnl_socket_open2(NETLINK_ROUTE, SOCK_CLOEXEC);
    if (!nl)
        return NULL;
    if (mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0) {
        mnl_socket_close(nl);
        return NULL;
    }
    pthread_setspecific(nl_key, nl);
    return nl_sock = nl;
}

/* Send REQ and run CB on its answer (a single message: no dump). Never blocks: the kernel
 * answers an rtnetlink request within the sendmsg. 0, or -1. */
static int nl_ask(struct nlmsghdr *req, mnl_cb_t cb, void *data)
{
    static __thread char buf[16384]; /* a link message with every attribute fits */
    struct mnl_socket *nl = thread_socket();
    if (!nl)
        return -1;
    req->nlmsg_flags = NLM_F_REQUEST;
    req->nlmsg_seq = ++nl_seq;
    if (mnl_socket_sendto(nl, req, req->nlmsg_len) < 0)
        return -1;
    for (;;) {
        ssize_t n = recv(mnl_socket_get_fd(nl), buf, sizeof buf, MSG_DONTWAIT);
        if (n <= 0)
            return -1;
        int r = mnl_cb_run(buf, (size_t)n, nl_seq, mnl_socket_get_portid(nl), cb, data);
        if (r == MNL_CB_ERROR && errno == EPROTO)
            continue; /* an older request's late answer: skip it */
        return r == MNL_CB_ERROR ? -1 : 0;
    }
}

static int route_attr(const struct nlattr *a, void *data)
{
    if (mnl_attr_get_type(a) == RTA_OIF && mnl_attr_validate(a, MNL_TYPE_U32) >= 0)
        *(int *)data = (int)mnl_attr_get_u32(a);
    return MNL_CB_OK;
}

static int route_msg(const struct nlmsghdr *nlh, void *data)
{
    mnl_attr_parse(nlh, sizeof(struct rtmsg), route_attr, data);
    return MNL_CB_STOP;
}

/* The output interface of the route to ADDR (4 or 16 bytes of FAMILY): 0 if none. */
static int route_oif(int family, const void *addr)
{
    char buf[MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct rtmsg)) + 64];
    struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
    nlh->nlmsg_type = RTM_GETROUTE;
    struct rtmsg *rtm = mnl_nlmsg_put_extra_header(nlh, sizeof *rtm);
    rtm->rtm_family = (unsigned char)family;
    rtm->rtm_dst_len = family == AF_INET ? 32 : 128;
    mnl_attr_put(nlh, RTA_DST, family == AF_INET ? 4 : 16, addr);
    int oif = 0;
    return nl_ask(nlh, route_msg, &oif) == 0 ? oif : 0;
}

static int name_attr(const struct nlattr *a, void *data)
{
    if (mnl_attr_get_type(a) == IFLA_IFNAME && mnl_attr_validate(a, MNL_TYPE_NUL_STRING) >= 0)
        snprintf(data, IF_NAMESIZE, "%s", mnl_attr_get_str(a));
    return MNL_CB_OK;
}

static int name_msg(const struct nlmsghdr *nlh, void *data)
{
    mnl_attr_parse(nlh, sizeof(struct ifinfomsg), name_attr, data);
    return MNL_CB_STOP;
}

/* IFINDEX's name into NAME (IF_NAMESIZE bytes): 0, or -1. A whole link message (about
 * 1.5 KB of attributes, 10 us here): only when a route is looked up, never per transfer. */
static int link_name(int ifindex, char *name)
{
    char buf[MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct ifinfomsg)) + 16];
    struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
    nlh->nlmsg_type = RTM_GETLINK;
    struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof *ifi);
    ifi->ifi_family = AF_UNSPEC;
    ifi->ifi_index = ifindex;
    name[0] = 0;
    return nl_ask(nlh, name_msg, name) == 0 && name[0] ? 0 : -1;
}

static int stats_attr(const struct nlattr *a, void *data)
{
    struct ifstat_point *p = data;
    if (mnl_attr_get_type(a) == IFLA_STATS_LINK_64 && mnl_attr_get_payload_len(a) >= sizeof(struct rtnl_link_stats64)) {
        struct rtnl_link_stats64 st; /* the payload is 4-byte aligned only */
        memcpy(&st, mnl_attr_get_payload(a), sizeof st);
        p->tx_bytes = st.tx_bytes;
        p->tx_packets = st.tx_packets;
        p->ifindex = -1; /* seen: ifstat_read sets the index */
    }
    return MNL_CB_OK;
}

static int stats_msg(const struct nlmsghdr *nlh, void *data)
{
    mnl_attr_parse(nlh, sizeof(struct if_stats_msg), stats_attr, data);
    return MNL_CB_STOP;
}

/* IFINDEX's counters by rtnetlink into P: 0, or -1. */
static int stats_netlink(int ifindex, struct ifstat_point *p)
{
    /* RTM_GETSTATS for the 64-bit link counters only: a message of about 200 bytes, where
     * RTM_GETLINK builds every attribute of the link */
    char buf[MNL_NLMSG_HDRLEN + MNL_ALIGN(sizeof(struct if_stats_msg))];
    struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
    nlh->nlmsg_type = RTM_GETSTATS;
    struct if_stats_msg *ifsm = mnl_nlmsg_put_extra_header(nlh, sizeof *ifsm);
    ifsm->family = AF_UNSPEC;
    ifsm->ifindex = (uint32_t)ifindex;
    ifsm->filter_mask = IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64);
    p->ifindex = 0;
    if (nl_ask(nlh, stats_msg, p) < 0 || p->ifindex != -1)
        return -1;
    p->ifindex = ifindex;
    return 0;
}

/* The thread's open sysfs counters, per interface: one pread each (1.4 us here) where a
 * netlink request and its answer took 2.9 us. Used only when /sys/class/net/NAME/ifindex
 * is the interface's index: sysfs shows the network namespace it was mounted in, which
 * is not debitd's when it was started by `unshare -n` without a new /sys (then: netlink). */
#define IFSTAT_FILES 4
struct ifstat_files {
    int ifindex;          /* 0: free slot */
    int bytes, packets;   /* -1: sysfs is not this interface's, ask netlink */
};

static int sysfs_open(const char *name, const char *leaf)
{
    char path[96];
    snprintf(path, sizeof path, "/sys/class/net/%s/%s", name, leaf);
    return open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
}

static int pread_u64(int fd, uint64_t *v)
{
    char buf[32];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(buf, &end, 10);
    if (errno || end == buf)
        return -1;
    *v = x;
    return 0;
}

/* F for interface IFINDEX named NAME: its counter files, or -1 in both when sysfs shows
 * another namespace (or none). */
static void files_open(struct ifstat_files *f, int ifindex, const char *name)
{
    f->ifindex = ifindex;
    f->bytes = f->packets = -1;
    uint64_t idx = 0;
    int fd = name[0] ? sysfs_open(name, "ifindex") : -1;
    int same = fd >= 0 && pread_u64(fd, &idx) == 0 && idx == (uint64_t)ifindex;
    if (fd >= 0)
        close(fd);
    if (!same)
        return;
    f->bytes = sysfs_open(name, "statistics/tx_bytes");
    f->packets = sysfs_open(name, "statistics/tx_packets");
    if (f->bytes < 0 || f->packets < 0) {
        if (f->bytes >= 0)
            close(f->bytes);
        if (f->packets >= 0)
            close(f->packets);
        f->bytes = f->packets = -1;
    }
}

static void files_close(struct ifstat_files *f)
{
    if (f->bytes >= 0)
        close(f->bytes);
    if (f->packets >= 0)
        close(f->packets);
    f->ifindex = 0;
}

/* The thread's last reading, reused by a start within IFSTAT_REUSE_S (ifstat_begin). */
static __thread struct ifstat_point last;
static __thread double last_at;

int ifstat_read(struct ifstat_point *p)
{
    static __thread struct ifstat_files files[IFSTAT_FILES];
    static __thread unsigned next;
    int ifindex = p->ifindex;
    p->tx_bytes = p->tx_packets = 0;
    if (ifindex <= 0) {
        p->ifindex = 0;
        return -1;
    }
    struct ifstat_files *f = NULL;
    for (unsigned i = 0; i < IFSTAT_FILES && !f; i++)
        if (files[i].ifindex == ifindex)
            f = &files[i];
    if (!f) {
        f = &files[next];
        next = (next + 1) % IFSTAT_FILES;
        if (f->ifindex)
            files_close(f);
        files_open(f, ifindex, p->name);
    }
    int ok;
    if (f->bytes >= 0) {
        ok = pread_u64(f->bytes, &p->tx_bytes) == 0 && pread_u64(f->packets, &p->tx_packets) == 0;
        if (!ok) /* the interface is gone: open again next time */
            files_close(f);
    } else {
        ok = stats_netlink(ifindex, p) == 0;
    }
    p->ifindex = ok ? ifindex : 0;
    if (!ok)
        return -1;
    last = *p;
    last_at = sys_mono_s();
    return 0;
}

/* The thread's recent route lookups, by peer address (port 0). */
#define ROUTE_CACHE 4
struct route_memo {
    struct sockaddr_storage peer;
    double at;
    int ifindex;
    char name[IF_NAMESIZE];
};

int ifstat_begin(const struct sockaddr *peer, struct ifstat_point *p)
{
    static __thread struct route_memo memo[ROUTE_CACHE];
    static __thread unsigned next;
    memset(p, 0, sizeof *p);
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    if (!peer || (peer->sa_family != AF_INET && peer->sa_family != AF_INET6))
        return -1;
    memcpy(&ss, peer, peer->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
    int family = ss.ss_family;
    const void *addr;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&ss;
    if (family == AF_INET) {
        ((struct sockaddr_in *)&ss)->sin_port = 0;
        addr = &((struct sockaddr_in *)&ss)->sin_addr;
    } else if (family == AF_INET6) {
        a6->sin6_port = 0;
        a6->sin6_flowinfo = 0;
        addr = &a6->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) { /* an IPv4 client of a dual-stack listener */
            family = AF_INET;
            addr = &a6->sin6_addr.s6_addr[12];
        }
    } else {
        return -1;
    }
    double now = sys_mono_s();
    const struct route_memo *hit = NULL;
    for (unsigned i = 0; i < ROUTE_CACHE && !hit; i++)
        if (memo[i].ifindex && now - memo[i].at < IFSTAT_ROUTE_TTL_S && memcmp(&memo[i].peer, &ss, sizeof ss) == 0)
            hit = &memo[i];
    if (!hit) {
        struct route_memo m = {.peer = ss, .at = now, .ifindex = route_oif(family, addr)};
        if (!m.ifindex || link_name(m.ifindex, m.name) < 0)
            return -1;
        memo[next] = m;
        hit = &memo[next];
        next = (next + 1) % ROUTE_CACHE;
    }
    memcpy(p->name, hit->name, sizeof p->name);
    p->ifindex = hit->ifindex;
    if (last.ifindex == hit->ifindex && now - last_at < IFSTAT_REUSE_S) {
        p->tx_bytes = last.tx_bytes; /* the end of this thread's previous transfer, just now */
        p->tx_packets = last.tx_packets;
        return 0;
    }
    return ifstat_read(p);
}
