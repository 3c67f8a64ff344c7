/* http_guard: strict HTTP between libmicrohttpd and the router. libmicrohttpd decodes the
 * target before the access handler sees it, so the raw target is checked in its URI log
 * callback (http_uri_log); the header list in the first call of the access handler
 * (http_guard), before any route or body. A refusal closes the connection: after a framing
 * error nothing that follows on it can be trusted to be a request. */
#include "http_guard.h"
#include "http_log.h"
#include "http_reply.h"
#include "http_req.h"
#include "http_strict.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "mhd_compat.h"
#include "sys.h"

/* Headers beyond this many are refused (431) rather than checked: a request with more is
 * no download client's (curl and wget send under 10; nginx's limit is the 32 KiB of its
 * large_client_header_buffers, as libmicrohttpd's pool here). */
#define GUARD_MAX_FIELDS 256

struct req *http_req_new(void)
{
    struct req *r = calloc(1, sizeof *r);
    if (r)
        r->sock = -1;
    return r;
}

static void guard_query(struct req *r, const char *uri, uint64_t pool);

void *http_uri_log(void *cls, const char *uri, struct MHD_Connection *conn)
{
    struct listener *l = cls;
    (void)conn;
    struct req *r = http_req_new();
    if (r) { /* the target as sent, for the access log; the clock starts at the request line */
        r->log_t0 = sys_mono_s();
        r->log_target = uri ? strdup(uri) : NULL;
        r->raw_target = (uintptr_t)uri;
        r->raw_target_len = uri ? strlen(uri) : 0;
    }
    server_read_lock(l->srv); /* a reload may change http.strict and swap l->cfg (reload.h) */
    int strict = l->srv->snap->cfg->http_strict;
    uint64_t pool = l->cfg->conn_memory;
    server_read_unlock(l->srv);
    if (!r)
        return r; /* NULL: http_access allocates (and fails) as before */
    if (uri)
        guard_query(r, uri, pool);
    if (!strict || r->target_status)
        return r;
    if (uri && http_strict_check_target(uri, strlen(uri), r->target_why, sizeof r->target_why) != HTTP_STRICT_OK)
        r->target_status = 400;
    return r;
}

struct fields {
    struct http_strict_field f[GUARD_MAX_FIELDS];
    size_t n;
    int overflow;
    int folded;
    int nul;          /* a line's bytes went on past a NUL (line_gap_clean) */
    int layout_known; /* the running libmicrohttpd is the one field_folded knows */
    const char *prev_end; /* the NUL ending the previous line's last string, or NULL */
};

/* libmicrohttpd 0.9.75 replaces a line's CRLF (or bare LF) by NULs in its read buffer, and
 * every string it hands on ends at the first NUL: a raw NUL byte inside a target or a header
 * value hides what follows it from every check, though a proxy in front may still see it
 * (nginx refuses such a request with 400). Between the NUL that ends one line's last string
 * (END) and the next line's first byte (NEXT) there must be only the terminator: one or two
 * NULs. A name far from END is a folded line's, moved to its own block (field_folded judges
 * it); addresses are compared as integers and bytes read only within 4 KiB, in the pool. */
static int line_gap_clean(const char *end, const char *next)
{
    uintptr_t e = (uintptr_t)end, n = (uintptr_t)next;
    if (n <= e || n - e > 4096)
        return 1;
    if (n - e > 2)
        return 0;
    return end[0] == 0 && (n - e == 1 || end[1] == 0);
}

/* Whether NAME and VALUE still lie where libmicrohttpd 0.9.75 parsed one header line: in
 * its read buffer, the name, the NUL that replaced the colon, optional blanks, the value.
 * A folded line (obs-fold: a continuation starting with a space or tab) is appended to the
 * *name* (connection.c, process_broken_line), which moves the name to a new block of the
 * connection's memory pool or overwrites the colon and value in place: either way the value
 * no longer follows the name. Addresses are compared as integers, and the bytes between
 * are read only when the value follows the name closely (then both are in the one pool).
 * Only with libmicrohttpd 0.9.75 (Debian 12's): another version may lay headers out
 * differently, and a false refusal would be worse than a fold let through. */
static int field_folded(const char *name, size_t name_len, const char *value)
{
    uintptr_t end = (uintptr_t)name + name_len, v = (uintptr_t)value;
    if (v <= end || v - end > 4096 || name[name_len] != 0)
        return 1;
    for (const char *p = name + name_len + 1; p < value; p++)
        if (*p != ' ' && *p != '\t')
            return 1;
    return 0;
}

static enum MHD_Result collect(void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                               const char *value, size_t value_size)
{
    struct fields *fs = cls;
    (void)kind;
    if (fs->n == GUARD_MAX_FIELDS) {
        fs->overflow = 1;
        return MHD_NO;
    }
    if (value && fs->layout_known && field_folded(key, key_size, value))
        fs->folded = 1;
    if (fs->layout_known && fs->prev_end && !line_gap_clean(fs->prev_end, key))
        fs->nul = 1;
    if (value)
        fs->prev_end = value + value_size;
    fs->f[fs->n++] = (struct http_strict_field){key, key_size, value ? value : "", value ? value_size : 0};
    return MHD_YES;
}

/* "HTTP/1.1" and any later 1.x: what libmicrohttpd treats as 1.1-compatible */
static int is_http11(const char *version)
{
    return version && strncmp(version, "HTTP/1.", 7) == 0 && strcmp(version + 7, "0") != 0;
}

static enum MHD_Result refuse(struct listener *l, struct MHD_Connection *conn, unsigned status, const char *why)
{
    log_debug("%s: %u to a request: %s", l->name, status, why);
    char body[160];
    int n = snprintf(body, sizeof body, "%u %s: %s\n", status, MHD_get_reason_phrase_for(status), why);
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(n > 0 && (size_t)n < sizeof body ? (size_t)n : strlen(body), body,
                                        MHD_RESPMEM_MUST_COPY);
    if (!resp)
        return MHD_NO;
    http_log_body(conn, n > 0 && (size_t)n < sizeof body ? (size_t)n : strlen(body));
    http_headers_common(resp);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    return http_reply(l, conn, status, resp);
}

/* libmicrohttpd 0.9.75 keeps a request's header block in the connection's memory pool
 * (listen[].connection_memory) with a 56-byte record (64 with the pool's alignment) per
 * header, cookie and query argument, and builds the answer's header block from what is
 * left. It answers 431 itself only when the request does not fit; one that fits with less
 * room left than an answer needs had its connection closed without any (measured: one
 * long header, blocks of 32,056-32,552 bytes in a 32 KiB pool for a 4 KiB file,
 * 32,392-32,552 for a 404).
 * Refused here instead, with room to spare: the record rounded up, and room for the
 * largest answer debitd gives to a request of that size (a file's headers are about 500
 * bytes; a redirect's Location is bounded). What is left is a band at the pool's very end
 * where not even a refusal fits (docs/server.md, "Connection memory"). */
#define GUARD_FIELD_COST 64
#define GUARD_ANSWER_ROOM 2048

/* The pieces libmicrohttpd's argument parser makes of the query of TARGET, each a record
 * (internal.c MHD_parse_arguments_: one per '&'-separated piece, a trailing empty one not). */
static size_t query_pieces(const char *target)
{
    const char *q = strchr(target, '?');
    if (!q || !q[1])
        return 0;
    size_t n = 1;
    for (const char *p = q + 1; *p; p++)
        if (*p == '&' && p[1])
            n++;
    return n;
}

/* libmicrohttpd before 1.0 ignores a failure to store a query argument in the pool
 * (connection.c parse_initial_message_line drops MHD_parse_arguments_'s result): its own
 * 431 is queued, then overwritten as the request line goes on being processed, and the
 * connection hangs without an answer until limits.header_timeout closes it (measured: a
 * target with 500 arguments, 3,450 bytes, in a 32 KiB pool). 1.0 answers it. So a target
 * whose arguments cannot fit with room for an answer is marked for a 414 here, and, before
 * 1.0, its query is cut at the '?' in the read buffer where libmicrohttpd is about to parse
 * it (the URI log callback runs just before), so that the parser stores none
 * (mhd_compat_cut_query: only with a version it was verified with). */
static void guard_query(struct req *r, const char *uri, uint64_t pool)
{
    size_t pieces = query_pieces(uri), len = strlen(uri);
    if (!pieces || len + (uint64_t)pieces * GUARD_FIELD_COST + GUARD_ANSWER_ROOM <= pool)
        return;
    r->target_status = 414;
    snprintf(r->target_why, sizeof r->target_why, "%zu query arguments do not fit in a %llu-byte connection pool",
             pieces, (unsigned long long)pool);
    mhd_compat_cut_query(uri);
}

int http_guard_room(struct listener *l, struct MHD_Connection *conn, struct req *r, enum MHD_Result *out)
{
    if (r->target_status == 414) {
        *out = refuse(l, conn, 414, r->target_why);
        return 1;
    }
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    if (!ci)
        return 0;
    int n = MHD_get_connection_values(conn, MHD_HEADER_KIND | MHD_COOKIE_KIND | MHD_GET_ARGUMENT_KIND, NULL, NULL);
    uint64_t need = (uint64_t)ci->header_size + (uint64_t)(n > 0 ? n : 0) * GUARD_FIELD_COST + GUARD_ANSWER_ROOM;
    uint64_t pool = l->cfg->conn_memory;
    if (need <= pool)
        return 0;
    char why[128];
    snprintf(why, sizeof why, "a %zu-byte header block with %d fields leaves no room for an answer in %llu bytes",
             ci->header_size, n, (unsigned long long)pool);
    *out = refuse(l, conn, 431, why);
    return 1;
}

int http_guard(struct listener *l, struct MHD_Connection *conn, struct req *r, const char *version,
               enum MHD_Result *out)
{
    if (!l->srv->snap->cfg->http_strict)
        return 0;
    if (r->target_status) {
        *out = refuse(l, conn, r->target_status, r->target_why);
        return 1;
    }
    /* One per worker thread, not zeroed: collect fills it from the front. Neither calloc
     * (zeroing the 8 KiB array was a measurable share of a small request's cost) nor
     * malloc (a block that large makes glibc consolidate its free lists first: 2-3 % of
     * debitd's CPU on small requests, docs/performance.md). A callback runs to its end on
     * its thread before the next one starts there. */
    static __thread struct fields guard_fields;
    struct fields *fs = &guard_fields;
    fs->n = 0;
    fs->overflow = fs->folded = fs->nul = 0;
    char why[80];
    fs->layout_known = mhd_compat_on(MHD_TRICK_LAYOUT);
    /* The request line: method NUL target NUL version; the version follows the target's
     * NUL unless a raw NUL cut the target short. Only where the version lies in the read
     * buffer just after the target (a line without a version has a static ""). */
    fs->prev_end = NULL;
    uintptr_t vaddr = (uintptr_t)version;
    if (fs->layout_known && version && r->raw_target && vaddr > r->raw_target && vaddr - r->raw_target <= 65536) {
        if (vaddr != r->raw_target + r->raw_target_len + 1) {
            *out = refuse(l, conn, 400, "a NUL byte in the request target");
            return 1;
        }
        fs->prev_end = version + strlen(version);
    }
    MHD_get_connection_values_n(conn, MHD_HEADER_KIND, collect, fs);
    /* the last header line: its terminator, then the empty line's (NULs too) */
    if (fs->layout_known && fs->n && !fs->folded && fs->prev_end && fs->prev_end[0] == 0 && fs->prev_end[1] != 0 &&
        fs->prev_end[1] != '\r' && fs->prev_end[1] != '\n')
        fs->nul = 1;
    enum http_strict_result v = HTTP_STRICT_BAD_REQUEST;
    if (fs->overflow)
        snprintf(why, sizeof why, "more than %d header lines", GUARD_MAX_FIELDS);
    else if (fs->nul)
        snprintf(why, sizeof why, "a NUL byte in a header line");
    else if (fs->folded)
        snprintf(why, sizeof why, "header line folded onto the next (obs-fold)");
    else
        v = http_strict_check_fields(fs->f, fs->n, is_http11(version), why, sizeof why);
    if (v == HTTP_STRICT_OK)
        return 0;
    /* too many lines is a size limit, answered as libmicrohttpd answers a full pool */
    *out = refuse(l, conn, fs->overflow ? 431 : http_strict_status(v), why);
    return 1;
}

/* libmicrohttpd 0.9.75 sends "100 Continue" to any HTTP/1.1 request with "Expect:
 * 100-continue" that its first call did not answer, body or not (connection.c,
 * need_100_continue). For a request without a body, bytes it has already read (a pipelined
 * request) are then handed to the handler as if they were the body's end, in a state where
 * MHD_queue_response refuses: "Application reported internal error", the connection
 * closed, neither request answered (nginx answers both). RFC 9110 10.1.1 lets a server
 * omit the 100 when the framing says there is no content, as nginx does: so for such a
 * request (no Transfer-Encoding, no or a zero Content-Length) the Expect value is blanked
 * in libmicrohttpd's copy in its read buffer, and the request goes on as one without
 * Expect. Only before 1.0, whose buffer layout this relies on (guard_query does the same). */
void http_guard_expect(struct MHD_Connection *conn)
{
    const char *v = NULL, *cl = NULL;
    size_t n = 0, cln = 0;
    if (!mhd_compat_on(MHD_TRICK_EXPECT_BLANK) ||
        MHD_lookup_connection_value_n(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_EXPECT,
                                      strlen(MHD_HTTP_HEADER_EXPECT), &v, &n) != MHD_YES ||
        !v || n == 0 ||
        MHD_lookup_connection_value_n(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING,
                                      strlen(MHD_HTTP_HEADER_TRANSFER_ENCODING), NULL, NULL) == MHD_YES)
        return;
    if (MHD_lookup_connection_value_n(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH,
                                      strlen(MHD_HTTP_HEADER_CONTENT_LENGTH), &cl, &cln) == MHD_YES && cl)
        for (size_t i = 0; i < cln; i++)
            if (cl[i] != '0')
                return; /* a body follows: the 100 is what the client waits for */
    mhd_compat_expect_blank(v);
}
