/* watchdog: debitd's deadlines (deadline.h) and refusal log (refusal_log.h) wired to
 * libmicrohttpd. Its connection callbacks give each connection an entry (kept in the
 * connection's struct conn, server/http/conn.h); the access handler and the completion callback report the request's progress;
 * one thread per server scans the entries every WATCHDOG_TICK_MS and shuts down
 * (shutdown(2), SHUT_RDWR) the socket of a connection past its deadline. shutdown, not
 * close: the socket stays libmicrohttpd's, which sees the end of the stream in its own
 * thread and closes the connection as if the peer had gone (the one safe way to end a
 * connection from another thread in 0.9.75, where MHD_CONNECTION_OPTION_TIMEOUT may only
 * be set from the connection's own callbacks). The same thread writes the refusal log's
 * summary line once per interval. */
#ifndef DEBITD_WATCHDOG_H
#define DEBITD_WATCHDOG_H

#include <microhttpd.h>
#include <stddef.h>

#include "config.h"
#include "deadline.h"
#include "refusal_log.h"

#define WATCHDOG_TICK_MS 100          /* deadline resolution */
#define WATCHDOG_LOG_INTERVAL_MS 10000 /* one refusal summary line per this, at most */
/* Connections watched at most, whatever the limits say (a 176 MiB block of virtual memory
 * at most, touched only as far as connections use it); beyond, connections go unwatched. */
#define WATCHDOG_MAX_CONNECTIONS (1u << 20)
/* Connections closed since the last peak after which freed memory goes back to the system. */
#define WATCHDOG_TRIM_DROP 500

struct watchdog;

/* Deadlines from CFG (limits.header_timeout, limits.body_min_rate). NULL with err when out
 * of resources. Owned by the caller (watchdog_free). */
struct watchdog *watchdog_new(const struct config *cfg, char *err, size_t errlen);
/* limits.header_timeout and limits.body_min_rate changed (a reload). */
void watchdog_set_limits(struct watchdog *w, const struct config *cfg);
/* Start the thread. An action: 0, or -1 with err. */
int watchdog_start(struct watchdog *w, char *err, size_t errlen);
/* Stop the thread (idempotent) and log what the refusal log still holds. */
void watchdog_stop(struct watchdog *w);
/* Stop, then free. NULL is fine. */
void watchdog_free(struct watchdog *w);

/* MHD_CONNECTION_NOTIFY_STARTED: CONN's deadline entry (NULL: unwatched; the caller keeps
 * it); _CLOSED: forget it (NULL is fine). */
struct deadline_conn *watchdog_conn_started(struct watchdog *w, struct MHD_Connection *conn);
void watchdog_conn_closed(struct watchdog *w, struct deadline_conn *c);
/* From the access handler, for the connection's entry C (NULL: nothing): FIRST = the call
 * that follows the complete headers; later calls carry BODY_BYTES of the body, and 0 once
 * it is complete. */
void watchdog_request(struct watchdog *w, struct deadline_conn *c, int first, size_t body_bytes);
/* From MHD_OPTION_NOTIFY_COMPLETED: the response is over; the next request's header
 * deadline starts now. */
void watchdog_request_done(struct watchdog *w, struct deadline_conn *c);
/* A libmicrohttpd log message MSG that stands for refusal R (mhd_compat_log_reason, which
 * knows its once-per-connection texts; REFUSAL_N: none): counted in the refusal log; any
 * other passes the refusal log's line limit (watchdog_line). Returns 1 = counted or over
 * the limit (do not log it), 0 = log it. */
int watchdog_mhd_message(struct watchdog *w, enum refusal_reason r, const char *msg);
/* Whether a warning line MSG that a client can cause once per connection may be written
 * now (refusal_log_line: a few per interval, the rest counted in its summary line). */
int watchdog_line(struct watchdog *w, const char *msg);
/* A connection from SA refused at accept (limits.per_ip): counted in the refusal log as
 * "limit" with its address. */
void watchdog_refused(struct watchdog *w, const struct sockaddr *sa, socklen_t len);
/* Events of REASON since start (deadline closes, refusals). */
uint64_t watchdog_total(struct watchdog *w, enum refusal_reason reason);

#endif
