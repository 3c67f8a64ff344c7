/* tcp_info: see tcp_info.h.
 *
 * The kernel copies min(optlen, sizeof its struct tcp_info) bytes and returns the length
 * it wrote, so a program built against old headers reads a newer kernel fine and vice
 * versa. We declare the layout ourselves, up to fields newer than Debian 12's
 * linux-libc-dev (6.1), and use the returned length to know which fields are real. */
#include "tcp_info.h"

#include "array.h"
#include "err.h"

#include <errno.h>
#include <stddef.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

/* Kernel layout of struct tcp_info (include/uapi/linux/tcp.h), through Linux 6.7. */
struct kernel_tcp_info {
    uint8_t state, ca_state, retransmits, probes, backoff, options;
    uint8_t wscales;
    uint8_t flags; /* delivery_rate_app_limited:1, fastopen_client_fail:2 */
    uint32_t rto, ato, snd_mss, rcv_mss;
    uint32_t unacked, sacked, lost, retrans, fackets;
    uint32_t last_data_sent, last_ack_sent, last_data_recv, last_ack_recv;
    uint32_t pmtu, rcv_ssthresh, rtt, rttvar, snd_ssthresh, snd_cwnd, advmss, reordering;
    uint32_t rcv_rtt, rcv_space;
    uint32_t total_retrans;
    uint64_t pacing_rate, max_pacing_rate; /* 4.1 */
    uint64_t bytes_acked, bytes_received;
    uint32_t segs_out, segs_in;
    uint32_t notsent_bytes, min_rtt, data_segs_in, data_segs_out; /* 4.6 */
    uint64_t delivery_rate;                                       /* 4.9 */
    uint64_t busy_time, rwnd_limited, sndbuf_limited;             /* 4.10 */
    uint32_t delivered, delivered_ce;
    uint64_t bytes_sent, bytes_retrans; /* 4.19 */
    uint32_t dsack_dups, reord_seen;
    uint32_t rcv_ooopack; /* 5.4 */
    uint32_t snd_wnd;
    uint32_t rcv_wnd; /* 6.2 */
    uint32_t rehash;
    uint16_t total_rto; /* 6.7 */
    uint16_t total_rto_recoveries;
    uint32_t total_rto_time;
};

/* Offsets of the kernel ABI (linux/tcp.h of 6.1, which stops at snd_wnd). */
_Static_assert(offsetof(struct kernel_tcp_info, total_retrans) == 100, "tcp_info layout");
_Static_assert(offsetof(struct kernel_tcp_info, pacing_rate) == 104, "tcp_info layout");
_Static_assert(offsetof(struct kernel_tcp_info, delivery_rate) == 160, "tcp_info layout");
_Static_assert(offsetof(struct kernel_tcp_info, busy_time) == 168, "tcp_info layout");
_Static_assert(offsetof(struct kernel_tcp_info, bytes_sent) == 200, "tcp_info layout");
_Static_assert(offsetof(struct kernel_tcp_info, snd_wnd) == 228, "tcp_info layout");

#define HAS(len, field) ((size_t)(len) >= offsetof(struct kernel_tcp_info, field) + sizeof(((struct kernel_tcp_info *)0)->field))

int tcp_info_read(int fd, struct tcp_info_sample *ti, char *err, size_t errlen)
{
    struct kernel_tcp_info k;
    memset(&k, 0, sizeof k);
    memset(ti, 0, sizeof *ti);
    socklen_t len = sizeof k;
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &k, &len) < 0) {
        return err_set(err, errlen, "TCP_INFO: %s", strerror(errno));
    }
    if (!HAS(len, total_retrans)) {
        return err_set(err, errlen, "TCP_INFO: the kernel returned only %u bytes", (unsigned)len);
    }
    ti->have = TCP_INFO_HAVE_BASE;
    ti->state = k.state;
    ti->ca_state = k.ca_state;
    ti->unrecovered_rtos = k.retransmits;
    ti->delivery_rate_app_limited = k.flags & 1;
    ti->rtt_us = k.rtt;
    ti->rttvar_us = k.rttvar;
    ti->rcv_rtt_us = k.rcv_rtt;
    ti->rto_us = k.rto;
    ti->snd_mss = k.snd_mss;
    ti->rcv_mss = k.rcv_mss;
    ti->advmss = k.advmss;
    ti->pmtu = k.pmtu;
    ti->snd_cwnd = k.snd_cwnd;
    ti->max_snd_cwnd = k.snd_cwnd;
    ti->snd_ssthresh = k.snd_ssthresh;
    ti->reordering = k.reordering;
    ti->unacked = k.unacked;
    ti->lost = k.lost;
    ti->retrans = k.retrans;
    ti->total_retrans = k.total_retrans;
    ti->rcv_space = k.rcv_space;
    ti->rcv_ssthresh = k.rcv_ssthresh;
    ti->last_ack_recv_ms = k.last_ack_recv;
    if (HAS(len, segs_in)) {
        ti->have |= TCP_INFO_HAVE_BYTES;
        ti->pacing_rate_bps = k.pacing_rate == UINT64_MAX ? 0 : k.pacing_rate * 8;
        ti->max_pacing_rate_bps = k.max_pacing_rate == UINT64_MAX ? 0 : k.max_pacing_rate * 8;
        ti->bytes_acked = k.bytes_acked;
        ti->bytes_received = k.bytes_received;
        ti->segs_out = k.segs_out;
        ti->segs_in = k.segs_in;
    }
    if (HAS(len, data_segs_out)) {
        ti->have |= TCP_INFO_HAVE_MIN_RTT;
        ti->notsent_bytes = k.notsent_bytes;
        ti->min_rtt_us = k.min_rtt == UINT32_MAX ? 0 : k.min_rtt;
        ti->data_segs_in = k.data_segs_in;
        ti->data_segs_out = k.data_segs_out;
    }
    if (HAS(len, delivery_rate)) {
        ti->have |= TCP_INFO_HAVE_DELIVERY;
        ti->delivery_rate_bps = k.delivery_rate * 8;
    }
    if (HAS(len, sndbuf_limited)) {
        ti->have |= TCP_INFO_HAVE_LIMITED;
        ti->busy_time_us = k.busy_time;
        ti->rwnd_limited_us = k.rwnd_limited;
        ti->sndbuf_limited_us = k.sndbuf_limited;
    }
    if (HAS(len, delivered_ce)) {
        ti->have |= TCP_INFO_HAVE_DELIVERED;
        ti->delivered = k.delivered;
    }
    if (HAS(len, reord_seen)) {
        ti->have |= TCP_INFO_HAVE_SENT;
        ti->bytes_sent = k.bytes_sent;
        ti->bytes_retrans = k.bytes_retrans;
        ti->dsack_dups = k.dsack_dups;
        ti->reord_seen = k.reord_seen;
    }
    if (HAS(len, snd_wnd)) {
        ti->have |= TCP_INFO_HAVE_SND_WND;
        ti->rcv_ooopack = k.rcv_ooopack;
        ti->snd_wnd = k.snd_wnd;
    }
    if (HAS(len, rehash)) {
        ti->have |= TCP_INFO_HAVE_RCV_WND;
        ti->rcv_wnd = k.rcv_wnd;
    }
    if (HAS(len, total_rto_time)) {
        ti->have |= TCP_INFO_HAVE_RTO;
        ti->total_rto = k.total_rto;
        ti->total_rto_recoveries = k.total_rto_recoveries;
        ti->total_rto_time_ms = k.total_rto_time;
    }
    return 0;
}

void tcp_info_track(struct tcp_info_sample *acc, const struct tcp_info_sample *cur)
{
    uint32_t max = acc->max_snd_cwnd;
    *acc = *cur;
    if (max > acc->max_snd_cwnd)
        acc->max_snd_cwnd = max;
    if (cur->snd_cwnd > acc->max_snd_cwnd)
        acc->max_snd_cwnd = cur->snd_cwnd;
}

static const char *state_name(unsigned state)
{
    static const char *const names[] = {
        "?", "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2", "TIME_WAIT",
        "CLOSE", "CLOSE_WAIT", "LAST_ACK", "LISTEN", "CLOSING", "NEW_SYN_RECV",
    };
    return state < ARRAY_SIZE(names) ? names[state] : "?";
}

static const char *ca_state_name(unsigned ca_state)
{
    static const char *const names[] = {"open", "disorder", "cwr", "recovery", "loss"};
    return ca_state < ARRAY_SIZE(names) ? names[ca_state] : "?";
}

static void set_u(json_t *o, const char *k, uint64_t v, int have)
{
    json_object_set_new(o, k, have ? json_integer((json_int_t)(v > INT64_MAX ? INT64_MAX : v)) : json_null());
}

static void set_ms(json_t *o, const char *k, uint64_t us, int have)
{
    json_object_set_new(o, k, have ? json_real((double)us / 1000.0) : json_null());
}

static void set_ratio(json_t *o, const char *k, uint64_t part, uint64_t whole, int have)
{
    json_object_set_new(o, k, have && whole ? json_real((double)part / (double)whole) : json_null());
}

json_t *tcp_info_to_json(const struct tcp_info_sample *ti)
{
    json_t *o = json_object();
    unsigned h = ti->have;
    int base = !!(h & TCP_INFO_HAVE_BASE);
    json_object_set_new(o, "state", json_string(state_name(ti->state)));
    json_object_set_new(o, "ca_state", json_string(ca_state_name(ti->ca_state)));
    set_ms(o, "rtt_ms", ti->rtt_us, base);
    set_ms(o, "rttvar_ms", ti->rttvar_us, base);
    set_ms(o, "min_rtt_ms", ti->min_rtt_us, (h & TCP_INFO_HAVE_MIN_RTT) && ti->min_rtt_us);
    set_ms(o, "rcv_rtt_ms", ti->rcv_rtt_us, base);
    set_ms(o, "rto_ms", ti->rto_us, base);
    set_u(o, "snd_mss", ti->snd_mss, base);
    set_u(o, "rcv_mss", ti->rcv_mss, base);
    set_u(o, "advmss", ti->advmss, base);
    set_u(o, "pmtu", ti->pmtu, base);
    set_u(o, "snd_cwnd", ti->snd_cwnd, base);
    set_u(o, "max_snd_cwnd", ti->max_snd_cwnd, base);
    set_u(o, "snd_ssthresh", ti->snd_ssthresh, base && ti->snd_ssthresh < 0x7fffffffu);
    set_u(o, "reordering", ti->reordering, base);
    set_u(o, "unrecovered_rtos", ti->unrecovered_rtos, base);
    set_u(o, "total_retrans", ti->total_retrans, base);
    set_u(o, "lost", ti->lost, base);
    set_u(o, "unacked", ti->unacked, base);
    set_u(o, "rcv_space", ti->rcv_space, base);
    set_u(o, "rcv_ssthresh", ti->rcv_ssthresh, base);
    set_u(o, "snd_wnd", ti->snd_wnd, !!(h & TCP_INFO_HAVE_SND_WND));
    set_u(o, "rcv_wnd", ti->rcv_wnd, !!(h & TCP_INFO_HAVE_RCV_WND));
    set_u(o, "notsent_bytes", ti->notsent_bytes, !!(h & TCP_INFO_HAVE_MIN_RTT));
    set_u(o, "delivery_rate_bps", ti->delivery_rate_bps, !!(h & TCP_INFO_HAVE_DELIVERY));
    json_object_set_new(o, "delivery_rate_app_limited",
                        (h & TCP_INFO_HAVE_DELIVERY) ? json_boolean(ti->delivery_rate_app_limited) : json_null());
    set_u(o, "pacing_rate_bps", ti->pacing_rate_bps, !!(h & TCP_INFO_HAVE_BYTES));
    set_u(o, "max_pacing_rate_bps", ti->max_pacing_rate_bps, (h & TCP_INFO_HAVE_BYTES) && ti->max_pacing_rate_bps);
    set_u(o, "bytes_acked", ti->bytes_acked, !!(h & TCP_INFO_HAVE_BYTES));
    set_u(o, "bytes_received", ti->bytes_received, !!(h & TCP_INFO_HAVE_BYTES));
    set_u(o, "bytes_sent", ti->bytes_sent, !!(h & TCP_INFO_HAVE_SENT));
    set_u(o, "bytes_retrans", ti->bytes_retrans, !!(h & TCP_INFO_HAVE_SENT));
    set_u(o, "segs_out", ti->segs_out, !!(h & TCP_INFO_HAVE_BYTES));
    set_u(o, "segs_in", ti->segs_in, !!(h & TCP_INFO_HAVE_BYTES));
    set_u(o, "data_segs_out", ti->data_segs_out, !!(h & TCP_INFO_HAVE_MIN_RTT));
    set_u(o, "data_segs_in", ti->data_segs_in, !!(h & TCP_INFO_HAVE_MIN_RTT));
    set_u(o, "dsack_dups", ti->dsack_dups, !!(h & TCP_INFO_HAVE_SENT));
    set_u(o, "reord_seen", ti->reord_seen, !!(h & TCP_INFO_HAVE_SENT));
    set_u(o, "rcv_ooopack", ti->rcv_ooopack, !!(h & TCP_INFO_HAVE_SND_WND));
    int lim = !!(h & TCP_INFO_HAVE_LIMITED);
    set_ms(o, "busy_time_ms", ti->busy_time_us, lim);
    set_ms(o, "rwnd_limited_ms", ti->rwnd_limited_us, lim);
    set_ms(o, "sndbuf_limited_ms", ti->sndbuf_limited_us, lim);
    set_ratio(o, "rwnd_limited_ratio", ti->rwnd_limited_us, ti->busy_time_us, lim);
    set_ratio(o, "sndbuf_limited_ratio", ti->sndbuf_limited_us, ti->busy_time_us, lim);
    set_u(o, "total_rto", ti->total_rto, !!(h & TCP_INFO_HAVE_RTO));
    set_u(o, "total_rto_recoveries", ti->total_rto_recoveries, !!(h & TCP_INFO_HAVE_RTO));
    set_u(o, "total_rto_time_ms", ti->total_rto_time_ms, !!(h & TCP_INFO_HAVE_RTO));
    return o;
}
