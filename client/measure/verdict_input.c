/* verdict_input: the adapter between a run (its run_result and the server's record
 * JSON) and the pure rules of verdict.c. Every key is optional: an older debitd, or a
 * field the server's kernel does not fill, leaves NAN and the rule that needs it
 * silent. */
#include "verdict_input.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

/* The number at a dotted path ("tcp.busy_time_ms") of o, NAN when absent, null or not a
 * number. */
static int known(double v)
{
    return isfinite(v);
}

static double at(const json_t *o, const char *path)
{
    char key[64];
    const char *p = path;
    while (o && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (n >= sizeof key)
            return NAN;
        memcpy(key, p, n);
        key[n] = 0;
        o = json_object_get(o, key);
        p += n + (dot ? 1 : 0);
    }
    return json_is_number(o) ? json_number_value(o) : NAN;
}

/* The server's address is this host's loopback: both ends share its CPUs. */
static int loopback(const char *ip)
{
    return ip && (strncmp(ip, "127.", 4) == 0 || strcmp(ip, "::1") == 0 || strncmp(ip, "::ffff:127.", 11) == 0);
}

void verdict_in_from_run(const struct run_result *r, struct verdict_in *in)
{
    verdict_in_init(in);
    in->measured_mbps = r->avg_mbps;
    in->peak_mbps = r->peak_mbps > 0 ? r->peak_mbps : NAN;
    in->bytes = r->bytes;
    in->duration_s = r->body_s > 0 ? r->body_s : NAN;
    in->slow_start_s = r->slow_start_s >= 0 ? r->slow_start_s : NAN;
    in->parallel = r->parallel ? r->parallel : 1;
    in->upload = r->upload;
    in->same_host = loopback(r->remote_ip);
    in->bottleneck_mbps = r->bottleneck_mbps > 0 ? r->bottleneck_mbps : NAN;
    const struct tcp_info_sample *t = &r->tcp;
    if (t->have) {
        in->rtt_ms = t->rtt_us ? t->rtt_us / 1000.0 : NAN;
        in->min_rtt_ms = (t->have & TCP_INFO_HAVE_MIN_RTT) && t->min_rtt_us ? t->min_rtt_us / 1000.0 : NAN;
        in->rcv_rtt_ms = t->rcv_rtt_us ? t->rcv_rtt_us / 1000.0 : NAN;
        in->rcv_space = t->rcv_space;
        in->rcv_ssthresh = t->rcv_ssthresh;
        in->rcv_wnd = (t->have & TCP_INFO_HAVE_RCV_WND) && t->rcv_wnd ? t->rcv_wnd : NAN;
        in->rcv_mss = t->rcv_mss ? t->rcv_mss : NAN;
    }
    in->so_rcvbuf = r->so_rcvbuf > 0 ? (double)r->so_rcvbuf : NAN;
    in->tcp_rmem_max = r->tcp_rmem_max > 0 ? (double)r->tcp_rmem_max : NAN;
    in->rcvbuf_setting = r->rcvbuf_setting ? (double)r->rcvbuf_setting : NAN;
    if (r->rcv_cpu.have) {
        in->rcv_cpu_ms = r->rcv_cpu.user_ms + r->rcv_cpu.sys_ms;
        in->rcv_runq_ms = r->rcv_cpu.runq_ms >= 0 ? r->rcv_cpu.runq_ms : NAN;
        in->rcv_wall_ms = r->rcv_cpu.wall_ms;
    }
    in->plateau_mbps = r->plateau_mbps;
    in->plateau_share = r->plateau_share;
    const json_t *s = r->server_record;
    if (!s && r->streams) /* --parallel: the first stream's record, as the rules read per stream */
        s = json_object_get(json_array_get(r->streams, 0), "server_record");
    /* An upload to debitd has no record to fetch, but debitd's answer says who counted it. */
    in->server_debitd = json_is_object(s) || (r->upload && json_is_object(r->server_upload));
    if (!json_is_object(s))
        return;
    in->srv_duration_s = at(s, "duration_s");
    in->busy_ms = at(s, "tcp.busy_time_ms");
    in->rwnd_limited_ratio = at(s, "tcp.rwnd_limited_ratio");
    in->sndbuf_limited_ratio = at(s, "tcp.sndbuf_limited_ratio");
    in->total_retrans = at(s, "tcp.total_retrans");
    in->bytes_retrans = at(s, "tcp.bytes_retrans");
    in->snd_ssthresh = at(s, "tcp.snd_ssthresh");
    in->max_snd_cwnd = at(s, "tcp.max_snd_cwnd");
    in->delivery_rate_bps = at(s, "tcp.delivery_rate_bps");
    in->srv_min_rtt_ms = at(s, "tcp.min_rtt_ms");
    in->snd_mss = at(s, "tcp.snd_mss");
    in->snd_wnd = at(s, "tcp.snd_wnd"); /* the window debitd saw us advertise: its rule 6 reads it too */
    in->cpu_user_ms = at(s, "cpu.user_ms");
    in->cpu_sys_ms = at(s, "cpu.sys_ms");
    in->cpu_wall_ms = at(s, "cpu.wall_ms");
    in->cpu_share = at(s, "cpu.share");
    in->cpu_runq_ms = at(s, "cpu.runqueue_ms");
    in->data_segs_out = at(s, "tcp.data_segs_out");
    in->bytes_sent = at(s, "tcp.bytes_sent");
    in->samples = at(s, "sampled.count");
    in->app_limited = at(s, "sampled.app_limited");
    in->quota_pct = at(s, "cgroup.quota_pct");
    in->throttled_ms = at(s, "cgroup.throttled_ms");
    in->nr_throttled = at(s, "cgroup.nr_throttled");
    in->nr_periods = at(s, "cgroup.nr_periods");
    in->so_sndbuf = at(s, "sndbuf.so_sndbuf");
    in->tcp_wmem_max = at(s, "sndbuf.tcp_wmem_max");
    in->sndbuf_setting = at(s, "sndbuf.setting");
    /* what left the server's interface (interface-wide counters: "shared" when other
     * transfers ran meanwhile) */
    in->iface_bytes_per_packet = at(s, "iface.bytes_per_packet");
    const json_t *ifc = json_object_get(s, "iface");
    in->iface_shared = json_is_true(json_object_get(ifc, "shared"));
    const char *ifname = json_string_value(json_object_get(ifc, "name"));
    snprintf(in->iface, sizeof in->iface, "%s", ifname ? ifname : "");
    in->initial_cwnd = at(s, "initial_cwnd");
    /* An older debitd has no "sndbuf" in its record, but says its setting in X-Debit-Tcp
     * ("sndbuf=1048576" or "sndbuf=auto"): the socket then holds twice that (socket(7)). */
    const char *hdr = r->server_config ? json_string_value(json_object_get(r->server_config, WIRE_HDR_TCP)) : NULL;
    const char *sb = hdr ? strstr(hdr, "sndbuf=") : NULL;
    if (!known(in->so_sndbuf) && !json_is_object(json_object_get(s, "sndbuf")) && sb) {
        char *end;
        double v = strtod(sb + 7, &end);
        if (end != sb + 7 && v > 0 && (*end == 0 || *end == ' ')) {
            in->sndbuf_setting = v;
            in->so_sndbuf = 2 * v;
        }
    }
}

/* An upload: the rules read a download's sender (debitd), so debit has no verdict of its own
 * (its sender-side rules are not written yet); debitd's record of the upload holds debitd's,
 * as its receiver (receiver_cpu, receiver_window, network): that one, said to be debitd's. */
static void upload_by_receiver(const struct run_result *r, struct verdict *v)
{
    const json_t *s = r->server_record;
    if (!r->ok || !r->upload || v->kind != VERDICT_UNKNOWN || !json_is_object(s))
        return;
    const char *dir = json_string_value(json_object_get(s, "direction"));
    const char *name = json_string_value(json_object_get(s, "limited_by"));
    const char *why = json_string_value(json_object_get(s, "limited_by_evidence"));
    if (!dir || strcmp(dir, "upload") != 0 || !name)
        return;
    v->kind = verdict_from_name(name);
    snprintf(v->evidence, sizeof v->evidence, "debitd's verdict, as the upload's receiver (debit's own, as its sender, is "
             "not made): %s", why ? why : "");
}

void verdict_apply(struct run_result *r, const struct dl_options *o)
{
    r->bottleneck_mbps = o->bottleneck_bps > 0 ? o->bottleneck_bps / 1e6 : 0;
    struct verdict v;
    if (!r->ok) {
        v.kind = VERDICT_UNKNOWN;
        snprintf(v.evidence, sizeof v.evidence, "the run failed: no verdict");
        v.pred.limit = PREDICT_LIMIT_NONE;
        v.path_mbps = NAN;
        snprintf(v.no_prediction, sizeof v.no_prediction, "the run failed");
    } else {
        struct verdict_in in;
        verdict_in_from_run(r, &in);
        verdict_decide(&in, &v);
    }
    upload_by_receiver(r, &v);
    r->limited_by = verdict_name(v.kind);
    free(r->limited_by_evidence);
    r->limited_by_evidence = strdup(v.evidence);
    r->predicted_mbps = v.pred.limit != PREDICT_LIMIT_NONE ? v.pred.avg_bps / 1e6 : NAN;
    free(r->predicted_note);
    r->predicted_note = v.pred.limit == PREDICT_LIMIT_NONE ? strdup(v.no_prediction) : NULL;
    r->path_mbps = v.path_mbps;
    /* The merged verdict reads debitd's figures and the client's own (its CPU, its window,
     * --bottleneck): "server" when debitd's own verdict of the transfer is the same, so the
     * server's side alone decided it; "client" when the client's figures changed or made it. */
    const json_t *s = r->server_record;
    if (!s && r->streams)
        s = json_object_get(json_array_get(r->streams, 0), "server_record");
    const char *srv = json_string_value(json_object_get(s, "limited_by"));
    r->limited_by_side = r->ok && srv && verdict_from_name(srv) == v.kind ? "server" : "client";
}
