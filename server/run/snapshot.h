/* snapshot: one generation of what requests read while debitd reloads its configuration
 * under them (docs/server.md, "Reload"). A snapshot owns (or, for the first, borrows) a
 * struct config and holds a reference on the content region and on the hashing thread it
 * serves from; consecutive snapshots share the region and the digest when the reload did
 * not change them. Immutable once made; reference counted: the server holds one reference
 * on its current snapshot, and each response that needs the snapshot's memory after the
 * callback that made it (a file body over the mapped region, a .sha256 waiting for its
 * digest, a transfer's metrics row) holds one until libmicrohttpd's completion callback.
 * A snapshot nobody holds any more is freed by the thread that owns the list of retired
 * snapshots (debitd's main thread): freeing it may join the hashing thread, which a
 * request thread must not wait for. */
#ifndef DEBITD_SNAPSHOT_H
#define DEBITD_SNAPSHOT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "content.h"
#include "digest.h"

struct snapshot_share; /* a reference count shared by the snapshots of one region/digest */

struct snapshot {
    _Atomic unsigned long refs;
    uint64_t generation; /* 1 for the configuration read at start, +1 per applied reload */
    struct config *cfg;
    int owns_cfg; /* config_free + free(cfg) with the snapshot */
    struct content *content;
    struct digest *digest;
    struct snapshot_share *content_share, *digest_share;
    struct snapshot *next; /* the retired list */
};

/* The first snapshot: CFG borrowed (the caller frees it after the snapshot), CONTENT and
 * DIGEST taken over (freed with the last snapshot that shares them). One reference, the
 * server's. NULL when out of memory (nothing taken over then). */
struct snapshot *snapshot_first(struct config *cfg, struct content *content, struct digest *digest);
/* Fill the first snapshot S's region and hashing thread (each not NULL), which
 * server_start makes after server_new made S: before any listener serves, so that nobody
 * reads S meanwhile. Taken over as by snapshot_first. */
void snapshot_first_fill(struct snapshot *s, struct content *content, struct digest *digest);
/* The snapshot after PREV: CFG owned (freed with it, also on failure); CONTENT and DIGEST
 * either PREV's (shared) or new ones taken over (NULL = PREV's). One reference. NULL when out
 * of memory (then CFG and any new CONTENT/DIGEST are freed). */
struct snapshot *snapshot_next(const struct snapshot *prev, struct config *cfg, struct content *content,
                               struct digest *digest);

/* Take a reference on S (which must be held already: the current snapshot while the caller
 * holds the server's read lock, or one the caller holds). Returns S. */
struct snapshot *snapshot_get(struct snapshot *s);
/* Drop a reference. Never frees: snapshot_reap does, in the thread that owns the list. */
void snapshot_put(struct snapshot *s);

/* Append S (whose server reference the caller drops now) to the retired list *LIST. */
void snapshot_retire(struct snapshot **list, struct snapshot *s);
/* Free every retired snapshot nobody holds. Returns how many are still held. */
size_t snapshot_reap(struct snapshot **list);
/* Stop the hashing thread of S and of every snapshot in LIST (waking the .sha256 requests
 * waiting on them, as libmicrohttpd's stop requires). */
void snapshot_stop_digests(struct snapshot *s, struct snapshot *list);
/* Free S and every snapshot of LIST, held or not (the server has stopped). */
void snapshot_free_all(struct snapshot *s, struct snapshot **list);

#endif
