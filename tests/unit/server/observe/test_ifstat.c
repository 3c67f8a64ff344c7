/* Unit tests for server/observe/ifstat.c: the egress interface of a loopback peer is "lo",
 * and the counters read before and after 1 MiB sent over it grew by at least that much
 * (interface-wide: anything else on lo meanwhile only adds). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ifstat.h"
#include "testlib.h"

/* SOCK's peer address, as libmicrohttpd would hold it. */
static const struct sockaddr *peer_of(int sock, struct sockaddr_storage *ss)
{
    socklen_t sl = sizeof *ss;
    assert_int_equal(getpeername(sock, (struct sockaddr *)ss, &sl), 0);
    return (const struct sockaddr *)ss;
}

static void test_loopback(void **state)
{
    (void)state;
    int a, b;
    struct sockaddr_storage ss;
    testlib_loopback_pair(&b, &a); /* a: debitd's side */
    struct ifstat_point p0, p1;
    assert_int_equal(ifstat_begin(peer_of(a, &ss), &p0), 0);
    assert_true(p0.ifindex > 0);
    assert_string_equal(p0.name, "lo");
    static char buf[65536];
    size_t sent = 0, got = 0;
    while (sent < 1 << 20) { /* 1 MiB, read as it goes (the buffers are smaller) */
        ssize_t n = send(a, buf, sizeof buf, 0);
        assert_true(n > 0);
        sent += (size_t)n;
        for (size_t want = sent; got < want;) {
            ssize_t r = recv(b, buf, sizeof buf, 0);
            assert_true(r > 0);
            got += (size_t)r;
        }
    }
    p1 = p0;
    assert_int_equal(ifstat_read(&p1), 0);
    assert_int_equal(p1.ifindex, p0.ifindex);
    assert_true(p1.tx_bytes - p0.tx_bytes >= sent);
    assert_true(p1.tx_packets > p0.tx_packets);
    /* the route is remembered: a second lookup gives the same interface */
    struct ifstat_point p2;
    assert_int_equal(ifstat_begin(peer_of(a, &ss), &p2), 0);
    assert_int_equal(p2.ifindex, p0.ifindex);
    assert_string_equal(p2.name, "lo");
    close(a);
    close(b);
}

/* A new thread (its own files) reading lo's index without a name: the netlink path. */
static void *read_unnamed(void *arg)
{
    struct ifstat_point *p = arg;
    p->name[0] = 0;
    return (void *)(intptr_t)ifstat_read(p);
}

static void test_netlink(void **state)
{
    (void)state;
    int a, b;
    struct sockaddr_storage ss;
    testlib_loopback_pair(&b, &a); /* a: debitd's side */
    struct ifstat_point by_sysfs, by_netlink;
    assert_int_equal(ifstat_begin(peer_of(a, &ss), &by_sysfs), 0);
    by_netlink = by_sysfs;
    pthread_t th;
    void *rc;
    assert_int_equal(pthread_create(&th, NULL, read_unnamed, &by_netlink), 0);
    assert_int_equal(pthread_join(th, &rc), 0);
    assert_int_equal((intptr_t)rc, 0);
    assert_int_equal(by_netlink.ifindex, by_sysfs.ifindex);
    /* the same counters, read a moment later */
    assert_true(by_netlink.tx_bytes >= by_sysfs.tx_bytes);
    assert_true(by_netlink.tx_packets >= by_sysfs.tx_packets);
    assert_true(by_netlink.tx_bytes - by_sysfs.tx_bytes < 100000000);
    close(a);
    close(b);
}

static void test_unknown(void **state)
{
    (void)state;
    struct ifstat_point p;
    assert_int_equal(ifstat_begin(NULL, &p), -1);
    assert_int_equal(p.ifindex, 0);
    struct sockaddr un = {.sa_family = AF_UNIX};
    assert_int_equal(ifstat_begin(&un, &p), -1);
    p = (struct ifstat_point){.ifindex = 0};
    assert_int_equal(ifstat_read(&p), -1);
    p = (struct ifstat_point){.ifindex = 0x7ffffff0, .name = "nonesuch0"}; /* no such interface */
    assert_int_equal(ifstat_read(&p), -1);
    assert_int_equal(p.ifindex, 0);
    p = (struct ifstat_point){.ifindex = 0x7ffffff0}; /* no name: netlink */
    assert_int_equal(ifstat_read(&p), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_loopback),
        cmocka_unit_test(test_netlink),
        cmocka_unit_test(test_unknown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
