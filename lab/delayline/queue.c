#include "queue.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "sys.h"

#define BATCH 64         /* messages per recvmmsg */
#define MSG_BUF 2048     /* one metadata-only packet message fits easily */

struct queue {
    struct mnl_socket *nl;
    unsigned portid;
    unsigned queue_num;
    struct hold *hold;
    struct drop drop;
    uint64_t immediate;
    uint64_t stamped;    /* packets timed from the kernel's arrival stamp */
    double packet_cost_ns, byte_cost_ns;
    double owed_ns;      /* cost of the packets read since the last spin */
    uint64_t burned_ns;
    char (*bufs)[MSG_BUF];
    unsigned seq;
};

/* Send a config message and wait for its ACK so that errors (EBUSY, EPERM) surface here. */
static int send_cfg(struct queue *q, struct nlmsghdr *nlh, const char *what, char *err, size_t errlen)
{
    nlh->nlmsg_flags |= NLM_F_ACK;
    nlh->nlmsg_seq = ++q->seq;
    if (mnl_socket_sendto(q->nl, nlh, nlh->nlmsg_len) < 0) {
        err_set(err, errlen, "nfqueue %s: send: %s", what, strerror(errno));
        return -1;
    }
    char buf[8192];
    for (int tries = 0; tries < 16; tries++) {
        ssize_t n = mnl_socket_recvfrom(q->nl, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            err_set(err, errlen, "nfqueue %s: %s", what, strerror(errno));
            return -1;
        }
        int rc = mnl_cb_run(buf, (size_t)n, q->seq, q->portid, NULL, NULL);
        if (rc >= 0) return 0; /* MNL_CB_STOP on the ACK */
        uint64_t qd, ud;
        /* The kernel answers EPERM, not EBUSY, when another socket owns the queue. */
        if (errno == EBUSY || (errno == EPERM && queue_kernel_drops(q->queue_num, &qd, &ud) == 0))
            err_set(err, errlen, "nfqueue %s: queue %u is already used by another program "
                     "(pick another with --queue-num)", what, q->queue_num);
        else if (errno == EPERM)
            err_set(err, errlen, "nfqueue %s: %s (needs CAP_NET_ADMIN)", what, strerror(errno));
        else
            err_set(err, errlen, "nfqueue %s: %s", what, strerror(errno));
        return -1;
    }
    err_set(err, errlen, "nfqueue %s: no acknowledgement", what);
    return -1;
}

struct queue *queue_open(const struct queue_opts *o, char *err, size_t errlen)
{
    struct queue *q = calloc(1, sizeof *q);
    if (!q) { err_set(err, errlen, "out of memory"); return NULL; }
    q->queue_num = o->queue_num;
    q->packet_cost_ns = o->packet_cost_ns;
    q->byte_cost_ns = o->byte_cost_ns;
    drop_init(&q->drop, o->loss_ppm, o->seed);
    q->bufs = calloc(BATCH, MSG_BUF);
    q->hold = hold_new(o->maxlen, o->delay_ns);
    if (!q->bufs || !q->hold) { err_set(err, errlen, "out of memory"); goto fail; }

    q->nl = mnl_socket_open(NETLINK_NETFILTER);
    if (!q->nl) { err_set(err, errlen, "netlink socket: %s", strerror(errno)); goto fail; }
    if (mnl_socket_bind(q->nl, 0, MNL_SOCKET_AUTOPID) < 0) {
        err_set(err, errlen, "netlink bind: %s", strerror(errno));
        goto fail;
    }
    q->portid = mnl_socket_get_portid(q->nl);
    int fd = mnl_socket_get_fd(q->nl);
    int one = 1, size = (int)o->rcvbuf;
    /* Packets wait in the kernel queue, not in the socket; still, a deep buffer absorbs
     * bursts between two wake-ups. FORCE needs CAP_NET_ADMIN, which we have. */
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) < 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
    setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof one);
    /* Netlink itself carries no receive time, but asking for one enables the kernel's
     * packet timestamps (net_enable_timestamp), so that NFQA_TIMESTAMP tells when an
     * incoming packet arrived rather than when we got round to reading it. */
    setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);

    char buf[8192];
    struct nlmsghdr *nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, o->queue_num);
    nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, NFQNL_CFG_CMD_BIND);
    if (send_cfg(q, nlh, "bind", err, errlen) < 0) goto fail;

    nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, o->queue_num);
    /* COPY_META would carry no NFQA_CAP_LEN (the length): copy one byte instead. */
    nfq_nlmsg_cfg_put_params(nlh, NFQNL_COPY_PACKET, 1);
    nfq_nlmsg_cfg_put_qmaxlen(nlh, o->maxlen);
    /* Without F_GSO the kernel segments a GSO/GRO packet before queueing it: costlier at
     * high rates, but a loss rate then means what it means on a wire (and a lossy path
     * is slow anyway). */
    uint32_t flags = (o->loss_ppm || o->segments ? 0 : NFQA_CFG_F_GSO) | (o->fail_open ? NFQA_CFG_F_FAIL_OPEN : 0);
    mnl_attr_put_u32(nlh, NFQA_CFG_FLAGS, htonl(flags));
    mnl_attr_put_u32(nlh, NFQA_CFG_MASK, htonl(NFQA_CFG_F_GSO | NFQA_CFG_F_FAIL_OPEN));
    if (send_cfg(q, nlh, "configure", err, errlen) < 0) goto fail;

    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
        err_set(err, errlen, "fcntl: %s", strerror(errno));
        goto fail;
    }
    return q;
fail:
    queue_close(q);
    return NULL;
}

static int send_verdict(struct queue *q, int type, uint32_t id, int verdict)
{
    char buf[256];
    struct nlmsghdr *nlh = nfq_nlmsg_put(buf, type, q->queue_num);
    nfq_nlmsg_verdict_put(nlh, (int)id, verdict);
    for (int tries = 0; tries < 1000; tries++) {
        if (mnl_socket_sendto(q->nl, nlh, nlh->nlmsg_len) >= 0) return 0;
        if (errno != EINTR && errno != EAGAIN && errno != ENOBUFS) return -1;
    }
    return -1;
}

static int release_due(struct queue *q, int flush)
{
    uint32_t last;
    if (hold_pop_due(q->hold, sys_mono_ns(), flush, &last) == 0) return 0;
    return send_verdict(q, NFQNL_MSG_VERDICT_BATCH, last, NF_ACCEPT);
}

/* One packet message: note it in the FIFO (or accept it at once if it cannot be held). */
static void on_packet(struct queue *q, const struct nlmsghdr *nlh, uint64_t t, uint64_t t_real)
{
    struct nlattr *attr[NFQA_MAX + 1] = { 0 };
    if (nlh->nlmsg_type == NLMSG_ERROR || nlh->nlmsg_type == NLMSG_DONE) return;
    if (nfq_nlmsg_parse(nlh, attr) < 0 || !attr[NFQA_PACKET_HDR]) return;
    const struct nfqnl_msg_packet_hdr *ph = mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
    uint32_t id = ntohl(ph->packet_id);
    uint32_t len = attr[NFQA_CAP_LEN] ? ntohl(mnl_attr_get_u32(attr[NFQA_CAP_LEN])) : 0;
    /* Lost on arrival, as netem decides at enqueue: its own verdict now, so a later
     * batch ("accept every id <= N") no longer finds it queued. */
    if (drop_decide(&q->drop)) {
        send_verdict(q, NFQNL_MSG_VERDICT, id, NF_DROP);
        return;
    }
    /* The kernel's arrival stamp (wall clock; present for received packets, not for
     * locally sent ones) turned into our monotonic clock; implausible ages are ignored. */
    if (attr[NFQA_TIMESTAMP]) {
        /* Netlink attributes are only 4-byte aligned: copy the two be64 fields out. */
        uint64_t sec, usec;
        const char *ts = mnl_attr_get_payload(attr[NFQA_TIMESTAMP]);
        memcpy(&sec, ts + offsetof(struct nfqnl_msg_packet_timestamp, sec), sizeof sec);
        memcpy(&usec, ts + offsetof(struct nfqnl_msg_packet_timestamp, usec), sizeof usec);
        uint64_t stamp = be64toh(sec) * 1000000000u + be64toh(usec) * 1000u;
        if (stamp <= t_real && t_real - stamp < 1000000000u) {
            t -= t_real - stamp;
            q->stamped++;
        }
    }
    q->owed_ns += q->packet_cost_ns + q->byte_cost_ns * len;
    if (hold_push(q->hold, id, len, t) < 0) {
        q->immediate++;
        send_verdict(q, NFQNL_MSG_VERDICT, id, NF_ACCEPT);
    }
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Spend what the packets read so far cost, on this thread's CPU clock (time it is
 * preempted or throttled does not count), then release them: the packets leave at the
 * rate this program's CPU share can afford. One spin per batch of messages: the clock is
 * a system call. */
static int pay_and_release(struct queue *q)
{
    if (q->owed_ns < 1) return 0;
    uint64_t start = thread_cpu_ns(), now = start, want = (uint64_t)q->owed_ns;
    while (now - start < want) now = thread_cpu_ns();
    q->burned_ns += now - start;
    q->owed_ns = 0;
    return release_due(q, 0);
}

static int drain(struct queue *q, char *err, size_t errlen)
{
    int fd = mnl_socket_get_fd(q->nl);
    struct mmsghdr msgs[BATCH];
    struct iovec iov[BATCH];
    /* Bounded: at most 64 batches per wake-up, then release what is due. */
    for (int round = 0; round < 64; round++) {
        for (int i = 0; i < BATCH; i++) {
            iov[i].iov_base = q->bufs[i];
            iov[i].iov_len = MSG_BUF;
            memset(&msgs[i].msg_hdr, 0, sizeof msgs[i].msg_hdr);
            msgs[i].msg_hdr.msg_iov = &iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
        }
        int n = recvmmsg(fd, msgs, BATCH, MSG_DONTWAIT, NULL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) return 0;
            if (errno == ENOBUFS) continue; /* lost messages: the kernel counts the drops */
            err_set(err, errlen, "netlink receive: %s", strerror(errno));
            return -1;
        }
        struct timespec real;
        clock_gettime(CLOCK_REALTIME, &real);
        uint64_t t = sys_mono_ns();
        uint64_t t_real = (uint64_t)real.tv_sec * 1000000000u + (uint64_t)real.tv_nsec;
        for (int i = 0; i < n; i++) {
            const struct nlmsghdr *nlh = (const struct nlmsghdr *)q->bufs[i];
            int len = (int)msgs[i].msg_len;
            for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) on_packet(q, nlh, t, t_real);
        }
        if (pay_and_release(q) < 0) {
            err_set(err, errlen, "verdict: %s", strerror(errno));
            return -1;
        }
        if (n < BATCH) return 0;
    }
    return 0;
}

int queue_run(struct queue *q, volatile sig_atomic_t *stop, char *err, size_t errlen)
{
    sigset_t waitmask;
    sigemptyset(&waitmask);
    struct pollfd pfd = { .fd = mnl_socket_get_fd(q->nl), .events = POLLIN };
    /* Timer wake-ups come late (about 80 us on a VM, more under load): learn by how much
     * (EWMA of the overshoot of timed-out waits) and ask to be woken that much earlier.
     * A wake-up before the due time just loops (a short spin), never releases early. */
    int64_t wake_lat = 0;
    while (!*stop) {
        if (release_due(q, 0) < 0) {
            err_set(err, errlen, "verdict: %s", strerror(errno));
            return -1;
        }
        uint64_t t0 = sys_mono_ns();
        int64_t wait = hold_next_due(q->hold, t0);
        struct timespec ts, *tsp = NULL;
        if (wait >= 0) {
            wait = wait > wake_lat ? wait - wake_lat : 0;
            ts.tv_sec = wait / 1000000000;
            ts.tv_nsec = wait % 1000000000;
            tsp = &ts;
        }
        int rc = ppoll(&pfd, 1, tsp, &waitmask);
        if (rc < 0) {
            if (errno == EINTR) continue;
            err_set(err, errlen, "ppoll: %s", strerror(errno));
            return -1;
        }
        if (rc == 0 && wait > 0) {
            int64_t over = (int64_t)(sys_mono_ns() - t0) - wait;
            if (over < 0) over = 0;
            if (over > 500000) over = 500000; /* a preemption, not the timer: cap it */
            wake_lat += (over - wake_lat) / 16;
        }
        if (rc > 0 && drain(q, err, errlen) < 0) return -1;
    }
    return 0;
}

uint64_t queue_burned_ns(const struct queue *q) { return q->burned_ns; }

void queue_close(struct queue *q)
{
    if (!q) return;
    if (q->nl) {
        if (q->hold) release_due(q, 1);
        /* Closing the socket unbinds the queue and the kernel DROPS what is still queued
         * there: hence the flush above, which accepts every held packet first. */
        mnl_socket_close(q->nl);
    }
    hold_free(q->hold);
    free(q->bufs);
    free(q);
}

const struct hold_stats *queue_stats(const struct queue *q) { return hold_stats(q->hold); }
uint64_t queue_immediate(const struct queue *q) { return q->immediate; }
const struct drop *queue_drops(const struct queue *q) { return &q->drop; }
uint64_t queue_stamped(const struct queue *q) { return q->stamped; }

int queue_kernel_drops(unsigned queue_num, uint64_t *queue_dropped, uint64_t *user_dropped)
{
    FILE *f = fopen("/proc/net/netfilter/nfnetlink_queue", "r");
    if (!f) return -1;
    /* queue_number peer_portid queue_total copy_mode copy_range queue_dropped
     * user_dropped id_sequence 1 */
    unsigned qn, port, total, mode, range;
    unsigned long long qd, ud, seq;
    int found = -1;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%u %u %u %u %u %llu %llu %llu", &qn, &port, &total, &mode, &range,
                   &qd, &ud, &seq) == 8 && qn == queue_num) {
            *queue_dropped = qd;
            *user_dropped = ud;
            found = 0;
            break;
        }
    }
    fclose(f);
    return found;
}
