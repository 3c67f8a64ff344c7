/* acl: client address lists (see acl.h). */
#include "acl.h"

#include <arpa/inet.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "units.h"

static void v4_mapped(const struct in_addr *v4, struct in6_addr *out)
{
    memset(out, 0, sizeof *out);
    out->s6_addr[10] = 0xff;
    out->s6_addr[11] = 0xff;
    memcpy(&out->s6_addr[12], v4, 4);
}

/* the first PREFIX bits of A and B are equal */
static int prefix_eq(const struct in6_addr *a, const struct in6_addr *b, unsigned prefix)
{
    unsigned full = prefix / 8, rest = prefix % 8;
    if (memcmp(a->s6_addr, b->s6_addr, full) != 0)
        return 0;
    if (!rest)
        return 1;
    uint8_t mask = (uint8_t)(0xff << (8 - rest));
    return (a->s6_addr[full] & mask) == (b->s6_addr[full] & mask);
}

int acl_add(struct acl *a, const char *spec, char *err, size_t errlen)
{
    char addr[INET6_ADDRSTRLEN + 8];
    const char *slash = strchr(spec, '/');
    size_t alen = slash ? (size_t)(slash - spec) : strlen(spec);
    if (alen == 0 || alen >= sizeof addr)
        return err_set(err, errlen, "\"%s\": expected a numeric address such as \"127.0.0.1\" or \"10.0.0.0/8\"", spec);
    memcpy(addr, spec, alen);
    addr[alen] = 0;
    struct acl_entry x = {0};
    struct in_addr v4;
    unsigned max;
    if (inet_pton(AF_INET, addr, &v4) == 1) {
        v4_mapped(&v4, &x.net);
        max = 32;
    } else if (inet_pton(AF_INET6, addr, &x.net) == 1) {
        max = 128;
    } else {
        return err_set(err, errlen, "\"%s\": not a numeric IPv4 or IPv6 address (names are not resolved)", spec);
    }
    uint64_t bits = max;
    if (slash) {
        enum units_err e = units_parse_uint(slash + 1, 0, max, &bits);
        if (e != UNITS_OK)
            return err_set(err, errlen, "\"%s\": prefix \"%s\": %s (expected 0 to %u)", spec, slash + 1,
                           units_strerror(e), max);
    }
    x.prefix = (unsigned)bits + (max == 32 ? 96 : 0);
    struct in6_addr masked = {0};
    unsigned full = x.prefix / 8, rest = x.prefix % 8;
    memcpy(masked.s6_addr, x.net.s6_addr, full);
    if (rest)
        masked.s6_addr[full] = (uint8_t)(x.net.s6_addr[full] & (0xff << (8 - rest)));
    if (memcmp(&masked, &x.net, sizeof masked) != 0) /* "10.0.0.1/8": likely a typo, as in ip route */
        return err_set(err, errlen, "\"%s\": host bits set beyond the /%llu prefix", spec, (unsigned long long)bits);
    struct acl_entry *e = realloc(a->e, (a->n + 1) * sizeof *e);
    if (!e)
        return err_set(err, errlen, "out of memory");
    a->e = e;
    if (!(x.spec = strdup(spec)))
        return err_set(err, errlen, "out of memory");
    a->e[a->n++] = x;
    return 0;
}

void acl_clear(struct acl *a)
{
    for (size_t i = 0; i < a->n; i++)
        free(a->e[i].spec);
    free(a->e);
    a->e = NULL;
    a->n = 0;
}

int acl_match(const struct acl *a, const struct sockaddr *sa)
{
    struct in6_addr addr;
    if (!sa)
        return 0;
    if (sa->sa_family == AF_INET)
        v4_mapped(&((const struct sockaddr_in *)(const void *)sa)->sin_addr, &addr);
    else if (sa->sa_family == AF_INET6)
        addr = ((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
    else
        return 0;
    for (size_t i = 0; i < a->n; i++)
        if (prefix_eq(&addr, &a->e[i].net, a->e[i].prefix))
            return 1;
    return 0;
}
