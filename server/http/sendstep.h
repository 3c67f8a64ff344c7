/* sendstep: larger sendfile steps for a worker thread with few file responses in flight.
 *
 * Why: libmicrohttpd 0.9.75 in thread-pool mode sends a file body in 128 KiB sendfile()
 * calls (MHD_SENFILE_CHUNK_, fixed at its build), each followed by a turn of its event
 * loop: 8,192 turns per GiB. For one download that is what put debitd's CPU per GiB
 * 1.05-1.14 x nginx's (a throwaway 2 MiB shim: 1.01-1.04 x, docs/performance.md); with
 * many connections per worker the small step is what keeps them fair (2 MiB steps for
 * every connection served 1,000 clients of 1 MiB worse). So a step is widened only while
 * the calling worker thread has at most SENDSTEP_FEW sendfile responses in flight, to at
 * most SENDSTEP_MAX bytes, and never into the response's last SENDSTEP_TAIL bytes: the
 * final call stays libmicrohttpd's own, with its push.
 *
 *   sendstep_begin(sock, end)  a sendfile body that ends at region offset END (exclusive)
 *                              starts on socket SOCK, on this worker thread
 *   sendstep_end(sock)         it ended (any outcome), on the same thread
 *   sendfile64()               debitd defines it (mhd_compat.c: the executable exports it,
 *                              as setsockopt for nopush.h), so libmicrohttpd's calls reach
 *                              it: a call of exactly libmicrohttpd's 128 KiB on a socket
 *                              with a body under way is widened (sendstep_step) as above;
 *                              every other call goes to the kernel as is.
 *
 * State: the body's end in the socket's struct mhd_fd_state (mhd_compat.h: a socket beyond
 * its table is never widened, nor any when MHD_TRICK_SENDFILE is off), written and read by
 * the worker that owns the response; the count of bodies in flight per thread. */
#ifndef DEBITD_SENDSTEP_H
#define DEBITD_SENDSTEP_H

#include <stddef.h>
#include <stdint.h>

#define SENDSTEP_MHD_CHUNK (128u << 10) /* libmicrohttpd 0.9.75-1.0.1, thread-pool mode */
#define SENDSTEP_MAX (2u << 20)         /* libmicrohttpd's own step in thread-per-connection mode */
#define SENDSTEP_TAIL (64u << 10)       /* left to libmicrohttpd's last call */
#define SENDSTEP_FEW 2                  /* responses in flight on a worker that may be widened */

struct mhd_fd_state;

/* A sendfile body up to region offset END starts (sendstep_begin) on socket SOCK, or ends
 * (sendstep_end), on the calling thread. */
void sendstep_begin(int sock, uint64_t end);
void sendstep_end(int sock);
/* The interposed sendfile64's question: the step for a call of COUNT bytes at region
 * offset OFF on a socket whose state is ST (NULL: beyond the table). */
size_t sendstep_step(struct mhd_fd_state *st, uint64_t off, size_t count);
/* Process-wide counts since start: sendfile calls of noted responses, and of those the
 * widened ones (/status counters). */
void sendstep_stats(uint64_t *calls, uint64_t *widened);
/* True when libmicrohttpd's sendfile64() calls reach debitd's (the executable exports it)
 * and mhd_compat's probe allows it (MHD_TRICK_SENDFILE). */
int sendstep_interposed(void);

#endif
