/* content: the bytes every file is made of. One region of pseudo-random, incompressible
 * bytes, generated from the seed at start into a memfd, shared by all files: a file of size S
 * is the first S bytes of the region, or, when S exceeds the region (the `ram` cap), the
 * region repeated. "The memfd" below is that file: a memfd, or an unlinked file on a private
 * huge-page tmpfs where debitd may mount one (content_backing). Byte i of the region depends only on (seed, i), so generation is split
 * across threads and two runs with the same seed serve identical bytes.
 * Read-only and thread-safe after content_new (digests: digest.h). */
#ifndef DEBITD_CONTENT_H
#define DEBITD_CONTENT_H

#include <stddef.h>
#include <stdint.h>

struct content;

/* Build a region of SIZE bytes from SEED with up to THREADS threads (0 = one per CPU).
 * Returns NULL with a reason in err. The caller owns the result (content_free). */
struct content *content_new(uint64_t seed, uint64_t size, unsigned threads, char *err, size_t errlen);

/* The file a region of SIZE bytes will live in when it can be a private huge tmpfs (see
 * content_backing): opened while debitd still has the privilege to mount one, before it
 * drops it. Returns the descriptor, or -1 with the reason in why (then the memfd is used). */
int content_backing_open(uint64_t size, char *why, size_t len);
/* content_new over FD from content_backing_open (-1: the memfd, WHY saying why not), which
 * the result owns (closed on failure too). */
struct content *content_new_in(int fd, const char *why, uint64_t seed, uint64_t size, unsigned threads,
                               char *err, size_t errlen);
/* Unmap and close the region. NULL is fine. */
void content_free(struct content *c);

/* Bytes in the region (min(largest file, ram)). */
uint64_t content_region_size(const struct content *c);
/* The memfd holding the region (owned by content; dup() it to hand it to a response). */
int content_fd(const struct content *c);
/* The region mapped read-only (owned by content), for iovec responses and hashing. */
const unsigned char *content_map(const struct content *c);
/* Seconds the generation took. */
double content_gen_seconds(const struct content *c);
/* Of those, the seconds spent getting the memory: allocating and zeroing the pages
 * (fallocate, or MADV_POPULATE_WRITE of 2 MiB pages: the longest thread's share), not
 * generating bytes. On a VM whose host hands memory back (free page reporting) this is
 * where the host's faults land (docs/performance.md, "Start-up"). */
double content_alloc_seconds(const struct content *c);
/* CPU seconds of every generating thread spent computing the bytes (the generator alone,
 * without getting the memory or writing it to the memfd): what the region costs debitd
 * itself, whatever else the machine runs. */
double content_gen_cpu_seconds(const struct content *c);
/* Bytes of the region held in 2 MiB pages (read back from /proc/self/smaps; 0 when the
 * machine's shmem THP setting, content_thp_setting(), does not allow them for a memfd and
 * no private huge tmpfs could be mounted). */
uint64_t content_huge_bytes(const struct content *c);
/* The machine's shmem THP policy that decided it ("never", "advise", ...; owned by content). */
const char *content_thp_setting(const struct content *c);

/* What holds the region: "tmpfs-huge" (an unlinked file on a private tmpfs mounted
 * huge=always: 2 MiB pages whatever shmem_enabled says, needs CAP_SYS_ADMIN), or "memfd (no
 * private huge tmpfs: REASON)". Owned by content. */
const char *content_backing(const struct content *c);

/* Fill buf with byte i of every position [off, off+len) of the region, without the region
 * (the generator itself, used by tests to check determinism). */
void content_generate(uint64_t seed, uint64_t off, unsigned char *buf, size_t len);

#endif
