/* http_upload: the upload sink. POST or PUT bodies (chunked or not) are counted and
 * discarded; the answer is {"bytes": N, "seconds": T}. A body over max_size gets 413 and the
 * connection is closed: at once when Content-Length announces it, else when the body ends
 * (at most UPLOAD_DRAIN_MAX bytes later; a longer body has its connection cut). An address
 * over its byte quota (limits.per_ip_bytes) gets 429 with Retry-After before its body, as a
 * download does; the body is charged as it is announced (a chunked one: max_size), the rest
 * refunded at its end. Each upload is a transfer (transfers.h, upload): its record, with the
 * receiver's verdict, at /transfers/ID, the ID in X-Debit-Transfer of the answer. */
#include "http_upload.h"
#include "http_conn.h"
#include "http_peer.h"
#include "http_reply.h"
#include "http_req.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sys.h"
#include "units.h"
#include "wire.h"

static enum MHD_Result too_large(struct listener *l, struct MHD_Connection *conn, struct req *r)
{
    r->up_rejected = 1;
    /* "Connection: close" makes MHD close after the answer instead of reading the rest */
    return http_reply_text(l, conn, 413, MHD_HTTP_HEADER_CONNECTION, "close");
}

/* A body without Content-Length (chunked) that goes over the limit can only be answered
 * once it is complete (MHD accepts a response only before or after the body). Up to this many
 * further bytes are drained for the 413; beyond that the connection is cut. */
#define UPLOAD_DRAIN_MAX (64ULL << 20)

/* The upload's record, begun as its body starts: the socket sampled while it arrives
 * (bytes_received), the receiving thread's CPU (evidence.h; no interface counters: what
 * debitd sends meanwhile is ACKs). ANNOUNCED: Content-Length, 0 for chunked. */
static void record_begin(struct listener *l, struct MHD_Connection *conn, struct req *r, uint64_t announced)
{
    struct server *s = l->srv;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    int sock = ci ? ci->connect_fd : -1;
    struct http_client scratch;
    const struct http_client *who = http_conn_client(conn, &scratch);
    struct transfer_evidence ev = {.tcp_rmem_max = l->tcp_rmem_max};
    struct transfer_start ts = {.path = r->log_path ? r->log_path : "", .remote = who->remote, .listener = l->name,
                                .length = announced, .status = 200, .sock = sock,
                                .owner = who->have_peer ? &who->peer : NULL, .send_path = "receive", .ev = &ev,
                                .upload = 1};
    r->seq = transfers_begin(s->transfers, &ts, r->up_id);
    if (!r->seq)
        return;
    r->sock = sock;
    evidence_begin(&r->mark, s->cpu, EVIDENCE_RUNQ_MIN_BYTES, NULL);
}

enum MHD_Result http_upload(struct listener *l, struct MHD_Connection *conn, struct req *r,
                            const char *upload_data, size_t *upload_data_size)
{
    (void)upload_data;
    struct server *s = l->srv;
    if (r->kind != REQ_UPLOAD) { /* first call: headers only */
        r->kind = REQ_UPLOAD;
        if (!r->snap) /* the limit the upload started under, whatever a reload sets meanwhile */
            r->snap = snapshot_get(s->snap);
        r->up_t0 = sys_mono_s();
        uint64_t max = r->snap->cfg->upload_max;
        const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        uint64_t v;
        int have_cl = cl && units_parse_uint(cl, 0, UINT64_MAX, &v) == UNITS_OK;
        if (have_cl && v > max)
            return too_large(l, conn, r);
        char retry[24];
        if (http_quota_refused(l, conn, r, have_cl ? v : max, retry, sizeof retry)) {
            r->up_rejected = 1;
            return http_reply_text(l, conn, 429, MHD_HTTP_HEADER_RETRY_AFTER, retry);
        }
        record_begin(l, conn, r, have_cl ? v : 0);
        return MHD_YES;
    }
    uint64_t max = r->snap->cfg->upload_max;
    if (*upload_data_size) {
        uint64_t n = *upload_data_size;
        *upload_data_size = 0;
        if (r->up_rejected) {
            r->up_bytes += n;
            /* under max: the 413 was queued on Content-Length alone, so cut at once */
            return r->up_bytes <= max || r->up_bytes - max > UPLOAD_DRAIN_MAX ? MHD_NO : MHD_YES;
        }
        r->up_bytes += n;
        s->counters.upload_bytes += n;
        if (r->up_bytes > max)
            r->up_rejected = 1;
        return MHD_YES;
    }
    if (r->up_rejected)
        return too_large(l, conn, r);
    s->counters.uploads++;
    double secs = sys_mono_s() - r->up_t0;
    return http_reply_json_hdr(l, conn, 200, json_pack("{s:I, s:f}", "bytes", (json_int_t)r->up_bytes, "seconds", secs),
                               r->up_id[0] ? WIRE_HDR_TRANSFER : NULL, r->up_id);
}
