/* Unit tests for server/guard/ip_limit.c (limits.per_ip): a table of steps (acquire or release
 * from an address, the expected answer and count) covering IPv4, IPv6, an IPv4-mapped
 * IPv6 address counted with its IPv4 address, other families not limited, a limit of 0,
 * releases of unknown addresses; entries freed at 0; many addresses (more than the
 * buckets); and threads sharing one table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <pthread.h>
#include <sys/un.h>

#include "array.h"
#include "ip_limit.h"

/* ADDR ("1.2.3.4", "::1", "unix") as a sockaddr */
static socklen_t sa_of(const char *addr, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    if (strcmp(addr, "unix") == 0) {
        ss->ss_family = AF_UNIX;
        return sizeof(struct sockaddr_un);
    }
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    if (inet_pton(AF_INET, addr, &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = htons(1234);
        return sizeof *in;
    }
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    assert_int_equal(inet_pton(AF_INET6, addr, &in6->sin6_addr), 1);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(4321);
    return sizeof *in6;
}

enum op { ACQ, REL };
struct step {
    enum op op;
    const char *addr;
    int want;          /* ACQ: ip_limit_acquire's answer */
    unsigned count;    /* ip_limit_count after the step */
    size_t addresses;  /* ip_limit_addresses after the step */
};

static void run(unsigned limit, const struct step *steps, size_t n)
{
    char err[128];
    struct ip_limit *t = ip_limit_new(limit, 10, err, sizeof err);
    assert_non_null(t);
    for (size_t i = 0; i < n; i++) {
        struct sockaddr_storage ss;
        socklen_t len = sa_of(steps[i].addr, &ss);
        if (steps[i].op == ACQ) {
            int r = ip_limit_acquire(t, (struct sockaddr *)&ss, len);
            if (r != steps[i].want)
                fail_msg("step %zu (acquire %s): %d, want %d", i, steps[i].addr, r, steps[i].want);
        } else {
            ip_limit_release(t, (struct sockaddr *)&ss, len);
        }
        unsigned c = ip_limit_count(t, (struct sockaddr *)&ss, len);
        if (c != steps[i].count)
            fail_msg("step %zu (%s): count %u, want %u", i, steps[i].addr, c, steps[i].count);
        if (ip_limit_addresses(t) != steps[i].addresses)
            fail_msg("step %zu (%s): %zu addresses, want %zu", i, steps[i].addr, ip_limit_addresses(t),
                     steps[i].addresses);
    }
    ip_limit_free(t);
}

/* A reload changes the limit under open connections (ip_limit_set_limit). */
static void test_set_limit(void **state)
{
    (void)state;
    char err[128];
    struct ip_limit *t = ip_limit_new(1, 10, err, sizeof err);
    assert_non_null(t);
    struct sockaddr_storage ss;
    socklen_t len = sa_of("127.0.0.40", &ss);
    const struct sockaddr *sa = (const struct sockaddr *)&ss;
    assert_int_equal(ip_limit_acquire(t, sa, len), 1);
    assert_int_equal(ip_limit_acquire(t, sa, len), 0); /* 1 allowed */
    ip_limit_set_limit(t, 2);
    assert_int_equal(ip_limit_acquire(t, sa, len), 1); /* raised: one more */
    assert_int_equal(ip_limit_count(t, sa, len), 2);
    ip_limit_set_limit(t, 0);
    assert_int_equal(ip_limit_acquire(t, sa, len), 1); /* unlimited: admitted, not counted */
    assert_int_equal(ip_limit_count(t, sa, len), 2);
    ip_limit_release(t, sa, len); /* the counted ones are still released at limit 0 */
    ip_limit_release(t, sa, len);
    ip_limit_release(t, sa, len); /* the uncounted one: ignored */
    assert_int_equal(ip_limit_count(t, sa, len), 0);
    assert_int_equal(ip_limit_addresses(t), 0);
    ip_limit_set_limit(t, 1); /* from 0: counting starts afresh */
    assert_int_equal(ip_limit_acquire(t, sa, len), 1);
    assert_int_equal(ip_limit_acquire(t, sa, len), 0);
    ip_limit_free(t);
}

static void test_limit_2(void **state)
{
    (void)state;
    static const struct step steps[] = {
        {ACQ, "127.0.0.26", 1, 1, 1},
        {ACQ, "127.0.0.26", 1, 2, 1},
        {ACQ, "127.0.0.26", 0, 2, 1},          /* over the limit: refused, not counted */
        {ACQ, "::ffff:127.0.0.26", 0, 2, 1},   /* the same address, IPv4-mapped */
        {ACQ, "127.0.0.27", 1, 1, 2},          /* another address has its own count */
        {REL, "::ffff:127.0.0.26", 0, 1, 2},   /* a mapped close releases the IPv4 count */
        {ACQ, "127.0.0.26", 1, 2, 2},
        {ACQ, "fd00::1", 1, 1, 3},
        {ACQ, "fd00::1", 1, 2, 3},
        {ACQ, "fd00::1", 0, 2, 3},
        {ACQ, "fd00::2", 1, 1, 4},             /* IPv6 addresses are whole addresses */
        {ACQ, "::127.0.0.26", 1, 1, 5},        /* IPv4-compatible is not mapped: its own */
        {REL, "fd00::1", 0, 1, 5},
        {REL, "fd00::1", 0, 0, 4},             /* at 0 the entry goes */
        {REL, "fd00::1", 0, 0, 4},             /* a release too many: ignored */
        {REL, "198.18.0.1", 0, 0, 4},          /* never seen: ignored */
        {ACQ, "unix", 1, 0, 4},                /* another family: admitted, not counted */
        {ACQ, "unix", 1, 0, 4},
        {ACQ, "unix", 1, 0, 4},
        {REL, "unix", 0, 0, 4},
        {REL, "127.0.0.26", 0, 1, 4},
        {REL, "127.0.0.26", 0, 0, 3},
        {REL, "127.0.0.27", 0, 0, 2},
        {REL, "fd00::2", 0, 0, 1},
        {REL, "::127.0.0.26", 0, 0, 0},
    };
    run(2, steps, ARRAY_SIZE(steps));
}

static void test_unlimited(void **state)
{
    (void)state;
    static const struct step steps[] = {
        {ACQ, "127.0.0.2", 1, 0, 0}, /* per_ip = 0: nothing counted */
        {ACQ, "127.0.0.2", 1, 0, 0},
        {ACQ, "::1", 1, 0, 0},
        {REL, "127.0.0.2", 0, 0, 0},
    };
    run(0, steps, ARRAY_SIZE(steps));
}

static void test_null_address(void **state)
{
    (void)state;
    char err[128];
    struct ip_limit *t = ip_limit_new(1, 0, err, sizeof err);
    assert_non_null(t);
    assert_int_equal(ip_limit_acquire(t, NULL, 0), 1);
    assert_int_equal(ip_limit_acquire(t, NULL, 0), 1);
    ip_limit_release(t, NULL, 0);
    /* an AF_INET address too short for its family: not an address */
    struct sockaddr_storage ss;
    sa_of("127.0.0.1", &ss);
    assert_int_equal(ip_limit_acquire(t, (struct sockaddr *)&ss, 4), 1);
    assert_int_equal(ip_limit_addresses(t), 0);
    ip_limit_free(t);
    ip_limit_free(NULL);
}

/* The Ith of many addresses, IPv4 and IPv6 in turn. */
static socklen_t nth_addr(int i, struct sockaddr_storage *ss)
{
    char a[64];
    snprintf(a, sizeof a, i % 2 ? "198.18.%d.%d" : "fd00::%x:%x", i / 250, i % 250);
    return sa_of(a, ss);
}

static void test_many_addresses(void **state)
{
    (void)state;
    char err[128];
    struct ip_limit *t = ip_limit_new(3, 16, err, sizeof err); /* far fewer buckets than addresses */
    assert_non_null(t);
    enum { N = 5000 };
    struct sockaddr_storage ss;
    for (int round = 0; round < 4; round++)
        for (int i = 0; i < N; i++) {
            socklen_t len = nth_addr(i, &ss);
            assert_int_equal(ip_limit_acquire(t, (struct sockaddr *)&ss, len), round < 3);
        }
    assert_int_equal(ip_limit_addresses(t), N);
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < N; i++) {
            socklen_t len = nth_addr(i, &ss);
            ip_limit_release(t, (struct sockaddr *)&ss, len);
        }
    assert_int_equal(ip_limit_addresses(t), 0);
    ip_limit_free(t);
}

/* Threads sharing one table, as a listener's workers do: each thread acquires and releases
 * its own address and one shared address; the shared one never goes over the limit. */
struct worker {
    struct ip_limit *t;
    int id;
    unsigned over; /* failures: the shared address above the limit, its own refused */
    unsigned admitted;
};

#define SHARED_LIMIT 4

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct sockaddr_storage own, shared;
    char a[32];
    snprintf(a, sizeof a, "10.0.0.%d", w->id + 1);
    socklen_t own_len = sa_of(a, &own);
    socklen_t sh_len = sa_of("::ffff:10.1.1.1", &shared);
    for (int i = 0; i < 20000; i++) {
        if (ip_limit_acquire(w->t, (struct sockaddr *)&own, own_len) != 1)
            w->over++; /* its own address has one connection at a time: always admitted */
        int r = ip_limit_acquire(w->t, (struct sockaddr *)&shared, sh_len);
        if (r == 1) {
            w->admitted++;
            if (ip_limit_count(w->t, (struct sockaddr *)&shared, sh_len) > SHARED_LIMIT)
                w->over++;
            ip_limit_release(w->t, (struct sockaddr *)&shared, sh_len);
        }
        ip_limit_release(w->t, (struct sockaddr *)&own, own_len);
    }
    return NULL;
}

static void test_threads(void **state)
{
    (void)state;
    char err[128];
    struct ip_limit *t = ip_limit_new(SHARED_LIMIT, 64, err, sizeof err);
    assert_non_null(t);
    struct worker w[8];
    pthread_t th[ARRAY_SIZE(w)];
    for (size_t i = 0; i < ARRAY_SIZE(w); i++) {
        w[i] = (struct worker){.t = t, .id = (int)i};
        assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
    }
    unsigned admitted = 0;
    for (size_t i = 0; i < ARRAY_SIZE(w); i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].over, 0);
        admitted += w[i].admitted;
    }
    assert_true(admitted > 0);
    assert_int_equal(ip_limit_addresses(t), 0); /* every count back to 0, every entry freed */
    ip_limit_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_set_limit),
        cmocka_unit_test(test_limit_2),      cmocka_unit_test(test_unlimited),
        cmocka_unit_test(test_null_address), cmocka_unit_test(test_many_addresses),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
