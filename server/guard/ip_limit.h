/* ip_limit: limits.per_ip, enforced by debitd rather than libmicrohttpd so that a refusal
 * names its address (libmicrohttpd's own per-IP limit refuses before any callback sees the
 * peer). A table of open connections per peer address, one per listener, shared by the
 * listener's worker threads (one mutex): libmicrohttpd's accept policy callback asks
 * ip_limit_acquire, the close notification calls ip_limit_release. IPv4, IPv6, and an
 * IPv4-mapped IPv6 address counted as the IPv4 address; other families are not limited.
 * Entries exist only while an address has connections open, so the memory is bounded by
 * the open connections (limits.connections). Buckets are chosen by a hash keyed with a
 * random seed, so that a peer choosing many IPv6 addresses cannot aim at one bucket. */
#ifndef DEBITD_IP_LIMIT_H
#define DEBITD_IP_LIMIT_H

#include <stddef.h>
#include <sys/socket.h>

struct ip_limit;

/* A table allowing LIMIT connections per address (0 = unlimited: acquire always admits,
 * nothing is counted), with about EXPECTED addresses in mind (sizes the bucket array; any
 * number fits). NULL with err when out of resources. Free with ip_limit_free. */
struct ip_limit *ip_limit_new(unsigned limit, size_t expected, char *err, size_t errlen);
/* A new LIMIT (a reload), for the connections accepted from now on. Connections open
 * before a change from 0 were not counted: their closes are ignored. Thread-safe. */
void ip_limit_set_limit(struct ip_limit *t, unsigned limit);
/* NULL is fine. */
void ip_limit_free(struct ip_limit *t);

/* A connection from SA (LEN bytes) is being accepted: count it unless the address already
 * has LIMIT connections. A lookup: 1 = admitted (counted: release it once closed), 0 = over
 * the limit (not counted), -1 = out of memory (not counted; refuse it). An address of
 * another family (or SA NULL) is admitted without being counted: 1. Thread-safe. */
int ip_limit_acquire(struct ip_limit *t, const struct sockaddr *sa, socklen_t len);
/* The connection from SA that ip_limit_acquire admitted is closed. An address with no
 * connection counted is ignored. Thread-safe. */
void ip_limit_release(struct ip_limit *t, const struct sockaddr *sa, socklen_t len);
/* Connections counted for SA now; and distinct addresses with connections (for tests). */
unsigned ip_limit_count(struct ip_limit *t, const struct sockaddr *sa, socklen_t len);
size_t ip_limit_addresses(struct ip_limit *t);

#endif
