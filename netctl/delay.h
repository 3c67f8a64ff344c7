/* delay: add round-trip latency on one network interface for the duration of a measurement
 * (`debit --delay 10ms --delay-dev eth0`, and the latency axis of scenario files).
 *
 * Two mechanisms, chosen at delay_apply() time unless forced:
 *  - DELAY_MECH_NETEM: sch_netem through rtnetlink (libnl-route-3), as `tc` users do it:
 *    the outgoing share on DEV's root qdisc, the incoming share on an IFB device fed by an
 *    ingress qdisc on DEV with a u32 match-all filter and a mirred egress redirect. The netem
 *    limit is raised to hold the bandwidth-delay product. DEV's previous root qdisc is saved
 *    and put back by delay_remove().
 *  - DELAY_MECH_DELAYLINE: kernels without sch_netem (this project's CI; many VMs and
 *    containers): spawns `debit-delayline` (found next to the running executable, else in
 *    PATH), an NFQUEUE program that installs its own iptables rules and holds each packet;
 *    it is in force once it printed WIRE_DELAY_READY (common/wire.h).
 * Netem is detected by trying it in a scratch network namespace, never with lsmod.
 *
 * The delay is a ROUND-TRIP figure, as the seed's "ping +10 ms": with DELAY_DIR_BOTH (the
 * default) half of it is added to each direction; with DELAY_DIR_OUT or DELAY_DIR_IN all of
 * it goes on that one direction. Needs CAP_NET_ADMIN in DEV's network namespace.
 *
 * Packet loss (delay_set_loss) is a PER-DIRECTION figure, as netem's (one per qdisc): each
 * direction the setting covers (both, out or in) drops each packet with that probability,
 * independently, so with DELAY_DIR_BOTH a round trip (ping) is lost with 1 - (1 - p)^2.
 * netem decides per queued packet (a GSO/GRO aggregate is one), the delay line per wire
 * packet (it has the kernel segment aggregates when loss is set). A delay of 0 with a loss
 * is a loss-only path.
 *
 * Typical use:
 *   struct delay *d = delay_new("eth0", 10000, err, sizeof err);
 *   if (!d || delay_apply(d, err, sizeof err) < 0) { ...report err... }
 *   printf("delay via %s\n", delay_mechanism_name(delay_mechanism_used(d)));
 *   ...measure...
 *   delay_remove(d, err, sizeof err);
 *   delay_free(d);
 */
#ifndef DEBIT_DELAY_H
#define DEBIT_DELAY_H

#include <stddef.h>
#include <stdint.h>

enum delay_mechanism {
    DELAY_MECH_AUTO = 0,  /* netem when the kernel has it, else the delay line */
    DELAY_MECH_NETEM,
    DELAY_MECH_DELAYLINE,
};

enum delay_dir {
    DELAY_DIR_BOTH = 0,   /* half the round-trip delay on each direction */
    DELAY_DIR_OUT,        /* all of it on packets leaving DEV */
    DELAY_DIR_IN,         /* all of it on packets arriving on DEV */
};

/* "auto", "netem", "delayline". Static string; "?" for an unknown value. */
const char *delay_mechanism_name(enum delay_mechanism m);
/* Parse "auto" | "netem" | "delayline". Returns 0, or -1 on an unknown name. */
int delay_mechanism_parse(const char *name, enum delay_mechanism *out);
/* "both", "out", "in". */
const char *delay_dir_name(enum delay_dir dir);
/* Parse "both" | "out" | "in". Returns 0, or -1 on an unknown name. */
int delay_dir_parse(const char *name, enum delay_dir *out);

/* Does this kernel have sch_netem? Tries to add a netem qdisc on lo in a scratch network
 * namespace (created and deleted by a short-lived child process; the caller's namespace
 * is untouched). Returns 1 yes, 0 no, -1 when the probe itself could not run (no
 * CAP_SYS_ADMIN/CAP_NET_ADMIN; err says why). The answer is cached for the process. */
int delay_netem_available(char *err, size_t errlen);

#define DELAY_MAX_US 10000000u   /* 10 s: the longest round-trip delay delay_new() accepts */

/* A delay of rtt_us microseconds (round trip; 0 .. DELAY_MAX_US, 0 only for a loss-only
 * path: delay_apply() refuses a delay of 0 without a loss) on interface dev (copied).
 * Nothing is changed on the system until delay_apply(). Returns NULL with err filled on a
 * bad argument. Owned by the caller: delay_free(). */
struct delay *delay_new(const char *dev, uint64_t rtt_us, char *err, size_t errlen);

/* Optional settings, before delay_apply(); each returns 0, or -1 with err filled. */
int delay_set_direction(struct delay *d, enum delay_dir dir, char *err, size_t errlen);
/* Force a mechanism (default DELAY_MECH_AUTO). Forcing netem on a kernel without it makes
 * delay_apply() fail instead of falling back. */
int delay_set_mechanism(struct delay *d, enum delay_mechanism m, char *err, size_t errlen);
/* Highest rate expected through dev, in bit/s (default 10 Gbit/s); sizes netem's limit
 * (packets) so that rate × delay fits, with a floor of 10000 packets. */
int delay_set_rate_hint(struct delay *d, uint64_t bits_per_s, char *err, size_t errlen);
/* Path of the debit-delayline program (copied); default: next to /proc/self/exe, else PATH. */
int delay_set_delayline_path(struct delay *d, const char *path, char *err, size_t errlen);
/* NFQUEUE number used by the delay line (default 7301). */
int delay_set_queue_num(struct delay *d, unsigned queue_num, char *err, size_t errlen);
/* Packet loss, in parts per million (0 .. 10^6 = 100 %, common/lossrate.h; default 0), per
 * direction (see above): netem `loss`, or the delay line's --loss. */
int delay_set_loss(struct delay *d, uint32_t ppm, char *err, size_t errlen);
uint32_t delay_loss(const struct delay *d);
/* Delay line only: the seed of its drop decisions (default: the delay line draws one
 * from the clock), so that a run can be replayed; netem has no seed. */
void delay_set_seed(struct delay *d, uint64_t seed);
/* The seed in force: 1 and *seed when known (set, or reported by the running delay
 * line's ready line), 0 when not (netem, before apply without a set seed). */
int delay_seed(const struct delay *d, uint64_t *seed);
/* Delay line only: also delay IPv6 (ip6tables rules; default 1). 0 leaves IPv6 alone, for
 * namespaces without ip6tables or IPv6-free setups. netem delays every protocol. */
int delay_set_ipv6(struct delay *d, int enabled, char *err, size_t errlen);

/* The two shares of the round-trip delay, in us: out (packets leaving DEV) and in
 * (packets arriving on DEV), as the direction setting splits them. */
void delay_split(const struct delay *d, uint64_t *out_us, uint64_t *in_us);

/* Install the delay. On failure nothing is left installed (partial work undone) and err
 * says what failed. With the delay line, returns only after the program printed its
 * readiness line (bounded wait, 5 s). Calling it on an applied delay is an error. */
int delay_apply(struct delay *d, char *err, size_t errlen);

/* The mechanism of the delay in force: what delay_apply() chose, DELAY_MECH_AUTO while
 * nothing is applied (before apply, after remove). */
enum delay_mechanism delay_mechanism_used(const struct delay *d);
/* While the delay line runs: the read end of its stdout+stderr (owned by d, closed by
 * delay_free), after delay_apply() consumed the readiness line. A program that holds the
 * delay may pass on what the delay line says later (its stats line at exit; EOF when it
 * ended). -1 with netem or before apply. */
int delay_output_fd(const struct delay *d);

/* Take the delay away and put back what was there: netem -> the saved root qdisc is
 * restored (or the kernel default when there was none), the ingress qdisc and the IFB
 * device are deleted; delay line -> SIGTERM to the program (which removes its iptables
 * rules), waited for with a bound, SIGKILL after 3 s, and its rules removed here if it
 * could not. Idempotent: a second call, or a call before apply, returns 0.
 *
 * ASYNC-SIGNAL-SAFE: it uses only pre-built netlink messages sent over a raw socket,
 * kill(), waitpid(), nanosleep() and (only on the delay line's failure path) fork+execve
 * of iptables; it never allocates. So a SIGINT handler may call it (with err == NULL or a
 * buffer it owns), provided the main flow is not inside delay_apply()/delay_remove() on
 * the same handle at that moment. Returns 0, or -1 when something could not be undone
 * (err says what; the remaining steps are still attempted). */
int delay_remove(struct delay *d, char *err, size_t errlen);

/* Removes the delay if still applied, then frees. NULL is fine. Not signal-safe. */
void delay_free(struct delay *d);

/* Human summary for logs and reports, e.g. "+10 ms round trip on eth0 (split between both
 * directions), 1% loss per direction, via netem", "1% loss on eth0 (each direction) via
 * delayline".
 * Returns the snprintf result. */
int delay_describe(const struct delay *d, char *buf, size_t len);

#endif
