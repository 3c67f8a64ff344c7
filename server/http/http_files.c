/* http_files: a file response in three steps (preconditions 304/412 with conditional.h,
 * Range/If-Range and the quota; its body and headers, or the connection's kept response;
 * the transfer's start), and the .sha256 answers. The body itself: http_body.c. */
#include "http_files.h"
#include "http_conn.h"
#include "http_headers.h"
#include "http_peer.h"
#include "http_reply.h"
#include "http_req.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "conditional.h"
#include "http_body.h"
#include "log.h"
#include "mhd_compat.h"
#include "nopush.h"
#include "range.h"
#include "sendstep.h"
#include "sys.h"
#include "wire.h"

/* V in lowercase hex, no leading zeros, at P; returns the end. */
static char *hex_u64(char *p, uint64_t v)
{
    char d[16];
    int n = 0;
    do
        d[n++] = "0123456789abcdef"[v & 15];
    while (v >>= 4);
    while (n)
        *p++ = d[--n];
    return p;
}

void http_etag(const struct server *s, const struct file_cfg *f, char *buf, size_t len)
{
    uint64_t region = content_region_size(s->snap->content);
    /* the bytes depend on the seed, and on the region size only when the file repeats it.
     * Written by hand, not by snprintf: once per file request, it was 1 % of a small
     * request's CPU (docs/performance.md). At most 3 x 16 digits, 2 dashes, 2 quotes. */
    char tmp[56], *p = tmp;
    *p++ = '"';
    p = hex_u64(p, s->snap->cfg->seed);
    *p++ = '-';
    p = hex_u64(p, f->size > region ? region : 0);
    *p++ = '-';
    p = hex_u64(p, f->size);
    *p++ = '"';
    *p = 0;
    sys_strcpy(buf, len, tmp); /* truncated as snprintf would (LEN is 96 here) */
}

/* A response sent again gets this request's X-Debit-Transfer NEW_ID ("" for none); AT is
 * where libmicrohttpd keeps its old value (NULL when it had none), found once when the
 * response is built (looking it up each time cost half of what rewriting it saves). IDs
 * have one length, so mhd_compat writes the new one over the old in place
 * (MHD_TRICK_HEADER_WRITE). Nobody else holds the response (http_conn_reuse_get) and
 * nothing else deletes its headers. tests/e2e/server_reuse.sh checks the bytes on the wire
 * against fresh responses, every ID distinct and its record found. Returns where the new
 * value is kept (NULL: none). */
static char *reuse_id(struct MHD_Response *resp, char *at, const char *new_id)
{
    return mhd_compat_header_replace(resp, WIRE_HDR_TRANSFER, at, new_id);
}

/* What decides a small response beside H (http_conn_reuse_get): the body's address in
 * the region (a new region is a new response), its length and RG's Content-Range (NULL:
 * a 200), with H's values, in SIG; its length, 0 if SIGLEN is too short. */
static size_t small_signature(const struct file_head *h, const unsigned char *body, uint64_t len,
                              const struct range *rg, uint64_t size, char *sig, size_t siglen)
{
    char extra[128], *p = extra; /* at most 16 + 1 + 16 hex digits and 3 x 20 digits + 3 */
    p = hex_u64(p, (uint64_t)(uintptr_t)body);
    *p++ = ' ';
    p = hex_u64(p, len);
    *p = 0;
    if (rg)
        snprintf(p, sizeof extra - (size_t)(p - extra), " %llu-%llu/%llu", (unsigned long long)rg->first,
                 (unsigned long long)rg->last, (unsigned long long)size);
    return http_file_head_sig(h, extra, sig, siglen);
}

/* 304 Not Modified for F: the headers its 200 would carry that describe it (validators,
 * Cache-Control, the X-Debit-* ones: RFC 9110 15.4.5), no body, no transfer record,
 * nothing charged to the quota, never kept for reuse. libmicrohttpd writes a Content-Length
 * into every 304, from the response's size; RFC 9110 8.6 allows no other value there than
 * the 200's, so the response has the file's size and no body (mhd_compat_response_304). */
static enum MHD_Result not_modified(struct listener *l, struct MHD_Connection *conn, const struct file_cfg *f,
                                    const char *etag)
{
    struct MHD_Response *resp = mhd_compat_response_304(f->size);
    if (!resp)
        return http_reply_text(l, conn, 503, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    struct file_head h;
    http_file_head(l, conn, etag, &h);
    http_file_head_add(&h, resp, 1);
    return http_reply(l, conn, 304, resp);
}

static int conn_socket(struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    return ci ? ci->connect_fd : -1;
}

/* What a file response is, as its three steps work it out. */
struct file_reply {
    char etag[96];
    uint64_t off, len;   /* the body: the whole file, or the one range asked for */
    unsigned status;     /* 200 or 206 */
    struct range rg;     /* 206: the range */
    struct file_head h;  /* the headers (http_file_head) */
    const unsigned char *body; /* the body in the region (NULL until it is complete, or a
                                * range crossing its end); "" when empty */
    enum send_path path;
    struct MHD_Response *resp;
    int reused;          /* resp is the connection's kept response (http_conn_reuse_get) */
    char sig[1400];      /* what decides a small response (small_signature); siglen 0: none */
    size_t siglen;
    char *id_at;         /* where libmicrohttpd keeps resp's X-Debit-Transfer value (reuse_id) */
};

/* Preconditions (RFC 9110 13.2.2), then Range and the quota: fills FR's etag and body
 * extent, or queues the answer that ends the request (412, 304, 416, 429) into *OUT and
 * returns 1. Preconditions come before Range, the quota and the reuse table, so that a 304
 * or 412 is never charged, recorded, kept or taken from the table. A request without them
 * (the common one) pays four header lookups. */
static int file_precheck(struct listener *l, struct MHD_Connection *conn, struct req *r, const struct file_cfg *f,
                         int head, struct file_reply *fr, enum MHD_Result *out)
{
    struct server *s = l->srv;
    char cr[96];
    http_etag(s, f, fr->etag, sizeof fr->etag);
    struct cond_headers ch = {
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_MATCH),
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_NONE_MATCH),
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_MODIFIED_SINCE),
        MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_UNMODIFIED_SINCE),
    };
    if (ch.if_match || ch.if_none_match || ch.if_modified_since || ch.if_unmodified_since) {
        enum cond_result c = cond_evaluate(&ch, fr->etag, s->last_modified);
        if (c == COND_PRECONDITION_FAILED)
            return *out = http_reply_text(l, conn, 412, NULL, NULL), 1;
        if (c == COND_NOT_MODIFIED)
            return *out = not_modified(l, conn, f, fr->etag), 1;
    }
    const char *range_h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_RANGE);
    const char *if_range = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_IF_RANGE);
    enum range_kind k = RANGE_NONE;
    if (range_h && range_if_range_ok(if_range, fr->etag, s->last_modified))
        k = range_parse(range_h, f->size, &fr->rg);
    if (k == RANGE_UNSATISFIABLE) {
        snprintf(cr, sizeof cr, "bytes */%llu", (unsigned long long)f->size);
        return *out = http_reply_text(l, conn, 416, MHD_HTTP_HEADER_CONTENT_RANGE, cr), 1;
    }
    fr->off = 0;
    fr->len = f->size;
    fr->status = 200;
    if (k == RANGE_ONE) {
        fr->off = fr->rg.first;
        fr->len = fr->rg.last - fr->rg.first + 1;
        fr->status = 206;
    }
    char retry[24];
    if (!head && http_quota_refused(l, conn, r, fr->len, retry, sizeof retry))
        return *out = http_reply_text(l, conn, 429, MHD_HTTP_HEADER_RETRY_AFTER, retry), 1;
    return 0;
}

/* FR's response: the connection's kept one when it says the same, else a new one with
 * its headers. A small body (sent with its headers, from the region) on a kept-alive
 * connection: the same file again is answered with the previous request's response when
 * nothing it says has changed, but for its transfer ID. A reload, an offload change or
 * another range changes the signature; a graceful stop adds Connection: close, never
 * kept. Returns 0, or -1 when no response could be made. */
static int file_body(struct listener *l, struct MHD_Connection *conn, const struct file_cfg *f,
                     struct file_reply *fr)
{
    struct server *s = l->srv;
    http_file_head(l, conn, fr->etag, &fr->h);
    uint64_t region = content_region_size(s->snap->content);
    const unsigned char *map = content_map(s->snap->content); /* NULL until the region is complete */
    fr->body = !fr->len ? (const unsigned char *)"" : map && fr->off + fr->len <= region ? map + fr->off : NULL;
    if (fr->len <= HTTP_BODY_SMALL && fr->body && !s->draining) {
        fr->siglen = small_signature(&fr->h, fr->body, fr->len, fr->status == 206 ? &fr->rg : NULL, f->size,
                                     fr->sig, sizeof fr->sig);
        if (fr->siglen)
            fr->resp = http_conn_reuse_get(conn, fr->sig, fr->siglen, &fr->id_at);
    }
    if ((fr->reused = fr->resp != NULL)) { /* its old X-Debit-Transfer: http_file (reuse_id) */
        fr->path = send_path_for(s->snap->content, fr->off, fr->len, l->tls != NULL);
        l->responses_reused++;
        return 0;
    }
    errno = 0;
    if (!(fr->resp = http_body_new(s->snap->content, fr->off, fr->len, l->tls != NULL, &fr->path))) {
        char msg[96]; /* a client can cause it once per request at EMFILE: a few lines per interval */
        snprintf(msg, sizeof msg, "file body: no response (dup of the content memfd or memory): %s",
                 errno ? strerror(errno) : "libmicrohttpd refused");
        if (watchdog_line(s->watchdog, msg))
            log_warn("%s", msg);
        return -1;
    }
    http_file_head_add(&fr->h, fr->resp, 0);
    if (fr->status == 206) {
        char cr[96];
        snprintf(cr, sizeof cr, "bytes %llu-%llu/%llu", (unsigned long long)fr->rg.first,
                 (unsigned long long)fr->rg.last, (unsigned long long)f->size);
        MHD_add_response_header(fr->resp, MHD_HTTP_HEADER_CONTENT_RANGE, cr);
    }
    if (fr->siglen)
        l->responses_built++;
    return 0;
}

/* sendfile, iovec, pread: libmicrohttpd pushes the headers alone; under tcp_nopush they
 * go out with the body's first bytes (nopush.h), released in http_completed. A buffer
 * already leaves with its headers in one sendmsg, TLS in GnuTLS records. A failure leaves
 * libmicrohttpd's order, said once (a build without the interposition is said at start,
 * server_bind). Returns 1 when the socket is corked. */
static int file_nopush(struct listener *l, struct req *r, enum send_path path)
{
    if (!l->cfg->tcp_nopush || !nopush_interposed() || path == SEND_BUFFER || path == SEND_TLS)
        return 0;
    char nerr[160];
    if (nopush_begin(r->sock, nerr, sizeof nerr) == 0) {
        r->nopush = 1;
        l->nopush_responses++;
        return 1;
    }
    if (!l->nopush_warned++)
        log_warn("%s: tcp_nopush: %s", l->name, nerr);
    return 0;
}

/* A GET's transfer: its record (ID, filled; "" when none could be drawn), cork, sendfile
 * steps, and the TCP_INFO read at its start. */
static void transfer_start(struct listener *l, struct MHD_Connection *conn, struct req *r, const struct file_cfg *f,
                           struct file_reply *fr, char *id)
{
    struct server *s = l->srv;
    r->kind = REQ_FILE;
    if (!r->snap) /* the body may be the region's memory: keep it until the request ends */
        r->snap = snapshot_get(s->snap);
    struct http_client scratch;
    const struct http_client *who = http_conn_client(conn, &scratch);
    struct transfer_start ts = {f->path, who->remote, l->name, fr->off, fr->len, (int)fr->status, r->sock,
                                who->have_peer ? &who->peer : NULL, send_path_name(fr->path), NULL, 0, 0};
    ts.nopush = file_nopush(l, r, fr->path);
    if (fr->path == SEND_SENDFILE) {
        l->zero_copy_transfers++;
        sendstep_begin(r->sock, fr->off + fr->len); /* one more body in flight on this worker (sendstep.h) */
        r->stepped = 1;
    } else
        l->copy_transfers++;
    r->body_len = fr->len;
    r->file = (size_t)(f - s->snap->cfg->files);
    r->t0 = sys_mono_s();
    /* One TCP_INFO read: acked bytes and the cwnd before this response's first byte.
     * Not for a body under EVIDENCE_MIN_BYTES on a kept-alive connection whose previous
     * response left its count (http_conn_written): one read of two per small request,
     * about 4 % of its CPU (docs/performance.md); its initial_cwnd is then null. */
    struct tcp_info_sample ti;
    char terr[128];
    uint64_t written = 0;
    int have_ti = 0;
    if (fr->len < EVIDENCE_MIN_BYTES && http_conn_written(conn, &written) == 0)
        r->acked0 = written;
    else {
        have_ti = r->sock >= 0 && tcp_info_read(r->sock, &ti, terr, sizeof terr) == 0;
        r->acked0 = have_ti ? ti.bytes_acked : 0;
    }
    struct transfer_evidence ev = {.initial_cwnd = have_ti ? ti.snd_cwnd : 0,
                                   .sndbuf_setting = l->cfg->tcp.sndbuf, .tcp_wmem_max = l->tcp_wmem_max};
    ts.ev = &ev; /* copied into the record */
    r->seq = transfers_begin(s->transfers, &ts, id);
    if (!r->seq) {
        id[0] = 0;
        return;
    }
    if (!fr->reused) {
        MHD_add_response_header(fr->resp, WIRE_HDR_TRANSFER, id);
        if (fr->siglen) /* a response that may be sent again: found once, here */
            fr->id_at = mhd_compat_header_at(fr->resp, WIRE_HDR_TRANSFER);
    }
    if (fr->len >= EVIDENCE_MIN_BYTES)
        evidence_begin(&r->mark, s->cpu, fr->len, http_peer_addr(conn));
}

enum MHD_Result http_file(struct listener *l, struct MHD_Connection *conn, struct req *r,
                          const struct file_cfg *f, int head)
{
    struct file_reply fr = {.status = 200};
    enum MHD_Result out;
    if (file_precheck(l, conn, r, f, head, &fr, &out))
        return out;
    r->sock = conn_socket(conn);
    if (file_body(l, conn, f, &fr) < 0)
        return http_reply_text(l, conn, 503, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    char id[TRANSFER_ID_LEN] = "";
    if (!head)
        transfer_start(l, conn, r, f, &fr, id);
    if (fr.reused)
        fr.id_at = reuse_id(fr.resp, fr.id_at, id);
    /* kept for the next request (the table then holds our reference), or released */
    if (fr.siglen && http_conn_reuse_put(conn, fr.resp, fr.sig, fr.siglen, fr.id_at) == 0)
        return http_reply_kept(l, conn, fr.status, fr.resp);
    if (fr.reused) /* still the table's (a put of the same response cannot fail) */
        return http_reply_kept(l, conn, fr.status, fr.resp);
    return http_reply(l, conn, fr.status, fr.resp);
}

/* The digest waiter's hooks: the connection is suspended before the hashing thread can see
 * it, and resumed from that thread (MHD_resume_connection is thread-safe; it wakes the
 * connection's worker through its inter-thread channel). */
static void digest_park(struct digest_waiter *w)
{
    MHD_suspend_connection(w->arg);
}

static void digest_wake(struct digest_waiter *w)
{
    MHD_resume_connection(w->arg);
}

static enum MHD_Result sha256_answer(struct listener *l, struct MHD_Connection *conn, const struct file_cfg *f,
                                     const char *hex)
{
    char body[1200];
    /* the sha256sum format, so that `sha256sum -c` can check a download named like the file */
    const char *base = strrchr(f->path, '/') + 1;
    int n = snprintf(body, sizeof body, "%s  %s\n", hex, base);
    return http_reply_plain(l, conn, 200, body, (size_t)n, "no-store, no-transform", NULL, NULL);
}

/* The client left while it waited (nginx's 499). Returning MHD_NO would close the
 * connection too, but libmicrohttpd logs it as an application error; a response queued for
 * a peer that is gone is dropped by the kernel, and the connection is closed after it
 * (read side at EOF). Not counted in the status counters: nobody received it. */
static enum MHD_Result client_gone(struct MHD_Connection *conn)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result r = MHD_queue_response(conn, MHD_HTTP_SERVICE_UNAVAILABLE, resp);
    MHD_destroy_response(resp);
    return r;
}

enum MHD_Result http_file_sha256(struct listener *l, struct MHD_Connection *conn, struct req *r,
                                 const struct file_cfg *f)
{
    enum digest_outcome o;
    if (r->kind == REQ_DIGEST) {
        o = r->dw.outcome; /* called again after the resume: the hashing thread's verdict */
    } else {
        r->kind = REQ_DIGEST;
        if (!r->snap) /* the digest this request waits on outlives a reload */
            r->snap = snapshot_get(l->srv->snap);
        r->dw = (struct digest_waiter){.fd = conn_socket(conn), .park = digest_park, .wake = digest_wake,
                                       .arg = conn};
        o = digest_request(l->srv->snap->digest, f->size, &r->dw);
    }
    switch (o) {
    case DIGEST_READY:
        return sha256_answer(l, conn, f, r->dw.hex);
    case DIGEST_PENDING:
        return MHD_YES; /* suspended: libmicrohttpd calls us again after digest_wake */
    case DIGEST_GONE:
        return client_gone(conn);
    case DIGEST_STOPPED:
        return http_reply_text(l, conn, 503, MHD_HTTP_HEADER_RETRY_AFTER, "5");
    case DIGEST_FAILED:
        log_error("%s.sha256: %s", f->path, r->dw.err);
        return http_reply_text(l, conn, 500, NULL, NULL);
    case DIGEST_UNKNOWN:
        break;
    }
    log_error("%s.sha256: size %llu unknown to the hashing thread", f->path, (unsigned long long)f->size);
    return http_reply_text(l, conn, 500, NULL, NULL);
}
