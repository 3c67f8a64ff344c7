/* cb_header: libcurl's header callback. Tracks the latest response (a redirect's headers
 * come before the final ones): status line, end of headers (start of wget's averaging
 * window), Content-Length, and every X-Debit-* header, the server's configuration. */
#include "xfer.h"

#include "escape.h"
#include "sys.h"
#include "tls_info.h"
#include "wire.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static size_t trim_len(const char *p, size_t n)
{
    while (n > 0 && (p[n - 1] == '\r' || p[n - 1] == '\n' || p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    return n;
}

/* src as a JSON string: exact when it is valid UTF-8 (JSON outputs must hold what the
 * server sent, control characters included: jansson writes them as \u001b), else its
 * escape.h text (\xHH), since jansson refuses invalid UTF-8 and the value would be lost.
 * New reference, NULL only when out of memory. */
static json_t *text_json(const char *src)
{
    json_t *j = json_string(src);
    if (j)
        return j;
    char *e = escape_dup(src);
    j = e ? json_string(e) : NULL;
    free(e);
    return j;
}

static void status_line(struct xfer *x, const char *p, size_t n)
{
    /* "HTTP/1.1 404 Not Found" */
    char line[256];
    size_t l = n < sizeof line - 1 ? n : sizeof line - 1;
    memcpy(line, p, l);
    line[l] = 0;
    char *sp = strchr(line, ' ');
    if (!sp)
        return;
    x->status = strtol(sp + 1, NULL, 10);
    char *sp2 = strchr(sp + 1, ' ');
    snprintf(x->reason, sizeof x->reason, "%s", sp2 ? sp2 + 1 : "");
    /* The reason phrase ends up in the run's error, a JSON string: valid UTF-8 or escaped. */
    json_t *ok = json_string(x->reason);
    if (!ok) {
        char tmp[sizeof x->reason];
        escape_text(tmp, sizeof tmp, x->reason);
        memcpy(x->reason, tmp, sizeof tmp);
    }
    json_decref(ok);
    x->expected = -1;
    x->content_type[0] = 0;
    x->content_encoding[0] = 0;
    /* this response's connection (a redirect may have moved to another, or to https) */
    tls_info_get(x->curl, x->tls_version, sizeof x->tls_version, x->tls_cipher, sizeof x->tls_cipher);
    json_object_clear(x->debit_headers);
}

static void header_line(struct xfer *x, const char *p, size_t n)
{
    const char *colon = memchr(p, ':', n);
    if (!colon)
        return;
    size_t klen = (size_t)(colon - p);
    const char *v = colon + 1;
    size_t vlen = n - klen - 1;
    while (vlen > 0 && (*v == ' ' || *v == '\t')) {
        v++;
        vlen--;
    }
    if (klen == 14 && strncasecmp(p, "Content-Length", 14) == 0) {
        char num[32];
        size_t l = vlen < sizeof num - 1 ? vlen : sizeof num - 1;
        memcpy(num, v, l);
        num[l] = 0;
        char *end;
        long long cl = strtoll(num, &end, 10);
        if (end != num && *end == 0 && cl >= 0)
            x->expected = cl;
    } else if (klen == 12 && strncasecmp(p, "Content-Type", 12) == 0) {
        size_t l = vlen < sizeof x->content_type - 1 ? vlen : sizeof x->content_type - 1;
        memcpy(x->content_type, v, l);
        x->content_type[l] = 0;
    } else if (klen == 16 && strncasecmp(p, "Content-Encoding", 16) == 0) {
        size_t l = vlen < sizeof x->content_encoding - 1 ? vlen : sizeof x->content_encoding - 1;
        memcpy(x->content_encoding, v, l);
        while (l > 0 && (x->content_encoding[l - 1] == ' ' || x->content_encoding[l - 1] == '\t'))
            l--;
        x->content_encoding[l] = 0;
    } else if (klen > strlen(WIRE_HEADER_PREFIX) && strncasecmp(p, WIRE_HEADER_PREFIX, strlen(WIRE_HEADER_PREFIX)) == 0) {
        char key[128], val[1024];
        size_t kl = klen < sizeof key - 1 ? klen : sizeof key - 1;
        size_t vl = vlen < sizeof val - 1 ? vlen : sizeof val - 1;
        /* Canonical case: "X-Debit-Offload" whatever the server wrote. */
        for (size_t i = 0; i < kl; i++) {
            int first = i == 0 || p[i - 1] == '-';
            key[i] = (char)(first ? toupper((unsigned char)p[i]) : tolower((unsigned char)p[i]));
        }
        key[kl] = 0;
        memcpy(val, v, vl);
        val[vl] = 0;
        json_object_set_new(x->debit_headers, key, text_json(val));
    }
}

size_t cb_header(char *ptr, size_t size, size_t nitems, void *ud)
{
    struct xfer *x = ud;
    size_t n = size * nitems;
    double now = sys_mono_s();
    x->t_last_data = now;
    x->rx_bytes += n; /* a server trickling header lines is trickling too */
    size_t l = trim_len(ptr, n);
    if (l == 0) {
        x->t_hdr_end = now; /* blank line: this block's headers are complete */
        if (!x->opt->upload) /* the body's bytes start here (the last block's) */
            sock_bytes_begin(&x->ks, x->sock, 0, now, x->bytes);
    } else if (l > 5 && strncmp(ptr, "HTTP/", 5) == 0) {
        x->t_response = now; /* an upload's end: the server answers once it has the body */
        if (x->opt->upload && x->t_body_start > 0 && !x->ks.done) {
            /* its ACK covers every byte of the body: the kernel's last span */
            sock_bytes_poll(&x->ks, now, x->bytes, 1, x->agg);
            x->ks.done = 1;
        }
        status_line(x, ptr, l);
    } else {
        header_line(x, ptr, l);
    }
    return n;
}
