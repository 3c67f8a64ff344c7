/* http_strict: what libmicrohttpd 0.9.75 accepts and a strict server must not (RFC 9112
 * section 6.3 and 3.2, RFC 9110 section 5.6.2): each would let a proxy in front of debitd
 * and debitd disagree about where a request ends or which file it names. */
#include "http_strict.h"

#include <string.h>
#include <strings.h>

#include "err.h"

static enum http_strict_result bad(char *err, size_t errlen, const char *why)
{
    err_set(err, errlen, "%s", why);
    return HTTP_STRICT_BAD_REQUEST;
}

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

enum http_strict_result http_strict_check_target(const char *target, size_t len, char *err, size_t errlen)
{
    if (!target)
        return HTTP_STRICT_OK;
    int in_query = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)target[i];
        /* bytes >= 0x80 pass: UTF-8 paths are common and nginx serves them too */
        if (c <= 0x20 || c == 0x7f)
            return bad(err, errlen, "space or control character in the request target");
        if (c == '?')
            in_query = 1;
        if (c != '%')
            continue;
        int hi = i + 2 < len ? hexval((unsigned char)target[i + 1]) : -1;
        int lo = hi >= 0 ? hexval((unsigned char)target[i + 2]) : -1;
        if (lo < 0)
            return bad(err, errlen, "malformed %-escape in the request target");
        int d = hi * 16 + lo;
        i += 2;
        /* libmicrohttpd decodes path and query before the handler sees them: a NUL ends the
         * string there (another file), a '/' would create a segment the client's proxy did
         * not route on */
        if (d == 0)
            return bad(err, errlen, "encoded NUL (%00) in the request target");
        if (in_query)
            continue;
        if (d == '/')
            return bad(err, errlen, "encoded '/' (%2F) in the path");
        if (d < 0x20 || d == 0x7f)
            return bad(err, errlen, "encoded control character in the path");
    }
    return HTTP_STRICT_OK;
}

/* RFC 9110 tchar */
static int is_tchar(unsigned char c)
{
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return 1;
    return c && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static int name_is(const struct http_strict_field *f, const char *name)
{
    size_t n = strlen(name);
    return f->name_len == n && strncasecmp(f->name, name, n) == 0;
}

/* VALUE without trailing optional whitespace (RFC 9110 OWS) */
static size_t trimmed_len(const struct http_strict_field *f)
{
    size_t n = f->value_len;
    while (n > 0 && (f->value[n - 1] == ' ' || f->value[n - 1] == '\t'))
        n--;
    return n;
}

static int all_digits(const char *s, size_t n)
{
    if (n == 0 || n > 19) /* 19 digits always fit in 64 bits */
        return 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return 0;
    return 1;
}

/* A reg-name, IPv4 or [IPv6] with an optional port: the characters RFC 3986 allows there.
 * Anything else (a '/', '@', '\', whitespace) is a Host the routing layer of a proxy and
 * debitd may read differently. */
static int host_ok(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80 ||
              strchr("-._~!$&'()*+,;=:[]%", c)))
            return 0;
    }
    return 1;
}

/* ASCII-only caseless equality of S (N bytes) and the lowercase literal LIT, as
 * libmicrohttpd's MHD_str_equal_caseless_ compares (no locale: strncasecmp would follow it) */
static int ascii_caseless_is(const char *s, size_t n, const char *lit)
{
    if (n != strlen(lit))
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c - 'A' + 'a');
        if (c != (unsigned char)lit[i])
            return 0;
    }
    return 1;
}

/* Transfer-Encoding: libmicrohttpd 0.9.75 decodes a chunked body only when the value it
 * holds (leading blanks skipped, trailing ones kept) equals "chunked" ignoring ASCII case
 * (connection.c, parse_connection_headers: MHD_str_equal_caseless_); with any other value
 * it reads no body at all, so a proxy that saw chunked (or any) framing and debitd would
 * disagree on where the next request starts. Anything but that exact value is refused with
 * 400, as the other framing conflicts (issue 31); the reason names the class: another coding
 * (gzip, "gzip, chunked", identity), chunked with trailing blanks or a parameter, chunked
 * twice, an empty or malformed element (RFC 9112 6.1 and 7). */
static enum http_strict_result check_te(const struct http_strict_field *te, char *err, size_t errlen)
{
    if (ascii_caseless_is(te->value, te->value_len, "chunked"))
        return HTTP_STRICT_OK;
    const char *p = te->value, *end = te->value + te->value_len;
    int chunked = 0, other = 0;
    while (p <= end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *e = comma ? comma : end;
        const char *semi = memchr(p, ';', (size_t)(e - p));
        const char *t = p, *tend = semi ? semi : e;
        while (t < tend && (*t == ' ' || *t == '\t'))
            t++;
        while (tend > t && (tend[-1] == ' ' || tend[-1] == '\t'))
            tend--;
        if (t == tend)
            return bad(err, errlen, "Transfer-Encoding with an empty coding");
        for (const char *k = t; k < tend; k++)
            if (!is_tchar((unsigned char)*k))
                return bad(err, errlen, "Transfer-Encoding with a malformed coding");
        if (ascii_caseless_is(t, (size_t)(tend - t), "chunked")) {
            if (semi)
                return bad(err, errlen, "Transfer-Encoding chunked with a parameter");
            chunked++;
        } else {
            other++;
        }
        p = e + 1;
    }
    if (other)
        return bad(err, errlen, "Transfer-Encoding other than chunked");
    if (chunked > 1)
        return bad(err, errlen, "Transfer-Encoding chunked more than once");
    return bad(err, errlen, "Transfer-Encoding chunked with blanks libmicrohttpd does not decode");
}

enum http_strict_result http_strict_check_fields(const struct http_strict_field *f, size_t n, int http11,
                                                 char *err, size_t errlen)
{
    const struct http_strict_field *cl = NULL, *te = NULL, *host = NULL;
    for (size_t i = 0; i < n; i++) {
        if (f[i].name_len == 0)
            return bad(err, errlen, "header line with an empty name");
        for (size_t k = 0; k < f[i].name_len; k++) {
            unsigned char c = (unsigned char)f[i].name[k];
            if (c == ' ' || c == '\t')
                return bad(err, errlen, "whitespace between a header name and its colon");
            if (!is_tchar(c))
                return bad(err, errlen, "invalid character in a header name");
        }
        for (size_t k = 0; k < f[i].value_len; k++) {
            unsigned char c = (unsigned char)f[i].value[k];
            if ((c < 0x20 && c != '\t') || c == 0x7f)
                return bad(err, errlen, "control character in a header value");
        }
        const struct http_strict_field **slot = name_is(&f[i], "Content-Length")      ? &cl
                                                : name_is(&f[i], "Transfer-Encoding") ? &te
                                                : name_is(&f[i], "Host")              ? &host
                                                                                      : NULL;
        if (!slot)
            continue;
        if (*slot) /* even two equal values: nginx refuses them too, and it is simpler */
            return bad(err, errlen, slot == &cl   ? "Content-Length repeated"
                                    : slot == &te ? "Transfer-Encoding repeated"
                                                  : "Host repeated");
        *slot = &f[i];
    }
    if (cl && !all_digits(cl->value, trimmed_len(cl)))
        return bad(err, errlen, "Content-Length is not a decimal number");
    if (te) {
        if (cl)
            return bad(err, errlen, "both Content-Length and Transfer-Encoding");
        if (!http11)
            return bad(err, errlen, "Transfer-Encoding in an HTTP/1.0 request");
        enum http_strict_result r = check_te(te, err, errlen);
        if (r != HTTP_STRICT_OK)
            return r;
    }
    if (http11 && !host)
        return bad(err, errlen, "HTTP/1.1 request without Host");
    if (host && ((http11 && trimmed_len(host) == 0) || !host_ok(host->value, trimmed_len(host))))
        return bad(err, errlen, "malformed Host");
    return HTTP_STRICT_OK;
}

unsigned http_strict_status(enum http_strict_result r)
{
    switch (r) {
    case HTTP_STRICT_OK:
        return 0;
    case HTTP_STRICT_BAD_REQUEST:
        return 400;
    }
    return 400;
}
