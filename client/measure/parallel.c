/* parallel: one run as N streams on one libcurl multi handle (dl_perform, download.h).
 * Each stream is an xfer on its own connection; one aggregate series counts the bytes of
 * all of them, so --duration and --interval see the run, not a stream. A run's figure is
 * total bytes / (last byte of any stream - first response headers of any), as aria2c -x
 * or iperf3 -P sum their streams. One stream (the default) is the same code with N = 1. */
#include "download.h"

#include <curl/curl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sys.h"
#include "testfile.h"
#include "threadcpu.h"
#include "verdict_input.h"
#include "xfer.h"

/* Fewer intervals than this and a peak or a slow-start time is one noisy sample. */
#define MIN_INTERVALS_FOR_PEAK 10

struct stream {
    struct xfer x;
    struct xfer_scratch st;
    CURL *h;
    CURLcode rc;
    int in_multi;
    struct run_result *res; /* the run itself when there is one stream */
};

/* --split without --max-bytes: the file's size, from an untimed HEAD on the same route.
 * With o->no_follow a 3xx is not followed: *redirect gets its Location (owned), *size 0. */
static int probe_size(const char *url, const struct dl_options *o, uint64_t *size, char **redirect, char *err,
                      size_t errlen)
{
    CURL *h = curl_easy_init();
    if (!h)
        return snprintf(err, errlen, "out of memory"), -1;
    char errbuf[CURL_ERROR_SIZE] = "", iface[256];
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, o->no_follow ? 0L : 1L);
    curl_easy_setopt(h, CURLOPT_MAXREDIRS, o->max_redirects);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, o->max_time_s > 0 ? (long)(o->max_time_s * 1000 + 0.5) : 10000L);
    dl_setopt_network(h, o, iface, sizeof iface);
    CURLcode rc = curl_easy_perform(h);
    long code = 0;
    curl_off_t cl = -1;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_easy_getinfo(h, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
    char *loc = NULL;
    if (rc == CURLE_OK && code >= 300 && code < 400 && curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &loc) == CURLE_OK &&
        loc) {
        *redirect = strdup(loc);
        curl_easy_cleanup(h);
        *size = 0;
        return *redirect ? 0 : (snprintf(err, errlen, "out of memory"), -1);
    }
    curl_easy_cleanup(h);
    if (rc != CURLE_OK)
        return snprintf(err, errlen, "--split: HEAD %s: %s", url, errbuf[0] ? errbuf : curl_easy_strerror(rc)), -1;
    if (code != 200)
        return snprintf(err, errlen, "--split: HEAD %s: HTTP %ld", url, code), -1;
    if (cl <= 0)
        return snprintf(err, errlen, "--split: HEAD %s gave no Content-Length to split", url), -1;
    *size = (uint64_t)cl;
    return 0;
}

/* Hand every closed interval of the aggregate series to the hook once. */
static void emit_intervals(const struct series *agg, size_t *done, const struct dl_hooks *hk)
{
    for (; *done < agg->n; (*done)++) {
        if (!hk || !hk->interval)
            continue;
        double t_from = (double)*done * agg->interval_s;
        double len = *done + 1 == agg->n && !agg->started ? agg->last_dt : agg->interval_s;
        struct dl_interval iv = {t_from, t_from + len, agg->mbps[*done]};
        hk->interval(&iv, hk->ud);
    }
}

static json_t *num_or_null(double v)
{
    return isfinite(v) && v >= 0 ? json_real(v) : json_null();
}

/* One stream's part of the run record: what it fetched, its average, its socket, and
 * the server's record of it. */
static json_t *stream_json(unsigned i, const struct stream *s)
{
    const struct run_result *r = s->res;
    json_t *o = json_object();
    json_object_set_new(o, "stream", json_integer(i + 1));
    json_object_set_new(o, "ok", json_boolean(r->ok));
    json_object_set_new(o, "error", r->ok || !r->error ? json_null() : json_string(r->error));
    json_object_set_new(o, "http_status", json_integer(r->http_status));
    json_object_set_new(o, "bytes", json_integer((json_int_t)r->bytes));
    if (s->x.range_len)
        json_object_set_new(o, "range", json_pack("[I, I]", (json_int_t)s->x.range_from,
                                                  (json_int_t)(s->x.range_from + s->x.range_len - 1)));
    json_object_set_new(o, "avg_mbps", num_or_null(r->avg_mbps));
    json_object_set_new(o, "body_s", num_or_null(r->body_s));
    json_object_set_new(o, "connect_s", num_or_null(r->connect_s));
    json_object_set_new(o, "tcp", r->tcp.have ? tcp_info_to_json(&r->tcp) : json_null());
    result_server_json(r, o);
    return o;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* The run from its streams (n > 1): sums, the earliest start, the latest end. */
static void aggregate(struct run_result *r, struct stream *ss, unsigned n, double t_begin, double t_end)
{
    const struct run_result *f = ss[0].res;
    r->http_status = f->http_status;
    r->remote_ip = dup_or_null(f->remote_ip);
    r->effective_url = dup_or_null(f->effective_url);
    r->content_type = dup_or_null(f->content_type);
    r->content_encoding = dup_or_null(f->content_encoding);
    memcpy(r->tls_version, f->tls_version, sizeof r->tls_version); /* stream 1's, as content_type */
    memcpy(r->tls_cipher, f->tls_cipher, sizeof r->tls_cipher);
    r->server_config = f->server_config ? json_incref(f->server_config) : NULL;
    r->so_rcvbuf = f->so_rcvbuf;
    r->tcp_rmem_max = f->tcp_rmem_max;
    r->rcvbuf_setting = f->rcvbuf_setting;
    r->streams = json_array();
    r->ok = 1;
    int all_cl = 1, all_ranged = 1;
    int64_t cl_sum = 0;
    double w0 = INFINITY, w1 = -INFINITY;
    r->connect_s = r->ttfb_s = INFINITY;
    for (unsigned i = 0; i < n; i++) {
        const struct run_result *s = ss[i].res;
        r->bytes += s->bytes;
        if (s->content_length < 0)
            all_cl = 0;
        else
            cl_sum += s->content_length;
        all_ranged &= s->ranged;
        r->duration_reached |= s->duration_reached;
        if (s->connect_s > 0 && s->connect_s < r->connect_s)
            r->connect_s = s->connect_s;
        if (s->ttfb_s > 0 && s->ttfb_s < r->ttfb_s)
            r->ttfb_s = s->ttfb_s;
        if (ss[i].x.bytes > 0) {
            double a, b;
            xfer_window(&ss[i].x, &a, &b);
            w0 = a < w0 ? a : w0;
            w1 = b > w1 ? b : w1;
        }
        /* Ctrl-C wins over whatever it caused in the other streams. */
        if (!s->ok && (r->ok || s->err == RESULT_ERR_INTERRUPTED)) {
            result_fail(r, s->err, "stream %u of %u: %s", i + 1, n, s->error ? s->error : "failed");
        }
        json_array_append_new(r->streams, stream_json(i, &ss[i]));
    }
    if (!isfinite(r->connect_s))
        r->connect_s = 0;
    if (!isfinite(r->ttfb_s))
        r->ttfb_s = 0;
    r->content_length = r->split ? (all_cl ? cl_sum : -1) : f->content_length;
    r->ranged = r->split ? all_ranged : f->ranged;
    /* A server that answers 200 to a Range sends every stream the start of the file: the
     * bytes were counted, but they are not the file split in N. An upload's parts are
     * sizes, asked by no Range: its 200 is the answer. */
    if (r->ok && r->split && !f->upload && !all_ranged)
        result_fail(r, RESULT_ERR_OTHER, "--split: the server ignores Range (HTTP %ld, not 206)", f->http_status);
    r->max_bytes_reached = f->max_bytes_reached;
    r->total_s = t_end - t_begin;
    if (r->bytes > 0 && w1 > w0) {
        r->body_s = w1 - w0;
        r->avg_mbps = (double)r->bytes * 8 / r->body_s / 1e6;
    }
    if (r->total_s > 0)
        r->total_mbps = (double)r->bytes * 8 / r->total_s / 1e6;
}

/* Peak and slow start from the run's series, or null with a reason when too short. */
static void series_figures(struct run_result *r, struct series *agg)
{
    r->peak_mbps = series_peak(agg);
    r->slow_start_s = series_slow_start(agg, SERIES_SLOW_START_FRACTION);
    if (agg->n < MIN_INTERVALS_FOR_PEAK) {
        r->peak_mbps = NAN;
        r->slow_start_s = -1;
        r->figures_note = "fewer than 10 intervals: no peak or slow start (use a larger file or --duration)";
    }
    /* the plateau over the full intervals (the last one is partial) */
    if (agg->n >= MIN_INTERVALS_FOR_PEAK)
        verdict_plateau(agg->mbps, agg->n - 1, &r->plateau_mbps, &r->plateau_share);
    r->series_interval_s = agg->interval_s;
    r->series = agg->mbps;
    r->nseries = agg->n;
    agg->mbps = NULL;
}

static void test_file_check(struct run_result *r, const struct dl_options *o)
{
    if (!r->ok || o->upload)
        return;
    uint64_t min = o->min_bytes;
    if (o->max_bytes && o->max_bytes < min)
        min = o->max_bytes; /* --max-bytes asked for that little */
    /* N whole-file streams: the file is a stream's share, not the run's N x size. */
    uint64_t file_bytes = r->parallel > 1 && !r->split ? r->bytes / r->parallel : r->bytes;
    char why[256];
    if (!testfile_check(r->content_type, file_bytes, r->content_length, r->duration_reached || r->max_bytes_reached,
                        min, why, sizeof why))
        result_fail(r, RESULT_ERR_NOT_TEST_FILE, "%s", why);
}

static int setup_streams(const char *url, const struct dl_options *o, const struct dl_hooks *hk, struct stream *ss,
                         unsigned n, uint64_t split_size, struct series *agg, CURLM *m, uint64_t *run_bytes,
                         struct run_result *r)
{
    uint64_t whole = o->upload ? o->upload : o->max_bytes;
    int64_t run_expected = split_size ? (int64_t)split_size : o->upload ? (int64_t)(o->upload * n) : -1;
    for (unsigned i = 0; i < n; i++) {
        struct xfer *x = &ss[i].x;
        *x = (struct xfer){.opt = o, .hooks = hk, .agg = agg, .expected = -1, .sock = CURL_SOCKET_BAD, .so_rcvbuf = -1,
                           .run_bytes = run_bytes, .run_expected = run_expected, .nstreams = n, .quiet_progress = i > 0,
                           .ks = {.fd = -1}};
        series_init(&x->series, agg->interval_s);
        x->max_bytes = whole;
        if (split_size) {
            /* The first split_size % n streams take one byte more. */
            uint64_t part = split_size / n, extra = split_size % n;
            x->range_from = part * i + (i < extra ? i : extra);
            x->range_len = part + (i < extra);
            x->max_bytes = x->range_len;
        }
        x->debit_headers = json_object();
        ss[i].h = curl_easy_init();
        if (!x->debit_headers || !ss[i].h) {
            result_fail(r, RESULT_ERR_OTHER, "out of memory");
            return -1;
        }
        if (split_size && x->range_len == 0) {
            result_fail(r, RESULT_ERR_OTHER, "--split: %llu bytes cannot be split in %u streams",
                        (unsigned long long)split_size, n);
            return -1;
        }
        const char *bad = xfer_setup(ss[i].h, url, x, &ss[i].st);
        if (bad) {
            result_fail(r, RESULT_ERR_OTHER, "libcurl refused option %s", bad);
            return -1;
        }
        curl_easy_setopt(ss[i].h, CURLOPT_PRIVATE, (void *)&ss[i]);
    }
    double now = sys_mono_s();
    for (unsigned i = 0; i < n; i++) {
        ss[i].x.t_start = ss[i].x.t_last_data = ss[i].x.rate_t = now;
        xfer_window_push(&ss[i].x, now);
        if (curl_multi_add_handle(m, ss[i].h) != CURLM_OK) {
            result_fail(r, RESULT_ERR_OTHER, "libcurl: cannot add stream %u", i + 1);
            return -1;
        }
        ss[i].in_multi = 1;
    }
    return 0;
}

/* Drive every stream to its end (or --duration). */
static void run_multi(CURLM *m, struct stream *ss, unsigned n, const struct dl_options *o, const struct dl_hooks *hk,
                      struct series *agg, size_t *shown)
{
    int running = 1;
    while (running) {
        if (curl_multi_perform(m, &running) != CURLM_OK)
            break;
        CURLMsg *msg;
        int q;
        while ((msg = curl_multi_info_read(m, &q))) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            struct stream *s = NULL;
            curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
            if (s) {
                s->rc = msg->data.result;
                curl_multi_remove_handle(m, s->h);
                s->in_multi = 0;
            }
        }
        emit_intervals(agg, shown, hk);
        if (o->duration_s > 0 && agg->started && sys_mono_s() - agg->t0 >= o->duration_s) {
            /* Streams with nothing in flight reach no callback: stop them here. */
            for (unsigned i = 0; i < n; i++)
                if (ss[i].in_multi) {
                    ss[i].x.duration_hit = 1;
                    ss[i].rc = CURLE_OK;
                    curl_multi_remove_handle(m, ss[i].h);
                    ss[i].in_multi = 0;
                }
            break;
        }
        if (running)
            curl_multi_poll(m, NULL, 0, 20, NULL); /* 20 ms: --duration and --interval stay on time */
    }
}

void dl_perform_hop(const char *url, const struct dl_options *o, const struct dl_hooks *hk, struct run_result *r)
{
    unsigned n = o->parallel ? o->parallel : 1;
    r->started_at = sys_wall_s();
    r->parallel = n;
    r->split = o->split && n > 1;
    r->upload = o->upload != 0;
    struct series agg;
    series_init(&agg, o->interval_s > 0 ? o->interval_s : SERIES_INTERVAL_S);
    uint64_t split_size = 0;
    if (r->split) {
        char err[512];
        split_size = o->upload ? o->upload : o->max_bytes;
        if (!split_size && probe_size(url, o, &split_size, &r->redirect_url, err, sizeof err) != 0) {
            result_fail(r, RESULT_ERR_OTHER, "%s", err);
            return;
        }
        if (r->redirect_url) /* the next hop (redirect.c) probes again */
            return;
    }
    struct stream *ss = calloc(n, sizeof *ss);
    CURLM *m = curl_multi_init();
    uint64_t run_bytes = 0;
    double t_begin = sys_mono_s();
    int ok = ss && m;
    if (!ok)
        result_fail(r, RESULT_ERR_OTHER, "out of memory");
    else
        ok = setup_streams(url, o, hk, ss, n, split_size, &agg, m, &run_bytes, r) == 0;
    /* The interval hook only for --interval: the default grid is for the JSON series. */
    const struct dl_hooks *ihk = o->interval_s > 0 ? hk : NULL;
    size_t shown = 0;
    if (ok) { /* the receiver's own CPU over the transfer: the verdict's receiver_cpu */
        struct threadcpu c0, c1;
        struct threadcpu_delta d;
        threadcpu_now(&c0);
        run_multi(m, ss, n, o, ihk, &agg, &shown);
        threadcpu_now(&c1);
        threadcpu_delta(&c0, &c1, &d);
        r->rcv_cpu.have = d.wall_ms > 0;
        r->rcv_cpu.user_ms = d.user_ms;
        r->rcv_cpu.sys_ms = d.sys_ms;
        r->rcv_cpu.runq_ms = d.runq_ms;
        r->rcv_cpu.wall_ms = d.wall_ms;
    }
    double t_end = sys_mono_s(), w1 = 0;
    int kernel = 0; /* some stream's series counted the kernel's bytes */
    for (unsigned i = 0; ss && i < n; i++) {
        struct stream *s = &ss[i];
        if (s->in_multi)
            curl_multi_remove_handle(m, s->h);
        if (ok && s->h) {
            s->res = n == 1 ? r : result_new();
            if (s->res && n > 1)
                s->res->url = strdup(url);
            if (s->res) {
                xfer_finish(s->h, &s->x, s->rc, &s->st, s->res);
                if (n > 1 && i == 0 && s->res->redirect_url) /* every stream got the same 3xx */
                    r->redirect_url = strdup(s->res->redirect_url);
                double a, b;
                xfer_window(&s->x, &a, &b);
                w1 = b > w1 ? b : w1;
                kernel |= s->x.ks.ok;
            } else {
                curl_easy_cleanup(s->h);
            }
        } else if (s->h) {
            curl_easy_cleanup(s->h);
        }
        curl_slist_free_all(s->st.headers);
        json_decref(s->x.debit_headers);
        free(s->x.resp);
        series_free(&s->x.series);
    }
    curl_multi_cleanup(m);
    if (ok) {
        int all = 1;
        for (unsigned i = 0; i < n; i++)
            all &= ss[i].res != NULL;
        if (!all)
            result_fail(r, RESULT_ERR_OTHER, "out of memory");
        else if (n > 1)
            aggregate(r, ss, n, t_begin, t_end);
        if (agg.started)
            series_finish(&agg, w1 > agg.t0 ? w1 : agg.t0);
        /* The kernel counts TLS records' overhead and what came after a cut: the shape is
         * the kernel's, the total the application's, as the average's. */
        if (kernel && agg.total > 0 && run_bytes > 0)
            series_scale(&agg, (double)run_bytes / agg.total);
        if (agg.n)
            r->series_basis = !kernel ? RESULT_BASIS_APP : o->upload ? RESULT_BASIS_ACKED : RESULT_BASIS_RECEIVED;
        emit_intervals(&agg, &shown, ihk); /* the intervals closed at the end, the last partial */
        series_figures(r, &agg);
        test_file_check(r, o);
    }
    /* a file shorter than --duration ends the run early: a success, but a shorter run */
    r->duration_short = o->duration_s > 0 && r->ok && !r->duration_reached;
    verdict_apply(r, o); /* last: it reads the outcome, the series and the server's record */
    for (unsigned i = 0; ss && n > 1 && i < n; i++)
        result_free(ss[i].res);
    series_free(&agg);
    free(ss);
}
