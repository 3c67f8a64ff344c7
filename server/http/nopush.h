/* nopush: nginx's `tcp_nopush` for libmicrohttpd's fd and iovec responses. The headers of
 * a file response leave in the same segment as the first body bytes, and the body's last
 * partial segment is pushed once, when the response ends.
 *
 * Why: libmicrohttpd (0.9.75 to 1.0.1) sends an fd (or iovec) response's headers with
 * send() and pushes them on their own (MHD_send_hdr_and_body_: "the client may react on
 * header alone"), then corks, sendfile()s the body in 128 KiB steps (sendmsg for an iovec)
 * and pushes with TCP_NODELAY.
 * nginx with `tcp_nopush on` corks, writev()s the headers, sendfile()s the body and uncorks.
 * Under bbr, at 1,000 connections on 1 MiB, libmicrohttpd's order served 0.75 x nginx's
 * requests/s; the same 8 steps in nginx's order gave back two thirds of the gap
 * (docs/performance.md). libmicrohttpd has no option for it and keeps its own record of
 * the socket's cork and no-delay state, so debitd does it beneath libmicrohttpd:
 *
 *   nopush_begin(fd)  when such a response is queued: TCP_CORK on (and TCP_NODELAY on,
 *                     once per connection), and the descriptor is held;
 *   while held        the TCP_CORK and TCP_NODELAY calls libmicrohttpd makes on it are
 *                     answered 0 and not made: debitd's setsockopt() (mhd_compat.c,
 *                     which the dynamic linker resolves in the executable before libc)
 *                     asks nopush_intercept (every other call passes through);
 *   nopush_end(fd)    when the request completes (any outcome): TCP_CORK off, which pushes
 *                     what is left.
 *
 * Outside a held response the socket is uncorked with TCP_NODELAY on, the state in which
 * any send pushes: libmicrohttpd's record (which may say "corked") can then only cost it a
 * needless uncork, never hold data back. If the interposition is not in effect (a static
 * build, a libmicrohttpd that calls the kernel directly, or a version mhd_compat does not
 * know: MHD_TRICK_SETSOCKOPT), nopush_begin refuses (nopush_interposed) and the response
 * keeps libmicrohttpd's order.
 *
 * State is a byte of the connection's struct mhd_fd_state (in its struct conn, found by
 * descriptor through mhd_compat's table: a descriptor with none is never held,
 * libmicrohttpd's order); a new connection on the same number starts afresh. Thread-safe:
 * a connection's calls come from its worker. */
#ifndef DEBITD_NOPUSH_H
#define DEBITD_NOPUSH_H

#include <stddef.h>
#include <stdint.h>

struct mhd_fd_state;

/* Cork FD and hold it until nopush_end. Returns 0, or -1 with ERR filled (no
 * interposition, no struct conn on FD, or setsockopt failed: nothing is held, the response
 * goes in libmicrohttpd's order). */
int nopush_begin(int fd, char *err, size_t errlen);
/* Release FD: uncork (pushes the rest) if it was held. Returns 1 if it was held, 0 if
 * not, -1 with ERR filled if the uncork failed (a closed socket: harmless). */
int nopush_end(int fd, char *err, size_t errlen);
/* True while FD is held. */
int nopush_held(int fd);
/* The interposed setsockopt's question for a TCP_CORK/TCP_NODELAY call on a descriptor
 * whose state is ST (NULL: beyond the table): 1 = held, answer 0 without the kernel (and
 * count it), 0 = pass it on. */
int nopush_intercept(struct mhd_fd_state *st);
/* True when this process's setsockopt() calls from shared libraries reach debitd's (the
 * executable exports it) and mhd_compat's probe allows it (MHD_TRICK_SETSOCKOPT). */
int nopush_interposed(void);
/* libmicrohttpd calls answered without a system call since start (all descriptors). */
uint64_t nopush_calls_held(void);

#endif
