/* peer: see peer.h. */
#include "peer.h"

#include <netinet/in.h>
#include <string.h>

int peer_from_sockaddr(const struct sockaddr *sa, struct peer *p)
{
    memset(p, 0, sizeof *p);
    if (sa && sa->sa_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)sa;
        p->addr[10] = p->addr[11] = 0xff;
        memcpy(&p->addr[12], &a->sin_addr, 4);
        p->v4 = 1;
    } else if (sa && sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)sa;
        memcpy(p->addr, &a->sin6_addr, PEER_ADDR_LEN);
        p->v4 = IN6_IS_ADDR_V4MAPPED(&a->sin6_addr);
    } else {
        return -1;
    }
    if (p->v4)
        inet_ntop(AF_INET, &p->addr[12], p->text, sizeof p->text);
    else
        inet_ntop(AF_INET6, p->addr, p->text, sizeof p->text);
    return 0;
}

void peer_quota_key(const struct peer *p, unsigned char key[PEER_ADDR_LEN])
{
    memcpy(key, p->addr, PEER_ADDR_LEN);
    if (!p->v4)
        memset(key + 8, 0, PEER_ADDR_LEN - 8);
}

int peer_same(const struct peer *a, const struct peer *b)
{
    return memcmp(a->addr, b->addr, PEER_ADDR_LEN) == 0;
}
