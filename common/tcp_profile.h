/* tcp_profile: a per-listener set of TCP socket options, configured as
 *     tcp = { congestion = "cubic"; pacing_rate = "500Mbit"; sndbuf = "4MiB";
 *             notsent_lowat = "128KiB"; };
 * and applied on every accepted socket, so one host can offer two profiles side by side.
 *
 *   congestion     TCP_CONGESTION. Checked against
 *                  /proc/sys/net/ipv4/tcp_available_congestion_control at parse time.
 *                  Inside a netns only net.ipv4.tcp_allowed_congestion_control may be set
 *                  without CAP_NET_ADMIN; as root any available algorithm works.
 *   pacing_rate    SO_MAX_PACING_RATE (the config is in bit/s like tc, "500Mbit"; the
 *                  kernel takes bytes/s: bits / 8). Works without the fq qdisc: TCP then
 *                  paces internally (Linux >= 4.13).
 *   sndbuf         SO_SNDBUFFORCE (needs CAP_NET_ADMIN; ignores net.core.wmem_max), falling
 *                  back to SO_SNDBUF, which the kernel clamps to net.core.wmem_max: a clamp
 *                  is an error, never silent. Either one fixes the buffer and turns off
 *                  send-buffer autotuning for that socket (the kernel stores twice the value
 *                  for its bookkeeping; getsockopt reads back 2 x sndbuf).
 *   notsent_lowat  TCP_NOTSENT_LOWAT, bytes.
 * 0 (or "" for congestion, or absent) means "leave the kernel's default".
 * See docs/offload.md. */
#ifndef DEBIT_TCP_PROFILE_H
#define DEBIT_TCP_PROFILE_H

#include <jansson.h>
#include <libconfig.h>
#include <stddef.h>
#include <stdint.h>

#define TCP_PROFILE_CC_LEN 16 /* TCP_CA_NAME_MAX */

/* Plain data: copy freely, no _free needed. */
struct tcp_profile {
    char congestion[TCP_PROFILE_CC_LEN]; /* "" = kernel default */
    uint64_t pacing_rate_bps;            /* bit/s; 0 = unlimited */
    uint64_t sndbuf;                     /* bytes; 0 = autotuned */
    uint64_t notsent_lowat;              /* bytes; 0 = sysctl default */
};

/* Every field "kernel default". */
void tcp_profile_defaults(struct tcp_profile *p);
/* True when the profile changes nothing (no setsockopt needed). */
int tcp_profile_is_default(const struct tcp_profile *p);

/* Parse a `tcp = { ... }` group (GROUP may be NULL: defaults) into P, which the caller
 * has initialised (tcp_profile_defaults) — members present override it. Unknown keys,
 * bad values and unavailable algorithms fail with "FILE:LINE: listen[0].tcp.congestion:
 * 'foo' is not available (available: reno bbr cubic)". Returns 0 or -1. */
int tcp_profile_from_cfg(const config_setting_t *group, struct tcp_profile *p, char *err, size_t errlen);

/* Setters shared by the config parser and command lines; each validates and returns 0 or
 * -1 with a message that does not name the setting (the caller prefixes it). */
int tcp_profile_set_congestion(struct tcp_profile *p, const char *name, char *err, size_t errlen);
int tcp_profile_set_pacing_rate(struct tcp_profile *p, const char *rate, char *err, size_t errlen);
int tcp_profile_set_sndbuf(struct tcp_profile *p, const char *size, char *err, size_t errlen);
int tcp_profile_set_notsent_lowat(struct tcp_profile *p, const char *size, char *err, size_t errlen);

/* Apply P to socket FD (every field that is not default). Returns 0, or -1 with a message
 * naming the option and the reason (EPERM on TCP_CONGESTION explains the netns allowed
 * list; an sndbuf clamped by net.core.wmem_max says so). Thread-safe. */
int tcp_profile_apply(int fd, const struct tcp_profile *p, char *err, size_t errlen);

/* Check that P can be applied here (config check, start-up): applies it on a scratch TCP
 * socket of FAMILY (AF_INET or AF_INET6) and reads every option back. Returns 0 or -1. */
int tcp_profile_probe(const struct tcp_profile *p, int family, char *err, size_t errlen);

/* The profile in force on socket FD, read back option by option into P: the congestion
 * control the socket uses (never "": the default is named), its pacing rate (0 when
 * unlimited), notsent_lowat (0 when the sysctl's default applies), and the send buffer
 * only when APPLIED (the profile set on FD; NULL: none) fixes it: an autotuned buffer's
 * size is no setting (a fixed one reads back doubled: halved here). The one reader of a
 * profile (tcp_profile_probe, debitd's X-Debit-Tcp). Returns 0, or -1 with err naming the
 * option (P then holds what was read before it, defaults for the rest). */
int tcp_profile_read(int fd, const struct tcp_profile *applied, struct tcp_profile *p, char *err, size_t errlen);

/* A profile's values in words, as X-Debit-Tcp and /metrics say them: the congestion
 * control or "default", the pacing rate as tc writes it or "unlimited", the send buffer in
 * bytes or "auto", notsent_lowat in bytes or "off". */
struct tcp_profile_words {
    char cc[TCP_PROFILE_CC_LEN], pacing[32], sndbuf[24], notsent_lowat[24];
};
void tcp_profile_words(const struct tcp_profile *p, struct tcp_profile_words *w);

/* "cc=cubic pacing=500Mbit sndbuf=4194304" — the X-Debit-Tcp header form. Defaults print
 * as cc=default, pacing=unlimited, sndbuf=auto (resolve the congestion name first with
 * tcp_cc_default if the real name is wanted). Returns snprintf's result. */
int tcp_profile_format(const struct tcp_profile *p, char *buf, size_t len);

/* {"congestion":"cubic","pacing_rate_bps":500000000,"sndbuf_bytes":4194304,
 *  "notsent_lowat_bytes":131072}; defaults are null. Caller owns the reference. */
json_t *tcp_profile_to_json(const struct tcp_profile *p);

/* The kernel's space-separated list of available algorithms ("reno bbr cubic") and the
 * current default ("bbr"), read from /proc/sys/net/ipv4 of the caller's netns.
 * Return 0, or -1 with err filled. */
int tcp_cc_available(char *buf, size_t len, char *err, size_t errlen);
int tcp_cc_default(char *buf, size_t len, char *err, size_t errlen);

/* net.ipv4.tcp_wmem's third field (the most autotuning gives a send buffer), read from
 * /proc/sys of the caller's netns into *MAX. Returns 0, or -1 with err filled. */
int tcp_wmem_max(uint64_t *max, char *err, size_t errlen);
/* The same of net.ipv4.tcp_rmem (the most autotuning gives a receive buffer). */
int tcp_rmem_max(uint64_t *max, char *err, size_t errlen);

#endif
