/* acl: a list of client addresses and networks ("127.0.0.1", "::1", "10.0.0.0/8",
 * "fd00::/8") that a page such as /metrics is restricted to. IPv4 clients reached through an
 * IPv6 listener (::ffff:a.b.c.d) match their IPv4 entries. */
#ifndef DEBITD_ACL_H
#define DEBITD_ACL_H

#include <netinet/in.h>
#include <stddef.h>
#include <sys/socket.h>

struct acl_entry {
    char *spec;               /* as configured, for config_print */
    struct in6_addr net;      /* IPv4 as ::ffff:a.b.c.d */
    unsigned prefix;          /* bits of net that must match, 0..128 */
};

struct acl {
    struct acl_entry *e;
    size_t n;
};

/* Add SPEC ("ADDR" or "ADDR/PREFIX", numeric IPv4 or IPv6). Returns 0, or -1 with err
 * (a malformed address, a prefix out of range, host bits set beyond the prefix). */
int acl_add(struct acl *a, const char *spec, char *err, size_t errlen);
/* Drop every entry (the list stays usable). */
void acl_clear(struct acl *a);
/* 1 if SA (AF_INET or AF_INET6) matches an entry, 0 if not (or SA is NULL or another family). */
int acl_match(const struct acl *a, const struct sockaddr *sa);

#endif
