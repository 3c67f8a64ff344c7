/* Unit tests for server/content.c: the generator is deterministic, position-independent
 * (any slice generates alone), seed-dependent, and the memfd region and its SHA-256 agree
 * with it, including for sizes that repeat the region. */
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

#include "content.h"

static void test_slices(void **state)
{
    (void)state;
    enum { N = 4096 };
    unsigned char whole[N], part[N];
    content_generate(7, 0, whole, N);
    static const struct {
        uint64_t off;
        size_t len;
    } rows[] = {{0, 1}, {1, 7}, {3, 100}, {8, 8}, {13, 2000}, {4095, 1}, {0, N}, {1000, 3096}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        memset(part, 0, sizeof part);
        content_generate(7, rows[i].off, part, rows[i].len);
        if (memcmp(part, whole + rows[i].off, rows[i].len) != 0)
            fail_msg("slice [%llu, +%zu) differs from the whole", (unsigned long long)rows[i].off, rows[i].len);
    }
    unsigned char again[N];
    content_generate(7, 0, again, N);
    assert_memory_equal(whole, again, N);
    content_generate(8, 0, again, N);
    assert_memory_not_equal(whole, again, N);
    /* a known value, so that a change of generator (= other bytes for every user) is seen */
    char hex[17];
    for (int i = 0; i < 8; i++)
        snprintf(hex + 2 * i, 3, "%02x", whole[i]);
    assert_string_equal(hex, "e1ff8f0182e5d23c");
    content_generate(1, 1ULL << 40, part, 8); /* far offsets work too */
    for (int i = 0; i < 8; i++)
        snprintf(hex + 2 * i, 3, "%02x", part[i]);
    assert_string_equal(hex, "55ab7b40650598d8");
}

static void sha_hex(const unsigned char *p, size_t n, char out[65])
{
    unsigned char md[32];
    unsigned int len = 0;
    EVP_Digest(p, n, md, &len, EVP_sha256(), NULL);
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", md[i]);
}

static void test_region_and_sha(void **state)
{
    (void)state;
    const uint64_t region = 1 << 20;
    char err[256], hex[65], want[65];
    struct content *c = content_new(5, region, 2, err, sizeof err);
    assert_non_null(c);
    assert_int_equal(content_region_size(c), region);
    unsigned char *buf = malloc(3 * region);
    assert_non_null(buf);
    content_generate(5, 0, buf, region);
    /* the memfd holds exactly the generator's bytes */
    unsigned char *fromfd = malloc(region);
    assert_non_null(fromfd);
    assert_int_equal(pread(content_fd(c), fromfd, region, 0), (ssize_t)region);
    assert_memory_equal(fromfd, buf, region);
    assert_memory_equal(content_map(c), buf, region);
    /* sizes within, equal to and beyond the region (repetition) */
    memcpy(buf + region, buf, region);
    memcpy(buf + 2 * region, buf, region);
    static const uint64_t sizes[] = {0, 1, 1000, 1 << 20, (1 << 20) + 1, 3 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        assert_int_equal(content_sha256_cached(c, sizes[i], hex), 0);
        assert_int_equal(content_sha256(c, sizes[i], hex, err, sizeof err), 0);
        sha_hex(buf, sizes[i], want);
        if (strcmp(hex, want) != 0)
            fail_msg("size %llu: sha256 %s, want %s", (unsigned long long)sizes[i], hex, want);
        assert_int_equal(content_sha256_cached(c, sizes[i], hex), 1);
        assert_string_equal(hex, want);
    }
    free(fromfd);
    free(buf);
    content_free(c);
    content_free(NULL);
}

static void test_threads_agree(void **state)
{
    (void)state;
    char err[256], h1[65], h2[65];
    const uint64_t size = (64 << 20) + 12345; /* big enough to be split across threads */
    struct content *a = content_new(9, size, 1, err, sizeof err);
    struct content *b = content_new(9, size, 3, err, sizeof err);
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(content_sha256(a, size, h1, err, sizeof err), 0);
    assert_int_equal(content_sha256(b, size, h2, err, sizeof err), 0);
    assert_string_equal(h1, h2);
    content_free(a);
    content_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slices),
        cmocka_unit_test(test_region_and_sha),
        cmocka_unit_test(test_threads_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
