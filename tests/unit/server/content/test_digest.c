/* Unit tests for server/content/digest.c: digests of sizes within and beyond the region equal
 * libcrypto's one-shot digest of the same bytes; a waiter is parked before it can be woken
 * and woken once; many waiters share one computation; the smallest queued size goes first;
 * a waiter whose socket hangs up is woken GONE while the hash goes on; digest_stop cancels a
 * hash that would take a quarter of an hour within a chunk and wakes everyone STOPPED; a
 * failed hash wakes its waiters FAILED and is retried by the next request. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <sys/socket.h>

#include "content.h"
#include "digest.h"
#include "sys.h"

#define REGION (1u << 20)
#define HUGE_SIZE (1ULL << 40) /* 1 TiB over the 1 MiB region: ~15 min of hashing */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static uint64_t wake_order[16];
static unsigned n_woken;

struct tw {
    struct digest_waiter w;
    uint64_t size;
    int parked, woken;
};

static void tw_park(struct digest_waiter *w)
{
    struct tw *t = w->arg;
    t->parked++; /* under digest's lock: before any wake can run */
}

static void tw_wake(struct digest_waiter *w)
{
    struct tw *t = w->arg;
    pthread_mutex_lock(&mu);
    if (t->parked != 1)
        t->parked = -1; /* woken unparked: the test's check of parked == 1 fails */
    t->woken++;
    if (n_woken < 16)
        wake_order[n_woken] = t->size;
    n_woken++;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
}

static void tw_init(struct tw *t, uint64_t size, int fd)
{
    memset(t, 0, sizeof *t);
    t->size = size;
    t->w = (struct digest_waiter){.fd = fd, .park = tw_park, .wake = tw_wake, .arg = t};
}

/* Wait up to MS for t to be woken; 1 when it was. */
static int tw_wait(struct tw *t, int ms)
{
    int64_t end = sys_mono_ms() + ms;
    pthread_mutex_lock(&mu);
    while (!t->woken && sys_mono_ms() < end) {
        pthread_mutex_unlock(&mu);
        sys_sleep_ms(5);
        pthread_mutex_lock(&mu);
    }
    int w = t->woken;
    pthread_mutex_unlock(&mu);
    return w;
}

static void reset_log(void)
{
    pthread_mutex_lock(&mu);
    n_woken = 0;
    pthread_mutex_unlock(&mu);
}

/* libcrypto's digest of the first SIZE bytes of the repeated region */
static void want_hex(const unsigned char *map, uint64_t size, char out[65])
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    assert_non_null(ctx);
    assert_int_equal(EVP_DigestInit_ex(ctx, EVP_sha256(), NULL), 1);
    for (uint64_t done = 0; done < size;) {
        uint64_t n = size - done < REGION ? size - done : REGION;
        EVP_DigestUpdate(ctx, map, (size_t)n);
        done += n;
    }
    unsigned char md[32];
    unsigned int len = 0;
    EVP_DigestFinal_ex(ctx, md, &len);
    EVP_MD_CTX_free(ctx);
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static struct content *region(void)
{
    char err[256];
    struct content *c = content_new(5, REGION, 1, err, sizeof err);
    if (!c)
        fail_msg("content_new: %s", err);
    return c;
}

static void test_values(void **state)
{
    (void)state;
    struct content *c = region();
    /* within, equal to and beyond the region; a duplicate; a partial last repeat */
    static const uint64_t sizes[] = {0, 1, 1000, REGION, REGION + 1, 3 * REGION, 1000, 5 * REGION / 2};
    const size_t n = sizeof sizes / sizeof sizes[0];
    char err[256], want[65], hex[65];
    struct digest *d = digest_new(c, sizes, n, err, sizeof err);
    assert_non_null(d);
    for (size_t i = 0; i < n; i++) {
        struct tw t;
        tw_init(&t, sizes[i], -1);
        want_hex(content_map(c), sizes[i], want);
        int was_cached = digest_cached(d, sizes[i], hex);
        enum digest_outcome o = digest_request(d, sizes[i], &t.w);
        if (was_cached) { /* only the duplicate 1000 */
            assert_int_equal(sizes[i], 1000);
            assert_int_equal(o, DIGEST_READY);
            assert_int_equal(t.parked, 0);
        } else {
            assert_int_equal(o, DIGEST_PENDING);
            assert_int_equal(t.parked, 1);
            assert_true(tw_wait(&t, 10000));
            assert_int_equal(t.woken, 1);
            assert_int_equal(t.w.outcome, DIGEST_READY);
        }
        if (strcmp(t.w.hex, want) != 0)
            fail_msg("size %llu: sha256 %s, want %s", (unsigned long long)sizes[i], t.w.hex, want);
        assert_int_equal(digest_cached(d, sizes[i], hex), 1);
        assert_string_equal(hex, want);
        /* known now: answered at once, not parked */
        struct tw again;
        tw_init(&again, sizes[i], -1);
        assert_int_equal(digest_request(d, sizes[i], &again.w), DIGEST_READY);
        assert_int_equal(again.parked, 0);
        assert_string_equal(again.w.hex, want);
    }
    assert_int_equal(digest_computations(d), 7); /* 8 sizes, one twice */
    struct tw u;
    tw_init(&u, 12345, -1);
    assert_int_equal(digest_request(d, 12345, &u.w), DIGEST_UNKNOWN);
    assert_int_equal(u.parked, 0);
    assert_int_equal(digest_cached(d, 12345, hex), 0);
    digest_free(d);
    digest_free(NULL);
    content_free(c);
}

/* 8 concurrent first requests for one size: one computation, 8 wakes, one digest. */
static void test_shared(void **state)
{
    (void)state;
    struct content *c = region();
    const uint64_t size = 256ULL << 20; /* ~0.2 s: the requests arrive while it runs */
    char err[256], want[65];
    struct digest *d = digest_new(c, &size, 1, err, sizeof err);
    assert_non_null(d);
    struct tw t[8];
    unsigned pending = 0;
    for (int i = 0; i < 8; i++) {
        tw_init(&t[i], size, -1);
        pending += digest_request(d, size, &t[i].w) == DIGEST_PENDING;
    }
    want_hex(content_map(c), size, want);
    for (int i = 0; i < 8; i++) {
        if (t[i].parked)
            assert_true(tw_wait(&t[i], 20000));
        assert_int_equal(t[i].w.outcome, DIGEST_READY);
        assert_string_equal(t[i].w.hex, want);
    }
    print_message("# %u of 8 requests waited for the one computation\n", pending);
    assert_true(pending >= 1);
    assert_int_equal(digest_computations(d), 1);
    digest_free(d);
    content_free(c);
}

/* While 512 MiB is hashed, 256 MiB and 1000 bytes are queued: 1000 is hashed before 256 MiB. */
static void test_smallest_first(void **state)
{
    (void)state;
    struct content *c = region();
    const uint64_t sizes[] = {512ULL << 20, 256ULL << 20, 1000};
    char err[256];
    struct digest *d = digest_new(c, sizes, 3, err, sizeof err);
    assert_non_null(d);
    reset_log();
    struct tw t[3];
    for (int i = 0; i < 3; i++) {
        tw_init(&t[i], sizes[i], -1);
        assert_int_equal(digest_request(d, sizes[i], &t[i].w), DIGEST_PENDING);
        if (i == 0)
            sys_sleep_ms(20); /* let the thread take the first */
    }
    for (int i = 0; i < 3; i++)
        assert_true(tw_wait(&t[i], 30000));
    assert_int_equal(n_woken, 3);
    assert_int_equal(wake_order[0], 512ULL << 20);
    assert_int_equal(wake_order[1], 1000);
    assert_int_equal(wake_order[2], 256ULL << 20);
    digest_free(d);
    content_free(c);
}

/* A waiter whose peer closes is woken GONE while the hash runs; the others keep waiting. */
static void test_gone(void **state)
{
    (void)state;
    struct content *c = region();
    const uint64_t size = HUGE_SIZE;
    char err[256];
    struct digest *d = digest_new(c, &size, 1, err, sizeof err);
    assert_non_null(d);
    int sv[2], alive[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, alive), 0);
    struct tw left, stays, nofd;
    tw_init(&left, size, sv[0]);
    tw_init(&stays, size, alive[0]);
    tw_init(&nofd, size, -1);
    assert_int_equal(digest_request(d, size, &left.w), DIGEST_PENDING);
    assert_int_equal(digest_request(d, size, &stays.w), DIGEST_PENDING);
    assert_int_equal(digest_request(d, size, &nofd.w), DIGEST_PENDING);
    sys_sleep_ms(150);
    assert_int_equal(left.woken + stays.woken + nofd.woken, 0);
    int64_t t0 = sys_mono_ms();
    close(sv[1]); /* the client goes away */
    assert_true(tw_wait(&left, 5000));
    print_message("# hang-up noticed after %lld ms (checked every 100 ms)\n", (long long)(sys_mono_ms() - t0));
    assert_int_equal(left.w.outcome, DIGEST_GONE);
    sys_sleep_ms(150);
    assert_int_equal(stays.woken, 0);
    assert_int_equal(nofd.woken, 0);
    digest_free(d); /* wakes the rest */
    assert_int_equal(stays.woken, 1);
    assert_int_equal(stays.w.outcome, DIGEST_STOPPED);
    assert_int_equal(nofd.w.outcome, DIGEST_STOPPED);
    close(sv[0]);
    close(alive[0]);
    close(alive[1]);
    content_free(c);
}

/* digest_stop cancels a 1 TiB hash at once and wakes its waiters; later requests: STOPPED. */
static void test_stop_cancels(void **state)
{
    (void)state;
    struct content *c = region();
    const uint64_t sizes[] = {HUGE_SIZE, 1000};
    char err[256], hex[65];
    struct digest *d = digest_new(c, sizes, 2, err, sizeof err);
    assert_non_null(d);
    struct tw a, b, q;
    tw_init(&a, HUGE_SIZE, -1);
    tw_init(&b, HUGE_SIZE, -1);
    tw_init(&q, 1000, -1); /* queued behind it */
    assert_int_equal(digest_request(d, HUGE_SIZE, &a.w), DIGEST_PENDING);
    assert_int_equal(digest_request(d, HUGE_SIZE, &b.w), DIGEST_PENDING);
    sys_sleep_ms(100);
    assert_int_equal(digest_request(d, 1000, &q.w), DIGEST_PENDING);
    int64_t t0 = sys_mono_ms();
    digest_stop(d);
    int64_t ms = sys_mono_ms() - t0;
    print_message("# digest_stop during a 1 TiB hash returned in %lld ms\n", (long long)ms);
    assert_true(ms < 2000); /* one 8 MiB chunk is a few ms; the margin is for a loaded machine */
    assert_int_equal(a.woken + b.woken + q.woken, 3);
    assert_int_equal(a.w.outcome, DIGEST_STOPPED);
    assert_int_equal(b.w.outcome, DIGEST_STOPPED);
    assert_int_equal(q.w.outcome, DIGEST_STOPPED);
    struct tw late;
    tw_init(&late, 1000, -1);
    assert_int_equal(digest_request(d, 1000, &late.w), DIGEST_STOPPED);
    assert_int_equal(late.parked, 0);
    assert_int_equal(digest_cached(d, HUGE_SIZE, hex), 0);
    assert_int_equal(digest_computations(d), 0);
    digest_stop(d); /* idempotent */
    digest_free(d);
    content_free(c);
}

/* A hash that fails wakes its waiters FAILED with a reason, caches nothing, and the next
 * request starts again (here: 5 bytes of an empty region, which libcrypto cannot be fed). */
static void test_failure_retries(void **state)
{
    (void)state;
    const uint64_t size = 5;
    char err[256], hex[65];
    struct digest *d = digest_new(NULL, &size, 1, err, sizeof err);
    assert_non_null(d);
    for (int round = 0; round < 2; round++) {
        struct tw t;
        tw_init(&t, size, -1);
        assert_int_equal(digest_request(d, size, &t.w), DIGEST_PENDING);
        assert_true(tw_wait(&t, 5000));
        assert_int_equal(t.w.outcome, DIGEST_FAILED);
        if (!strstr(t.w.err, "empty region"))
            fail_msg("round %d: err \"%s\"", round, t.w.err);
        assert_int_equal(digest_cached(d, size, hex), 0);
    }
    assert_int_equal(digest_computations(d), 0);
    digest_free(d);
}


static void no_done(const struct content *c, void *arg)
{
    (void)c;
    (void)arg;
}

/* A region that is not (here: never) complete is hashed from the generator's bytes: a
 * private huge tmpfs made for 4 MiB asked for 8 MiB (root only). */
static void test_from_generator(void **state)
{
    (void)state;
    char why[96], err[256], want[65];
    int fd = content_backing_open(4u << 20, why, sizeof why);
    if (fd < 0) {
        skip(); /* needs root for a private tmpfs */
        return;
    }
    const uint64_t region = 8u << 20;
    struct content *c = content_start(fd, why, 5, region, 1, no_done, NULL, err, sizeof err);
    assert_non_null(c);
    assert_int_equal(content_wait(c, err, sizeof err), -1);
    assert_null(content_map(c));
    unsigned char *buf = malloc(region);
    assert_non_null(buf);
    content_generate(5, 0, buf, region);
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char md[32];
    unsigned int len = 0;
    EVP_DigestInit_ex(ctx, EVP_sha256(), NULL);
    EVP_DigestUpdate(ctx, buf, region);
    EVP_DigestUpdate(ctx, buf, 1000); /* a size of the region and 1000 bytes: it repeats */
    EVP_DigestFinal_ex(ctx, md, &len);
    EVP_MD_CTX_free(ctx);
    for (int i = 0; i < 32; i++)
        snprintf(want + 2 * i, 3, "%02x", md[i]);
    free(buf);
    uint64_t size = region + 1000;
    struct digest *d = digest_new(c, &size, 1, err, sizeof err);
    assert_non_null(d);
    struct tw t;
    tw_init(&t, size, -1);
    assert_int_equal(digest_request(d, size, &t.w), DIGEST_PENDING);
    assert_true(tw_wait(&t, 10000));
    assert_int_equal(t.w.outcome, DIGEST_READY);
    assert_string_equal(t.w.hex, want);
    digest_free(d);
    content_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_shared),
        cmocka_unit_test(test_smallest_first),
        cmocka_unit_test(test_gone),
        cmocka_unit_test(test_stop_cancels),
        cmocka_unit_test(test_failure_retries),
        cmocka_unit_test(test_from_generator),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
