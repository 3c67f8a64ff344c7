/* tcp_info: the kernel's TCP_INFO for one socket, in a stable struct with units in the
 * field names, and as JSON: the only reader of TCP_INFO and the only producer of its JSON,
 * so both ends of a transfer speak one vocabulary (docs/tcp_info.md lists every field).
 * The client reads it as libcurl closes a download's socket (client/measure/cb_sock.c:
 * the receiver's view: rtt, min_rtt, rcv_rtt, rcv_mss, rcv_space, bytes_received) and,
 * for the rate series, its byte counters while the body flows (sock_bytes.c); debitd
 * reads it when a transfer completes (server/http/http_headers.c: the sender's view: cwnd,
 * delivery rate, total_retrans, busy / rwnd-limited / sndbuf-limited times).
 *
 * Works with any kernel: fields the running kernel does not fill (older than the one that
 * introduced them) stay 0 and are reported as null in JSON (see `have`). */
#ifndef DEBIT_TCP_INFO_H
#define DEBIT_TCP_INFO_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Which groups of fields the kernel filled (bits of tcp_info_sample.have). */
enum {
    TCP_INFO_HAVE_BASE = 1 << 0,      /* rtt, cwnd, mss, retrans (any kernel) */
    TCP_INFO_HAVE_BYTES = 1 << 1,     /* pacing, bytes_acked/received (4.1+) */
    TCP_INFO_HAVE_MIN_RTT = 1 << 2,   /* min_rtt, notsent, data segs (4.6+) */
    TCP_INFO_HAVE_DELIVERY = 1 << 3,  /* delivery_rate (4.9+) */
    TCP_INFO_HAVE_LIMITED = 1 << 4,   /* busy/rwnd/sndbuf-limited times (4.10+) */
    TCP_INFO_HAVE_SENT = 1 << 5,      /* bytes_sent, bytes_retrans, dsack, reord (4.19+) */
    TCP_INFO_HAVE_SND_WND = 1 << 6,   /* snd_wnd (5.4+) */
    TCP_INFO_HAVE_RCV_WND = 1 << 7,   /* rcv_wnd, rehash (6.2+) */
    TCP_INFO_HAVE_RTO = 1 << 8,       /* total_rto, total_rto_recoveries/time (6.7+) */
    TCP_INFO_HAVE_DELIVERED = 1 << 9, /* delivered (4.18+) */
};

/* Plain data: copy freely. Times in microseconds, sizes in bytes, rates in bit/s. */
struct tcp_info_sample {
    unsigned have;          /* TCP_INFO_HAVE_* */
    uint8_t state;          /* TCP_ESTABLISHED, ... */
    uint8_t ca_state;       /* TCP_CA_Open, ... */
    uint8_t unrecovered_rtos; /* RTO timeouts not yet recovered from, right now (tcpi_retransmits) */
    uint8_t delivery_rate_app_limited;

    uint32_t rtt_us, rttvar_us, min_rtt_us, rcv_rtt_us, rto_us;
    uint32_t snd_mss, rcv_mss, advmss, pmtu;
    uint32_t snd_cwnd;      /* segments */
    uint32_t snd_ssthresh;  /* segments; >= 0x7fffffff means "not yet set" */
    uint32_t max_snd_cwnd;  /* largest snd_cwnd seen (tcp_info_track), else = snd_cwnd */
    uint32_t reordering;
    uint32_t unacked, lost, retrans; /* right now, in segments */
    uint32_t total_retrans; /* segments retransmitted over the connection's life */
    uint32_t rcv_space, rcv_ssthresh;
    uint32_t snd_wnd, rcv_wnd;
    uint32_t notsent_bytes;
    uint32_t segs_out, segs_in, data_segs_out, data_segs_in;
    uint32_t dsack_dups, reord_seen, rcv_ooopack;
    uint32_t total_rto, total_rto_recoveries, total_rto_time_ms;
    uint32_t last_ack_recv_ms; /* since the last ACK arrived (jiffies: 4 ms steps at HZ=250); not in JSON */
    uint32_t delivered;     /* segments delivered (cumulatively or selectively acked), retransmits once */

    uint64_t pacing_rate_bps, max_pacing_rate_bps; /* max: 0 = unlimited */
    uint64_t delivery_rate_bps;
    uint64_t bytes_acked, bytes_received, bytes_sent, bytes_retrans;
    uint64_t busy_time_us, rwnd_limited_us, sndbuf_limited_us;
};

/* Read TCP_INFO of FD into TI (zeroed first). Returns 0, or -1 with err filled (not a TCP
 * socket, closed fd). Thread-safe. */
int tcp_info_read(int fd, struct tcp_info_sample *ti, char *err, size_t errlen);

/* Keep ACC as the latest sample CUR while remembering the largest cwnd seen: call with
 * each periodic sample of a transfer (ACC zeroed at the start). */
void tcp_info_track(struct tcp_info_sample *acc, const struct tcp_info_sample *cur);

/* JSON object, units in the names; caller owns the reference:
 *   {"state":"ESTABLISHED"|"CLOSE_WAIT"|...,"ca_state":"open"|"disorder"|"cwr"|"recovery"|"loss","rtt_ms":0.05,"rttvar_ms":..,"min_rtt_ms":..,
 *    "rcv_rtt_ms":..,"rto_ms":..,"snd_mss":..,"rcv_mss":..,"pmtu":..,"snd_cwnd":..,
 *    "max_snd_cwnd":..,"snd_ssthresh":null|N,"unrecovered_rtos":..,"total_retrans":..,"lost":..,
 *    "delivery_rate_bps":..,"pacing_rate_bps":..,"max_pacing_rate_bps":null|N,
 *    "bytes_acked":..,"bytes_received":..,"bytes_sent":..,"bytes_retrans":..,
 *    "busy_time_ms":..,"rwnd_limited_ms":..,"sndbuf_limited_ms":..,
 *    "rwnd_limited_ratio":0..1,"sndbuf_limited_ratio":0..1, ...}
 * Fields the kernel did not fill are null. Every sample gives the same key set, whichever
 * side read it. */
json_t *tcp_info_to_json(const struct tcp_info_sample *ti);

#endif
