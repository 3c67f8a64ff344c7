/* http_body: how a file body leaves (its send path) and the libmicrohttpd response that
 * carries it. One rule, send_path_for, decides the path for the response (http_body_new)
 * and for what /status says of a file and a listener. */
#ifndef DEBITD_HTTP_BODY_H
#define DEBITD_HTTP_BODY_H

#include <microhttpd.h>
#include <stdint.h>

#include "content.h"

/* Bodies up to this size go out as a buffer over the mapped region: libmicrohttpd then
 * sends headers and body in one sendmsg, where an fd response costs a send() for the
 * headers and a sendfile() for the body, two segments and two pushes (docs/server.md,
 * "Many clients"). */
#define HTTP_BODY_SMALL (64u << 10)

enum send_path {
    SEND_BUFFER,    /* an empty or small body: one copy, in the same sendmsg as the headers */
    SEND_GENERATED, /* the region is not complete yet: computed per response, a copy */
    SEND_IOVEC,     /* a range crossing the region's end (a file repeating it): sendmsg copies */
    SEND_SENDFILE,  /* zero-copy from the memfd (libmicrohttpd with sendfile, no TLS) */
    SEND_PREAD,     /* an fd response in a libmicrohttpd without sendfile: pread + send */
    SEND_TLS,       /* HTTPS: libmicrohttpd encrypts in user space, never with sendfile */
    SEND_PATH_N
};

/* "buffer", "generated", "iovec", "sendfile", "pread", "tls": a static string (the
 * transfer record's send_path, /status's send_path). */
const char *send_path_name(enum send_path p);
/* How the body [OFF, OFF+LEN) of C's region leaves, on a TLS listener or not. */
enum send_path send_path_for(const struct content *c, uint64_t off, uint64_t len, int tls);
/* How a large body within C's region leaves now: "generated" until the region is
 * complete, then sendfile (or pread, or tls): what /status says of a listener. */
enum send_path send_path_large(const struct content *c, int tls);
/* A response carrying the body [OFF, OFF+LEN) of C (which the request's snapshot keeps
 * alive), built the way send_path_for(C, OFF, LEN, TLS) says; *PATH is set to that. NULL
 * when out of memory or descriptors (errno says which, EMFILE for the dup of the memfd;
 * nothing is logged here: the caller's line goes through the refusal log's limit). */
struct MHD_Response *http_body_new(const struct content *c, uint64_t off, uint64_t len, int tls,
                                   enum send_path *path);

#endif
