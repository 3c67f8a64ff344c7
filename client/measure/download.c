/* download: see download.h. */
#include "download.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "server_record.h"
#include "sys.h"
#include "tcp_profile.h"
#include "xfer.h"

void dl_options_defaults(struct dl_options *o)
{
    *o = (struct dl_options){
        .max_redirects = 20,
        .max_time_s = DL_DEFAULT_MAX_TIME_S,
        .stall_rate_Bps = DL_DEFAULT_STALL_RATE_BPS,
        .parallel = 1,
        .min_bytes = DL_MIN_BYTES,
    };
}

/* Set every option; the first failure is reported (an option this libcurl lacks). */
#define SETOPT(h, opt, val)                                                        \
    do {                                                                           \
        CURLcode c_ = curl_easy_setopt((h), (opt), (val));                         \
        if (c_ != CURLE_OK && !bad)                                                \
            bad = #opt;                                                            \
    } while (0)

const char *dl_setopt_network(CURL *h, const struct dl_options *o, char *iface, size_t ifacelen)
{
    const char *bad = NULL;
    SETOPT(h, CURLOPT_USERAGENT, o->user_agent ? o->user_agent : "debit/" DEBIT_VERSION);
    if (o->ip_version == 4)
        SETOPT(h, CURLOPT_IPRESOLVE, (long)CURL_IPRESOLVE_V4);
    else if (o->ip_version == 6)
        SETOPT(h, CURLOPT_IPRESOLVE, (long)CURL_IPRESOLVE_V6);
    if (o->resolve)
        SETOPT(h, CURLOPT_RESOLVE, o->resolve);
    if (o->connect_to)
        SETOPT(h, CURLOPT_CONNECT_TO, o->connect_to);
    if (o->interface || o->local_address) {
        /* libcurl's "if!" and "host!" prefixes say which one is meant. */
        if (o->interface)
            snprintf(iface, ifacelen, "if!%s", o->interface);
        else
            snprintf(iface, ifacelen, "host!%s", o->local_address);
        SETOPT(h, CURLOPT_INTERFACE, iface);
    }
    if (o->insecure) {
        SETOPT(h, CURLOPT_SSL_VERIFYPEER, 0L);
        SETOPT(h, CURLOPT_SSL_VERIFYHOST, 0L);
    }
    if (o->cacert)
        SETOPT(h, CURLOPT_CAINFO, o->cacert);
    if (o->headers)
        SETOPT(h, CURLOPT_HTTPHEADER, o->headers);
    return bad;
}

static int slist_add(struct curl_slist **l, const char *line)
{
    struct curl_slist *n = curl_slist_append(*l, line);
    if (n)
        *l = n;
    return n != NULL;
}

/* Whether L has a line for the header that LINE ("Name: value" or "Name:") names. */
static int slist_has(const struct curl_slist *l, const char *line)
{
    size_t n = (size_t)(strchr(line, ':') - line);
    for (; l; l = l->next)
        if (strncasecmp(l->data, line, n) == 0 && (l->data[n] == ':' || l->data[n] == ';'))
            return 1;
    return 0;
}

const char *xfer_setup(CURL *h, const char *url, struct xfer *x, struct xfer_scratch *st)
{
    const struct dl_options *o = x->opt;
    const char *bad = NULL;
    x->curl = h; /* cb_header reads the TLS session of each response's connection */
    SETOPT(h, CURLOPT_URL, url);
    SETOPT(h, CURLOPT_ERRORBUFFER, st->errbuf);
    SETOPT(h, CURLOPT_NOSIGNAL, 1L);
    /* A fresh TCP connection per download, closed at its end: slow start every time, as
     * the seed's wget runs, and a socket whose TCP_INFO describes this download only. */
    SETOPT(h, CURLOPT_FRESH_CONNECT, 1L);
    SETOPT(h, CURLOPT_FORBID_REUSE, 1L);
    SETOPT(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    /* libcurl's largest read buffer (512 KiB): fewer, larger reads. The kernel's receive
     * buffer is left to autotuning (up to tcp_rmem[2], 32 MiB here) unless --rcvbuf:
     * SO_RCVBUF would freeze it and is capped by rmem_max (4 MiB here). */
    SETOPT(h, CURLOPT_BUFFERSIZE, (long)CURL_MAX_READ_SIZE);
    SETOPT(h, CURLOPT_ACCEPT_ENCODING, NULL); /* identity: count the file's bytes */
    SETOPT(h, CURLOPT_MAXREDIRS, o->max_redirects);
    SETOPT(h, CURLOPT_HEADERFUNCTION, cb_header);
    SETOPT(h, CURLOPT_HEADERDATA, x);
    SETOPT(h, CURLOPT_NOPROGRESS, 0L);
    SETOPT(h, CURLOPT_XFERINFOFUNCTION, cb_xferinfo);
    SETOPT(h, CURLOPT_XFERINFODATA, x);
    SETOPT(h, CURLOPT_OPENSOCKETFUNCTION, cb_opensocket);
    SETOPT(h, CURLOPT_OPENSOCKETDATA, x);
    SETOPT(h, CURLOPT_CLOSESOCKETFUNCTION, cb_closesocket);
    SETOPT(h, CURLOPT_CLOSESOCKETDATA, x);
    SETOPT(h, CURLOPT_SOCKOPTFUNCTION, cb_sockopt);
    SETOPT(h, CURLOPT_SOCKOPTDATA, x);
    const char *net_bad = dl_setopt_network(h, o, st->iface, sizeof st->iface);
    if (!bad)
        bad = net_bad;
    if (o->connect_timeout_s > 0)
        SETOPT(h, CURLOPT_CONNECTTIMEOUT_MS, (long)(o->connect_timeout_s * 1000 + 0.5));
    if (o->max_time_s > 0)
        SETOPT(h, CURLOPT_TIMEOUT_MS, (long)(o->max_time_s * 1000 + 0.5));
    if (o->upload) {
        /* The body starts at once (no "Expect: 100-continue" round trip) and a redirect is
         * not followed: a POST that lands elsewhere did not reach an upload sink. */
        SETOPT(h, CURLOPT_FOLLOWLOCATION, 0L);
        if (o->upload_put) {
            SETOPT(h, CURLOPT_UPLOAD, 1L);
            SETOPT(h, CURLOPT_INFILESIZE_LARGE, (curl_off_t)x->max_bytes);
        } else {
            SETOPT(h, CURLOPT_POST, 1L);
            SETOPT(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)x->max_bytes);
        }
        SETOPT(h, CURLOPT_READFUNCTION, cb_read);
        SETOPT(h, CURLOPT_READDATA, x);
        SETOPT(h, CURLOPT_UPLOAD_BUFFERSIZE, (long)CURL_MAX_READ_SIZE);
        SETOPT(h, CURLOPT_WRITEFUNCTION, cb_write_answer);
        SETOPT(h, CURLOPT_WRITEDATA, x);
        /* the user's -H lines, then ours unless they set the same header */
        static const char *const ours[] = {"Expect:", "Content-Type: application/octet-stream"};
        st->headers = NULL;
        for (const struct curl_slist *u = o->headers; u; u = u->next)
            if (!slist_add(&st->headers, u->data) && !bad)
                bad = "CURLOPT_HTTPHEADER (out of memory)";
        for (size_t i = 0; i < sizeof ours / sizeof ours[0]; i++)
            if (!slist_has(o->headers, ours[i]) && !slist_add(&st->headers, ours[i]) && !bad)
                bad = "CURLOPT_HTTPHEADER (out of memory)";
        SETOPT(h, CURLOPT_HTTPHEADER, st->headers);
        return bad;
    }
    SETOPT(h, CURLOPT_FOLLOWLOCATION, o->no_follow ? 0L : 1L);
    SETOPT(h, CURLOPT_WRITEFUNCTION, cb_write);
    SETOPT(h, CURLOPT_WRITEDATA, x);
    if (x->range_len || o->max_bytes) {
        uint64_t from = x->range_len ? x->range_from : 0, len = x->range_len ? x->range_len : o->max_bytes;
        snprintf(st->range, sizeof st->range, "%llu-%llu", (unsigned long long)from,
                 (unsigned long long)(from + len - 1));
        SETOPT(h, CURLOPT_RANGE, st->range);
    }
    return bad;
}

/* 1 for a 2xx status; else 0 with R failed: an HTTP error, or a redirect libcurl could not follow */
static int http_status_ok(long status, struct run_result *r, const char *reason)
{
    if (status >= 400 || status < 200) {
        result_fail(r, RESULT_ERR_HTTP, "HTTP %ld%s%s", status, reason[0] ? " " : "", reason);
        return 0;
    }
    if (status >= 300) {
        result_fail(r, RESULT_ERR_REDIRECT, "HTTP %ld %s without a usable Location", status, reason);
        return 0;
    }
    return 1;
}

/* The likely cause of a failed connect or TLS handshake that libcurl's own words leave
 * out: -4 or -6 against a literal of the other family, https:// to a plain-HTTP port. */
static const char *likely_cause(const struct run_result *r, CURLcode rc, const char *msg, const struct dl_options *o)
{
    const char *url = r->effective_url ? r->effective_url : r->url;
    char *host = NULL;
    CURLU *u = curl_url();
    if (!u || !url || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
        host = NULL;
    curl_url_cleanup(u);
    unsigned char a[16];
    int v6 = host && host[0] == '[', v4 = host && inet_pton(AF_INET, host, a) == 1;
    curl_free(host);
    if (rc == CURLE_COULDNT_CONNECT && o->ip_version == 4 && v6)
        return " (-4 asks for IPv4, but the URL's host is an IPv6 address)";
    if (rc == CURLE_COULDNT_CONNECT && o->ip_version == 6 && v4)
        return " (-6 asks for IPv6, but the URL's host is an IPv4 address)";
    if (rc == CURLE_SSL_CONNECT_ERROR && url && strncasecmp(url, "https:", 6) == 0 &&
        strstr(msg, "wrong version number"))
        return " (the server did not answer in TLS: is this port plain HTTP? try http://)";
    return "";
}

static void classify(struct run_result *r, struct xfer *x, CURLcode rc, const char *errbuf, const struct dl_options *o)
{
    const char *msg = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    if (x->interrupted) {
        result_fail(r, RESULT_ERR_INTERRUPTED, "interrupted");
        return;
    }
    if (x->stalled == XFER_STALL_NOTHING) {
        result_fail(r, RESULT_ERR_STALL, "stall: nothing received for %g s (after %llu bytes)", o->stall_s,
                    (unsigned long long)x->bytes);
        return;
    }
    if (x->stalled == XFER_STALL_SLOW) {
        result_fail(r, RESULT_ERR_STALL, "stall: %llu bytes in %.1f s, below --stall-rate %.0f B/s (after %llu bytes)",
                    (unsigned long long)x->stall_window_bytes, x->stall_window_s, o->stall_rate_Bps,
                    (unsigned long long)x->bytes);
        return;
    }
    if (rc == CURLE_WRITE_ERROR && x->max_bytes_hit)
        rc = CURLE_OK; /* our own stop after --max-bytes */
    if (x->duration_hit && (rc == CURLE_WRITE_ERROR || rc == CURLE_ABORTED_BY_CALLBACK || rc == CURLE_OK)) {
        /* Our own stop after --duration: what arrived is the result, if anything did, and if
         * it was a 2xx body: an error page served slowly is no more a measurement for being
         * cut short. An upload stopped before the server answered has no status yet (0). */
        if (x->status && !http_status_ok(x->status, r, x->reason))
            return;
        if (x->bytes == 0) {
            result_fail(r, RESULT_ERR_TIMEOUT, "--duration %g s: nothing %s in that time", o->duration_s,
                        o->upload ? "sent" : "received");
            return;
        }
        r->ok = 1;
        r->err = RESULT_OK;
        return;
    }
    switch (rc) {
    case CURLE_OK:
        break;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        result_fail(r, RESULT_ERR_DNS, "DNS: %s", msg);
        return;
    case CURLE_COULDNT_CONNECT:
        result_fail(r, RESULT_ERR_CONNECT, "connect: %s%s", msg, likely_cause(r, rc, msg, o));
        return;
    case CURLE_TOO_MANY_REDIRECTS:
        result_fail(r, RESULT_ERR_REDIRECT, "redirect loop: %s", msg);
        return;
    case CURLE_PARTIAL_FILE:
        if (x->expected >= 0)
            result_fail(r, RESULT_ERR_SHORT_BODY, "short body: %llu of %lld bytes, then the server closed the connection",
                        (unsigned long long)x->bytes, (long long)x->expected);
        else
            result_fail(r, RESULT_ERR_SHORT_BODY, "short body: %s", msg);
        return;
    case CURLE_OPERATION_TIMEDOUT:
        if (x->bytes == 0 && x->status == 0 && r->connect_s <= 0)
            result_fail(r, RESULT_ERR_CONNECT, "connect timeout: %s", msg);
        else if (o->max_time_s > 0)
            result_fail(r, RESULT_ERR_TIMEOUT, "timeout: longer than --max-time %g s: %s", o->max_time_s, msg);
        else
            result_fail(r, RESULT_ERR_TIMEOUT, "timeout: %s", msg);
        return;
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_USE_SSL_FAILED:
        result_fail(r, RESULT_ERR_TLS, "TLS: %s%s", msg,
                    rc == CURLE_PEER_FAILED_VERIFICATION ? " (--cacert FILE trusts a CA, -k skips the check)"
                                                         : likely_cause(r, rc, msg, o));
        return;
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_SEND_ERROR:
        result_fail(r, RESULT_ERR_RECV, "%s: %s (after %llu bytes)", rc == CURLE_SEND_ERROR ? "send" : "receive", msg,
                    (unsigned long long)x->bytes);
        return;
    default:
        result_fail(r, RESULT_ERR_OTHER, "%s", msg);
        return;
    }
    if (!http_status_ok(x->status, r, x->reason))
        return;
    if (o->upload) {
        if (x->up_sent != x->max_bytes) {
            result_fail(r, RESULT_ERR_SHORT_BODY, "short upload: %llu of %llu bytes sent", (unsigned long long)x->up_sent,
                        (unsigned long long)x->max_bytes);
            return;
        }
    } else if (!x->max_bytes_hit && x->expected >= 0 && (int64_t)x->bytes != x->expected) {
        /* libcurl checks Content-Length itself, but a 206 for --max-bytes must cover the range. */
        result_fail(r, RESULT_ERR_SHORT_BODY, "short body: %llu of %lld bytes", (unsigned long long)x->bytes,
                    (long long)x->expected);
        return;
    }
    r->ok = 1;
    r->err = RESULT_OK;
}

/* debitd's upload sink answers {"bytes": N, "seconds": T}: keep it beside our own count,
 * and fail the run when the two byte counts differ (one of us lost data). Any other
 * answer (another server) is not an error: the upload is then measured by us alone. */
static void upload_answer(struct run_result *r, const struct xfer *x)
{
    json_error_t je;
    json_t *a = x->resp ? json_loads(x->resp, 0, &je) : NULL;
    json_t *b = json_object_get(a, "bytes"), *sec = json_object_get(a, "seconds");
    if (!json_is_integer(b) || !json_is_number(sec)) {
        json_decref(a);
        return;
    }
    json_int_t nb = json_integer_value(b);
    double s = json_number_value(sec);
    int match = nb >= 0 && (uint64_t)nb == x->up_sent;
    r->server_upload = json_pack("{s:I, s:f, s:o, s:b}", "bytes", nb, "seconds", s, "mbps",
                                 s > 0 ? json_real((double)nb * 8 / s / 1e6) : json_null(), "bytes_match", match);
    json_decref(a);
    if (r->ok && !match && !x->duration_hit)
        result_fail(r, RESULT_ERR_UPLOAD, "upload: the server counted %lld of the %llu bytes sent", (long long)nb,
                    (unsigned long long)x->up_sent);
}

void xfer_window(const struct xfer *x, double *t0, double *t1)
{
    if (x->opt->upload) {
        *t0 = x->t_body_start;
        /* Sent and acknowledged: the answer comes once the server has every byte. */
        *t1 = x->t_response > x->t_body_start && !x->duration_hit ? x->t_response : x->t_last_byte;
    } else {
        *t0 = x->t_hdr_end > 0 ? x->t_hdr_end : x->t_start;
        *t1 = x->t_last_byte;
    }
}

void xfer_finish(CURL *c, struct xfer *x, CURLcode rc, const struct xfer_scratch *st, struct run_result *r)
{
    double t_end = sys_mono_s();
    curl_off_t us = 0;
    if (curl_easy_getinfo(c, CURLINFO_CONNECT_TIME_T, &us) == CURLE_OK)
        r->connect_s = us / 1e6;
    if (curl_easy_getinfo(c, CURLINFO_STARTTRANSFER_TIME_T, &us) == CURLE_OK)
        r->ttfb_s = us / 1e6;
    if (curl_easy_getinfo(c, CURLINFO_TOTAL_TIME_T, &us) == CURLE_OK)
        r->total_s = us / 1e6;
    if (r->total_s <= 0)
        r->total_s = t_end - x->t_start;
    char *ip = NULL;
    if (curl_easy_getinfo(c, CURLINFO_PRIMARY_IP, &ip) == CURLE_OK && ip && *ip)
        r->remote_ip = strdup(ip);
    char *eff = NULL;
    if (curl_easy_getinfo(c, CURLINFO_EFFECTIVE_URL, &eff) == CURLE_OK && eff)
        r->effective_url = strdup(eff);
    long code = 0;
    if (curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code) == CURLE_OK && code)
        x->status = code;
    char *loc = NULL; /* set only when libcurl did not follow it (o->no_follow) */
    if (code >= 300 && code < 400 && curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &loc) == CURLE_OK && loc)
        r->redirect_url = strdup(loc);
    /* Cleanup closes the socket if libcurl still holds it: TCP_INFO is read there. */
    curl_easy_cleanup(c);

    const struct dl_options *o = x->opt;
    r->upload = o->upload != 0;
    r->http_status = x->status;
    r->bytes = x->bytes;
    r->content_length = x->expected;
    r->ranged = x->status == 206;
    r->tcp = x->tcp;
    r->so_rcvbuf = x->so_rcvbuf;
    uint64_t rmem_max;
    char rerr[160];
    r->tcp_rmem_max = tcp_rmem_max(&rmem_max, rerr, sizeof rerr) == 0 ? (int64_t)rmem_max : -1;
    r->rcvbuf_setting = o->rcvbuf;
    r->content_type = x->content_type[0] ? strdup(x->content_type) : NULL;
    /* libcurl decodes nothing here (no Accept-Encoding sent): a server that encodes
     * anyway is measured in its encoded bytes, which the run must say */
    if (x->content_encoding[0] && strcasecmp(x->content_encoding, "identity") != 0)
        r->content_encoding = strdup(x->content_encoding);
    memcpy(r->tls_version, x->tls_version, sizeof r->tls_version);
    memcpy(r->tls_cipher, x->tls_cipher, sizeof r->tls_cipher);
    json_decref(r->server_config);
    r->server_config = x->debit_headers;
    x->debit_headers = NULL;
    classify(r, x, rc, st->errbuf, o);
    r->max_bytes_reached = o->max_bytes && r->ok && r->bytes == o->max_bytes;
    r->duration_reached = x->duration_hit && r->ok;
    if (o->upload)
        upload_answer(r, x);
    double t0, t1;
    xfer_window(x, &t0, &t1);
    /* The kernel's last span: a download that ended by itself received nothing after its
     * last byte, so the closing socket's count is the window's; one cut short (--duration,
     * a server ignoring Range) may have received more, so the application's count stands. */
    int whole = !o->upload && rc == CURLE_OK && !x->duration_hit && (x->tcp.have & TCP_INFO_HAVE_BYTES);
    sock_bytes_end(&x->ks, whole, x->tcp.bytes_received, t1, x->bytes, x->agg);
    if (x->bytes > 0 && t1 > t0) {
        r->body_s = t1 - t0;
        r->avg_mbps = (double)x->bytes * 8 / r->body_s / 1e6;
    }
    if (r->total_s > 0)
        r->total_mbps = (double)x->bytes * 8 / r->total_s / 1e6;
    if (r->ok) {
        /* After the timed transfer, so the extra request never disturbs a measurement (an
         * upload to debitd has a record too: its verdict as the receiver). */
        char err[512];
        if (server_record_fetch(r, o, err, sizeof err) < 0)
            r->server_record_error = strdup(err);
    }
}
