/* telemetry: see telemetry.h. */
#include "telemetry.h"

#include <arpa/inet.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct row {
    uint64_t id; /* 0: free */
    double wall;
    int have_owner;
    struct peer owner;
    char *f[TELEMETRY_N_FIELDS]; /* telemetry_report's order */
    size_t bytes;
};

struct telemetry {
    pthread_mutex_t lock;
    struct row *rows;
    unsigned keep;
    size_t max_bytes, bytes;
    uint64_t next; /* the next ID; rows[(id - 1) % keep] holds ID */
};

static const char *const names[TELEMETRY_N_FIELDS] = {"ip", "ispinfo", "extra", "ua", "lang",
                                                      "dl", "ul",      "ping",  "jitter", "log"};

struct telemetry *telemetry_new(unsigned keep, size_t max_bytes)
{
    struct telemetry *t = calloc(1, sizeof *t);
    if (!t || !(t->rows = calloc(keep ? keep : 1, sizeof *t->rows))) {
        free(t);
        return NULL;
    }
    pthread_mutex_init(&t->lock, NULL);
    t->keep = keep ? keep : 1;
    t->max_bytes = max_bytes;
    t->next = 1;
    return t;
}

static void row_clear(struct telemetry *t, struct row *r)
{
    for (int i = 0; i < TELEMETRY_N_FIELDS; i++)
        free(r->f[i]);
    t->bytes -= r->bytes;
    memset(r, 0, sizeof *r);
}

void telemetry_free(struct telemetry *t)
{
    if (!t)
        return;
    for (unsigned i = 0; i < t->keep; i++)
        row_clear(t, &t->rows[i]);
    pthread_mutex_destroy(&t->lock);
    free(t->rows);
    free(t);
}

static const char **field(const struct telemetry_report *rep, int i)
{
    const char **f[TELEMETRY_N_FIELDS] = {(const char **)&rep->ip,   (const char **)&rep->ispinfo,
                                          (const char **)&rep->extra, (const char **)&rep->ua,
                                          (const char **)&rep->lang, (const char **)&rep->dl,
                                          (const char **)&rep->ul,   (const char **)&rep->ping,
                                          (const char **)&rep->jitter, (const char **)&rep->log};
    return f[i];
}

uint64_t telemetry_add(struct telemetry *t, const struct telemetry_report *rep, const struct peer *owner,
                       double wall, int redact)
{
    struct row n = {.wall = wall};
    for (int i = 0; i < TELEMETRY_N_FIELDS; i++) {
        const char *v = *field(rep, i);
        v = v ? v : "";
        /* telemetry.php: the address becomes 0.0.0.0, ispinfo and log are redacted */
        if (redact && i == 0)
            n.f[i] = strdup("0.0.0.0");
        else if (redact && (i == 1 || i == 9))
            n.f[i] = telemetry_redact(v);
        else
            n.f[i] = strdup(v);
        if (!n.f[i])
            goto fail;
        n.bytes += strlen(n.f[i]) + 1;
    }
    if (owner) {
        n.have_owner = 1;
        n.owner = *owner;
    }
    pthread_mutex_lock(&t->lock);
    if (n.bytes > t->max_bytes) {
        pthread_mutex_unlock(&t->lock);
        goto fail;
    }
    n.id = t->next++;
    row_clear(t, &t->rows[(n.id - 1) % t->keep]); /* the oldest, when the ring is full */
    /* then the oldest others until it fits the byte budget */
    for (uint64_t old = n.id > t->keep ? n.id - t->keep + 1 : 1; t->bytes + n.bytes > t->max_bytes; old++)
        row_clear(t, &t->rows[(old - 1) % t->keep]);
    t->rows[(n.id - 1) % t->keep] = n;
    t->bytes += n.bytes;
    pthread_mutex_unlock(&t->lock);
    return n.id;
fail:
    for (int i = 0; i < TELEMETRY_N_FIELDS; i++)
        free(n.f[i]);
    return 0;
}

json_t *telemetry_get(struct telemetry *t, uint64_t id, const struct peer *reader)
{
    if (!t || !id)
        return NULL;
    json_t *j = NULL;
    pthread_mutex_lock(&t->lock);
    const struct row *r = &t->rows[(id - 1) % t->keep];
    if (r->id == id && (!reader || (r->have_owner && peer_same(&r->owner, reader)))) {
        char when[32];
        time_t s = (time_t)r->wall;
        struct tm tm;
        gmtime_r(&s, &tm);
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm); /* SQLite's CURRENT_TIMESTAMP (UTC) */
        j = json_pack("{s:I, s:s}", "id", (json_int_t)r->id, "timestamp", when);
        for (int i = 0; j && i < TELEMETRY_N_FIELDS; i++) {
            /* UTF-8: the caller checked (http_telemetry.c refuses other text) */
            json_object_set_new(j, names[i], json_string(r->f[i]));
        }
    }
    pthread_mutex_unlock(&t->lock);
    return j;
}

const char *telemetry_format(const char *text, char *buf, size_t len)
{
    double d = text ? strtod(text, NULL) : 0; /* PHP's (float): the leading number, else 0 */
    if (!isfinite(d))
        d = 0;
    snprintf(buf, len, "%.*f", d < 10 ? 2 : d < 100 ? 1 : 0, d);
    return buf;
}

const char *telemetry_isp(const char *ispinfo, char *buf, size_t len)
{
    buf[0] = 0;
    json_t *j = ispinfo ? json_loads(ispinfo, JSON_DECODE_ANY, NULL) : NULL;
    const char *ps = json_string_value(json_object_get(j, "processedString"));
    const char *dash = ps ? strchr(ps, '-') : NULL;
    if (dash) {
        const char *from = strlen(dash) >= 2 ? dash + 2 : dash + strlen(dash);
        const char *par = strrchr(from, '(');
        size_t n = par ? (size_t)(par - from) : strlen(from);
        snprintf(buf, len, "%.*s", (int)n, from);
    }
    json_decref(j);
    return buf;
}

/* The longest run of address characters at S (hex digits, ':' and '.'; SIX: ':' allowed). */
static size_t run_len(const char *s, int six)
{
    size_t n = 0;
    while (s[n] && (strchr("0123456789.", s[n]) || (six && strchr("abcdefABCDEF:", s[n]))))
        n++;
    return n;
}

/* Replace in S the runs of address characters that parse as an address of FAMILY (less a
 * sentence's full stops after it) with "0.0.0.0": a new string. */
static char *redact_family(const char *s, int family)
{
    size_t len = strlen(s);
    char *out = malloc(len * 7 + 1), *o = out; /* "::" (2) -> "0.0.0.0" (7): at most 7x */
    if (!out)
        return NULL;
    for (size_t i = 0; i < len;) {
        size_t n = run_len(s + i, family == AF_INET6), m = n;
        if (!n) {
            *o++ = s[i++];
            continue;
        }
        while (m && s[i + m - 1] == '.')
            m--;
        char cand[64];
        unsigned char a[16];
        if (m && m < sizeof cand) {
            memcpy(cand, s + i, m);
            cand[m] = 0;
        }
        if (m && m < sizeof cand && inet_pton(family, cand, a) == 1) {
            memcpy(o, "0.0.0.0", 7);
            o += 7;
            memcpy(o, s + i + m, n - m);
            o += n - m;
        } else {
            memcpy(o, s + i, n);
            o += n;
        }
        i += n;
    }
    *o = 0;
    return out;
}

char *telemetry_redact(const char *s)
{
    char *a = redact_family(s, AF_INET6); /* first: "::ffff:1.2.3.4" is one address */
    char *b = a ? redact_family(a, AF_INET) : NULL;
    free(a);
    if (!b)
        return NULL;
    /* "hostname":"..." (a JSON string: \" inside) -> "hostname":"REDACTED" */
    static const char key[] = "\"hostname\":\"";
    size_t len = strlen(b), k = sizeof key - 1;
    char *out = malloc(len + 1 + 8 * (len / k + 1)), *o = out;
    if (!out) {
        free(b);
        return NULL;
    }
    for (const char *p = b; *p;) {
        const char *h = strstr(p, key);
        if (!h) {
            o = stpcpy(o, p);
            break;
        }
        memcpy(o, p, (size_t)(h - p) + k);
        o += (h - p) + k;
        const char *v = h + k;
        while (*v && *v != '"')
            v += v[0] == '\\' && v[1] ? 2 : 1;
        if (*v != '"') { /* unterminated: as the pattern, no match; keep the rest */
            o = stpcpy(o, h + k);
            break;
        }
        o = stpcpy(o, "REDACTED\"");
        p = v + 1;
    }
    *o = 0;
    free(b);
    return out;
}

json_t *telemetry_public_json(const json_t *row)
{
    char dl[64], ul[64], ping[64], jitter[64], isp[512];
    const char *ts = json_string_value(json_object_get(row, "timestamp"));
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "timestamp", ts ? ts : "", "download",
                     telemetry_format(json_string_value(json_object_get(row, "dl")), dl, sizeof dl), "upload",
                     telemetry_format(json_string_value(json_object_get(row, "ul")), ul, sizeof ul), "ping",
                     telemetry_format(json_string_value(json_object_get(row, "ping")), ping, sizeof ping),
                     "jitter", telemetry_format(json_string_value(json_object_get(row, "jitter")), jitter, sizeof jitter),
                     "ispinfo", telemetry_isp(json_string_value(json_object_get(row, "ispinfo")), isp, sizeof isp));
}
