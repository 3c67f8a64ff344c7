/* snapshot: see snapshot.h. */
#include "snapshot.h"

#include <stdlib.h>

struct snapshot_share {
    _Atomic unsigned long n; /* snapshots sharing the object */
};

static struct snapshot_share *share_new(void)
{
    struct snapshot_share *sh = malloc(sizeof *sh);
    if (sh)
        atomic_init(&sh->n, 1);
    return sh;
}

/* Drop one snapshot's share: 1 when it was the last (free the object). */
static int share_drop(struct snapshot_share *sh)
{
    if (!sh || atomic_fetch_sub(&sh->n, 1) != 1)
        return 0;
    free(sh);
    return 1;
}

struct snapshot *snapshot_first(struct config *cfg, struct content *content, struct digest *digest)
{
    struct snapshot *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->content_share = share_new();
    s->digest_share = share_new();
    if (!s->content_share || !s->digest_share) {
        free(s->content_share);
        free(s->digest_share);
        free(s);
        return NULL;
    }
    atomic_init(&s->refs, 1);
    s->generation = 1;
    s->cfg = cfg;
    s->content = content;
    s->digest = digest;
    return s;
}

void snapshot_first_fill(struct snapshot *s, struct content *content, struct digest *digest)
{
    if (content)
        s->content = content;
    if (digest)
        s->digest = digest;
}

struct snapshot *snapshot_next(const struct snapshot *prev, struct config *cfg, struct content *content,
                               struct digest *digest)
{
    struct snapshot *s = calloc(1, sizeof *s);
    struct snapshot_share *cs = content ? share_new() : prev->content_share;
    struct snapshot_share *ds = digest ? share_new() : prev->digest_share;
    if (!s || !cs || !ds) {
        if (content)
            free(cs);
        if (digest)
            free(ds);
        free(s);
        digest_free(digest); /* before its region */
        content_free(content);
        config_free(cfg);
        free(cfg);
        return NULL;
    }
    if (!content)
        atomic_fetch_add(&cs->n, 1);
    if (!digest)
        atomic_fetch_add(&ds->n, 1);
    atomic_init(&s->refs, 1);
    s->generation = prev->generation + 1;
    s->cfg = cfg;
    s->owns_cfg = 1;
    s->content = content ? content : prev->content;
    s->digest = digest ? digest : prev->digest;
    s->content_share = cs;
    s->digest_share = ds;
    return s;
}

struct snapshot *snapshot_get(struct snapshot *s)
{
    atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
    return s;
}

void snapshot_put(struct snapshot *s)
{
    /* release: what the holder did with the snapshot happens before snapshot_reap's free */
    if (s)
        atomic_fetch_sub_explicit(&s->refs, 1, memory_order_release);
}

static void snapshot_free(struct snapshot *s)
{
    if (share_drop(s->digest_share)) /* the digest reads the region: first */
        digest_free(s->digest);
    if (share_drop(s->content_share))
        content_free(s->content);
    if (s->owns_cfg) {
        config_free(s->cfg);
        free(s->cfg);
    }
    free(s);
}

void snapshot_retire(struct snapshot **list, struct snapshot *s)
{
    snapshot_put(s);
    s->next = *list;
    *list = s;
}

size_t snapshot_reap(struct snapshot **list)
{
    size_t held = 0;
    for (struct snapshot **p = list; *p;) {
        struct snapshot *s = *p;
        if (atomic_load_explicit(&s->refs, memory_order_acquire) == 0) {
            *p = s->next;
            snapshot_free(s);
        } else {
            held++;
            p = &s->next;
        }
    }
    return held;
}

void snapshot_stop_digests(struct snapshot *s, struct snapshot *list)
{
    if (s)
        digest_stop(s->digest);
    for (; list; list = list->next)
        digest_stop(list->digest);
}

void snapshot_free_all(struct snapshot *s, struct snapshot **list)
{
    while (*list) {
        struct snapshot *r = *list;
        *list = r->next;
        snapshot_free(r);
    }
    if (s)
        snapshot_free(s);
}
