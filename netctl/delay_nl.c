#include "delay_nl.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define NLA_ALIGNED(len) (((len) + 3u) & ~3u)

static int open_sock(void)
{
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) return -errno;
    struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

static uint32_t next_seq(void)
{
    /* Signal handlers may race the main flow here; any value is fine, it only has to
     * match the reply on the same socket. */
    static volatile uint32_t seq = 1;
    return seq++ + (uint32_t)getpid() * 7919u;
}

/* Wait up to 2 s for a reply and read it into buf. Returns the bytes read, 0 when
 * interrupted (read again), or -errno (-ETIMEDOUT when nothing came). */
static ssize_t recv_reply(int fd, void *buf, size_t len)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    int rc;
    while ((rc = poll(&p, 1, 2000)) < 0 && errno == EINTR)
        ;
    if (rc <= 0) return -ETIMEDOUT;
    ssize_t n = recv(fd, buf, len, 0);
    if (n < 0) return errno == EINTR ? 0 : -errno;
    return n;
}

int delay_nl_exec(const struct delay_nlmsg *msg)
{
    if (msg->len < sizeof(struct nlmsghdr)) return -EINVAL;
    int fd = open_sock();
    if (fd < 0) return fd;
    /* Patch the sequence number into a stack copy: msg may be shared with a handler. */
    _Alignas(8) unsigned char buf[DELAY_NL_MSG_MAX];
    memcpy(buf, msg->buf, msg->len);
    struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
    nlh->nlmsg_seq = next_seq();
    nlh->nlmsg_flags |= NLM_F_ACK;
    struct sockaddr_nl to = { .nl_family = AF_NETLINK };
    int ret = -ETIMEDOUT;
    if (sendto(fd, buf, msg->len, 0, (struct sockaddr *)&to, sizeof to) < 0) {
        ret = -errno;
        goto out;
    }
    for (int tries = 0; tries < 8; tries++) {
        _Alignas(8) unsigned char rbuf[8192];
        ssize_t n = recv_reply(fd, rbuf, sizeof rbuf);
        if (n < 0) {
            ret = (int)n;
            break;
        }
        for (struct nlmsghdr *r = (struct nlmsghdr *)rbuf; NLMSG_OK(r, (size_t)n); r = NLMSG_NEXT(r, n)) {
            if (r->nlmsg_seq != nlh->nlmsg_seq || r->nlmsg_type != NLMSG_ERROR) continue;
            const struct nlmsgerr *e = NLMSG_DATA(r);
            ret = e->error; /* 0 or -errno */
            goto out;
        }
    }
out:
    close(fd);
    return ret;
}

static struct nlmsghdr *put_hdr(struct delay_nlmsg *m, uint16_t type, uint16_t flags, size_t payload)
{
    memset(m->buf, 0, sizeof m->buf);
    struct nlmsghdr *nlh = (struct nlmsghdr *)m->buf;
    nlh->nlmsg_len = NLMSG_LENGTH(payload);
    nlh->nlmsg_type = type;
    nlh->nlmsg_flags = NLM_F_REQUEST | flags;
    m->len = nlh->nlmsg_len;
    return nlh;
}

static int put_attr(struct delay_nlmsg *m, uint16_t type, const void *data, size_t len)
{
    struct nlmsghdr *nlh = (struct nlmsghdr *)m->buf;
    size_t off = NLMSG_ALIGN(nlh->nlmsg_len);
    size_t alen = sizeof(struct nlattr) + len;
    if (off + NLA_ALIGNED(alen) > sizeof m->buf) return -1;
    struct nlattr *a = (struct nlattr *)(m->buf + off);
    a->nla_type = type;
    a->nla_len = (uint16_t)alen;
    if (len) memcpy(a + 1, data, len);
    nlh->nlmsg_len = (uint32_t)(off + NLA_ALIGNED(alen));
    m->len = nlh->nlmsg_len;
    return 0;
}

static struct tcmsg *put_tcmsg(struct delay_nlmsg *m, uint16_t type, uint16_t flags, int ifindex,
                               uint32_t parent, uint32_t handle)
{
    struct nlmsghdr *nlh = put_hdr(m, type, flags, sizeof(struct tcmsg));
    struct tcmsg *t = NLMSG_DATA(nlh);
    t->tcm_family = AF_UNSPEC;
    t->tcm_ifindex = ifindex;
    t->tcm_parent = parent;
    t->tcm_handle = handle;
    return t;
}

int delay_nl_build_qdisc_del(struct delay_nlmsg *msg, int ifindex, uint32_t parent, uint32_t handle)
{
    put_tcmsg(msg, RTM_DELQDISC, 0, ifindex, parent, handle);
    return 0;
}

int delay_nl_build_link_del(struct delay_nlmsg *msg, int ifindex)
{
    struct nlmsghdr *nlh = put_hdr(msg, RTM_DELLINK, 0, sizeof(struct ifinfomsg));
    struct ifinfomsg *ifi = NLMSG_DATA(nlh);
    ifi->ifi_family = AF_UNSPEC;
    ifi->ifi_index = ifindex;
    return 0;
}

uint32_t delay_nl_us_to_ticks(uint32_t us)
{
    /* The same computation as iproute2's tc_core_init() from /proc/net/psched
     * ("000003e8 00000040 000f4240 3b9aca00" on current kernels: 15.625 ticks per us). */
    double tick_in_usec = 15.625;
    FILE *f = fopen("/proc/net/psched", "r");
    if (f) {
        unsigned t2us, us2t, clock_res, hz;
        if (fscanf(f, "%x %x %x %x", &t2us, &us2t, &clock_res, &hz) == 4 && us2t && clock_res) {
            if (clock_res == 1000000000) t2us = us2t;
            tick_in_usec = (double)t2us / us2t * ((double)clock_res / 1000000.0);
        }
        fclose(f);
    }
    double t = (double)us * tick_in_usec;
    return t > 4294967295.0 ? 4294967295u : (uint32_t)t;
}

int delay_nl_build_netem_add(struct delay_nlmsg *msg, int ifindex, uint32_t handle,
                             uint32_t delay_us, uint32_t limit)
{
    put_tcmsg(msg, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE, ifindex, TC_H_ROOT, handle);
    if (put_attr(msg, TCA_KIND, "netem", 6) < 0) return -1;
    struct tc_netem_qopt q = { .latency = delay_nl_us_to_ticks(delay_us), .limit = limit };
    return put_attr(msg, TCA_OPTIONS, &q, sizeof q);
}

/* Dump request for qdiscs or classes of one interface. */
static int dump(int fd, uint16_t type, int ifindex, uint32_t seq)
{
    struct delay_nlmsg m;
    struct nlmsghdr *nlh = put_hdr(&m, type, NLM_F_DUMP, sizeof(struct tcmsg));
    struct tcmsg *t = NLMSG_DATA(nlh);
    t->tcm_family = AF_UNSPEC;
    t->tcm_ifindex = ifindex;
    nlh->nlmsg_seq = seq;
    struct sockaddr_nl to = { .nl_family = AF_NETLINK };
    if (sendto(fd, m.buf, m.len, 0, (struct sockaddr *)&to, sizeof to) < 0) return -errno;
    return 0;
}

static void copy_root(const struct nlmsghdr *r, struct delay_nl_qdiscs *out, struct delay_nlmsg *restore)
{
    const struct tcmsg *t = NLMSG_DATA(r);
    out->root_handle = t->tcm_handle;
    out->root_custom = t->tcm_handle != 0;
    int len = (int)r->nlmsg_len - (int)NLMSG_LENGTH(sizeof *t);
    const struct rtattr *a = (const struct rtattr *)((const char *)t + NLMSG_ALIGN(sizeof *t));
    if (restore) put_tcmsg(restore, RTM_NEWQDISC, NLM_F_CREATE | NLM_F_REPLACE, t->tcm_ifindex, TC_H_ROOT,
                           t->tcm_handle);
    for (; RTA_OK(a, len); a = RTA_NEXT(a, len)) {
        if (a->rta_type == TCA_KIND) snprintf(out->root_kind, sizeof out->root_kind, "%.*s",
                                              (int)RTA_PAYLOAD(a), (const char *)RTA_DATA(a));
        /* Only what configures the qdisc: statistics would be rejected or ignored. */
        if (restore && (a->rta_type == TCA_KIND || a->rta_type == TCA_OPTIONS || a->rta_type == TCA_STAB))
            if (put_attr(restore, a->rta_type, RTA_DATA(a), RTA_PAYLOAD(a)) < 0) restore->len = 0;
    }
    if (restore && !out->root_custom) restore->len = 0;
}

int delay_nl_inspect(int ifindex, struct delay_nl_qdiscs *out, struct delay_nlmsg *restore)
{
    memset(out, 0, sizeof *out);
    if (restore) restore->len = 0;
    int fd = open_sock();
    if (fd < 0) return fd;
    int ret = 0;
    uint16_t types[2] = { RTM_GETQDISC, RTM_GETTCLASS };
    for (int k = 0; k < 2 && ret == 0; k++) {
        uint32_t seq = next_seq();
        if ((ret = dump(fd, types[k], ifindex, seq)) < 0) break;
        int done = 0;
        for (int rounds = 0; !done && rounds < 1000; rounds++) {
            _Alignas(8) unsigned char rbuf[32768];
            ssize_t n = recv_reply(fd, rbuf, sizeof rbuf);
            if (n < 0) {
                ret = (int)n;
                break;
            }
            for (struct nlmsghdr *r = (struct nlmsghdr *)rbuf; NLMSG_OK(r, (size_t)n); r = NLMSG_NEXT(r, n)) {
                if (r->nlmsg_seq != seq) continue;
                if (r->nlmsg_type == NLMSG_DONE) { done = 1; break; }
                if (r->nlmsg_type == NLMSG_ERROR) {
                    ret = ((const struct nlmsgerr *)NLMSG_DATA(r))->error;
                    done = 1;
                    break;
                }
                const struct tcmsg *t = NLMSG_DATA(r);
                if (t->tcm_ifindex != ifindex) continue;
                if (k == 1) { out->classes++; continue; }
                if (t->tcm_parent == TC_H_ROOT) copy_root(r, out, restore);
                else if (t->tcm_parent == TC_H_INGRESS) out->has_ingress = 1; /* clsact too */
            }
        }
    }
    close(fd);
    return ret;
}
