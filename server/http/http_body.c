/* http_body: a file body's send path (one rule, send_path_for) and the libmicrohttpd
 * response that carries it: sendfile from a dup()ed memfd, an iovec over the mapped region
 * when a range repeats it, a buffer for small bodies, computed per response while the
 * region is being generated. */
#include "http_body.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static const char *const send_path_names[SEND_PATH_N] = {
    [SEND_BUFFER] = "buffer", [SEND_GENERATED] = "generated", [SEND_IOVEC] = "iovec",
    [SEND_SENDFILE] = "sendfile", [SEND_PREAD] = "pread", [SEND_TLS] = "tls",
};

const char *send_path_name(enum send_path p)
{
    return (unsigned)p < SEND_PATH_N ? send_path_names[p] : "unknown";
}

/* An fd response is sent with sendfile when libmicrohttpd has the feature, no TLS and
 * SIGPIPE handled (which debitd sets); without it, pread + send: a copy. */
static enum send_path fd_path(void)
{
    return MHD_is_feature_supported(MHD_FEATURE_SENDFILE) == MHD_YES ? SEND_SENDFILE : SEND_PREAD;
}

/* The path on a plain-HTTP listener: also how the body is built on a TLS one, but for the
 * fd paths (there a buffer over the region: libmicrohttpd encrypts straight out of it,
 * where an fd response adds a pread copy). */
static enum send_path plain_path(const struct content *c, uint64_t off, uint64_t len)
{
    if (len == 0)
        return SEND_BUFFER;
    if (!content_ready(c))
        return SEND_GENERATED;
    if (off + len > content_region_size(c))
        return SEND_IOVEC;
    if (len <= HTTP_BODY_SMALL)
        return SEND_BUFFER;
    return fd_path();
}

enum send_path send_path_for(const struct content *c, uint64_t off, uint64_t len, int tls)
{
    return tls ? SEND_TLS : plain_path(c, off, len);
}

enum send_path send_path_large(const struct content *c, int tls)
{
    if (tls)
        return SEND_TLS;
    return content_ready(c) ? fd_path() : SEND_GENERATED;
}

/* An iovec response over the repeated region: one kernel copy per byte (sendmsg). */
static struct MHD_Response *iovec_response(const struct content *c, uint64_t off, uint64_t len)
{
    uint64_t region = content_region_size(c);
    const unsigned char *map = content_map(c);
    uint64_t pieces = len / region + 2;
    struct MHD_IoVec *iov = calloc((size_t)pieces, sizeof *iov);
    if (!iov)
        return NULL;
    unsigned n = 0;
    uint64_t pos = off, end = off + len;
    while (pos < end) {
        uint64_t in = pos % region;
        uint64_t take = region - in;
        if (take > end - pos)
            take = end - pos;
        iov[n].iov_base = map + in;
        iov[n].iov_len = (size_t)take;
        n++;
        pos += take;
    }
    /* MHD copies the vector; the region outlives every response (freed after MHD stops) */
    struct MHD_Response *resp = MHD_create_response_from_iovec(iov, n, NULL, NULL);
    free(iov);
    return resp;
}

/* A body computed per response while the region is being generated (content_copy: the
 * same bytes). The response keeps the content it reads: the request's snapshot holds it. */
struct gen_body {
    const struct content *c;
    uint64_t off, len;
};

static ssize_t gen_body_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    const struct gen_body *g = cls;
    if (pos >= g->len)
        return MHD_CONTENT_READER_END_OF_STREAM;
    size_t n = g->len - pos < max ? (size_t)(g->len - pos) : max;
    content_copy(g->c, g->off + pos, (unsigned char *)buf, n);
    return (ssize_t)n;
}

/* The block libmicrohttpd allocates per generated response and fills per call: nginx's
 * output_buffers are 2 x 32 KiB; a start under 1,000 connections holds 64 MiB of them. */
#define GEN_BLOCK (64u << 10)

static struct MHD_Response *generated_response(const struct content *c, uint64_t off, uint64_t len)
{
    struct gen_body *g = malloc(sizeof *g);
    if (!g)
        return NULL;
    *g = (struct gen_body){c, off, len};
    struct MHD_Response *resp = MHD_create_response_from_callback(len, GEN_BLOCK, gen_body_read, g, free);
    if (!resp)
        free(g);
    return resp;
}

/* One fd per response: MHD serialises responses that share an fd on a mutex. */
static struct MHD_Response *fd_response(const struct content *c, uint64_t off, uint64_t len)
{
    int fd = dup(content_fd(c));
    if (fd < 0) /* errno kept for the caller's rate-limited line (EMFILE: once per request) */
        return NULL;
    struct MHD_Response *resp = MHD_create_response_from_fd_at_offset64(len, fd, off);
    if (!resp)
        close(fd);
    return resp;
}

struct MHD_Response *http_body_new(const struct content *c, uint64_t off, uint64_t len, int tls,
                                   enum send_path *path)
{
    enum send_path how = plain_path(c, off, len);
    *path = tls ? SEND_TLS : how;
    if (tls && (how == SEND_SENDFILE || how == SEND_PREAD))
        how = SEND_BUFFER;
    switch (how) {
    case SEND_BUFFER: /* the region outlives every response */
        return MHD_create_response_from_buffer((size_t)len, len ? (void *)(content_map(c) + off) : (void *)"",
                                               MHD_RESPMEM_PERSISTENT);
    case SEND_GENERATED:
        return generated_response(c, off, len);
    case SEND_IOVEC:
        return iovec_response(c, off, len);
    case SEND_SENDFILE:
    case SEND_PREAD:
        return fd_response(c, off, len);
    case SEND_TLS:
    case SEND_PATH_N:
        break;
    }
    return NULL;
}
