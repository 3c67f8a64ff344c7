/* offload: read, set, verify, report and restore a network interface's segmentation and
 * receive offloads through the SIOCETHTOOL ioctl, by kernel feature NAME
 * (ETHTOOL_GSSET_INFO + ETHTOOL_GSTRINGS(ETH_SS_FEATURES), then ETHTOOL_GFEATURES /
 * ETHTOOL_SFEATURES), the way `ethtool -k` / `ethtool -K` do it.
 *
 * A debit "feature" groups one or more kernel feature bits:
 *   tso    every tx-tcp*-segmentation bit (tx-tcp-segmentation, tx-tcp-ecn-segmentation,
 *          tx-tcp-mangleid-segmentation, tx-tcp6-segmentation, tx-tcp-accecn-segmentation
 *          on 6.18, and any later tx-tcp*-segmentation). The legacy ETHTOOL_STSO leaves
 *          tx-tcp-accecn-segmentation on; by name we turn them all off.
 *   gso    tx-generic-segmentation
 *   gro    rx-gro
 *   sg     tx-scatter-gather                       (reported only)
 *   txcsum every tx-checksum-* bit                  (reported only)
 *   lro    rx-lro                                   (reported only)
 * A feature reads "on" when ANY of its bits is active (what `ethtool -k` shows for
 * tcp-segmentation-offload), "partial" when some but not all are.
 *
 * Everything acts on the interface of that name in the CALLER's network namespace.
 * Changing a feature needs CAP_NET_ADMIN in that namespace; reading does not.
 * See docs/offload.md. */
#ifndef DEBIT_OFFLOAD_H
#define DEBIT_OFFLOAD_H

#include <jansson.h>
#include <net/if.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum offload_feature {
    OFFLOAD_TSO = 0,
    OFFLOAD_GSO,
    OFFLOAD_GRO,
    OFFLOAD_SG,
    OFFLOAD_TXCSUM,
    OFFLOAD_LRO,
    OFFLOAD_NFEATURES,
};
/* Features that offload_apply may change: [OFFLOAD_TSO, OFFLOAD_SETTABLE). */
#define OFFLOAD_SETTABLE (OFFLOAD_GRO + 1)

enum offload_err {
    OFFLOAD_OK = 0,
    OFFLOAD_ERR_ARG,          /* bad argument (empty or too long interface name, ...) */
    OFFLOAD_ERR_NO_DEVICE,    /* no such interface in this network namespace */
    OFFLOAD_ERR_PERM,         /* EPERM/EACCES: needs CAP_NET_ADMIN (run as root) */
    OFFLOAD_ERR_NOT_SUPPORTED,/* the device or kernel does not support this ethtool call */
    OFFLOAD_ERR_NO_FEATURE,   /* the kernel knows no feature bit of that name */
    OFFLOAD_ERR_FIXED,        /* a feature bit that would have to change is fixed */
    OFFLOAD_ERR_REFUSED,      /* the device accepted the request but the state read back
                                 differs (ETHTOOL_F_WISH, dependencies such as tso→sg) */
    OFFLOAD_ERR_SYSTEM,       /* any other errno (message has strerror) */
    OFFLOAD_ERR_SPEC,         /* offload_parse_spec: malformed DEV:feat=on|off,... */
    OFFLOAD_ERR_NO_STATE,     /* offload_state_load: no state file (not a failure) */
    OFFLOAD_ERR_STATE_FILE,   /* state file unreadable, unwritable or malformed */
    OFFLOAD_ERR_STATE_OWNER,  /* the process that saved the state file is still running */
    OFFLOAD_ERR_STATE_STALE,  /* saved for another netns, or the interface was recreated */
};
/* Every function below that can fail returns enum offload_err (err.h: a named enum for
 * more outcomes than done/failed) and fills err with one sentence when it is not
 * OFFLOAD_OK. */

#define OFFLOAD_BIT_NAME_LEN 32 /* ETH_GSTRING_LEN */
#define OFFLOAD_MAX_BITS 16     /* kernel bits per debit feature (txcsum has 5, tso 5) */

/* One kernel feature bit, as ETHTOOL_GFEATURES reports it. */
struct offload_bit {
    char name[OFFLOAD_BIT_NAME_LEN]; /* "tx-tcp-segmentation" */
    unsigned char active;            /* currently enabled */
    unsigned char requested;         /* what was last asked for (ethtool -K) */
    unsigned char fixed;             /* not changeable on this device ("[fixed]") */
};

struct offload_feature_state {
    int known;    /* the device reports at least one bit of this feature */
    int on;       /* any bit active */
    int partial;  /* some, not all, bits active */
    int fixed;    /* no bit of it can be changed */
    unsigned nbits;
    struct offload_bit bits[OFFLOAD_MAX_BITS];
};

/* A snapshot of one interface. Plain data: copy it freely; no _free needed. */
struct offload_state {
    char ifname[IF_NAMESIZE];
    int ifindex;
    struct offload_feature_state f[OFFLOAD_NFEATURES];
};

/* Read the live state of IFNAME. Needs no privilege. Like every call here, thread-safe
 * (no shared state; each call opens its own control socket) and cheap enough to call per
 * HTTP response (three ioctls). */
enum offload_err offload_get(const char *ifname, struct offload_state *st, char *err, size_t errlen);

enum offload_want {
    OFFLOAD_LEAVE = 0, /* zero-initialised wish = change nothing */
    OFFLOAD_ON,
    OFFLOAD_OFF,
};
/* What to change; only the settable features (tso, gso, gro) may be other than LEAVE. */
struct offload_wish {
    enum offload_want want[OFFLOAD_SETTABLE];
};

/* Apply WISH to IFNAME: every bit of each wished feature is set by name in one
 * ETHTOOL_SFEATURES, then the active state is read back and verified.
 * BEFORE (optional) receives the state before any change, to give to offload_restore;
 * AFTER (optional) the verified state. Fails before changing anything when a bit that
 * would have to change is fixed; if the device refuses part of the change, the state
 * before is put back (best effort) and OFFLOAD_ERR_REFUSED is returned (AFTER then holds
 * the refused state, read before the rollback). "on" means every changeable bit on: a
 * variant the device lacks (fixed off) stays off. Setting a feature to the state it
 * already has sends nothing and succeeds even without privilege. */
enum offload_err offload_apply(const char *ifname, const struct offload_wish *wish,
                               struct offload_state *before, struct offload_state *after,
                               char *err, size_t errlen);

/* Put every tso/gso/gro bit of BEFORE->ifname back to its requested state in BEFORE,
 * then verify that the active bits equal BEFORE's. sg/txcsum/lro are never touched.
 * AFTER (optional) receives the state read back. */
enum offload_err offload_restore(const struct offload_state *before, struct offload_state *after,
                                 char *err, size_t errlen);

/* --- names, formatting, parsing (offload_fmt.c: pure, no device access) ------------- */

/* Static text for the kind of an error: "needs CAP_NET_ADMIN (run as root)", ... The err
 * buffers of the functions carry the full, specific message; this is the one name table
 * of enum offload_err (debitd's /status shows it as "offload_error"). */
const char *offload_strerror(enum offload_err e);

/* "tso", "gso", ... ; NULL for an out-of-range value. */
const char *offload_feature_name(enum offload_feature f);
/* Name -> feature (exact, lower case). Returns 0, or -1 for an unknown name. */
int offload_feature_parse(const char *name, enum offload_feature *f);

/* True when the wish changes nothing. */
int offload_wish_empty(const struct offload_wish *w);

/* "tso=off gso=off gro=on" — the X-Debit-Offload header form. A feature the device does
 * not have prints "n/a"; a partial one prints "on" (as ethtool -k). Returns snprintf's. */
int offload_format(const struct offload_state *st, char *buf, size_t len);

/* JSON for /status and the client's output; caller owns the new reference:
 *   {"interface":"veth0","tso":false,"gso":false,"gro":true,"sg":true,"txcsum":true,
 *    "lro":false,"fixed":["lro"],"partial":[],
 *    "bits":{"tx-tcp-segmentation":false,...}}
 * A feature the device lacks is null. */
json_t *offload_to_json(const struct offload_state *st);

/* Parse "DEV:tso=off,gso=off[,gro=on]" (the `debit --offload` argument). Values: on|off.
 * IFNAME must hold IF_NAMESIZE bytes. Returns OFFLOAD_OK or OFFLOAD_ERR_SPEC with a
 * message naming the bad part. */
enum offload_err offload_parse_spec(const char *spec, char *ifname, struct offload_wish *wish,
                                    char *err, size_t errlen);

/* "tso=off gso=off" for a wish (LEAVE features omitted); for logs and --help examples. */
int offload_wish_format(const struct offload_wish *w, char *buf, size_t len);

/* --- crash recovery (offload_state.c) -------------------------------------------------
 * The state before a change is saved in a small text file (default for debitd:
 * /run/debitd/offload.state) written atomically (temp file + fsync + rename; missing
 * parent directories are created with mode 0755). It records the interface name and
 * index, the network namespace (inode of /proc/self/ns/net), the saving process (pid and
 * start time) and every tso/gso/gro bit's requested and active state. */

/* Extra facts recorded with a saved state. */
struct offload_saved_info {
    pid_t pid;                 /* process that saved it */
    unsigned long long pid_start; /* its start time (clock ticks since boot, /proc/PID/stat) */
    unsigned long long netns;  /* inode of its network namespace */
    long long saved_at;        /* unix time */
};

/* Save BEFORE (from offload_apply) to PATH. */
enum offload_err offload_state_save(const char *path, const struct offload_state *before,
                                    char *err, size_t errlen);
/* Load PATH into ST (and INFO, optional). OFFLOAD_ERR_NO_STATE when PATH does not exist. */
enum offload_err offload_state_load(const char *path, struct offload_state *st,
                                    struct offload_saved_info *info, char *err, size_t errlen);
/* Remove PATH; a missing file is not an error. */
enum offload_err offload_state_remove(const char *path, char *err, size_t errlen);

/* Crash recovery, for debitd's start and `debitd --restore-offload`: if PATH holds a state
 * left by a process that is no longer running, restore that interface and remove PATH.
 * Returns OFFLOAD_OK when it restored (RESTORED, optional, gets the state read back),
 * OFFLOAD_ERR_NO_STATE when there was nothing to do, OFFLOAD_ERR_STATE_OWNER when the
 * saving process still runs (nothing touched), OFFLOAD_ERR_STATE_STALE when the file was
 * written in another netns (file left in place for that netns, nothing touched) or when
 * the interface no longer exists or was recreated with another index (the saved state can
 * never apply: file removed), or the restore's error (file kept, so a retry may work). */
enum offload_err offload_state_recover(const char *path, struct offload_state *restored,
                                       char *err, size_t errlen);

#endif
