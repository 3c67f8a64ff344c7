/* offload: see offload.h. The ethtool engine: read, set, verify and restore through
 * SIOCETHTOOL. Names, formatting and spec parsing are in offload_fmt.c, the state file in
 * offload_state.c.
 *
 * Kernel feature bits are addressed by name only: their indices differ between kernels,
 * so every call reads the ETH_SS_FEATURES string set first (ETHTOOL_GSSET_INFO for the
 * count, ETHTOOL_GSTRINGS for the names), then ETHTOOL_GFEATURES for the state words. */
#include "offload.h"
#include "offload_int.h"

#include "err.h"

#include <errno.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* Which kernel bits belong to a feature: the name starts with PREFIX and ends with
 * SUFFIX (the same one-asterisk patterns ethtool uses for its legacy flags:
 * "tx-tcp*-segmentation", "tx-checksum-*"). */
static const struct {
    const char *prefix, *suffix;
    int exact;
} feature_patterns[OFFLOAD_NFEATURES] = {
    [OFFLOAD_TSO] = {"tx-tcp", "-segmentation", 0},
    [OFFLOAD_GSO] = {"tx-generic-segmentation", "", 1},
    [OFFLOAD_GRO] = {"rx-gro", "", 1},
    [OFFLOAD_SG] = {"tx-scatter-gather", "", 1},
    [OFFLOAD_TXCSUM] = {"tx-checksum-", "", 0},
    [OFFLOAD_LRO] = {"rx-lro", "", 1},
};

void offload_feature_summarize(struct offload_feature_state *fs)
{
    unsigned active = 0, fixed = 0;
    for (unsigned b = 0; b < fs->nbits; b++) {
        active += fs->bits[b].active;
        fixed += fs->bits[b].fixed;
    }
    fs->known = fs->nbits > 0;
    fs->on = active > 0;
    fs->partial = active > 0 && active < fs->nbits;
    fs->fixed = fs->nbits > 0 && fixed == fs->nbits;
}

static int bit_matches(const char *name, enum offload_feature f)
{
    const char *p = feature_patterns[f].prefix, *s = feature_patterns[f].suffix;
    if (feature_patterns[f].exact)
        return strcmp(name, p) == 0;
    size_t n = strlen(name), lp = strlen(p), ls = strlen(s);
    return n >= lp + ls && strncmp(name, p, lp) == 0 && strcmp(name + n - ls, s) == 0;
}

/* --- ioctl plumbing ------------------------------------------------------------------- */

struct ethdev {
    int fd;
    char ifname[IF_NAMESIZE];
    unsigned count;   /* number of feature bits */
    unsigned words;   /* 32-bit blocks */
    char *names;      /* count * ETH_GSTRING_LEN */
    struct ethtool_gfeatures *gf;
};

static void ethdev_close(struct ethdev *d)
{
    if (d->fd >= 0)
        close(d->fd);
    free(d->names);
    free(d->gf);
    d->fd = -1;
    d->names = NULL;
    d->gf = NULL;
}

static enum offload_err errno_to_err(int e, const char *ifname, const char *what, char *err, size_t errlen)
{
    switch (e) {
    case ENODEV:
    case ENXIO:
        err_set(err, errlen, "%s: no such network interface in this network namespace", ifname);
        return OFFLOAD_ERR_NO_DEVICE;
    case EPERM:
    case EACCES:
        err_set(err, errlen, "%s: %s needs CAP_NET_ADMIN in the interface's network namespace (run as root)", ifname,
                what);
        return OFFLOAD_ERR_PERM;
    case EOPNOTSUPP:
        err_set(err, errlen, "%s: %s: the device does not support ethtool feature control", ifname, what);
        return OFFLOAD_ERR_NOT_SUPPORTED;
    default:
        err_set(err, errlen, "%s: %s: %s", ifname, what, strerror(e));
        return OFFLOAD_ERR_SYSTEM;
    }
}

static int ethtool_ioctl(struct ethdev *d, void *cmd)
{
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    memcpy(ifr.ifr_name, d->ifname, sizeof d->ifname);
    ifr.ifr_data = cmd;
    return ioctl(d->fd, SIOCETHTOOL, &ifr);
}

int offload_ctl_socket(void)
{
    /* The socket's netns picks the device namespace: the caller's. AF_INET may be
     * compiled out; SIOCETHTOOL falls through to dev_ioctl for any family. */
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    return fd >= 0 ? fd : socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
}

/* Open a control socket, read the feature names and the current feature words. */
static enum offload_err ethdev_open(struct ethdev *d, const char *ifname, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    d->fd = -1;
    enum offload_err e = offload_check_ifname(ifname, err, errlen);
    if (e)
        return e;
    snprintf(d->ifname, sizeof d->ifname, "%s", ifname);
    d->fd = offload_ctl_socket();
    if (d->fd < 0) {
        err_set(err, errlen, "%s: socket: %s", ifname, strerror(errno));
        return OFFLOAD_ERR_SYSTEM;
    }

    /* struct ethtool_sset_info ends in a flexible array: room for its one answer word
     * without a struct that has it in the middle (clang's -Wgnu-variable-sized-type...). */
    union {
        struct ethtool_sset_info hdr;
        unsigned char bytes[sizeof(struct ethtool_sset_info) + sizeof(uint32_t)];
    } sset;
    memset(&sset, 0, sizeof sset);
    sset.hdr.cmd = ETHTOOL_GSSET_INFO;
    sset.hdr.sset_mask = 1ULL << ETH_SS_FEATURES;
    if (ethtool_ioctl(d, &sset) < 0) {
        e = errno_to_err(errno, ifname, "reading feature names (ETHTOOL_GSSET_INFO)", err, errlen);
        goto out;
    }
    if (!(sset.hdr.sset_mask & (1ULL << ETH_SS_FEATURES)) || sset.hdr.data[0] == 0 || sset.hdr.data[0] > 4096) {
        e = OFFLOAD_ERR_NOT_SUPPORTED;
        err_set(err, errlen, "%s: the kernel does not report feature names (ETH_SS_FEATURES)", ifname);
        goto out;
    }
    d->count = sset.hdr.data[0];
    d->words = (d->count + 31) / 32;

    struct ethtool_gstrings *gs = calloc(1, sizeof *gs + (size_t)d->count * ETH_GSTRING_LEN);
    if (!gs) {
        e = OFFLOAD_ERR_SYSTEM;
        err_set(err, errlen, "%s: out of memory", ifname);
        goto out;
    }
    gs->cmd = ETHTOOL_GSTRINGS;
    gs->string_set = ETH_SS_FEATURES;
    gs->len = d->count;
    if (ethtool_ioctl(d, gs) < 0) {
        free(gs);
        e = errno_to_err(errno, ifname, "reading feature names (ETHTOOL_GSTRINGS)", err, errlen);
        goto out;
    }
    if (gs->len < d->count)
        d->count = gs->len;
    d->names = malloc((size_t)d->count * ETH_GSTRING_LEN + 1);
    if (!d->names) {
        free(gs);
        e = OFFLOAD_ERR_SYSTEM;
        err_set(err, errlen, "%s: out of memory", ifname);
        goto out;
    }
    memcpy(d->names, gs->data, (size_t)d->count * ETH_GSTRING_LEN);
    for (unsigned i = 0; i < d->count; i++) /* the kernel pads, but do not trust it */
        d->names[i * ETH_GSTRING_LEN + ETH_GSTRING_LEN - 1] = 0;
    free(gs);

    d->gf = calloc(1, sizeof *d->gf + d->words * sizeof d->gf->features[0]);
    if (!d->gf) {
        e = OFFLOAD_ERR_SYSTEM;
        err_set(err, errlen, "%s: out of memory", ifname);
        goto out;
    }
    return OFFLOAD_OK;
out:
    ethdev_close(d);
    return e;
}

static enum offload_err ethdev_read(struct ethdev *d, char *err, size_t errlen)
{
    memset(d->gf, 0, sizeof *d->gf + d->words * sizeof d->gf->features[0]);
    d->gf->cmd = ETHTOOL_GFEATURES;
    d->gf->size = d->words;
    if (ethtool_ioctl(d, d->gf) < 0)
        return errno_to_err(errno, d->ifname, "reading features (ETHTOOL_GFEATURES)", err, errlen);
    return OFFLOAD_OK;
}

static const char *ethdev_name(const struct ethdev *d, unsigned i)
{
    return d->names + (size_t)i * ETH_GSTRING_LEN;
}

static int ethdev_find(const struct ethdev *d, const char *name)
{
    for (unsigned i = 0; i < d->count; i++)
        if (strcmp(ethdev_name(d, i), name) == 0)
            return (int)i;
    return -1;
}

#define BIT_OF(i) (1u << ((i) % 32))

/* What ethtool -k marks "[fixed]": not changeable on this device. */
static int bit_fixed(const struct ethtool_gfeatures *gf, unsigned idx)
{
    const struct ethtool_get_features_block *b = &gf->features[idx / 32];
    return !(b->available & BIT_OF(idx)) || (b->never_changed & BIT_OF(idx));
}

static enum offload_err ethdev_state(const struct ethdev *d, struct offload_state *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    snprintf(st->ifname, sizeof st->ifname, "%s", d->ifname);
    st->ifindex = (int)if_nametoindex(d->ifname);
    for (unsigned i = 0; i < d->count; i++) {
        const char *name = ethdev_name(d, i);
        if (!*name)
            continue;
        for (int f = 0; f < OFFLOAD_NFEATURES; f++) {
            if (!bit_matches(name, (enum offload_feature)f))
                continue;
            struct offload_feature_state *fs = &st->f[f];
            if (fs->nbits >= OFFLOAD_MAX_BITS) {
                err_set(err, errlen, "%s: more than %d kernel bits for %s", d->ifname, OFFLOAD_MAX_BITS,
                        offload_names[f]);
                return OFFLOAD_ERR_SYSTEM;
            }
            const struct ethtool_get_features_block *b = &d->gf->features[i / 32];
            struct offload_bit *bit = &fs->bits[fs->nbits++];
            snprintf(bit->name, sizeof bit->name, "%s", name);
            bit->active = !!(b->active & BIT_OF(i));
            bit->requested = !!(b->requested & BIT_OF(i));
            bit->fixed = bit_fixed(d->gf, i);
        }
    }
    for (int f = 0; f < OFFLOAD_NFEATURES; f++)
        offload_feature_summarize(&st->f[f]);
    return OFFLOAD_OK;
}

enum offload_err offload_get(const char *ifname, struct offload_state *st, char *err, size_t errlen)
{
    struct ethdev d;
    enum offload_err e = ethdev_open(&d, ifname, err, errlen);
    if (!e)
        e = ethdev_read(&d, err, errlen);
    if (!e)
        e = ethdev_state(&d, st, err, errlen);
    ethdev_close(&d);
    return e;
}

/* One ETHTOOL_SFEATURES request under construction. */
struct change {
    struct ethtool_sfeatures *sf;
    unsigned nvalid;
};

static enum offload_err change_init(struct change *c, const struct ethdev *d, char *err, size_t errlen)
{
    c->nvalid = 0;
    c->sf = calloc(1, sizeof *c->sf + d->words * sizeof c->sf->features[0]);
    if (!c->sf) {
        err_set(err, errlen, "%s: out of memory", d->ifname);
        return OFFLOAD_ERR_SYSTEM;
    }
    c->sf->cmd = ETHTOOL_SFEATURES;
    c->sf->size = d->words;
    return OFFLOAD_OK;
}

static void change_set(struct change *c, unsigned idx, int on)
{
    c->sf->features[idx / 32].valid |= BIT_OF(idx);
    if (on)
        c->sf->features[idx / 32].requested |= BIT_OF(idx);
    else
        c->sf->features[idx / 32].requested &= ~BIT_OF(idx);
    c->nvalid++;
}

static enum offload_err change_send(struct change *c, struct ethdev *d, const char *what,
                                    char *err, size_t errlen)
{
    if (c->nvalid == 0)
        return OFFLOAD_OK;
    int r = ethtool_ioctl(d, c->sf);
    if (r < 0)
        return errno_to_err(errno, d->ifname, what, err, errlen);
    /* ETHTOOL_F_WISH/F_UNSUPPORTED are not failures by themselves: the read-back that
     * follows names exactly which bit did not take. */
    return OFFLOAD_OK;
}

/* After a change: every bit of WANT's wished features must now be in the wished state. */
static enum offload_err verify_wish(const struct offload_state *now, const struct offload_wish *w,
                                    char *err, size_t errlen)
{
    for (int f = 0; f < OFFLOAD_SETTABLE; f++) {
        if (w->want[f] == OFFLOAD_LEAVE)
            continue;
        int on = w->want[f] == OFFLOAD_ON;
        const struct offload_feature_state *fs = &now->f[f];
        for (unsigned b = 0; b < fs->nbits; b++) {
            const struct offload_bit *bit = &fs->bits[b];
            /* Turning a feature on leaves the variants the device lacks (fixed off) off. */
            if (on && bit->fixed && !bit->active)
                continue;
            if (bit->active != on) {
                err_set(err, errlen, "%s: the device refused %s=%s: %s stays %s%s", now->ifname, offload_names[f],
                        on ? "on" : "off", bit->name, bit->active ? "on" : "off",
                        on && f == OFFLOAD_TSO ? " (TSO needs sg and tx checksumming on)" : "");
                return OFFLOAD_ERR_REFUSED;
            }
        }
        if (on && !fs->on) {
            err_set(err, errlen, "%s: the device refused %s=on", now->ifname, offload_names[f]);
            return OFFLOAD_ERR_REFUSED;
        }
    }
    return OFFLOAD_OK;
}

static enum offload_err restore_on(struct ethdev *d, const struct offload_state *before,
                                   struct offload_state *after, char *err, size_t errlen);

enum offload_err offload_apply(const char *ifname, const struct offload_wish *wish,
                               struct offload_state *before, struct offload_state *after,
                               char *err, size_t errlen)
{
    struct ethdev d;
    struct offload_state b0, a0;
    struct change c = {0};
    if (!before)
        before = &b0;
    if (!after)
        after = &a0;
    for (int f = 0; f < OFFLOAD_SETTABLE; f++)
        if (wish->want[f] != OFFLOAD_LEAVE && wish->want[f] != OFFLOAD_ON && wish->want[f] != OFFLOAD_OFF) {
            err_set(err, errlen, "invalid wish for %s", offload_names[f]);
            return OFFLOAD_ERR_ARG;
        }

    enum offload_err e = ethdev_open(&d, ifname, err, errlen);
    if (!e)
        e = ethdev_read(&d, err, errlen);
    if (!e)
        e = ethdev_state(&d, before, err, errlen);
    if (!e)
        e = change_init(&c, &d, err, errlen);
    if (e)
        goto out;

    /* Check every feature before touching anything: a fixed bit fails the whole wish. */
    for (int f = 0; f < OFFLOAD_SETTABLE && !e; f++) {
        if (wish->want[f] == OFFLOAD_LEAVE)
            continue;
        int on = wish->want[f] == OFFLOAD_ON;
        const struct offload_feature_state *fs = &before->f[f];
        if (!fs->known) {
            e = OFFLOAD_ERR_NO_FEATURE;
            err_set(err, errlen, "%s: this kernel has no %s feature bits", ifname, offload_names[f]);
            break;
        }
        if (on && fs->fixed && !fs->on) {
            e = OFFLOAD_ERR_FIXED;
            err_set(err, errlen, "%s: cannot turn %s on: the device does not support it ([fixed] off)", ifname,
                    offload_names[f]);
            break;
        }
        for (unsigned b = 0; b < fs->nbits; b++) {
            const struct offload_bit *bit = &fs->bits[b];
            if (bit->fixed) {
                if (!on && bit->active) {
                    e = OFFLOAD_ERR_FIXED;
                    err_set(err, errlen, "%s: cannot turn %s off: %s is fixed on", ifname, offload_names[f], bit->name);
                    break;
                }
                continue;
            }
            if (bit->active == on && bit->requested == on)
                continue;
            int idx = ethdev_find(&d, bit->name);
            if (idx < 0) {
                e = OFFLOAD_ERR_SYSTEM;
                err_set(err, errlen, "%s: feature %s vanished", ifname, bit->name);
                break;
            }
            change_set(&c, (unsigned)idx, on);
        }
    }
    if (e)
        goto out;

    e = change_send(&c, &d, "setting features (ETHTOOL_SFEATURES)", err, errlen);
    if (e)
        goto out;
    e = ethdev_read(&d, err, errlen);
    if (!e)
        e = ethdev_state(&d, after, err, errlen);
    if (e)
        goto out;
    e = verify_wish(after, wish, err, errlen);
    if (e && c.nvalid) {
        /* Do not leave a half-applied wish behind; keep the first error's message. */
        char ignored[256];
        restore_on(&d, before, NULL, ignored, sizeof ignored);
    }
out:
    free(c.sf);
    ethdev_close(&d);
    return e;
}

/* Set every settable feature's bits back to BEFORE's requested state and verify. */
static enum offload_err restore_on(struct ethdev *d, const struct offload_state *before,
                                   struct offload_state *after, char *err, size_t errlen)
{
    struct offload_state now, a0;
    struct change c = {0};
    if (!after)
        after = &a0;
    enum offload_err e = ethdev_read(d, err, errlen);
    if (!e)
        e = ethdev_state(d, &now, err, errlen);
    if (!e)
        e = change_init(&c, d, err, errlen);
    if (e)
        goto out;
    for (int f = 0; f < OFFLOAD_SETTABLE && !e; f++) {
        const struct offload_feature_state *fs = &before->f[f];
        for (unsigned b = 0; b < fs->nbits; b++) {
            const struct offload_bit *want = &fs->bits[b];
            int idx = ethdev_find(d, want->name);
            if (idx < 0) {
                e = OFFLOAD_ERR_STATE_STALE;
                err_set(err, errlen, "%s: the kernel has no feature %s", d->ifname, want->name);
                break;
            }
            const struct ethtool_get_features_block *blk = &d->gf->features[idx / 32];
            int active = !!(blk->active & BIT_OF(idx)), requested = !!(blk->requested & BIT_OF(idx));
            if (active == want->active && requested == want->requested)
                continue;
            if (bit_fixed(d->gf, (unsigned)idx))
                continue; /* verified below: a fixed bit that differs is an error there */
            change_set(&c, (unsigned)idx, want->requested);
        }
    }
    if (e)
        goto out;
    e = change_send(&c, d, "restoring features (ETHTOOL_SFEATURES)", err, errlen);
    if (!e)
        e = ethdev_read(d, err, errlen);
    if (!e)
        e = ethdev_state(d, after, err, errlen);
    if (e)
        goto out;
    for (int f = 0; f < OFFLOAD_SETTABLE && !e; f++) {
        const struct offload_feature_state *fs = &before->f[f];
        for (unsigned b = 0; b < fs->nbits; b++) {
            int idx = ethdev_find(d, fs->bits[b].name);
            int active = !!(d->gf->features[idx / 32].active & BIT_OF(idx));
            if (active != fs->bits[b].active) {
                e = OFFLOAD_ERR_REFUSED;
                err_set(err, errlen, "%s: could not restore %s: %s stays %s", d->ifname, offload_names[f],
                        fs->bits[b].name, active ? "on" : "off");
                break;
            }
        }
    }
out:
    free(c.sf);
    return e;
}

enum offload_err offload_restore(const struct offload_state *before, struct offload_state *after,
                                 char *err, size_t errlen)
{
    struct ethdev d;
    enum offload_err e = ethdev_open(&d, before->ifname, err, errlen);
    if (!e)
        e = restore_on(&d, before, after, err, errlen);
    ethdev_close(&d);
    return e;
}

enum offload_err offload_prepare_restore(const struct offload_state *before, void **req,
                                         char *err, size_t errlen)
{
    struct ethdev d;
    struct change c = {0};
    *req = NULL;
    enum offload_err e = ethdev_open(&d, before->ifname, err, errlen);
    if (!e)
        e = ethdev_read(&d, err, errlen);
    if (!e)
        e = change_init(&c, &d, err, errlen);
    for (int f = 0; f < OFFLOAD_SETTABLE && !e; f++) {
        const struct offload_feature_state *fs = &before->f[f];
        for (unsigned b = 0; b < fs->nbits; b++) {
            int idx = ethdev_find(&d, fs->bits[b].name);
            if (idx < 0) {
                e = OFFLOAD_ERR_STATE_STALE;
                err_set(err, errlen, "%s: the kernel has no feature %s", d.ifname, fs->bits[b].name);
                break;
            }
            if (bit_fixed(d.gf, (unsigned)idx))
                continue;
            change_set(&c, (unsigned)idx, fs->bits[b].requested);
        }
    }
    if (e)
        free(c.sf);
    else
        *req = c.sf;
    ethdev_close(&d);
    return e;
}
