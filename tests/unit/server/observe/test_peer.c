/* Unit tests for server/observe/peer.c: one form per client address (an IPv4 client is the same
 * peer through a dual-stack listener), and the quota key (IPv4 whole, IPv6 per /64). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <netinet/in.h>

#include "peer.h"

static int peer_of(const char *addr, struct peer *p)
{
    struct sockaddr_storage ss = {0};
    struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1)
        s4->sin_family = AF_INET;
    else if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1)
        s6->sin6_family = AF_INET6;
    return peer_from_sockaddr((struct sockaddr *)&ss, p);
}

static void test_forms(void **state)
{
    (void)state;
    static const struct {
        const char *a, *b;
        const char *text_a; /* how a is written */
        int same;           /* peer_same(a, b) */
        int same_key;       /* the same quota key */
    } rows[] = {
        {"127.0.0.1", "::ffff:127.0.0.1", "127.0.0.1", 1, 1},
        {"127.0.0.1", "127.0.0.2", "127.0.0.1", 0, 0},
        {"::ffff:10.0.0.1", "10.0.0.1", "10.0.0.1", 1, 1},
        {"2001:db8::1", "2001:db8::1", "2001:db8::1", 1, 1},
        {"2001:db8::1", "2001:db8::2:3:4:5", "2001:db8::1", 0, 1}, /* same /64 */
        {"2001:db8:0:1::1", "2001:db8::1", "2001:db8:0:1::1", 0, 0},
        {"::1", "::ffff:0.0.0.1", "::1", 0, 0}, /* not a mapped address */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct peer a, b;
        assert_int_equal(peer_of(rows[i].a, &a), 0);
        assert_int_equal(peer_of(rows[i].b, &b), 0);
        unsigned char ka[PEER_ADDR_LEN], kb[PEER_ADDR_LEN];
        peer_quota_key(&a, ka);
        peer_quota_key(&b, kb);
        if (strcmp(a.text, rows[i].text_a) != 0 || peer_same(&a, &b) != rows[i].same ||
            (memcmp(ka, kb, sizeof ka) == 0) != rows[i].same_key)
            fail_msg("row %zu (%s, %s): text \"%s\" same %d key %d", i, rows[i].a, rows[i].b, a.text,
                     peer_same(&a, &b), memcmp(ka, kb, sizeof ka) == 0);
    }
    struct peer p;
    struct sockaddr none = {.sa_family = AF_UNIX};
    assert_int_equal(peer_from_sockaddr(&none, &p), -1);
    assert_int_equal(peer_from_sockaddr(NULL, &p), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_forms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
