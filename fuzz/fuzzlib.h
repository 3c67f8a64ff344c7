/* fuzzlib: helpers shared by the libFuzzer harnesses in fuzz/ (header only: `make fuzz`
 * builds every fuzz/fuzz_*.c into a binary of its own and compiles nothing else here).
 *
 * A harness is `int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)`, returns 0,
 * and reports a broken invariant with FUZZ_CHECK (abort: libFuzzer saves the input). */
#ifndef DEBIT_FUZZLIB_H
#define DEBIT_FUZZLIB_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FUZZ_CHECK(cond)                                                              \
    do {                                                                              \
        if (!(cond)) {                                                                \
            fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond); \
            abort();                                                                  \
        }                                                                             \
    } while (0)

/* data as a NUL-terminated string (a new copy, caller frees; NULL when out of memory).
 * Embedded NULs stay: C parsers see the text up to the first one, as from a header. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (s) {
        memcpy(s, data, size);
        s[size] = 0;
    }
    return s;
}

/* A path whose content is exactly data, for loaders that take a file name (libconfig's
 * config_read_file): one memfd, rewritten at each input, read through /proc/self/fd/N.
 * No disk, no temporary file left behind. Returns the path, or NULL. */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
    static int fd = -1;
    static char path[64];
    if (fd < 0) {
        fd = memfd_create("fuzz-input", MFD_CLOEXEC);
        if (fd < 0)
            return NULL;
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    }
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        return NULL;
    return path;
}

#endif
