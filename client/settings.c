/* settings: see settings.h. */
#include "settings.h"
#include "store.h"

#include <ctype.h>
#include <errno.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "err.h"
#include "escape.h"
#include "lossrate.h"
#include "units.h"
#include "urlkind.h"
#include "writeout.h"

struct settings *settings_new(void)
{
    struct settings *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->runs = 5;
    s->order = PLAN_ORDER_ALTERNATE;
    s->format = REPORT_TABLE;
    s->progress = -1;
    dl_options_defaults(&s->dl);
    return s;
}

void settings_free(struct settings *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nservers; i++) {
        free(s->server_own[i].name);
        free(s->server_own[i].url);
    }
    curl_slist_free_all(s->dl.resolve);
    curl_slist_free_all(s->dl.connect_to);
    free(s->dl_own.interface);
    free(s->dl_own.local_address);
    free(s->dl_own.user_agent);
    free(s->dl_own.cacert);
    curl_slist_free_all(s->dl.headers);
    free(s->output);
    free(s->jsonl);
    free(s->plot);
    free(s->delay_dev);
    free(s->write_out);
    free(s->db);
    free(s->vantage);
    free(s);
}

/* "'VALUE': why", the form every setter fails with. */
/* The value as the user gave it, escaped: a control byte (a line break in -H) must not
 * reach the terminal raw in an error message. */
static int bad(char *err, size_t errlen, const char *value, const char *why)
{
    char v[512];
    escape_text(v, sizeof v, value);
    return err_set(err, errlen, "'%s': %s", v, why);
}

/* Replace an owned string (a setting given twice keeps the last value). */
static int set_string(char **dst, const char *value, char *err, size_t errlen)
{
    char *copy = strdup(value);
    if (!copy)
        return err_set(err, errlen, "out of memory");
    free(*dst);
    *dst = copy;
    return 0;
}

static int units_bad(enum units_err e, const char *value, const char *hint, char *err, size_t errlen)
{
    char v[512];
    escape_text(v, sizeof v, value);
    return err_set(err, errlen, "'%s': %s (%s)", v, units_strerror(e), hint);
}

static int parse_seconds(const char *value, int positive, double *out, char *err, size_t errlen)
{
    uint64_t us;
    enum units_err e = units_parse_duration(value, &us);
    if (e != UNITS_OK)
        return units_bad(e, value, "expected a duration such as 1.5, 500ms or 2s", err, errlen);
    if (positive && us == 0)
        return bad(err, errlen, value, "must be more than 0");
    *out = us / 1e6;
    return 0;
}

static int parse_on_off(const char *value, int *out, char *err, size_t errlen)
{
    if (strcmp(value, "on") == 0)
        *out = 1;
    else if (strcmp(value, "off") == 0)
        *out = 0;
    else
        return bad(err, errlen, value, "expected on or off");
    return 0;
}

int settings_check_ifname(const char *name, char *err, size_t errlen)
{
    if (!*name)
        return err_set(err, errlen, "empty interface name");
    if (strlen(name) >= IF_NAMESIZE)
        return bad(err, errlen, name, "interface name longer than 15 characters");
    if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
        return bad(err, errlen, name, "not an interface name");
    for (const char *p = name; *p; p++)
        if (*p == '/' || *p == ':' || isspace((unsigned char)*p))
            return bad(err, errlen, name, "an interface name has no '/', ':' or white space");
    return 0;
}

int settings_parse_delay(const char *value, uint64_t *usec, char *err, size_t errlen)
{
    enum units_err e = units_parse_duration(value, usec);
    if (e != UNITS_OK)
        return units_bad(e, value, "expected a duration such as 10ms", err, errlen);
    return 0;
}

static int name_taken(const struct settings *s, const char *name)
{
    for (size_t i = 0; i < s->nservers; i++)
        if (strcmp(s->servers[i].name, name) == 0)
            return 1;
    return 0;
}

/* A server's URL as the parts its default name is made of. */
struct name_parts {
    char host[256], port[16], file[256];
};

static void name_parts_of(const char *url, struct name_parts *p)
{
    *p = (struct name_parts){"server", "", ""};
    CURLU *u = curl_url();
    char *host = NULL, *port = NULL, *path = NULL;
    if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK) {
        curl_url_get(u, CURLUPART_HOST, &host, 0);
        curl_url_get(u, CURLUPART_PORT, &port, 0); /* as written: none for the scheme's own */
        curl_url_get(u, CURLUPART_PATH, &path, 0);
    }
    if (host)
        snprintf(p->host, sizeof p->host, "%s", host);
    if (port)
        snprintf(p->port, sizeof p->port, "%s", port);
    const char *slash = path ? strrchr(path, '/') : NULL;
    snprintf(p->file, sizeof p->file, "%s", slash ? slash + 1 : path ? path : "");
    curl_free(host);
    curl_free(port);
    curl_free(path);
    curl_url_cleanup(u);
}

/* The default NAME of every server added without one, recomputed as servers are added
 * so that it depends on all of them: the host alone when no other server has it, else
 * host:port, else host:port/FILE, and #2, #3 ... only if even that repeats (two URLs
 * that differ by their query string). */
static int name_defaults(struct settings *s, char *err, size_t errlen)
{
    struct name_parts *p = calloc(s->nservers ? s->nservers : 1, sizeof *p);
    if (!p)
        return err_set(err, errlen, "out of memory");
    for (size_t i = 0; i < s->nservers; i++)
        name_parts_of(s->servers[i].url, &p[i]);
    for (size_t i = 0; i < s->nservers; i++) {
        if (s->named[i])
            continue;
        size_t same_host = 0, same_port = 0, same_file = 0;
        for (size_t j = 0; j < s->nservers; j++)
            if (!s->named[j] && strcmp(p[i].host, p[j].host) == 0) {
                same_host++;
                if (strcmp(p[i].port, p[j].port) == 0) {
                    same_port++;
                    same_file += strcmp(p[i].file, p[j].file) == 0;
                }
            }
        char name[600];
        const char *colon = p[i].port[0] ? ":" : "";
        /* the twins of --families differ by their family only: compare hosts alone */
        if (s->servers[i].family) {
            same_host /= 2;
            same_port /= 2;
            same_file /= 2;
        }
        /* The same URL every time (the same server measured twice): host, host#2 ... */
        if (same_host == 1 || same_file == same_host)
            snprintf(name, sizeof name, "%s", p[i].host);
        else if (same_port == 1)
            snprintf(name, sizeof name, "%s%s%s", p[i].host, colon, p[i].port);
        else
            snprintf(name, sizeof name, "%s%s%s/%s", p[i].host, colon, p[i].port, p[i].file);
        /* a speed-test endpoint says so (the JSON's "kind"), a --families twin its family */
        enum url_kind kind = urlkind_of(s->servers[i].url);
        if (kind != URL_KIND_FILE)
            snprintf(name + strlen(name), sizeof name - strlen(name), " %s", urlkind_name(kind));
        if (s->servers[i].family)
            snprintf(name + strlen(name), sizeof name - strlen(name), " IPv%d", s->servers[i].family);
        /* Unique among the names before it (given or default) and every given one. */
        size_t base = strlen(name);
        for (int k = 2; k < 1000; k++) {
            int taken = 0;
            for (size_t j = 0; j < s->nservers && !taken; j++)
                taken = j != i && (j < i || s->named[j]) && strcmp(s->servers[j].name, name) == 0;
            if (!taken)
                break;
            snprintf(name + base, sizeof name - base, "#%d", k);
        }
        char *n = strdup(name);
        if (!n) {
            free(p);
            return err_set(err, errlen, "out of memory");
        }
        free(s->server_own[i].name);
        s->servers[i].name = s->server_own[i].name = n;
    }
    free(p);
    return 0;
}

static int server_push(struct settings *s, const char *name, const char *url, int named, int f);

int settings_add_server(struct settings *s, const char *value, char *err, size_t errlen)
{
    if (s->nservers + (s->families ? 2 : 1) > SETTINGS_MAX_SERVERS)
        return bad(err, errlen, value, "too many servers");
    const char *url = value, *eq = strchr(value, '='), *scheme = strstr(value, "://");
    char name[256] = "";
    /* NAME=URL: the '=' must come before any "://" (a query string may hold '='). */
    if (eq && (!scheme || eq < scheme)) {
        size_t l = (size_t)(eq - value);
        if (l == 0 || l >= sizeof name)
            return bad(err, errlen, value, "empty or too long NAME in NAME=URL");
        memcpy(name, value, l);
        name[l] = 0;
        url = eq + 1;
        scheme = strstr(url, "://");
    }
    if (!scheme)
        return bad(err, errlen, url, "not a URL (expected http://HOST[:PORT]/PATH)");
    int ws = strncasecmp(url, "ws://", 5) == 0 || strncasecmp(url, "wss://", 6) == 0; /* ndt7 */
    if (strncasecmp(url, "http://", 7) != 0 && strncasecmp(url, "https://", 8) != 0 && !ws)
        return bad(err, errlen, url, "only http:// and https:// URLs, and ws:// or wss:// for ndt7, are supported");
    CURLU *u = curl_url();
    /* libcurl 7.88 without WebSocket support parses ws:// only as an unknown scheme */
    CURLUcode uc = u ? curl_url_set(u, CURLUPART_URL, url, ws ? CURLU_NON_SUPPORT_SCHEME : 0) : CURLUE_OUT_OF_MEMORY;
    if (uc != CURLUE_OK) {
        curl_url_cleanup(u);
        return err_set(err, errlen, "'%s': not a valid URL (%s)", url, curl_url_strerror(uc));
    }
    curl_url_cleanup(u);
    int named = name[0] != 0;
    if (!named)
        snprintf(name, sizeof name, "server"); /* placeholder until name_defaults */
    else if (name_taken(s, name))
        return bad(err, errlen, value, "this NAME is already used by another server");
    if (server_push(s, name, url, named, s->families ? 4 : 0) < 0 ||
        (s->families && server_push(s, name, url, named, 6) < 0))
        return err_set(err, errlen, "out of memory");
    return name_defaults(s, err, errlen);
}

/* Append server NAME (given: NAMED; a --families twin: " IPvF" added) at URL, over family
 * F (0: any). -1 when out of memory. The caller checked there is room. */
static int server_push(struct settings *s, const char *name, const char *url, int named, int f)
{
    char twin[300];
    snprintf(twin, sizeof twin, named && f ? "%s IPv%d" : "%s", name, f);
    char *n = strdup(twin), *l = strdup(url);
    if (!n || !l) {
        free(n);
        free(l);
        return -1;
    }
    s->named[s->nservers] = named;
    s->server_own[s->nservers].name = n;
    s->server_own[s->nservers].url = l;
    s->servers[s->nservers++] = (struct plan_server){n, l, 0, f};
    return 0;
}

int settings_set_families(struct settings *s, const char *value, char *err, size_t errlen)
{
    (void)value;
    if (s->families)
        return 0;
    if (s->nservers * 2 > SETTINGS_MAX_SERVERS)
        return err_set(err, errlen, "--families: too many servers (at most %d URLs)", SETTINGS_MAX_SERVERS / 2);
    s->families = 1;
    /* the servers already added become twins, in their order */
    size_t n = s->nservers;
    struct plan_server old[SETTINGS_MAX_SERVERS];
    unsigned char named[SETTINGS_MAX_SERVERS];
    memcpy(old, s->servers, n * sizeof *old);
    memcpy(named, s->named, n);
    char *own[SETTINGS_MAX_SERVERS][2];
    for (size_t i = 0; i < n; i++) {
        own[i][0] = s->server_own[i].name;
        own[i][1] = s->server_own[i].url;
    }
    s->nservers = 0;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t up = old[i].upload;
        if (rc == 0 && (server_push(s, old[i].name, old[i].url, named[i], 4) < 0 ||
                        server_push(s, old[i].name, old[i].url, named[i], 6) < 0))
            rc = -1;
        if (rc == 0)
            s->servers[s->nservers - 2].upload = s->servers[s->nservers - 1].upload = up;
        free(own[i][0]);
        free(own[i][1]);
    }
    if (rc < 0)
        return err_set(err, errlen, "out of memory");
    return name_defaults(s, err, errlen);
}

int settings_set_runs(struct settings *s, const char *value, char *err, size_t errlen)
{
    uint64_t v;
    if (units_parse_uint(value, 1, 100000, &v) != UNITS_OK)
        return bad(err, errlen, value, "expected an integer from 1 to 100000");
    s->runs = (unsigned)v;
    return 0;
}

int settings_set_order(struct settings *s, const char *value, char *err, size_t errlen)
{
    if (plan_order_parse(value, &s->order) != 0)
        return bad(err, errlen, value, "expected alternate, sequential or random");
    return 0;
}

int settings_set_seed(struct settings *s, const char *value, char *err, size_t errlen)
{
    uint64_t v;
    if (units_parse_uint(value, 0, UINT64_MAX, &v) != UNITS_OK)
        return bad(err, errlen, value, "expected an unsigned integer");
    s->seed = v;
    s->seed_given = 1;
    return 0;
}

int settings_set_pause(struct settings *s, const char *value, char *err, size_t errlen)
{
    return parse_seconds(value, 0, &s->pause_s, err, errlen);
}

int settings_set_stall(struct settings *s, const char *value, char *err, size_t errlen)
{
    return parse_seconds(value, 1, &s->dl.stall_s, err, errlen);
}

int settings_set_stall_rate(struct settings *s, const char *value, char *err, size_t errlen)
{
    uint64_t bits;
    enum units_err e = units_parse_rate(value, &bits);
    if (e != UNITS_OK)
        return units_bad(e, value, "expected a rate such as 1kB/s or 64kbit, 0: only a complete stop", err, errlen);
    s->dl.stall_rate_Bps = bits / 8.0;
    s->stall_rate_given = 1;
    return 0;
}

int settings_set_bottleneck(struct settings *s, const char *value, char *err, size_t errlen)
{
    uint64_t bits;
    enum units_err e = units_parse_rate(value, &bits);
    if (e == UNITS_OK && bits == 0)
        return bad(err, errlen, value, "must be more than 0 (leave it out when unknown)");
    if (e != UNITS_OK)
        return units_bad(e, value, "expected the path's rate, such as 1Gbit or 100Mbit", err, errlen);
    s->dl.bottleneck_bps = (double)bits;
    return 0;
}

int settings_set_max_time(struct settings *s, const char *value, char *err, size_t errlen)
{
    return parse_seconds(value, 0, &s->dl.max_time_s, err, errlen); /* 0: no limit */
}

int settings_set_timeout(struct settings *s, const char *value, char *err, size_t errlen)
{
    return parse_seconds(value, 1, &s->dl.connect_timeout_s, err, errlen);
}

int settings_set_max_bytes(struct settings *s, const char *value, char *err, size_t errlen)
{
    uint64_t v;
    enum units_err e = units_parse_size(value, &v);
    if (e != UNITS_OK)
        return units_bad(e, value, "expected a size such as 100MiB or 1GB", err, errlen);
    if (v == 0)
        return bad(err, errlen, value, "must be at least 1 byte");
    s->dl.max_bytes = v;
    return 0;
}

int settings_set_parallel(struct settings *s, const char *value, char *err, size_t errlen)
{
    uint64_t v;
    if (units_parse_uint(value, 1, SETTINGS_MAX_PARALLEL, &v) != UNITS_OK)
        return err_set(err, errlen, "'%s': expected an integer from 1 to %d", value, SETTINGS_MAX_PARALLEL);
    s->dl.parallel = (unsigned)v;
    return 0;
}

int settings_set_split(struct settings *s, const char *value, char *err, size_t errlen)
{
    return parse_on_off(value, &s->dl.split, err, errlen);
}

/* A size, 0 allowed, into *out (untouched on error; hint says what is expected). */
static int parse_size(const char *value, const char *hint, uint64_t *out, char *err, size_t errlen)
{
    uint64_t v;
    enum units_err e = units_parse_size(value, &v);
    if (e != UNITS_OK)
        return units_bad(e, value, hint, err, errlen);
    *out = v;
    return 0;
}

#define UPLOAD_HINT "expected a size such as 100MiB, 0 for a download"

int settings_set_upload(struct settings *s, const char *value, char *err, size_t errlen)
{
    return parse_size(value, UPLOAD_HINT, &s->dl.upload, err, errlen);
}

int settings_set_upload_method(struct settings *s, const char *value, char *err, size_t errlen)
{
    if (strcmp(value, "POST") != 0 && strcmp(value, "PUT") != 0)
        return bad(err, errlen, value, "expected POST or PUT");
    s->dl.upload_put = value[1] == 'U';
    return 0;
}

int settings_set_duration(struct settings *s, const char *value, char *err, size_t errlen)
{
    return parse_seconds(value, 1, &s->dl.duration_s, err, errlen);
}

int settings_set_interval(struct settings *s, const char *value, char *err, size_t errlen)
{
    double v = 0;
    if (parse_seconds(value, 1, &v, err, errlen) != 0)
        return -1;
    if (v < 0.01)
        return bad(err, errlen, value, "must be at least 10ms");
    s->dl.interval_s = v;
    return 0;
}

int settings_set_min_bytes(struct settings *s, const char *value, char *err, size_t errlen)
{
    return parse_size(value, "expected a size such as 1MiB, 0 to accept any body", &s->dl.min_bytes, err, errlen);
}

int settings_set_rcvbuf(struct settings *s, const char *value, char *err, size_t errlen)
{
    uint64_t v;
    if (units_parse_size(value, &v) != UNITS_OK || v < 4096 || v > (1ULL << 30))
        return bad(err, errlen, value, "expected a size from 4KiB to 1GiB, such as 64MiB");
    s->dl.rcvbuf = v;
    return 0;
}

int settings_set_ip_version(struct settings *s, const char *value, char *err, size_t errlen)
{
    if (strcmp(value, "4") != 0 && strcmp(value, "6") != 0)
        return bad(err, errlen, value, "expected 4 or 6");
    s->dl.ip_version = value[0] - '0';
    return 0;
}

/* Position of the n-th colon outside [brackets] (IPv6 addresses), or NULL. */
static const char *nth_colon(const char *s, int n)
{
    int in = 0;
    for (; *s; s++) {
        if (*s == '[')
            in = 1;
        else if (*s == ']')
            in = 0;
        else if (*s == ':' && !in && n-- == 0)
            return s;
    }
    return NULL;
}

/* "HOST:PORT:ADDR" (want_colons 2) or "HOST:PORT:HOST2:PORT2" (3, HOST and HOST2 may be
 * empty as in curl) with a valid port and a non-empty ADDR, appended to *list. */
static int add_host_port(struct curl_slist **list, const char *value, int want_colons, char *err, size_t errlen)
{
    const char *form =
        want_colons == 2 ? "expected HOST:PORT:ADDR" : "expected HOST:PORT:CONNECT-TO-HOST:CONNECT-TO-PORT";
    const char *c1 = nth_colon(value, 0), *c2 = nth_colon(value, 1), *c3 = nth_colon(value, 2);
    if (!c1 || !c2 || (want_colons == 3 && !c3))
        return bad(err, errlen, value, form);
    if (want_colons == 2 && (c1 == value || c2[1] == 0))
        return bad(err, errlen, value, form);
    char port[16];
    size_t l = (size_t)(c2 - c1 - 1);
    if (l >= sizeof port || (l == 0 && want_colons == 2))
        return bad(err, errlen, value, form);
    memcpy(port, c1 + 1, l);
    port[l] = 0;
    uint64_t v;
    if (l > 0 && units_parse_uint(port, 1, 65535, &v) != UNITS_OK)
        return bad(err, errlen, value, "bad port (expected 1..65535)");
    struct curl_slist *n = curl_slist_append(*list, value);
    if (!n)
        return err_set(err, errlen, "out of memory");
    *list = n;
    return 0;
}

int settings_add_resolve(struct settings *s, const char *value, char *err, size_t errlen)
{
    return add_host_port(&s->dl.resolve, value, 2, err, errlen);
}

int settings_add_connect_to(struct settings *s, const char *value, char *err, size_t errlen)
{
    return add_host_port(&s->dl.connect_to, value, 3, err, errlen);
}

static int has_space(const char *v)
{
    for (; *v; v++)
        if (isspace((unsigned char)*v))
            return 1;
    return 0;
}

/* As curl: an interface name, an address or a host name, or "if!DEV" / "host!NAME". */
int settings_set_interface(struct settings *s, const char *value, char *err, size_t errlen)
{
    if (!*value)
        return err_set(err, errlen, "empty interface name");
    if (has_space(value) || strlen(value) > 255)
        return bad(err, errlen, value, "expected an interface name, an address or a host name");
    if (strncmp(value, "if!", 3) == 0 && settings_check_ifname(value + 3, err, errlen) != 0)
        return err_prefix(err, errlen, "'%s'", value);
    if (set_string(&s->dl_own.interface, value, err, errlen) != 0)
        return -1;
    s->dl.interface = s->dl_own.interface;
    return 0;
}

int settings_set_local_address(struct settings *s, const char *value, char *err, size_t errlen)
{
    if (!*value)
        return err_set(err, errlen, "empty address");
    if (has_space(value) || strlen(value) > 255)
        return bad(err, errlen, value, "expected an address or a host name");
    if (set_string(&s->dl_own.local_address, value, err, errlen) != 0)
        return -1;
    s->dl.local_address = s->dl_own.local_address;
    return 0;
}

int settings_set_user_agent(struct settings *s, const char *value, char *err, size_t errlen)
{
    /* A line break would end the header and start another one. */
    if (strpbrk(value, "\r\n"))
        return bad(err, errlen, value, "must not contain a line break");
    if (set_string(&s->dl_own.user_agent, value, err, errlen) != 0)
        return -1;
    s->dl.user_agent = s->dl_own.user_agent;
    return 0;
}

int settings_set_insecure(struct settings *s, const char *value, char *err, size_t errlen)
{
    return parse_on_off(value, &s->dl.insecure, err, errlen);
}

int settings_set_location_trusted(struct settings *s, const char *value, char *err, size_t errlen)
{
    return parse_on_off(value, &s->dl.location_trusted, err, errlen);
}

int settings_set_cacert(struct settings *s, const char *value, char *err, size_t errlen)
{
    if (!*value)
        return err_set(err, errlen, "empty file name");
    /* checked now: libcurl would only say "problem with the SSL CA cert" for each run */
    if (access(value, R_OK) != 0)
        return err_set(err, errlen, "'%s': %s", value, strerror(errno));
    if (set_string(&s->dl_own.cacert, value, err, errlen) != 0)
        return -1;
    s->dl.cacert = s->dl_own.cacert;
    return 0;
}

int settings_add_header(struct settings *s, const char *value, char *err, size_t errlen)
{
    /* as curl -H: "Name: value" adds or replaces, "Name:" removes, "Name;" sends it empty */
    size_t n = strcspn(value, ":;");
    if (n == 0 || !value[n])
        return bad(err, errlen, value, "expected \"Name: value\" (\"Name:\" removes a header, \"Name;\" sends it empty)");
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)value[i] <= ' ' || value[i] == 0x7f)
            return bad(err, errlen, value, "the header name must not contain white space or control characters");
    if (strpbrk(value, "\r\n"))
        return bad(err, errlen, value, "must not contain a line break");
    struct curl_slist *l = curl_slist_append(s->dl.headers, value);
    if (!l)
        return err_set(err, errlen, "out of memory");
    s->dl.headers = l;
    return 0;
}

int settings_set_format(struct settings *s, const char *value, char *err, size_t errlen)
{
    if (report_format_parse(value, &s->format) != 0)
        return bad(err, errlen, value, "expected table, markdown, csv or json");
    return 0;
}

int settings_set_output(struct settings *s, const char *value, char *err, size_t errlen)
{
    if (!*value)
        return err_set(err, errlen, "empty file name");
    return set_string(&s->output, value, err, errlen);
}

int settings_set_jsonl(struct settings *s, const char *value, char *err, size_t errlen)
{
    if (!*value)
        return err_set(err, errlen, "empty file name");
    return set_string(&s->jsonl, value, err, errlen);
}

/* --db: the results store (client/store/store.h), checked here so that a bad one is a
 * usage error before anything runs */
int settings_set_db(struct settings *s, const char *value, char *err, size_t errlen)
{
    struct store_spec spec;
    if (store_spec_parse(value, &spec, err, errlen) != 0)
        return -1;
    return set_string(&s->db, value, err, errlen);
}

int settings_set_vantage(struct settings *s, const char *value, char *err, size_t errlen)
{
    if (!*value)
        return err_set(err, errlen, "empty name");
    return set_string(&s->vantage, value, err, errlen);
}

int settings_set_plot(struct settings *s, const char *value, char *err, size_t errlen)
{
    const char *dot = strrchr(value, '.');
    if (!dot || (strcmp(dot, ".png") != 0 && strcmp(dot, ".svg") != 0))
        return bad(err, errlen, value, "expected a file name ending in .png or .svg");
    return set_string(&s->plot, value, err, errlen);
}

int settings_set_progress(struct settings *s, const char *value, char *err, size_t errlen)
{
    return parse_on_off(value, &s->progress, err, errlen);
}

int settings_set_quiet(struct settings *s, const char *value, char *err, size_t errlen)
{
    return parse_on_off(value, &s->quiet, err, errlen);
}

int settings_add_offload(struct settings *s, const char *value, char *err, size_t errlen)
{
    if (s->noffloads >= SETTINGS_MAX_OFFLOADS)
        return bad(err, errlen, value, "too many --offload options");
    struct settings_offload *o = &s->offloads[s->noffloads];
    if (offload_parse_spec(value, o->ifname, &o->wish, err, errlen) != OFFLOAD_OK)
        return -1;
    s->noffloads++;
    return 0;
}

int settings_set_delay(struct settings *s, const char *value, char *err, size_t errlen)
{
    return settings_parse_delay(value, &s->delay_us, err, errlen);
}

int settings_set_delay_dev(struct settings *s, const char *value, char *err, size_t errlen)
{
    if (settings_check_ifname(value, err, errlen) != 0)
        return -1;
    return set_string(&s->delay_dev, value, err, errlen);
}

int settings_set_loss(struct settings *s, const char *value, char *err, size_t errlen)
{
    return lossrate_parse(value, &s->loss_ppm, err, errlen);
}

int settings_set_server_upload(struct settings *s, const char *value, char *err, size_t errlen)
{
    if (s->nservers == 0)
        return err_set(err, errlen, "no server to upload to");
    uint64_t v = 0;
    if (parse_size(value, UPLOAD_HINT, &v, err, errlen) < 0)
        return -1;
    s->servers[s->nservers - 1].upload = v;
    if (s->families && s->nservers >= 2) /* the URL's IPv4 twin too */
        s->servers[s->nservers - 2].upload = v;
    return 0;
}

int settings_set_write_out(struct settings *s, const char *value, char *err, size_t errlen)
{
    struct writeout *w = writeout_parse(value, err, errlen);
    if (!w)
        return -1;
    writeout_free(w);
    return set_string(&s->write_out, value, err, errlen);
}

int settings_check(const struct settings *s, char *err, size_t errlen)
{
    if (s->dl.split && s->dl.parallel < 2)
        return err_set(err, errlen, "--split: needs --parallel N with N >= 2");
    if (s->dl.upload && s->dl.max_bytes)
        return err_set(err, errlen, "--max-bytes: downloads only (--upload SIZE is the upload's size)");
    if (s->families && s->dl.ip_version)
        return err_set(err, errlen, "--families: measures over both IPv4 and IPv6; -4 and -6 pick one");
    if (s->seed_given && s->order != PLAN_ORDER_RANDOM)
        return err_set(err, errlen, "--seed: only meaningful with --order random");
    if (s->stall_rate_given && s->dl.stall_s <= 0)
        return err_set(err, errlen, "--stall-rate: only meaningful with --stall SECONDS (the window it is measured over)");
    if ((s->delay_us > 0 || s->loss_ppm > 0) != (s->delay_dev != NULL))
        return err_set(err, errlen, "%s",
                       s->delay_dev ? "--delay-dev: needs --delay or --loss"
                       : s->delay_us ? "--delay: needs --delay-dev DEV" : "--loss: needs --delay-dev DEV");
    if (s->dl.interface && s->dl.local_address)
        return err_set(err, errlen, "--local-address: cannot be combined with --interface");
    return 0;
}
