/* ifstat: what left debitd's network interface during a transfer (issue 32). The
 * interface is the one the kernel's route to the client leaves by (an RTM_GETROUTE for the
 * peer's address: debitd binds no socket to a device), and its tx_bytes / tx_packets are
 * read at the transfer's start and end: from /sys/class/net/NAME/statistics (kept open per
 * thread, one pread each) when /sys shows debitd's network namespace, else by rtnetlink
 * (RTM_GETSTATS, IFLA_STATS_LINK_64), whose answer is always that namespace's. Their quotient is bytes per packet on the wire: about 1514 B without TSO/GSO,
 * tens of KB with them (each "packet" is a super-packet the NIC or the driver cuts), where
 * TCP_INFO's bytes per segment are always about one MSS. The counters are interface-wide:
 * every other packet the interface sent meanwhile is in them.
 *
 * Netlink requests use one rtnetlink socket per thread (libmnl), opened on first use; a
 * thread's route lookups (and the interface's name, RTM_GETLINK) are remembered for
 * IFSTAT_ROUTE_TTL_S per peer address. */
#ifndef DEBITD_IFSTAT_H
#define DEBITD_IFSTAT_H

#include <net/if.h>
#include <sys/socket.h>
#include <stdint.h>

/* How long a route lookup is reused for the same peer address, seconds. */
#define IFSTAT_ROUTE_TTL_S 1.0
/* A start within this long of the thread's last reading of the same interface (the end of
 * its previous transfer, back to back under load) reuses it: half the reads per transfer;
 * what the interface sent in that time is then counted in. Seconds. */
#define IFSTAT_REUSE_S 0.001

/* One reading of an interface's transmit counters. */
struct ifstat_point {
    int ifindex;                 /* 0: unknown (nothing else is set) */
    char name[IF_NAMESIZE];
    uint64_t tx_bytes, tx_packets;
};

/* The interface the route to PEER (a client's AF_INET or AF_INET6 address, as
 * libmicrohttpd holds it: no system call for it) leaves by and its counters now, into *P:
 * 0, or -1 with P->ifindex 0 (NULL or another family, no route, netlink refused). */
int ifstat_begin(const struct sockaddr *peer, struct ifstat_point *p);

/* The counters now of the interface P names (ifindex and name, as ifstat_begin filled
 * them) into P: 0, or -1 with P->ifindex 0 (the interface is gone). */
int ifstat_read(struct ifstat_point *p);

#endif
