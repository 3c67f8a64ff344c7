/* Unit tests for server/content/content.c: the generator is deterministic, position-independent
 * (any slice generates alone), seed-dependent, and the memfd region agrees with it whatever
 * the number of generator threads. (Digests: test_digest.c.) */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

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

/* The generator's definition written out plainly, word by word: content.c's vectorised
 * loop (an AVX2 clone where the CPU has it) must give these bytes at any offset. */
static uint64_t ref_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static unsigned char ref_byte(uint64_t seed, uint64_t pos)
{
    uint64_t key = ref_mix(seed ^ 0x6465626974640000ULL);
    uint64_t w = ref_mix(key + (pos / 8 + 1) * 0x9E3779B97F4A7C15ULL);
    return (unsigned char)(w >> (8 * (pos % 8)));
}

static void test_reference(void **state)
{
    (void)state;
    static const struct {
        uint64_t seed, off;
        size_t len;
    } rows[] = {{1, 0, 1 << 20}, {1, 3, (1 << 20) + 5}, {7, 4097, 65536 + 3}, {2, (1ULL << 33) + 1, 1000},
                {1, 5, 2}, {1, 0, 7}, {3, 8, 8}, {9, 1ULL << 40, 4096 + 31}};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        /* one spare byte each side: nothing written outside [buf, buf + len) */
        unsigned char *buf = malloc(rows[r].len + 2);
        assert_non_null(buf);
        memset(buf, 0xA5, rows[r].len + 2);
        content_generate(rows[r].seed, rows[r].off, buf + 1, rows[r].len);
        assert_int_equal(buf[0], 0xA5);
        assert_int_equal(buf[rows[r].len + 1], 0xA5);
        for (size_t i = 0; i < rows[r].len; i++)
            if (buf[1 + i] != ref_byte(rows[r].seed, rows[r].off + i))
                fail_msg("row %zu: byte %zu (offset %llu) is %02x, the definition gives %02x", r, i,
                         (unsigned long long)(rows[r].off + i), buf[1 + i], ref_byte(rows[r].seed, rows[r].off + i));
        free(buf);
    }
}

static void test_region(void **state)
{
    (void)state;
    const uint64_t region = 1 << 20;
    char err[256];
    struct content *c = content_new(5, region, 2, err, sizeof err);
    assert_non_null(c);
    assert_int_equal(content_region_size(c), region);
    unsigned char *buf = malloc(region);
    assert_non_null(buf);
    content_generate(5, 0, buf, region);
    /* the memfd holds exactly the generator's bytes */
    unsigned char *fromfd = malloc(region);
    assert_non_null(fromfd);
    assert_int_equal(pread(content_fd(c), fromfd, region, 0), (ssize_t)region);
    assert_memory_equal(fromfd, buf, region);
    assert_memory_equal(content_map(c), buf, region);
    free(fromfd);
    free(buf);
    content_free(c);
    content_free(NULL);
}

static void test_threads_agree(void **state)
{
    (void)state;
    char err[256];
    const uint64_t size = (64 << 20) + 12345; /* big enough to be split across threads */
    struct content *a = content_new(9, size, 1, err, sizeof err);
    struct content *b = content_new(9, size, 3, err, sizeof err);
    assert_non_null(a);
    assert_non_null(b);
    if (memcmp(content_map(a), content_map(b), size) != 0)
        fail_msg("1 and 3 generator threads gave different regions");
    content_free(a);
    content_free(b);
}

/* 0 when the region of c holds exactly the generator's bytes, by pread and by the mapping */
static int region_is_generator(const struct content *c, uint64_t seed, uint64_t size)
{
    unsigned char *want = malloc(size), *got = malloc(size);
    int bad = !want || !got;
    if (!bad) {
        content_generate(seed, 0, want, size);
        bad = pread(content_fd(c), got, size, 0) != (ssize_t)size || memcmp(got, want, size) != 0 ||
              memcmp(content_map(c), want, size) != 0;
    }
    free(want);
    free(got);
    return bad;
}

/* Both backings (a private huge tmpfs as root, the memfd without CAP_SYS_ADMIN: a child that
 * became nobody) hold the same bytes, for a size that is not a whole number of 2 MiB pages. */
static void test_backings_agree(void **state)
{
    (void)state;
    char err[256];
    const uint64_t size = (8 << 20) + 12345;
    struct content *c = content_new(11, size, 2, err, sizeof err);
    assert_non_null(c);
    if (getuid() == 0)
        assert_string_equal(content_backing(c), "tmpfs-huge");
    else
        assert_memory_equal(content_backing(c), "memfd", 5);
    assert_int_equal(region_is_generator(c, 11, size), 0);
    content_free(c);
    if (getuid() != 0)
        return; /* the memfd was the one above */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
            _exit(2);
        struct content *m = content_new(11, size, 2, err, sizeof err);
        if (!m || strncmp(content_backing(m), "memfd (no private huge tmpfs: fsopen: ", 38) != 0)
            _exit(3);
        _exit(region_is_generator(m, 11, size) ? 4 : 0);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0); /* 2 setresuid, 3 not the memfd, 4 other bytes */
}


/* A region whose memory cannot be had: a private huge tmpfs made for 4 MiB (root only),
 * asked to hold 64 MiB. NULL (skipped) without root, where no backing can be made to fail. */
static int done_calls;
static void count_done(const struct content *c, void *arg)
{
    (void)c;
    (void)arg;
    done_calls++;
}

static struct content *failed_region(uint64_t seed, uint64_t size, char *err, size_t errlen)
{
    char why[96];
    int fd = content_backing_open(4u << 20, why, sizeof why);
    if (fd < 0)
        return NULL;
    done_calls = 0;
    struct content *c = content_start(fd, why, seed, size, 2, count_done, NULL, err, errlen);
    assert_non_null(c);
    assert_int_equal(content_wait(c, err, errlen), -1);
    return c;
}

/* content_copy is the generator at pos modulo the region, before the region is complete
 * (a failed one: it never is) and after, across the region's end and far repeats. */
static void copies_are_generator(const struct content *c, uint64_t seed, uint64_t region)
{
    static const struct {
        uint64_t pos;
        size_t len;
    } rows[] = {{0, 1}, {0, 4096}, {13, 70000}, {(1u << 20) - 5, 10}, {5ULL << 32, 3000}, {12345678901ULL, 65536}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        size_t n = rows[i].len;
        unsigned char *got = malloc(n), *want = malloc(n);
        assert_non_null(got);
        assert_non_null(want);
        memset(got, 0xAA, n);
        content_copy(c, rows[i].pos, got, n);
        for (size_t k = 0; k < n;) { /* the region repeated, piece by piece */
            uint64_t in = (rows[i].pos + k) % region;
            size_t take = region - in < n - k ? (size_t)(region - in) : n - k;
            content_generate(seed, in, want + k, take);
            k += take;
        }
        if (memcmp(got, want, n) != 0)
            fail_msg("row %zu (pos %llu, len %zu): content_copy differs from the generator", i,
                     (unsigned long long)rows[i].pos, n);
        free(got);
        free(want);
    }
}

static void test_copy(void **state)
{
    (void)state;
    char err[256];
    const uint64_t region = 1u << 20;
    struct content *c = content_new(21, region, 1, err, sizeof err);
    assert_non_null(c);
    assert_int_equal(content_state(c), CONTENT_READY);
    assert_int_equal(content_generated_bytes(c), region);
    copies_are_generator(c, 21, region);
    content_free(c);
    if (!(c = failed_region(21, 64u << 20, err, sizeof err))) {
        print_message("skipped the not-yet-generated half: needs root for a private tmpfs\n");
        return;
    }
    copies_are_generator(c, 21, 64u << 20);
    content_free(c);
}

/* The memory runs out in the background: the state says failed with why, the region is
 * never published (no map), the callback is called once, and the bytes stay available. */
static void test_failed(void **state)
{
    (void)state;
    char err[256] = "";
    struct content *c = failed_region(3, 64u << 20, err, sizeof err);
    if (!c) {
        skip(); /* counted as skipped: needs root for the private tmpfs */
        return;
    }
    assert_int_equal(content_state(c), CONTENT_FAILED);
    assert_int_equal(content_ready(c), 0);
    assert_null(content_map(c));
    assert_non_null(content_failure(c));
    assert_memory_equal(content_failure(c), "writing 67108864 bytes of content", 33);
    assert_string_equal(err, content_failure(c));
    assert_int_equal(done_calls, 1);
    content_free(c);
}

/* A stop during the generation (content_free) ends it at its next step: no callback, no
 * leak (the sanitizer run), and it does not wait for the whole region. */
static void test_free_while_generating(void **state)
{
    (void)state;
    char err[256];
    done_calls = 0;
    struct content *c = content_start(-1, "test", 4, 1ULL << 30, 2, count_done, NULL, err, sizeof err);
    assert_non_null(c);
    int was = content_state(c);
    content_free(c);
    if (was == CONTENT_GENERATING) /* 1 GiB takes >= 0.15 s here: the stop came first */
        assert_int_equal(done_calls, 0);
    content_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slices),
        cmocka_unit_test(test_reference),
        cmocka_unit_test(test_region),
        cmocka_unit_test(test_threads_agree),
        cmocka_unit_test(test_backings_agree),
        cmocka_unit_test(test_copy),
        cmocka_unit_test(test_failed),
        cmocka_unit_test(test_free_while_generating),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
