/* server_record: see server_record.h. */
#include "server_record.h"

#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "sys.h"
#include "wire.h"

#define BODY_MAX (1 << 20)

struct body {
    char *p;
    size_t n;
};

static size_t cb_body(char *ptr, size_t size, size_t nmemb, void *ud)
{
    struct body *b = ud;
    size_t n = size * nmemb;
    if (b->n + n > BODY_MAX)
        return 0;
    char *q = realloc(b->p, b->n + n + 1);
    if (!q)
        return 0;
    memcpy(q + b->n, ptr, n);
    b->p = q;
    b->n += n;
    b->p[b->n] = 0;
    return n;
}

/* The WIRE_TRANSFERS_PATH ID URL on the scheme://host:port of url (new string, caller
 * frees), or NULL. */
static char *record_url(const char *url, const char *id)
{
    CURLU *u = curl_url();
    char *out = NULL, *esc = NULL, path[512];
    if (!u || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK)
        goto done;
    esc = curl_easy_escape(NULL, id, 0);
    if (!esc)
        goto done;
    snprintf(path, sizeof path, WIRE_TRANSFERS_PATH "%s", esc);
    if (curl_url_set(u, CURLUPART_PATH, path, 0) != CURLUE_OK || curl_url_set(u, CURLUPART_QUERY, NULL, 0) != CURLUE_OK ||
        curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0) != CURLUE_OK)
        goto done;
    char *s = NULL;
    if (curl_url_get(u, CURLUPART_URL, &s, 0) == CURLUE_OK) {
        out = strdup(s);
        curl_free(s);
    }
done:
    curl_free(esc);
    curl_url_cleanup(u);
    return out;
}

/* One GET. Returns the HTTP status (0 on a transport error) and the body in b. REMOTE_IP
 * is the address the download used (NULL if unknown). */
static long get_once(const char *url, const struct dl_options *o, const char *remote_ip, struct body *b, char *err,
                     size_t errlen)
{
    CURL *h = curl_easy_init();
    if (!h)
        return 0;
    char errbuf[CURL_ERROR_SIZE] = "", iface[256];
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, 2000L);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, cb_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
    dl_setopt_network(h, o, iface, sizeof iface); /* the download's route; best effort, as every option here */
    /* debitd gives a record only to the address that made the transfer: with a name that
     * has both an IPv4 and an IPv6 address, stay on the download's family, so that the
     * request leaves from the same local address */
    if (!o->ip_version && remote_ip)
        curl_easy_setopt(h, CURLOPT_IPRESOLVE, strchr(remote_ip, ':') ? (long)CURL_IPRESOLVE_V6 : (long)CURL_IPRESOLVE_V4);
    long code = 0;
    CURLcode rc = curl_easy_perform(h);
    if (rc == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    else
        err_set(err, errlen, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
    curl_easy_cleanup(h);
    return code;
}

json_t *server_record_parse(const char *body, int *sending)
{
    json_error_t je;
    json_t *obj = body ? json_loads(body, 0, &je) : NULL;
    if (!json_is_object(obj)) {
        json_decref(obj);
        return NULL;
    }
    const char *state = json_string_value(json_object_get(obj, "state"));
    *sending = state && strcmp(state, "sending") == 0;
    return obj;
}

int server_record_fetch(struct run_result *r, const struct dl_options *o, char *err, size_t errlen)
{
    json_t *idj = r->server_config ? json_object_get(r->server_config, WIRE_HDR_TRANSFER) : NULL;
    const char *id = json_string_value(idj);
    if (!id || !*id)
        return 0;
    char *url = record_url(r->effective_url ? r->effective_url : r->url, id);
    if (!url)
        return err_set(err, errlen, "cannot build the " WIRE_TRANSFERS_PATH " URL");
    double t0 = sys_mono_s();
    int rc = -1;
    for (;;) {
        struct body b = {0};
        err[0] = 0;
        long code = get_once(url, o, r->remote_ip, &b, err, errlen);
        json_t *obj = NULL;
        int sending = 0;
        if (code == 200) {
            obj = server_record_parse(b.p, &sending);
            if (!obj)
                err_set(err, errlen, "%s: not a JSON object", url);
        } else if (code) {
            err_set(err, errlen, "%s: HTTP %ld", url, code);
        }
        free(b.p);
        double el = sys_mono_s() - t0;
        int again = (code == 404 || sending) && el < SERVER_RECORD_RETRY_S;
        if (obj && !again) {
            json_decref(r->server_record);
            r->server_record = obj; /* even "sending" after the retries: better than nothing */
            rc = 1;
            break;
        }
        json_decref(obj);
        if (!again)
            break;
        sys_sleep_ms(50);
    }
    free(url);
    return rc;
}
