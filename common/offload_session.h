/* offload_session: change one interface's offloads for the duration of a measurement and
 * put them back whatever happens — the `debit --offload DEV:tso=off,gso=off` logic, also
 * usable by debitd.
 *
 *   begin:  recover a state file left by a dead process (same interface, same netns),
 *           save the state before to the state file, apply the wish, verify it.
 *   end:    restore, verify, remove the state file. Idempotent.
 *   exit(): an atexit hook ends every session still active.
 *   SIGTERM/SIGHUP/SIGQUIT (offload_session_handle_signals): a signal-safe restore (the
 *           ETHTOOL_SFEATURES request is prepared at begin, so the handler only calls
 *           ioctl and unlink), then the signal's default action.
 *   SIGKILL: the state file stays; the next begin on that path (or
 *           offload_state_recover) restores it.
 *
 * Not thread-safe: begin/end from one thread (main). See docs/offload.md. */
#ifndef DEBIT_OFFLOAD_SESSION_H
#define DEBIT_OFFLOAD_SESSION_H

#include "offload.h"

#include <stddef.h>

/* At most this many sessions may be active at once in a process. */
#define OFFLOAD_SESSION_MAX 8

struct offload_session;

/* A new, inactive session. Returns NULL when out of memory. Caller owns it. */
struct offload_session *offload_session_new(void);
/* Ends the session if still active (errors ignored: call offload_session_end first to see
 * them), then frees it. NULL is fine. */
void offload_session_free(struct offload_session *s);

/* Default state file for the client: "/run/debit/offload-IFNAME.state" in the initial
 * network namespace, "/run/debit/offload-IFNAME@netINODE.state" in any other. */
int offload_session_default_path(const char *ifname, char *buf, size_t len);

/* Apply WISH to IFNAME with crash safety. STATE_PATH may be NULL (no state file: no
 * recovery after SIGKILL). Fails, changing nothing, when STATE_PATH belongs to a process
 * that still runs or to another network namespace (OFFLOAD_ERR_STATE_OWNER/STALE: give
 * each instance its own path), and with offload_apply's errors. On success the session
 * is active and registered for the atexit and signal restores. NOTE (optional, may be
 * NULL) receives a line worth logging when a leftover state was recovered first
 * ("restored veth0 offloads left by pid 1234 ..."), else "". */
enum offload_err offload_session_begin(struct offload_session *s, const char *ifname,
                                       const struct offload_wish *wish, const char *state_path,
                                       char *note, size_t notelen, char *err, size_t errlen);

/* The state before begin changed anything, and the verified state after it. NULL when
 * the session is not active (so `offload_session_before(s) != NULL` tells whether it is).
 * Valid until end/free. */
const struct offload_state *offload_session_before(const struct offload_session *s);
const struct offload_state *offload_session_after(const struct offload_session *s);

/* Restore the state before, verify it, remove the state file. On a failed restore the
 * state file is kept (recovery may retry) and the error returned. Inactive: OFFLOAD_OK. */
enum offload_err offload_session_end(struct offload_session *s, char *err, size_t errlen);

/* Install the restoring handler for SIGTERM, SIGHUP and SIGQUIT where their disposition
 * is still the default (a program's own handlers are left alone: one that ends the
 * program through exit() or a return from main restores through the atexit hook).
 * The handler restores every active session with the ioctl prepared at begin, unlinks
 * the state files, then lets the signal kill the process. Idempotent. */
void offload_session_handle_signals(void);

#endif
