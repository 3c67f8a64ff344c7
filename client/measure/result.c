/* result: see result.h. */
#include "result.h"

#include "array.h"
#include "urlkind.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const err_names[] = {
    [RESULT_OK] = "ok",
    [RESULT_ERR_DNS] = "dns",
    [RESULT_ERR_CONNECT] = "connect",
    [RESULT_ERR_HTTP] = "http",
    [RESULT_ERR_REDIRECT] = "redirect",
    [RESULT_ERR_SHORT_BODY] = "short_body",
    [RESULT_ERR_RECV] = "recv",
    [RESULT_ERR_STALL] = "stall",
    [RESULT_ERR_TIMEOUT] = "timeout",
    [RESULT_ERR_INTERRUPTED] = "interrupted",
    [RESULT_ERR_OTHER] = "other",
    [RESULT_ERR_NOT_TEST_FILE] = "not_test_file",
    [RESULT_ERR_UPLOAD] = "upload",
    [RESULT_ERR_TLS] = "tls",
};

static const char *result_strerror(enum result_err e)
{
    if ((unsigned)e < ARRAY_SIZE(err_names) && err_names[e])
        return err_names[e];
    return "unknown";
}

/* The "not known" values of a new outcome. */
static void init_outcome(struct run_result *r)
{
    r->content_length = -1;
    r->slow_start_s = -1;
    r->so_rcvbuf = r->tcp_rmem_max = -1;
    r->predicted_mbps = r->path_mbps = NAN;
    r->plateau_mbps = r->plateau_share = NAN;
}

struct run_result *result_new(void)
{
    struct run_result *r = calloc(1, sizeof *r);
    if (r)
        init_outcome(r);
    return r;
}

/* Everything but the identity. */
static void free_outcome(struct run_result *r)
{
    free(r->effective_url);
    free(r->redirect_url);
    free(r->server_record_error);
    free(r->error);
    free(r->remote_ip);
    free(r->series);
    free(r->content_type);
    free(r->content_encoding);
    free(r->limited_by_evidence);
    free(r->predicted_note);
    json_decref(r->server_upload);
    json_decref(r->streams);
    json_decref(r->server_config);
    json_decref(r->server_record);
    json_decref(r->ndt7);
}

void result_free(struct run_result *r)
{
    if (!r)
        return;
    free(r->server);
    free(r->url);
    free(r->scenario);
    free(r->variant);
    free_outcome(r);
    free(r);
}

void result_reset(struct run_result *r)
{
    struct run_result id = *r;
    free_outcome(r);
    memset(r, 0, sizeof *r);
    r->server = id.server;
    r->url = id.url;
    r->scenario = id.scenario;
    r->variant = id.variant;
    r->run = id.run;
    r->seq = id.seq;
    r->started_at = id.started_at;
    init_outcome(r);
}

void result_fail(struct run_result *r, enum result_err e, const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    free(r->error);
    r->error = strdup(buf);
    r->err = e;
    r->ok = 0;
}

/* JSON has no NaN/Inf: those become null. */
static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* The headline RTTs, also at the top level of a run (reports and scripts read them there):
 * copied from the "tcp" object, so they are the same key, unit and value. */
static const char *const tcp_headline[] = {"rtt_ms", "min_rtt_ms", "rcv_rtt_ms"};

void result_server_json(const struct run_result *r, json_t *o)
{
    if (r->server_record)
        json_object_set(o, "server_record", r->server_record);
    if (r->server_record_error)
        json_object_set_new(o, "server_record_error", json_string(r->server_record_error));
    if (r->server_upload)
        json_object_set(o, "server_upload", r->server_upload);
    if (r->ndt7)
        json_object_set(o, "ndt7", r->ndt7);
}

void result_cell_json(json_t *o, const char *server, const char *url, const char *scenario, const char *variant)
{
    json_object_set_new(o, "server", json_string(server));
    json_object_set_new(o, "url", json_string(url));
    json_object_set_new(o, "kind", json_string(urlkind_name(urlkind_of(url))));
    if (scenario)
        json_object_set_new(o, "scenario", json_string(scenario));
    if (variant)
        json_object_set_new(o, "variant", json_string(variant));
}

json_t *result_to_json(const struct run_result *r)
{
    char when[32] = "";
    time_t sec = (time_t)r->started_at;
    struct tm tm;
    if (gmtime_r(&sec, &tm)) {
        size_t k = strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(when + k, sizeof when - k, ".%03dZ", (int)((r->started_at - (double)sec) * 1000));
    }
    json_t *series = json_array();
    for (size_t i = 0; i < r->nseries; i++)
        json_array_append_new(series, num(r->series[i]));
    json_t *o = json_object();
    result_cell_json(o, r->server ? r->server : "", r->url ? r->url : "", r->scenario, r->variant);
    json_object_set_new(o, "run", json_integer(r->run));
    json_object_set_new(o, "seq", json_integer(r->seq));
    json_object_set_new(o, "started_at", json_string(when));
    json_object_set_new(o, "ok", json_boolean(r->ok));
    json_object_set_new(o, "error", str_or_null(r->ok ? NULL : r->error));
    json_object_set_new(o, "error_kind", r->ok ? json_null() : json_string(result_strerror(r->err)));
    json_object_set_new(o, "direction", json_string(r->upload ? "upload" : "download"));
    json_object_set_new(o, "parallel", json_integer(r->parallel ? r->parallel : 1));
    if (r->split)
        json_object_set_new(o, "split", json_true());
    json_object_set_new(o, "http_status", json_integer(r->http_status));
    json_object_set_new(o, "remote_ip", str_or_null(r->remote_ip));
    json_object_set_new(o, "bytes", json_integer((json_int_t)r->bytes));
    json_object_set_new(o, "content_length", r->content_length >= 0 ? json_integer(r->content_length) : json_null());
    json_object_set_new(o, "max_bytes_reached", json_boolean(r->max_bytes_reached));
    json_object_set_new(o, "ranged", json_boolean(r->ranged));
    json_object_set_new(o, "duration_reached", json_boolean(r->duration_reached));
    if (r->duration_short)
        json_object_set_new(o, "duration_short", json_true());
    if (r->content_encoding)
        json_object_set_new(o, "content_encoding", json_string(r->content_encoding));
    json_object_set_new(o, "content_type", str_or_null(r->content_type));
    json_object_set_new(o, "tls", r->tls_version[0] ? json_pack("{s:s, s:s}", "version", r->tls_version, "cipher",
                                                                r->tls_cipher) : json_null());
    json_object_set_new(o, "avg_mbps", num(r->avg_mbps));
    json_object_set_new(o, "total_mbps", num(r->total_mbps));
    json_object_set_new(o, "peak_mbps", num(r->peak_mbps));
    json_object_set_new(o, "connect_s", num(r->connect_s));
    json_object_set_new(o, "ttfb_s", num(r->ttfb_s));
    json_object_set_new(o, "body_s", num(r->body_s));
    json_object_set_new(o, "total_s", num(r->total_s));
    json_object_set_new(o, "slow_start_s", r->slow_start_s >= 0 ? num(r->slow_start_s) : json_null());
    if (r->figures_note)
        json_object_set_new(o, "figures_note", json_string(r->figures_note));
    json_t *tcp = r->tcp.have ? tcp_info_to_json(&r->tcp) : json_null();
    for (size_t i = 0; i < ARRAY_SIZE(tcp_headline); i++) {
        json_t *v = json_object_get(tcp, tcp_headline[i]);
        json_object_set_new(o, tcp_headline[i], v ? json_incref(v) : json_null());
    }
    json_object_set_new(o, "tcp", tcp);
    json_t *cpu = json_null();
    if (r->rcv_cpu.have) { /* the share is what a verdict reads: never above one CPU */
        double w = r->rcv_cpu.wall_ms, c = r->rcv_cpu.user_ms + r->rcv_cpu.sys_ms;
        cpu = json_pack("{s:f, s:f, s:o, s:f, s:o}", "user_ms", r->rcv_cpu.user_ms, "sys_ms", r->rcv_cpu.sys_ms,
                        "runqueue_ms", r->rcv_cpu.runq_ms >= 0 ? json_real(r->rcv_cpu.runq_ms) : json_null(), "wall_ms", w,
                        "share", w > 0 ? json_real(c / w < 1 ? c / w : 1.0) : json_null());
    }
    json_object_set_new(o, "receiver",
                        json_pack("{s:o, s:o, s:o, s:o}", "so_rcvbuf",
                                  r->so_rcvbuf >= 0 ? json_integer(r->so_rcvbuf) : json_null(), "tcp_rmem_max",
                                  r->tcp_rmem_max >= 0 ? json_integer(r->tcp_rmem_max) : json_null(), "rcvbuf_setting",
                                  r->rcvbuf_setting ? json_integer((json_int_t)r->rcvbuf_setting) : json_null(), "cpu",
                                  cpu ? cpu : json_null()));
    json_object_set_new(o, "limited_by", json_string(r->limited_by ? r->limited_by : "unknown"));
    json_object_set_new(o, "limited_by_evidence",
                        json_string(r->limited_by_evidence ? r->limited_by_evidence : "no verdict was made"));
    json_object_set_new(o, "predicted_mbps", num(r->predicted_mbps));
    json_object_set_new(o, "predicted_note", str_or_null(r->predicted_note));
    json_object_set_new(o, "path_mbps", num(r->path_mbps));
    json_object_set_new(o, "limited_by_side", json_string(r->limited_by_side ? r->limited_by_side : "client"));
    json_object_set_new(o, "server_config", r->server_config ? json_incref(r->server_config) : json_object());
    result_server_json(r, o);
    if (r->streams)
        json_object_set(o, "streams", r->streams);
    if (r->effective_url && r->url && strcmp(r->effective_url, r->url) != 0)
        json_object_set_new(o, "effective_url", json_string(r->effective_url));
    json_object_set_new(o, "series_interval_s", num(r->series_interval_s));
    json_object_set_new(o, "series", series);
    json_object_set_new(o, "series_basis", str_or_null(r->series_basis));
    return o;
}

void result_set_init(struct result_set *rs)
{
    *rs = (struct result_set){0};
}

void result_set_clear(struct result_set *rs)
{
    for (size_t i = 0; i < rs->n; i++)
        result_free(rs->runs[i]);
    free(rs->runs);
    result_set_init(rs);
}

int result_set_add(struct result_set *rs, struct run_result *r)
{
    if (rs->n == rs->cap) {
        size_t cap = rs->cap ? rs->cap * 2 : 16;
        struct run_result **p = realloc(rs->runs, cap * sizeof *p);
        if (!p) {
            result_free(r);
            return -1;
        }
        rs->runs = p;
        rs->cap = cap;
    }
    rs->runs[rs->n++] = r;
    return 0;
}
