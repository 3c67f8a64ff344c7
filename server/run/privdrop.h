/* privdrop: debitd's least privilege. Root is needed to bind low ports and to set and
 * restore offloads; once the listeners are bound and the offloads applied (their state
 * file written), and before any thread starts, main calls privdrop_apply, which
 *   1. switches to the configured user and group (`user`, `group`): setgroups (the group
 *      alone: no supplementary groups), setresgid, setresuid, then checks that root cannot
 *      be regained;
 *   2. keeps no capability, or CAP_NET_ADMIN alone while debitd still needs it (an offload
 *      restore at exit; a TCP profile that cannot be applied without it: a sndbuf over
 *      net.core.wmem_max, a congestion control outside
 *      net.ipv4.tcp_allowed_congestion_control), in the permitted, effective and
 *      bounding sets; inheritable and ambient sets empty (libcap);
 *   3. sets PR_SET_NO_NEW_PRIVS;
 *   4. installs the seccomp filter (seccomp_filter.h; not in a sanitizer build, whose
 *      runtime needs calls the list refuses, e.g. ptrace for LeakSanitizer).
 * Every thread started afterwards inherits all of it. Without `user` the identity stays
 * (2-4 still apply). The offload state file is removed at exit by the dropped user:
 * privdrop_prepare_state_dir makes sure it can. */
#ifndef DEBITD_PRIVDROP_H
#define DEBITD_PRIVDROP_H

#include <stddef.h>
#include <sys/types.h>

#include "config.h"

struct privdrop_plan {
    int change_id;           /* switch to uid/gid (a user is set and debitd runs as root) */
    uid_t uid;
    gid_t gid;
    const char *user, *group; /* for messages (group NULL: the user's primary group) */
    int keep_net_admin;      /* keep CAP_NET_ADMIN */
    const char *why;         /* why it is kept, for the log line */
    enum config_seccomp seccomp;
};

/* What privdrop_apply will do, from the configuration, the effective uid debitd runs with,
 * whether an offload restore is pending at exit, and whether a listener's TCP profile needs
 * CAP_NET_ADMIN (privdrop_profiles_need_net_admin). Pure: no system call. */
void privdrop_plan_make(const struct config *cfg, uid_t euid, int offload_restore_pending, int profiles_need_net_admin,
                        struct privdrop_plan *p);

/* 1 when some listener's TCP profile cannot be applied without CAP_NET_ADMIN (a sndbuf over
 * net.core.wmem_max needs SO_SNDBUFFORCE; a congestion control outside
 * net.ipv4.tcp_allowed_congestion_control needs it too), found by applying each profile to
 * a scratch socket in a child that lacks CAP_NET_ADMIN; 1 also when that cannot be told;
 * 0 when every profile works without it, or there is none. */
int privdrop_profiles_need_net_admin(const struct config *cfg);

/* With a user and a restored offload, before the offloads are applied: the state file's
 * directory must let the user remove the state file after the drop. A missing directory is
 * created (parents 0755 root) and given to the user, and so is the default /run/debitd when
 * root owns it; any other directory must already be writable by the user (checked as the
 * user, in a child) and not sticky. An action: 0 (NOTE says what was done, or "") or -1
 * with err (a configuration error: exit 2). */
int privdrop_prepare_state_dir(const struct config *cfg, char *note, size_t notelen, char *err, size_t errlen);

/* May UID:GID (no supplementary group) access PATH with MODE (access(2)'s R_OK, W_OK, X_OK)?
 * Asked of the kernel as that user, in a child, so that ACLs and every parent directory
 * count: what a file the user must reopen after the drop needs, checked before it. Needs
 * root (and fork: only before the drop). 1, 0, or -1 when the child could not be run. */
int privdrop_user_access(const char *path, int mode, uid_t uid, gid_t gid, char *err, size_t errlen);

/* Apply P (see the top of this file). Fails when the process has more than one thread.
 * An action: 0 with NOTE describing the result (uid, capabilities, seccomp), or -1 with err;
 * after a failure the process may be half dropped: exit. */
int privdrop_apply(const struct privdrop_plan *p, char *note, size_t notelen, char *err, size_t errlen);

/* 1 when built with AddressSanitizer or another sanitizer (no seccomp filter then). */
int privdrop_sanitizer_build(void);

#endif
