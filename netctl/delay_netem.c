/* delay_netem: the netem mechanism, through libnl-route-3, laid out as tc users do it:
 *   tc qdisc replace dev DEV root handle deb1: netem delay OUT limit L
 *   ip link add dbifbN type ifb; ip link set dbifbN up
 *   tc qdisc add dev DEV handle ffff: ingress
 *   tc filter add dev DEV parent ffff: protocol all u32 match u32 0 0 \
 *        action mirred egress redirect dev dbifbN
 *   tc qdisc replace dev dbifbN root handle deb1: netem delay IN limit L
 * With a loss rate, both netem qdiscs of the directions it covers also get `loss P%` (one
 * qdisc per direction: the rate is per direction), a direction without delay included.
 * The undo requests are built before anything is changed, from what is there now. */
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/tc_act/tc_mirred.h>
#include <netlink/netlink.h>
#include <netlink/route/act/mirred.h>
#include <netlink/route/classifier.h>
#include <netlink/route/cls/u32.h>
#include <netlink/route/link.h>
#include <netlink/route/qdisc.h>
#include <netlink/route/qdisc/netem.h>
#include <netlink/route/tc.h>
#include <stdio.h>
#include <string.h>

#include "delay_int.h"
#include "err.h"

#define DELAY_HANDLE 0xdeb10000u   /* deb1: */
#define INGRESS_HANDLE 0xffff0000u /* ffff: */

/* Packets netem must be able to hold: rate x delay in MTU-sized packets, doubled for
 * bursts, at least 10000 (netem's default of 1000 caps a 1 Gbit/s path at +12 ms). */
static uint32_t netem_limit(uint64_t rate_bps, uint64_t delay_us)
{
    double pkts = (double)rate_bps / 8.0 / 1500.0 * ((double)delay_us / 1e6) * 2.0;
    if (pkts < 10000) pkts = 10000;
    if (pkts > 4e9) pkts = 4e9;
    return (uint32_t)pkts;
}

/* netem's loss field: a probability scaled to 0..2^32-1 (~0 = 100 %), as tc fills it. */
static uint32_t netem_loss(uint32_t ppm)
{
    return (uint32_t)((uint64_t)ppm * UINT32_MAX / 1000000u);
}

static int add_netem(struct nl_sock *sk, int ifindex, uint64_t delay_us, uint32_t loss_ppm, uint64_t rate,
                     const char *devname, char *err, size_t errlen)
{
    struct rtnl_qdisc *q = rtnl_qdisc_alloc();
    if (!q) { err_set(err, errlen, "out of memory"); return -1; }
    rtnl_tc_set_ifindex(TC_CAST(q), ifindex);
    rtnl_tc_set_parent(TC_CAST(q), TC_H_ROOT);
    rtnl_tc_set_handle(TC_CAST(q), DELAY_HANDLE);
    int rc = rtnl_tc_set_kind(TC_CAST(q), "netem");
    if (rc == 0) {
        rtnl_netem_set_delay(q, (int)delay_us);
        rtnl_netem_set_limit(q, (int)netem_limit(rate, delay_us));
        if (loss_ppm)
            rtnl_netem_set_loss(q, (int)netem_loss(loss_ppm)); /* libnl takes the raw u32 as int */
        rc = rtnl_qdisc_add(sk, q, NLM_F_CREATE | NLM_F_REPLACE);
    }
    rtnl_qdisc_put(q);
    if (rc < 0) {
        if (rc == -NLE_OBJ_NOTFOUND || rc == -NLE_OPNOTSUPP)
            err_set(err, errlen, "netem on %s: this kernel has no sch_netem (%s)", devname, nl_geterror(rc));
        else
            err_set(err, errlen, "netem on %s: %s", devname, nl_geterror(rc));
        return -1;
    }
    return 0;
}

static int make_ifb(struct nl_sock *sk, struct delay *d, const char *name, int *ifb_index,
                    char *err, size_t errlen)
{
    /* A leftover of ours (same name) from a killed run: remove it first. */
    int old = (int)if_nametoindex(name);
    if (old > 0) {
        struct delay_nlmsg m;
        delay_nl_build_link_del(&m, old);
        delay_nl_exec(&m);
    }
    struct rtnl_link *l = rtnl_link_alloc();
    if (!l) { err_set(err, errlen, "out of memory"); return -1; }
    rtnl_link_set_name(l, name);
    int rc = rtnl_link_set_type(l, "ifb");
    if (rc == 0) {
        rtnl_link_set_flags(l, IFF_UP);
        rc = rtnl_link_add(sk, l, NLM_F_CREATE | NLM_F_EXCL);
    }
    rtnl_link_put(l);
    if (rc < 0) {
        err_set(err, errlen, "creating IFB device %s: %s (needs the kernel's ifb driver)", name, nl_geterror(rc));
        return -1;
    }
    *ifb_index = (int)if_nametoindex(name);
    if (*ifb_index <= 0) { err_set(err, errlen, "IFB device %s vanished", name); return -1; }
    delay_nl_build_link_del(&d->undo_ifb, *ifb_index);
    return 0;
}

static int redirect_ingress(struct nl_sock *sk, struct delay *d, int ifb_index, char *err, size_t errlen)
{
    struct rtnl_qdisc *q = rtnl_qdisc_alloc();
    if (!q) { err_set(err, errlen, "out of memory"); return -1; }
    rtnl_tc_set_ifindex(TC_CAST(q), d->ifindex);
    rtnl_tc_set_parent(TC_CAST(q), TC_H_INGRESS);
    rtnl_tc_set_handle(TC_CAST(q), INGRESS_HANDLE);
    int rc = rtnl_tc_set_kind(TC_CAST(q), "ingress");
    if (rc == 0) rc = rtnl_qdisc_add(sk, q, NLM_F_CREATE | NLM_F_EXCL);
    rtnl_qdisc_put(q);
    if (rc < 0) {
        err_set(err, errlen, "ingress qdisc on %s: %s", d->dev, nl_geterror(rc));
        return -1;
    }
    delay_nl_build_qdisc_del(&d->undo_ingress, d->ifindex, TC_H_INGRESS, INGRESS_HANDLE);

    struct rtnl_cls *cls = rtnl_cls_alloc();
    struct rtnl_act *act = rtnl_act_alloc();
    if (!cls || !act) {
        if (cls) rtnl_cls_put(cls);
        if (act) rtnl_act_put(act);
        err_set(err, errlen, "out of memory");
        return -1;
    }
    rtnl_tc_set_ifindex(TC_CAST(cls), d->ifindex);
    rtnl_tc_set_parent(TC_CAST(cls), INGRESS_HANDLE);
    rc = rtnl_tc_set_kind(TC_CAST(cls), "u32");
    if (rc == 0) {
        rtnl_cls_set_protocol(cls, ETH_P_ALL);
        rtnl_cls_set_prio(cls, 1);
        rc = rtnl_u32_add_key_uint32(cls, 0, 0, 0, 0); /* match u32 0 0: everything */
    }
    if (rc == 0) rc = rtnl_tc_set_kind(TC_CAST(act), "mirred");
    if (rc == 0) {
        rtnl_mirred_set_action(act, TCA_EGRESS_REDIR);
        rtnl_mirred_set_policy(act, TC_ACT_STOLEN);
        rtnl_mirred_set_ifindex(act, (uint32_t)ifb_index);
        rc = rtnl_u32_add_action(cls, act);
    }
    if (rc == 0) rc = rtnl_cls_add(sk, cls, NLM_F_CREATE | NLM_F_EXCL);
    rtnl_act_put(act);
    rtnl_cls_put(cls);
    if (rc < 0) {
        err_set(err, errlen, "u32 + mirred redirect from %s to its IFB: %s", d->dev, nl_geterror(rc));
        return -1;
    }
    return 0;
}

int delay_netem_apply(struct delay *d, char *err, size_t errlen)
{
    uint64_t out_us, in_us;
    delay_split(d, &out_us, &in_us);
    /* A direction gets a netem qdisc when it has delay, or loss. */
    int do_out = out_us || (d->loss_ppm && d->dir != DELAY_DIR_IN);
    int do_in = in_us || (d->loss_ppm && d->dir != DELAY_DIR_OUT);
    d->undo_ingress.len = d->undo_ifb.len = d->undo_root.len = 0;
    d->root_saved_kind[0] = '\0';

    d->ifindex = (int)if_nametoindex(d->dev);
    if (d->ifindex <= 0) {
        err_set(err, errlen, "%s: no such network interface in this namespace", d->dev);
        return -1;
    }
    struct delay_nl_qdiscs now;
    struct delay_nlmsg restore;
    int rc = delay_nl_inspect(d->ifindex, &now, &restore);
    if (rc < 0) {
        err_set(err, errlen, "reading the qdiscs of %s: %s", d->dev, strerror(-rc));
        return -1;
    }
    if (do_out && now.classes > 0) {
        err_set(err, errlen, "%s has a classful root qdisc (%s, %d classes) that debit could not put "
                 "back after replacing it: remove it, or delay another device", d->dev, now.root_kind,
                 now.classes);
        return -1;
    }
    if (do_in && now.has_ingress) {
        err_set(err, errlen, "%s already has an ingress qdisc: debit will not replace its filters "
                 "(use --delay-direction out, or remove it)", d->dev);
        return -1;
    }

    struct nl_sock *sk = nl_socket_alloc();
    if (!sk) { err_set(err, errlen, "out of memory"); return -1; }
    if ((rc = nl_connect(sk, NETLINK_ROUTE)) < 0) {
        err_set(err, errlen, "rtnetlink: %s", nl_geterror(rc));
        nl_socket_free(sk);
        return -1;
    }
    int ok = 0;
    if (do_in) {
        char ifb[IF_NAMESIZE];
        int ifb_index;
        snprintf(ifb, sizeof ifb, "dbifb%d", d->ifindex);
        /* The redirect before the IFB's netem: until netem is there the IFB just passes
         * packets back (undelayed, never lost), and this order lets kernels without netem
         * exercise the ingress/u32/mirred steps, which the tests then see undone. */
        if (make_ifb(sk, d, ifb, &ifb_index, err, errlen) < 0) goto out;
        if (redirect_ingress(sk, d, ifb_index, err, errlen) < 0) goto out;
        if (add_netem(sk, ifb_index, in_us, d->loss_ppm, d->rate_hint, ifb, err, errlen) < 0) goto out;
    }
    if (do_out) {
        if (now.root_custom && restore.len) {
            d->undo_root = restore;
            snprintf(d->root_saved_kind, sizeof d->root_saved_kind, "%s", now.root_kind);
        } else {
            delay_nl_build_qdisc_del(&d->undo_root, d->ifindex, TC_H_ROOT, DELAY_HANDLE);
        }
        if (add_netem(sk, d->ifindex, out_us, d->loss_ppm, d->rate_hint, d->dev, err, errlen) < 0) {
            d->undo_root.len = 0; /* nothing of ours at the root: leave it alone */
            goto out;
        }
    }
    ok = 1;
out:
    nl_socket_free(sk);
    if (!ok) delay_netem_remove(d, NULL, 0);
    return ok ? 0 : -1;
}

static int undo_step(struct delay_nlmsg *m, const char *what, const char *dev, char *err, size_t errlen)
{
    if (m->len == 0) return 0;
    int rc = delay_nl_exec(m);
    m->len = 0;
    /* Already gone (the device was deleted, say): that is what we wanted. */
    if (rc == 0 || rc == -ENOENT || rc == -ENODEV || rc == -EINVAL) return 0;
    if (err && errlen) {
        /* strerror is not async-signal-safe; the errno number is. */
        char num[16];
        int n = 0, v = -rc;
        char tmp[16];
        do { tmp[n++] = (char)('0' + v % 10); v /= 10; } while (v && n < 15);
        for (int i = 0; i < n; i++) num[i] = tmp[n - 1 - i];
        num[n] = '\0';
        size_t used = 0;
        const char *parts[] = { "could not ", what, " on ", dev, ": errno ", num };
        for (size_t p = 0; p < sizeof parts / sizeof *parts; p++)
            for (const char *c = parts[p]; *c && used + 1 < errlen; c++) err[used++] = *c;
        err[used] = '\0';
    }
    return -1;
}

int delay_netem_remove(struct delay *d, char *err, size_t errlen)
{
    int ret = 0;
    /* Ingress first: a mirred redirect to a vanished IFB would blackhole DEV's traffic. */
    if (undo_step(&d->undo_ingress, "delete the ingress qdisc", d->dev, err, errlen) < 0) ret = -1;
    if (undo_step(&d->undo_ifb, "delete the IFB device", d->dev, ret ? NULL : err, errlen) < 0) ret = -1;
    if (undo_step(&d->undo_root, "restore the root qdisc", d->dev, ret ? NULL : err, errlen) < 0) ret = -1;
    return ret;
}
