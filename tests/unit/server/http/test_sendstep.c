/* Unit tests for server/http/sendstep.c: the interposed sendfile64() (mhd_compat.c) widens
 * exactly libmicrohttpd's 128 KiB call on a socket with a body under way (sendstep_begin), while this thread has at most
 * SENDSTEP_FEW bodies in flight, to at most SENDSTEP_MAX, never into the response's last
 * SENDSTEP_TAIL bytes; every other call reaches the kernel as it came. Each case checks
 * what was asked of the kernel (the bytes sent), that they are the source's bytes at the
 * offset, the advanced offset and the counters. sendfile to a regular file stands in for
 * the socket (Linux accepts any output file), so the kernel takes the whole step. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <unistd.h>

#include "conn.h"
#include "sendstep.h"
#include "testlib.h"

#define SRC_SIZE (8u << 20)

static int src = -1;

static int setup(void **state)
{
    (void)state;
    src = memfd_create("sendstep-src", 0);
    if (src < 0 || ftruncate(src, SRC_SIZE) != 0)
        return -1;
    unsigned char *m = mmap(NULL, SRC_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, src, 0);
    if (m == MAP_FAILED)
        return -1;
    for (uint32_t i = 0; i < SRC_SIZE; i++) /* every 4-byte window differs: an offset error shows */
        m[i] = (unsigned char)(i * 2654435761u >> 13);
    munmap(m, SRC_SIZE);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    close(src);
    return 0;
}

static void test_steps(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int noted;        /* sendstep_begin(out, END) first, not sendstep_begin(-1, 0) */
        uint64_t end;     /* the response's end in the source */
        int in_flight;    /* sendstep_begin() calls before the call */
        uint64_t off;     /* the call's offset */
        size_t count;     /* what libmicrohttpd asks */
        int null_offset;  /* sendfile64(out, in, NULL, count) */
        size_t want;      /* what reaches the kernel (and, to a file, is sent) */
        int widened;      /* the widened counter moves */
    } rows[] = {
        {"not noted: as asked", 0, 0, 1, 0, SENDSTEP_MHD_CHUNK, 0, SENDSTEP_MHD_CHUNK, 0},
        {"one body in flight: 2 MiB", 1, SRC_SIZE, 1, 0, SENDSTEP_MHD_CHUNK, 0, SENDSTEP_MAX, 1},
        {"two in flight: still widened", 1, SRC_SIZE, 2, 4096, SENDSTEP_MHD_CHUNK, 0, SENDSTEP_MAX, 1},
        {"three in flight: libmicrohttpd's step", 1, SRC_SIZE, 3, 0, SENDSTEP_MHD_CHUNK, 0, SENDSTEP_MHD_CHUNK, 0},
        {"a range ending at 1 MiB + 4 KiB: up to its last 64 KiB", 1, (1u << 20) + 4096, 1, 4096, SENDSTEP_MHD_CHUNK,
         0, (1u << 20) - SENDSTEP_TAIL, 1},
        {"less than a step before the tail: as asked", 1, 280u << 10, 1, 100u << 10, SENDSTEP_MHD_CHUNK, 0,
         SENDSTEP_MHD_CHUNK, 0},
        {"a little more than a step before the tail: that much", 1, 300u << 10, 1, 100u << 10, SENDSTEP_MHD_CHUNK,
         0, 136u << 10, 1},
        {"libmicrohttpd's last call (64 KiB): as asked", 1, SRC_SIZE, 1, SRC_SIZE - SENDSTEP_TAIL, SENDSTEP_TAIL, 0,
         SENDSTEP_TAIL, 0},
        {"another size: as asked", 1, SRC_SIZE, 1, 0, 100000, 0, 100000, 0},
        {"no offset (the file's position): as asked", 1, SRC_SIZE, 1, 0, SENDSTEP_MHD_CHUNK, 1, SENDSTEP_MHD_CHUNK, 0},
    };
    static unsigned char got[SENDSTEP_MAX], want[SENDSTEP_MAX];
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        int in = dup(src), out = memfd_create("sendstep-out", 0);
        assert_true(in >= 0 && out >= 0);
        struct conn *c = conn_new(out); /* the socket's connection (a file stands in for it) */
        for (int k = 0; k < rows[i].in_flight; k++)
            sendstep_begin(k == 0 && rows[i].noted ? out : -1, rows[i].end);
        uint64_t c0, w0, c1, w1;
        sendstep_stats(&c0, &w0);
        off64_t off = (off64_t)rows[i].off;
        if (rows[i].null_offset)
            assert_int_equal(lseek(in, 0, SEEK_SET), 0);
        ssize_t n = sendfile64(out, in, rows[i].null_offset ? NULL : &off, rows[i].count);
        sendstep_stats(&c1, &w1);
        for (int k = 0; k < rows[i].in_flight; k++)
            sendstep_end(k == 0 ? out : -1);
        if (n != (ssize_t)rows[i].want)
            fail_msg("%s: %zd bytes sent, expected %zu", rows[i].name, n, rows[i].want);
        if (!rows[i].null_offset && off != (off64_t)(rows[i].off + rows[i].want))
            fail_msg("%s: offset %lld after the call", rows[i].name, (long long)off);
        assert_int_equal(pread(out, got, (size_t)n, 0), n);
        assert_int_equal(pread(src, want, (size_t)n, (off_t)rows[i].off), n);
        if (memcmp(got, want, (size_t)n) != 0)
            fail_msg("%s: the bytes sent are not the source's at %llu", rows[i].name,
                     (unsigned long long)rows[i].off);
        if ((int)(w1 - w0) != rows[i].widened)
            fail_msg("%s: widened counted %llu times", rows[i].name, (unsigned long long)(w1 - w0));
        assert_int_equal(c1 - c0, rows[i].noted && !rows[i].null_offset ? 1 : 0);
        conn_free(c);
        close(out);
        close(in);
    }
}

/* A socket's next body takes its own end; after sendstep_end nothing is widened. */
static void test_renoted(void **state)
{
    (void)state;
    int in = dup(src), out = memfd_create("sendstep-out", 0);
    struct conn *c = conn_new(out);
    sendstep_begin(out, SRC_SIZE);
    sendstep_end(out);
    sendstep_begin(out, 1u << 20); /* the same socket, a later response of 1 MiB */
    off64_t off = 0;
    assert_int_equal(sendfile64(out, in, &off, SENDSTEP_MHD_CHUNK), (1u << 20) - SENDSTEP_TAIL);
    sendstep_end(out);
    off = 0;
    assert_int_equal(sendfile64(out, in, &off, SENDSTEP_MHD_CHUNK), SENDSTEP_MHD_CHUNK);
    conn_free(c);
    close(out);
    close(in);
}

/* More ends than begins (a callback on another thread) never make the count wrap: one
 * body in flight afterwards still gets a widened step. */
static void test_end_clamped(void **state)
{
    (void)state;
    sendstep_end(-1);
    sendstep_end(-1);
    int in = dup(src), out = memfd_create("sendstep-out", 0);
    struct conn *c = conn_new(out);
    sendstep_begin(out, SRC_SIZE);
    off64_t off = 0;
    assert_int_equal(sendfile64(out, in, &off, SENDSTEP_MHD_CHUNK), SENDSTEP_MAX);
    sendstep_end(out);
    conn_free(c);
    close(out);
    close(in);
}

/* In this binary, as in debitd, sendfile64 is the executable's (Makefile exports it). */
static void test_interposed(void **state)
{
    (void)state;
    assert_true(sendstep_interposed());
    assert_ptr_equal(dlsym(RTLD_DEFAULT, "sendfile64"), (void *)sendfile64);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps),
        cmocka_unit_test(test_renoted),
        cmocka_unit_test(test_end_clamped),
        cmocka_unit_test(test_interposed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
