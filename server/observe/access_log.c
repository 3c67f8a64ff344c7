/* access_log: see access_log.h. */
#include "access_log.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "sys.h"

static const char *const format_names[] = {[ACCESS_FORMAT_JSON] = "json", [ACCESS_FORMAT_COMBINED] = "combined"};

int access_log_parse_format(const char *name, enum access_format *out, char *err, size_t errlen)
{
    for (size_t i = 0; i < sizeof format_names / sizeof format_names[0]; i++)
        if (name && strcmp(name, format_names[i]) == 0) {
            *out = (enum access_format)i;
            return 0;
        }
    return err_set(err, errlen, "unknown format \"%s\" (expected json or combined)", name ? name : "");
}

const char *access_log_format_name(enum access_format fmt)
{
    return (unsigned)fmt < sizeof format_names / sizeof format_names[0] ? format_names[fmt] : "json";
}

/* Length of the valid UTF-8 sequence at S (N bytes left), or 0 if invalid (RFC 3629: no
 * overlongs, no surrogates, nothing above U+10FFFF). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80)
        return 1;
    size_t len = s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3 : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
    if (!len || len > n)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) || (s[0] == 0xf0 && s[1] < 0x90) ||
        (s[0] == 0xf4 && s[1] > 0x8f))
        return 0;
    return len;
}

/* S as a JSON string: valid UTF-8 as is (jansson escapes quotes and control characters),
 * every invalid byte as the four characters \xHH. NULL stays JSON null. */
static json_t *json_text(const char *s)
{
    if (!s)
        return json_null();
    size_t n = strlen(s);
    char *buf = malloc(n * 4 + 1);
    if (!buf)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        size_t k = utf8_len((const unsigned char *)s + i, n - i);
        if (k) {
            memcpy(buf + o, s + i, k);
            o += k;
            i += k;
        } else {
            o += (size_t)snprintf(buf + o, 5, "\\x%02X", (unsigned char)s[i++]);
        }
    }
    json_t *j = json_stringn(buf, o);
    free(buf);
    return j;
}

static char *line_json(const struct access_entry *e)
{
    /* a download keeps its transfer record's keys (id, state, path, status, bytes, first,
     * length, started, duration_s, remote, listener, tcp) and gains the request's */
    json_t *o = e->transfer ? json_copy(e->transfer) : json_object();
    if (!o)
        return NULL;
    char when[48], remote[80];
    sys_iso_time(e->time, when, sizeof when); /* as transfers' "started" */
    const char *addr = e->addr ? e->addr : "";
    snprintf(remote, sizeof remote, strchr(addr, ':') ? "[%s]:%u" : "%s:%u", addr, e->port);
    json_object_set_new(o, "time", json_string(when));
    json_object_set_new(o, "addr", json_text(addr));
    json_object_set_new(o, "port", json_integer(e->port));
    json_object_set_new(o, "method", json_text(e->method));
    json_object_set_new(o, "target", json_text(e->target));
    json_object_set_new(o, "version", json_text(e->version));
    json_object_set_new(o, "user_agent", json_text(e->user_agent));
    if (e->referer)
        json_object_set_new(o, "referer", json_text(e->referer));
    if (!e->transfer) { /* the download's own figures (acked bytes, its duration) stay */
        json_object_set_new(o, "path", json_text(e->path));
        json_object_set_new(o, "status", json_integer(e->status));
        json_object_set_new(o, "bytes", json_integer((json_int_t)e->bytes));
        json_object_set_new(o, "duration_s", json_real(e->duration_s));
        json_object_set_new(o, "remote", json_string(remote));
        json_object_set_new(o, "listener", json_text(e->listener));
    }
    if (e->received)
        json_object_set_new(o, "received", json_integer((json_int_t)e->received));
    if (e->telemetry)
        json_object_set(o, "telemetry", e->telemetry);
    char *text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(9));
    json_decref(o);
    if (!text)
        return NULL;
    size_t n = strlen(text);
    char *line = realloc(text, n + 2);
    if (!line) {
        free(text);
        return NULL;
    }
    memcpy(line + n, "\n", 2);
    return line;
}

/* S for a quoted field of the combined format, as nginx writes it: '"', '\\', control and
 * non-ASCII bytes as \xHH; NULL or "" as "-". */
static void put_quoted(FILE *f, const char *s)
{
    if (!s || !s[0]) {
        fputc('-', f);
        return;
    }
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p == '"' || *p == '\\' || *p < 0x20 || *p >= 0x7f)
            fprintf(f, "\\x%02X", *p);
        else
            fputc(*p, f);
}

static char *line_combined(const struct access_entry *e)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    time_t sec = (time_t)e->time;
    struct tm tm;
    gmtime_r(&sec, &tm);
    char when[40];
    strftime(when, sizeof when, "%d/%b/%Y:%H:%M:%S +0000", &tm);
    /* the address is not quoted in the format: only address characters may appear */
    const char *addr = e->addr && e->addr[0] && strspn(e->addr, "0123456789abcdefABCDEF.:") == strlen(e->addr)
                           ? e->addr
                           : "-";
    fprintf(f, "%s - - [%s] \"", addr, when);
    put_quoted(f, e->method);
    fputc(' ', f);
    put_quoted(f, e->target);
    fputc(' ', f);
    put_quoted(f, e->version);
    fprintf(f, "\" %03u %" PRIu64 " \"", e->status, e->bytes);
    put_quoted(f, e->referer);
    fputs("\" \"", f);
    put_quoted(f, e->user_agent);
    fputs("\"\n", f);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

char *access_log_line(enum access_format fmt, const struct access_entry *e)
{
    return fmt == ACCESS_FORMAT_COMBINED ? line_combined(e) : line_json(e);
}
