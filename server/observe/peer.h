/* peer: a client's address in the one form every per-address rule compares: an IPv4 client
 * is the same peer whether it reached an IPv4 listener (127.0.0.1) or a dual-stack one
 * (::ffff:127.0.0.1). Used by the owner check of /transfers/ID and by the quota key. */
#ifndef DEBITD_PEER_H
#define DEBITD_PEER_H

#include <arpa/inet.h>
#include <sys/socket.h>

#define PEER_ADDR_LEN 16

struct peer {
    unsigned char addr[PEER_ADDR_LEN]; /* IPv6, or IPv4 as ::ffff:a.b.c.d */
    int v4;                            /* the address is an IPv4 one */
    char text[INET6_ADDRSTRLEN];       /* "127.0.0.1", "2001:db8::1" (no port, no brackets) */
};

/* Fill *p from SA (AF_INET or AF_INET6; NULL or another family: -1, *p zeroed). A lookup
 * without an error message: 0 on success, -1 when SA is not an IP address. */
int peer_from_sockaddr(const struct sockaddr *sa, struct peer *p);

/* The key a per-address budget is kept under: the whole address for IPv4, the /64 for
 * IPv6 (one host commonly holds a whole /64 and rotates its temporary addresses in it, so
 * a full-address key would let one client multiply its budget). */
void peer_quota_key(const struct peer *p, unsigned char key[PEER_ADDR_LEN]);

/* 1 when A and B are the same address, else 0. */
int peer_same(const struct peer *a, const struct peer *b);

#endif
