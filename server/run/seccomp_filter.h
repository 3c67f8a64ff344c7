/* seccomp_filter: the list of system calls debitd makes once it serves, as a seccomp filter
 * (libseccomp). Everything else gets the configured action (config `seccomp`):
 *   eperm  the call fails with EPERM (the default), and the kernel logs it (audit/kmsg
 *          "type=1326 ... syscall=N"): a call on a path the tests did not exercise becomes
 *          an error the code already handles, not a dead server whose interface keeps its
 *          changed offloads; an attacker is refused the same calls as with kill;
 *   kill   the process is killed (SIGSYS), logged by the kernel;
 *   log    the call is allowed and logged by the kernel: for finding a missing entry;
 *   off    no filter.
 * In every mode clone3 answers ENOSYS, so that glibc falls back to clone(2), whose flags a
 * filter can read: only clone(CLONE_THREAD) — a thread, never a new process — passes. */
#ifndef DEBITD_SECCOMP_FILTER_H
#define DEBITD_SECCOMP_FILTER_H

#include <stddef.h>

#include "config.h"

/* Install the filter on the calling thread — the only one: threads started later inherit
 * it — with MODE's action for the calls outside the list; CONFIG_SECCOMP_OFF installs
 * nothing. It stacks on a filter already in force (systemd's). Sets PR_SET_NO_NEW_PRIVS
 * (the kernel requires it without CAP_SYS_ADMIN). An action: 0, or -1 with err. */
int seccomp_filter_install(enum config_seccomp mode, char *err, size_t errlen);

/* How many system calls the list allows on this architecture (for the log line). */
size_t seccomp_filter_allowed_count(void);

#endif
