/* content: see content.h. */
#include "content.h"

#include "err.h"
#include "sys.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#define GOLDEN 0x9E3779B97F4A7C15ULL
#define GEN_MAX_THREADS 16

struct content {
    int fd;
    unsigned char *map;   /* read by others only once `state` says ready (acquire) */
    unsigned char *rw;    /* huge pages: the mapping the generators write through */
    uint64_t size;
    uint64_t seed;
    unsigned threads;
    double t0;            /* when content_start began */
    atomic_int state;     /* enum content_state */
    atomic_int cancel;    /* content_free during the generation: stop at the next step */
    atomic_uint_least64_t done_bytes; /* generated so far, for /status */
    pthread_t coord;      /* the generation, in the background */
    int coord_running;    /* not joined yet (only the owner's thread joins) */
    void (*on_done)(const struct content *, void *);
    void *on_done_arg;
    char fail[256];       /* why the generation failed (CONTENT_FAILED) */
    double gen_seconds;
    double alloc_seconds; /* of gen_seconds: getting the pages (allocation, zeroing, first touch) */
    double gen_cpu_seconds; /* CPU time of every thread in the generator itself */
    uint64_t huge_bytes;  /* bytes mapped with 2 MiB pages, from smaps after generation */
    char thp_setting[32]; /* the admin's shmem THP setting that decided it */
    char backing[160];    /* content_backing() */
};

/* SplitMix64 finaliser: a counter-based generator, so any word is computable on its own. */
static inline uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline uint64_t word_at(uint64_t key, uint64_t k)
{
    return mix64(key + (k + 1) * GOLDEN);
}

/* The seed goes through the mixer once so that seeds 1 and 2 give unrelated streams. */
static uint64_t seed_key(uint64_t seed)
{
    return mix64(seed ^ 0x6465626974640000ULL); /* "debitd" */
}

/* The body, whole words from word K on. Built twice, for AVX2 and for any x86-64, and the
 * loader picks one (an ifunc): vectorised, four words at a time, it is about 1.6 times the
 * scalar loop (0.14 against 0.22 CPU-s per GiB here, docs/performance.md, "Start-up").
 * Same bytes from either: test_content.c checks them against a scalar copy of the mixer.
 * GCC vectorises this loop from -O3 on, clang from -O2. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define GEN_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define GEN_CLONES
#endif
#if defined(__GNUC__) && !defined(__clang__)
#define GEN_VECTORISE __attribute__((optimize("O3")))
#else
#define GEN_VECTORISE
#endif
static GEN_CLONES GEN_VECTORISE void gen_words(uint64_t key, uint64_t k, unsigned char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t w = htole64(word_at(key, k + i)); /* little-endian bytes on every host */
        memcpy(buf + 8 * i, &w, 8);
    }
}

void content_generate(uint64_t seed, uint64_t off, unsigned char *buf, size_t len)
{
    uint64_t key = seed_key(seed);
    size_t i = 0;
    /* head up to a word boundary, body by whole words (little-endian), then the tail */
    while (i < len && (off + i) % 8) {
        uint64_t w = word_at(key, (off + i) / 8);
        buf[i] = (unsigned char)(w >> (8 * ((off + i) % 8)));
        i++;
    }
    size_t words = (len - i) / 8;
    gen_words(key, (off + i) / 8, buf + i, words);
    i += 8 * words;
    for (; i < len; i++) {
        uint64_t w = word_at(key, (off + i) / 8);
        buf[i] = (unsigned char)(w >> (8 * ((off + i) % 8)));
    }
}

struct gen_job {
    struct content *c; /* cancel flag and progress */
    int fd;
    unsigned char *map; /* non-NULL: populate and write through this mapping (huge pages) */
    uint64_t seed, from, to;
    int err; /* errno of a failed write or populate, else 0 */
    double alloc_s; /* this thread's time in MADV_POPULATE_WRITE (huge pages only) */
    double gen_cpu_s; /* this thread's CPU time in content_generate */
};

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 4 KiB pages: generate into a cache-sized buffer and pwrite it into pages fallocate()
 * already allocated (see content_new); first-touch faults through a mapping cost more.
 * Huge pages: populate a chunk of the mapping (MADV_POPULATE_WRITE fails with an errno where
 * a plain fault would raise SIGBUS when memory runs out), then generate into it in place. */
static void *gen_thread(void *arg)
{
    struct gen_job *j = arg;
    if (j->map) {
        const uint64_t step = 32ULL << 20;
        for (uint64_t o = j->from; o < j->to && !atomic_load(&j->c->cancel); o += step) {
            size_t n = j->to - o < step ? (size_t)(j->to - o) : (size_t)step;
            double t0 = sys_mono_s();
            while (madvise(j->map + o, n, MADV_POPULATE_WRITE) < 0) {
                if (errno == EINTR)
                    continue;
                if (errno == EINVAL)
                    break; /* kernel before 5.14: the writes below fault the pages in */
                j->err = errno;
                return NULL;
            }
            j->alloc_s += sys_mono_s() - t0;
            double c0 = thread_cpu_s();
            content_generate(j->seed, o, j->map + o, n);
            j->gen_cpu_s += thread_cpu_s() - c0;
            atomic_fetch_add(&j->c->done_bytes, n);
        }
        return NULL;
    }
    const size_t step = 256 << 10;
    unsigned char *buf = malloc(step);
    if (!buf) {
        j->err = ENOMEM;
        return NULL;
    }
    for (uint64_t o = j->from; o < j->to && !j->err && !atomic_load(&j->c->cancel); o += step) {
        size_t n = j->to - o < step ? (size_t)(j->to - o) : step;
        double c0 = thread_cpu_s();
        content_generate(j->seed, o, buf, n);
        j->gen_cpu_s += thread_cpu_s() - c0;
        for (size_t done = 0; done < n;) {
            ssize_t w = pwrite(j->fd, buf + done, n - done, (off_t)(o + done));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                j->err = w < 0 ? errno : ENOSPC;
                break;
            }
            done += (size_t)w;
        }
        atomic_fetch_add(&j->c->done_bytes, n);
    }
    free(buf);
    return NULL;
}

/* The bracketed word of a sysfs THP setting ("always [advise] never"), or "" */
static void thp_setting(const char *path, char *out, size_t len)
{
    char line[256] = "";
    out[0] = 0;
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    if (fgets(line, sizeof line, f)) {
        char *a = strchr(line, '['), *b = a ? strchr(a, ']') : NULL;
        if (a && b)
            snprintf(out, len, "%.*s", (int)(b - a - 1), a + 1);
    }
    fclose(f);
}

#define THP_SYSFS "/sys/kernel/mm/transparent_hugepage/"
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/* Whether a madvise(MADV_HUGEPAGE)d shmem mapping gets 2 MiB pages, per the admin's setting
 * (debitd never changes it: it is machine-wide). The per-size file, where the kernel has it,
 * overrides the global one unless it says "inherit". Fills `setting` for the log. */
static int thp_shmem_usable(char *setting, size_t len)
{
    char top[32], pmd[32];
    thp_setting(THP_SYSFS "shmem_enabled", top, sizeof top);
    thp_setting(THP_SYSFS "hugepages-2048kB/shmem_enabled", pmd, sizeof pmd);
    const char *eff = pmd[0] && strcmp(pmd, "inherit") != 0 ? pmd : top;
    if (strcmp(top, "deny") == 0)
        eff = "deny";
    snprintf(setting, len, "%s", eff[0] ? eff : "unknown");
    return strcmp(eff, "always") == 0 || strcmp(eff, "within_size") == 0 || strcmp(eff, "advise") == 0 ||
           strcmp(eff, "force") == 0;
}

/* An unlinked file of SIZE bytes on a private tmpfs mounted `huge=always`, or -1 with the
 * reason in why. The mount is never attached to any tree (new mount API: fsopen, fsmount,
 * then O_TMPFILE under the detached mount), so nobody else can see or reach it, and it goes
 * away with the last descriptor of the file. Per-mount huge= is honoured whatever the
 * machine's shmem_enabled says, except "deny" (the admin's way to forbid it), which the
 * caller checks. Needs CAP_SYS_ADMIN (root); without it the memfd is used. */
static int huge_tmpfs_open(uint64_t size, char *why, size_t len)
{
    const char *step = "fsopen";
    int fs = -1, mnt = -1, fd = -1;
    char sz[32];
    /* tmpfs counts its size in pages: round up to the huge page, plus one for the tail */
    snprintf(sz, sizeof sz, "%llu", (unsigned long long)(((size + (2ULL << 20) - 1) & ~((2ULL << 20) - 1)) + (2ULL << 20)));
    fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
    if (fs < 0)
        goto out;
    step = "fsconfig huge=always";
    if (fsconfig(fs, FSCONFIG_SET_STRING, "huge", "always", 0) < 0)
        goto out;
    step = "fsconfig size";
    if (fsconfig(fs, FSCONFIG_SET_STRING, "size", sz, 0) < 0 || fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0700", 0) < 0)
        goto out;
    step = "fsconfig create";
    if (fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
        goto out;
    step = "fsmount";
    mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOEXEC | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
    if (mnt < 0)
        goto out;
    step = "O_TMPFILE";
    fd = openat(mnt, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
out:
    if (fd < 0)
        snprintf(why, len, "%s: %s", step, strerror(errno));
    if (mnt >= 0)
        close(mnt);
    if (fs >= 0)
        close(fs);
    return fd;
}

/* Bytes of the mapping at MAP that the kernel maps with PMD (2 MiB) pages, from smaps. */
static uint64_t huge_mapped_bytes(const void *map)
{
    FILE *f = fopen("/proc/self/smaps", "re");
    if (!f)
        return 0;
    char line[512];
    unsigned long want = (unsigned long)map, kb = 0;
    int in = 0;
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx ", &a, &b) == 2 && strchr(line, '-') < strchr(line, ' ')) {
            in = a == want;
            continue;
        }
        if (in && sscanf(line, "ShmemPmdMapped: %lu kB", &kb) == 1)
            break;
    }
    fclose(f);
    return (uint64_t)kb << 10;
}

/* 4 KiB pages: allocate every page with fallocate first, in one thread. shmem allocation
 * holds the inode lock, so threads cannot share that work, while the copies that follow run
 * on every core without allocating; it also fails cleanly (ENOSPC/ENOMEM) before any work
 * when RAM is short. Chunks keep each call short, so that a signal (EINTR) repeats one. */
static int fallocate_all(int fd, uint64_t size, char *err, size_t errlen)
{
    const uint64_t chunk = 64ULL << 20;
    for (uint64_t o = 0; o < size;) {
        uint64_t n = size - o < chunk ? size - o : chunk;
        if (fallocate(fd, 0, (off_t)o, (off_t)n) == 0) {
            o += n;
            continue;
        }
        if (errno == EINTR)
            continue;
        if (errno == EOPNOTSUPP)
            return 0; /* no fallocate on this kernel's shmem: pwrite allocates instead */
        err_set(err, errlen, "allocating %llu bytes of content in the memfd: %s (not enough memory? "
                "lower `ram` or the file sizes)", (unsigned long long)size, strerror(errno));
        return -1;
    }
    return 0;
}

int content_backing_open(uint64_t size, char *why, size_t len)
{
    char setting[32];
    thp_shmem_usable(setting, sizeof setting);
    if (size < (2u << 20)) {
        snprintf(why, len, "region under 2 MiB");
        return -1;
    }
    if (strcmp(setting, "deny") == 0) {
        snprintf(why, len, "shmem_enabled=deny");
        return -1;
    }
    return huge_tmpfs_open(size, why, len);
}

struct content *content_new(uint64_t seed, uint64_t size, unsigned threads, char *err, size_t errlen)
{
    char why[96] = "";
    int fd = content_backing_open(size, why, sizeof why);
    return content_new_in(fd, why, seed, size, threads, err, errlen);
}

struct content *content_new_in(int fd, const char *why, uint64_t seed, uint64_t size, unsigned threads,
                               char *err, size_t errlen)
{
    struct content *c = content_start(fd, why, seed, size, threads, NULL, NULL, err, errlen);
    if (c && content_wait(c, err, errlen) < 0) {
        content_free(c);
        return NULL;
    }
    return c;
}

/* Record why the generation failed, give the memory back and say so (the caller of the
 * background generation serves generated bytes from then on). */
static void gen_failed(struct content *c, const char *fmt, int e)
{
    snprintf(c->fail, sizeof c->fail, fmt, (unsigned long long)c->size, strerror(e));
    if (c->rw) {
        munmap(c->rw, c->size);
        c->rw = NULL;
    }
    if (ftruncate(c->fd, 0) < 0) { /* the pages written so far: nobody reads them now */
    }
}

/* The generation itself, in the background thread: allocate, fill on every core, then
 * publish. Nothing else reads the region until `state` says ready. */
static void *generate_all(void *arg)
{
    struct content *c = arg;
    unsigned char *rw = c->rw;
    double ta = sys_mono_s();
    char ferr[200];
    if (!rw && fallocate_all(c->fd, c->size, ferr, sizeof ferr) < 0) {
        snprintf(c->fail, sizeof c->fail, "%s", ferr);
        if (ftruncate(c->fd, 0) < 0) {
        }
        goto done;
    }
    c->alloc_seconds = sys_mono_s() - ta;
    unsigned threads = c->threads;
    struct gen_job jobs[GEN_MAX_THREADS];
    pthread_t tids[GEN_MAX_THREADS];
    int started[GEN_MAX_THREADS] = {0};
    /* slices on 2 MiB boundaries, so two threads never share a page of either size */
    uint64_t slice = (c->size / threads + (2u << 20) - 1) & ~((2ULL << 20) - 1);
    for (unsigned t = 0; t < threads; t++) {
        uint64_t from = slice * t, to = t + 1 == threads ? c->size : slice * (t + 1);
        if (from > c->size)
            from = c->size;
        if (to > c->size)
            to = c->size;
        jobs[t] = (struct gen_job){c, c->fd, rw, c->seed, from, to, 0, 0, 0};
        if (t + 1 < threads && pthread_create(&tids[t], NULL, gen_thread, &jobs[t]) == 0) {
            started[t] = 1;
            continue;
        }
        gen_thread(&jobs[t]); /* the last slice (or one a thread failed for) runs here */
    }
    double alloc_max = 0; /* the threads populate in parallel: the longest one's share */
    for (unsigned t = 0; t < threads; t++) {
        if (started[t])
            pthread_join(tids[t], NULL);
        if (jobs[t].alloc_s > alloc_max)
            alloc_max = jobs[t].alloc_s;
        c->gen_cpu_seconds += jobs[t].gen_cpu_s;
    }
    c->alloc_seconds += alloc_max;
    if (atomic_load(&c->cancel)) {
        snprintf(c->fail, sizeof c->fail, "stopped before the end of the generation");
        goto done;
    }
    for (unsigned t = 0; t < threads; t++)
        if (jobs[t].err) {
            gen_failed(c, "writing %llu bytes of content to the memfd: %s (not enough memory? lower `ram` or the "
                       "file sizes)", jobs[t].err);
            goto done;
        }
    if (rw) {
        c->huge_bytes = huge_mapped_bytes(rw);
        /* nothing writes the region after this point */
        mprotect(rw, c->size, PROT_READ);
        c->map = rw;
    } else {
        /* Read-only mapping for iovec responses and hashing: pages are mapped on first use
         * only, so it costs nothing until a file repeats the region or a checksum is asked. */
        void *m = mmap(NULL, c->size, PROT_READ, MAP_SHARED, c->fd, 0);
        if (m == MAP_FAILED) {
            gen_failed(c, "mmap of %llu bytes: %s", errno);
            goto done;
        }
        c->map = m;
    }
    /* the size is fixed: a truncation would turn sendfile into short reads (the memfd; the
     * private tmpfs file has no seals, and no name anyone could open it by) */
    fcntl(c->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
done:
    c->gen_seconds = sys_mono_s() - c->t0;
    /* publishes map, the figures and fail with it (release; readers acquire) */
    atomic_store_explicit(&c->state, c->fail[0] ? CONTENT_FAILED : CONTENT_READY, memory_order_release);
    if (c->on_done && !atomic_load(&c->cancel)) /* a stop is nobody's news */
        c->on_done(c, c->on_done_arg);
    return NULL;
}

struct content *content_start(int fd, const char *why, uint64_t seed, uint64_t size, unsigned threads,
                              void (*on_done)(const struct content *, void *), void *arg,
                              char *err, size_t errlen)
{
    struct content *c = calloc(1, sizeof *c);
    if (!c) {
        if (fd >= 0)
            close(fd);
        err_set(err, errlen, "out of memory");
        return NULL;
    }
    c->fd = -1;
    c->size = size;
    c->seed = seed;
    c->on_done = on_done;
    c->on_done_arg = arg;
    c->t0 = sys_mono_s();
    atomic_init(&c->state, CONTENT_GENERATING);
    atomic_init(&c->cancel, 0);
    atomic_init(&c->done_bytes, 0);
    int usable = thp_shmem_usable(c->thp_setting, sizeof c->thp_setting);
    /* 2 MiB pages make the fill about 4 times faster (docs/server.md, "Start-up"): a private
     * huge tmpfs gets them without touching the machine's setting; otherwise the memfd,
     * which gets them only where shmem_enabled allows. */
    c->fd = fd;
    if (c->fd >= 0) {
        usable = 1;
        snprintf(c->backing, sizeof c->backing, "tmpfs-huge");
    } else {
        snprintf(c->backing, sizeof c->backing, "memfd (no private huge tmpfs: %s)", why);
        c->fd = memfd_create("debitd-content", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    }
    if (c->fd < 0) {
        err_set(err, errlen, "memfd_create: %s", strerror(errno));
        goto fail;
    }
    if (size == 0) {
        c->gen_seconds = sys_mono_s() - c->t0;
        atomic_store(&c->state, CONTENT_READY);
        if (on_done)
            on_done(c, arg);
        return c;
    }
    if (ftruncate(c->fd, (off_t)size) < 0) {
        err_set(err, errlen, "memfd of %llu bytes: %s", (unsigned long long)size, strerror(errno));
        goto fail;
    }
    /* With huge pages allowed, one 2 MiB page replaces 512 small ones: allocation is about 4
     * times faster and the send path handles fewer pages (docs/server.md, "Start-up"). They
     * need a mapping advised before the first touch; otherwise the mapping is read-only and
     * used for iovec responses and hashing only. */
    if (usable && size >= (2u << 20)) {
        void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
        if (m != MAP_FAILED && madvise(m, size, MADV_HUGEPAGE) == 0)
            c->rw = m;
        else if (m != MAP_FAILED)
            munmap(m, size);
    }
    if (threads == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        threads = n > 0 ? (unsigned)n : 1;
    }
    if (threads > GEN_MAX_THREADS)
        threads = GEN_MAX_THREADS;
    if (size < (64u << 20))
        threads = 1; /* not worth a thread */
    c->threads = threads;
    int e = pthread_create(&c->coord, NULL, generate_all, c);
    if (e) {
        err_set(err, errlen, "starting the content's generation: %s", strerror(e));
        goto fail;
    }
    c->coord_running = 1;
    return c;
fail:
    content_free(c);
    return NULL;
}

int content_wait(struct content *c, char *err, size_t errlen)
{
    if (c->coord_running) {
        pthread_join(c->coord, NULL);
        c->coord_running = 0;
    }
    if (atomic_load(&c->state) == CONTENT_READY)
        return 0;
    return err_set(err, errlen, "%s", c->fail);
}

enum content_state content_state(const struct content *c)
{
    return (enum content_state)atomic_load_explicit(&((struct content *)c)->state, memory_order_acquire);
}

int content_ready(const struct content *c)
{
    return content_state(c) == CONTENT_READY;
}

const char *content_failure(const struct content *c)
{
    return content_state(c) == CONTENT_FAILED ? c->fail : NULL;
}

uint64_t content_generated_bytes(const struct content *c)
{
    if (content_ready(c))
        return c->size;
    return atomic_load(&((struct content *)c)->done_bytes);
}

void content_copy(const struct content *c, uint64_t pos, unsigned char *buf, size_t len)
{
    if (c->size == 0)
        return;
    int ready = content_ready(c);
    while (len) {
        uint64_t in = pos % c->size;
        size_t n = c->size - in < len ? (size_t)(c->size - in) : len;
        if (ready)
            memcpy(buf, c->map + in, n);
        else
            content_generate(c->seed, in, buf, n);
        buf += n;
        pos += n;
        len -= n;
    }
}

void content_free(struct content *c)
{
    if (!c)
        return;
    if (c->coord_running) {
        atomic_store(&c->cancel, 1);
        pthread_join(c->coord, NULL);
    }
    if (c->map)
        munmap(c->map, c->size);
    else if (c->rw)
        munmap(c->rw, c->size);
    if (c->fd >= 0)
        close(c->fd);
    free(c);
}

uint64_t content_region_size(const struct content *c)
{
    return c->size;
}

int content_fd(const struct content *c)
{
    return c->fd;
}

const unsigned char *content_map(const struct content *c)
{
    return content_ready(c) ? c->map : NULL;
}

double content_gen_seconds(const struct content *c)
{
    return c->gen_seconds;
}

double content_alloc_seconds(const struct content *c)
{
    return c->alloc_seconds;
}

double content_gen_cpu_seconds(const struct content *c)
{
    return c->gen_cpu_seconds;
}

uint64_t content_huge_bytes(const struct content *c)
{
    return c->huge_bytes;
}

const char *content_thp_setting(const struct content *c)
{
    return c->thp_setting;
}

const char *content_backing(const struct content *c)
{
    return c->backing;
}
