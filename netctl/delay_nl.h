/* delay_nl: the few raw rtnetlink requests that netctl/delay needs outside libnl: the
 * messages that UNDO a delay are built at apply time into fixed buffers and sent later
 * with plain socket calls, so that removal is async-signal-safe (no allocation), and the
 * netem probe runs in a freshly forked child where libnl's allocations are best avoided.
 * Internal to netctl/delay*.c. */
#ifndef DEBIT_DELAY_NL_H
#define DEBIT_DELAY_NL_H

#include <stddef.h>
#include <stdint.h>

#define DELAY_NL_MSG_MAX 4096

/* One pre-built netlink request (len 0 = none). */
struct delay_nlmsg {
    size_t len;
    _Alignas(8) unsigned char buf[DELAY_NL_MSG_MAX];
};

/* Send msg on a new NETLINK_ROUTE socket and wait (bounded, 2 s) for its ACK.
 * Returns 0, or a negative errno. Async-signal-safe. */
int delay_nl_exec(const struct delay_nlmsg *msg);

/* Builders: fill msg, return 0 (or -1 if it does not fit). */
int delay_nl_build_qdisc_del(struct delay_nlmsg *msg, int ifindex, uint32_t parent, uint32_t handle);
int delay_nl_build_link_del(struct delay_nlmsg *msg, int ifindex);
/* A netem qdisc at the root of ifindex (delay in us, limit in packets). */
int delay_nl_build_netem_add(struct delay_nlmsg *msg, int ifindex, uint32_t handle,
                             uint32_t delay_us, uint32_t limit);

/* What sits on ifindex now. */
struct delay_nl_qdiscs {
    int root_custom;        /* a root qdisc someone configured (handle != 0) */
    char root_kind[32];     /* its kind ("tbf", "htb", "noqueue", ...) */
    uint32_t root_handle;
    int has_ingress;        /* an ingress (or clsact) qdisc is attached */
    int classes;            /* classes under the root (a classful tree we cannot rebuild) */
};

/* Dump qdiscs and classes of ifindex. When a configured root exists, restore (may be NULL)
 * receives the RTM_NEWQDISC request that puts it back as it was (kind, options, size
 * table). Returns 0, or a negative errno. Not signal-safe (but does not allocate). */
int delay_nl_inspect(int ifindex, struct delay_nl_qdiscs *out, struct delay_nlmsg *restore);

/* Time unit conversion for netem's latency field (psched ticks), as tc does it. */
uint32_t delay_nl_us_to_ticks(uint32_t us);

#endif
