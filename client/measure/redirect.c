/* redirect: dl_perform (download.h) as a sequence of hops, so that the user's -H lines
 * reach only the URL's own origin. libcurl's own redirect following sends every custom
 * header to whatever host a Location names (it holds back only Authorization and Cookie),
 * so a token given with -H for one mirror would go to any host it redirects to. Without
 * -H, or with --location-trusted (curl's flag of the same name), libcurl follows as before
 * in one hop. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "download.h"
#include "ndt7.h"
#include "xfer.h"

/* scheme://host:port of url into out ("" when it does not parse); the port is the
 * scheme's default when not given, so http://h/ and http://h:80/ are one origin. */
static void origin_of(const char *url, char *out, size_t len)
{
    out[0] = '\0';
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL;
    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK)
        snprintf(out, len, "%s://%s:%s", scheme, host, port);
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
}

static int same_origin(const char *a, const char *b)
{
    char oa[512], ob[512];
    origin_of(a, oa, sizeof oa);
    origin_of(b, ob, sizeof ob);
    return oa[0] && strcasecmp(oa, ob) == 0;
}

void dl_perform(const char *url, const struct dl_options *o, const struct dl_hooks *h, struct run_result *r)
{
    if (ndt7_is_url(url)) { /* a WebSocket: no redirect, no -H (ndt7.h) */
        ndt7_perform(url, o, h, r);
        return;
    }
    if (!o->headers || o->location_trusted || o->upload) { /* an upload follows no redirect */
        dl_perform_hop(url, o, h, r);
        return;
    }
    struct dl_options hop = *o;
    hop.no_follow = 1;
    char *cur = strdup(url);
    for (long hops = 0; cur; hops++) {
        hop.headers = same_origin(url, cur) ? o->headers : NULL;
        dl_perform_hop(cur, &hop, h, r);
        if (!r->redirect_url)
            break;
        if (o->max_redirects >= 0 && hops >= o->max_redirects) {
            result_fail(r, RESULT_ERR_REDIRECT, "redirect loop: more than %ld redirects", o->max_redirects);
            break;
        }
        if (h && h->stop && *h->stop)
            break;
        free(cur);
        cur = r->redirect_url;
        r->redirect_url = NULL;
        result_reset(r);
    }
    if (!cur)
        result_fail(r, RESULT_ERR_OTHER, "out of memory");
    free(cur);
}
