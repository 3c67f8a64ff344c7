/* scenario_lab: see scenario_lab.h. */
#include "scenario_lab.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfg.h"
#include "err.h"
#include "units.h"

#define LAB_CPU_MIN_PCT 1.0
#define LAB_MEM_MIN 4096ULL
#define LAB_MEM_MAX (1ULL << 30)

void scenario_lab_clear(struct scenario_lab *l)
{
    if (l)
        free(l->server);
}

const char *scenario_value_text(const config_setting_t *m, char *buf, size_t len)
{
    long long v;
    if (cfg_int_value(m, &v)) {
        snprintf(buf, len, "%lld", v);
        return buf;
    }
    switch (config_setting_type(m)) {
    case CONFIG_TYPE_FLOAT:
        snprintf(buf, len, "%.6f", config_setting_get_float(m));
        return buf;
    case CONFIG_TYPE_STRING:
        return config_setting_get_string(m);
    }
    return NULL;
}

/* "3%", "1.5%" or a bare number (percent): 1 % .. 100 % per online CPU, read exactly to
 * 0.0001 % by the percentage parser loss rates use (units_parse_percent). */
static int parse_cpu(const config_setting_t *m, double *pct, char *err, size_t errlen)
{
    char buf[64];
    const char *t = scenario_value_text(m, buf, sizeof buf);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    double max = 100.0 * (double)(ncpu > 0 ? ncpu : 1);
    if (!t)
        return cfg_error(err, errlen, m, "expected a percentage of one CPU such as \"3%%\"");
    uint64_t ppm = 0;
    enum units_err e = units_parse_percent(t, 0, (uint64_t)(max * 10000.0), &ppm);
    if (e != UNITS_OK && e != UNITS_RANGE)
        return cfg_error(err, errlen, m, "'%s': expected a percentage of one CPU such as \"3%%\"", t);
    if (e == UNITS_RANGE || (double)ppm / 10000.0 < LAB_CPU_MIN_PCT)
        return cfg_error(err, errlen, m, "'%s': out of range %g%%..%g%% (%ld CPU%s online)", t, LAB_CPU_MIN_PCT, max,
                         ncpu, ncpu == 1 ? "" : "s");
    *pct = (double)ppm / 10000.0;
    return 0;
}

/* "min default max": three sizes (units_parse_size), each 4 KiB .. 1 GiB, in order. */
static int parse_mem(const config_setting_t *m, uint64_t v[3], char *err, size_t errlen)
{
    static const char why[] = "expected \"min default max\": three sizes 4KiB..1GiB, min <= default <= max";
    const char *t = config_setting_type(m) == CONFIG_TYPE_STRING ? config_setting_get_string(m) : NULL;
    if (!t)
        return cfg_error(err, errlen, m, "%s", why);
    char copy[256];
    if (snprintf(copy, sizeof copy, "%s", t) >= (int)sizeof copy)
        return cfg_error(err, errlen, m, "'%.40s...': %s", t, why);
    char *save = NULL, *tok = strtok_r(copy, " \t", &save);
    int n = 0;
    for (; tok; tok = strtok_r(NULL, " \t", &save)) {
        uint64_t b;
        if (n == 3 || units_parse_size(tok, &b) != UNITS_OK || b < LAB_MEM_MIN || b > LAB_MEM_MAX)
            return cfg_error(err, errlen, m, "'%s': %s", t, why);
        v[n++] = b;
    }
    if (n != 3 || v[0] > v[1] || v[1] > v[2])
        return cfg_error(err, errlen, m, "'%s': %s", t, why);
    return 0;
}

/* A setter of common/tcp_profile on the member's text, the error placed at the member. */
static int tcp_member(const config_setting_t *g, const char *key,
                      int (*set)(struct tcp_profile *, const char *, char *, size_t), struct tcp_profile *p,
                      char *err, size_t errlen)
{
    const config_setting_t *m = config_setting_get_member(g, key);
    char buf[64];
    if (!m)
        return 0;
    const char *t = scenario_value_text(m, buf, sizeof buf);
    if (!t)
        return cfg_error(err, errlen, m, "expected a number or a string");
    if (set(p, t, err, errlen) != 0)
        return cfg_error_prefix(err, errlen, m);
    return 0;
}

/* The URL's address against the plan; the message is placed at the server's url. */
static int check_address(const config_setting_t *at, const char *url, const struct scenario_lab *others,
                         size_t nothers, struct scenario_lab *l, char *err, size_t errlen)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL;
    int rc = -1;
    if (!u || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK) {
        cfg_error(err, errlen, at, "'%s': not a URL the lab can serve", url);
        goto out;
    }
    if (strcmp(scheme, "http") != 0) {
        cfg_error(err, errlen, at, "'%s': a lab server is plain http:// (its debitd has no TLS)", url);
        goto out;
    }
    struct in_addr a;
    if (inet_pton(AF_INET, host, &a) != 1) {
        cfg_error(err, errlen, at, "'%s': a lab server's host must be an IPv4 address in 198.18.0.0/15", host);
        goto out;
    }
    uint32_t h = ntohl(a.s_addr);
    unsigned last = h & 0xff;
    if ((h >> 17) != (0xc612u >> 1)) { /* 198.18.0.0/15 */
        cfg_error(err, errlen, at, "'%s': a lab server's address must be in 198.18.0.0/15", host);
        goto out;
    }
    if ((h >> 8) == ((198u << 16) | (18u << 8) | 3u)) {
        cfg_error(err, errlen, at, "'%s': 198.18.3.0/24 is the lab's client network", host);
        goto out;
    }
    if (last < 2 || last > 254) {
        cfg_error(err, errlen, at, "'%s': the host part must be 2..254 (.1 is the router's)", host);
        goto out;
    }
    snprintf(l->addr, sizeof l->addr, "%s", host);
    for (size_t i = 0; i < nothers; i++) {
        struct in_addr b;
        if (inet_pton(AF_INET, others[i].addr, &b) == 1 && (ntohl(b.s_addr) >> 8) == (h >> 8)) {
            cfg_error(err, errlen, at, "'%s': in the same /24 as lab server \"%s\" (%s): one /24 per server", host,
                      others[i].server, others[i].addr);
            goto out;
        }
    }
    l->port = 80;
    if (curl_url_get(u, CURLUPART_PORT, &port, 0) == CURLUE_OK)
        l->port = (unsigned)strtoul(port, NULL, 10);
    rc = 0;
out:
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    return rc;
}

int scenario_lab_parse(const config_setting_t *g, const char *name, const char *url,
                       const struct scenario_lab *others, size_t nothers, struct scenario_lab *l, char *err,
                       size_t errlen)
{
    static const char *const keys[] = {"tso",  "gso",      "cc",       "pacing",   "sndbuf", "notsent_lowat",
                                       "cpu",  "tcp_wmem", "tcp_rmem", "initcwnd", "mtu",    NULL};
    if (!config_setting_is_group(g))
        return cfg_error(err, errlen, g, "expected a group { tso = true; cpu = \"3%%\"; ... }");
    if (cfg_check_keys(g, keys, err, errlen))
        return -1;
    const config_setting_t *e = config_setting_parent(g);
    const config_setting_t *at = config_setting_get_member(e, "url");
    l->tso = l->gso = -1;
    tcp_profile_defaults(&l->tcp);
    if (!(l->server = strdup(name)))
        return cfg_error(err, errlen, g, "out of memory");
    if (check_address(at ? at : e, url, others, nothers, l, err, errlen))
        return -1;
    int v, r;
    if ((r = cfg_get_bool(g, "tso", &v, err, errlen)) < 0)
        return -1;
    if (r)
        l->tso = v;
    if ((r = cfg_get_bool(g, "gso", &v, err, errlen)) < 0)
        return -1;
    if (r)
        l->gso = v;
    if (tcp_member(g, "cc", tcp_profile_set_congestion, &l->tcp, err, errlen) ||
        tcp_member(g, "pacing", tcp_profile_set_pacing_rate, &l->tcp, err, errlen) ||
        tcp_member(g, "sndbuf", tcp_profile_set_sndbuf, &l->tcp, err, errlen) ||
        tcp_member(g, "notsent_lowat", tcp_profile_set_notsent_lowat, &l->tcp, err, errlen))
        return -1;
    const config_setting_t *m;
    if ((m = config_setting_get_member(g, "cpu")) && parse_cpu(m, &l->cpu_pct, err, errlen))
        return -1;
    if ((m = config_setting_get_member(g, "tcp_wmem")) && parse_mem(m, l->wmem, err, errlen))
        return -1;
    if ((m = config_setting_get_member(g, "tcp_rmem")) && parse_mem(m, l->rmem, err, errlen))
        return -1;
    uint64_t n;
    if ((r = cfg_get_uint(g, "initcwnd", 1, 1000, &n, err, errlen)) < 0)
        return -1;
    if (r)
        l->initcwnd = (unsigned)n;
    if ((r = cfg_get_uint(g, "mtu", 576, 65535, &n, err, errlen)) < 0)
        return -1;
    if (r)
        l->mtu = (unsigned)n;
    scenario_lab_describe(l, l->host, sizeof l->host);
    return 0;
}

static json_t *mem_json(const uint64_t v[3])
{
    if (!v[2])
        return json_null();
    char buf[96];
    snprintf(buf, sizeof buf, "%llu %llu %llu", (unsigned long long)v[0], (unsigned long long)v[1],
             (unsigned long long)v[2]);
    return json_string(buf);
}

static json_t *bool_json(int v)
{
    return v < 0 ? json_null() : json_boolean(v);
}

static json_t *uint_json(uint64_t v)
{
    return v ? json_integer((json_int_t)v) : json_null();
}

json_t *scenario_lab_to_json(const struct scenario_lab *l)
{
    return json_pack("{s:s, s:s, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "name", l->server,
                     "address", l->addr, "port", (int)l->port, "tso", bool_json(l->tso), "gso", bool_json(l->gso),
                     "cc", l->tcp.congestion[0] ? json_string(l->tcp.congestion) : json_null(), "pacing_bps",
                     uint_json(l->tcp.pacing_rate_bps), "sndbuf", uint_json(l->tcp.sndbuf), "notsent_lowat",
                     uint_json(l->tcp.notsent_lowat), "cpu_pct", l->cpu_pct > 0 ? json_real(l->cpu_pct) : json_null(),
                     "tcp_wmem", mem_json(l->wmem), "tcp_rmem", mem_json(l->rmem), "initcwnd", uint_json(l->initcwnd),
                     "mtu", uint_json(l->mtu));
}

/* Append ", WHAT" (or "WHAT" first) to buf. */
static void add(char *buf, size_t len, const char *a)
{
    size_t n = strlen(buf);
    if (n + 1 < len)
        snprintf(buf + n, len - n, "%s%s", n ? ", " : "", a);
}

const char *scenario_lab_describe(const struct scenario_lab *l, char *buf, size_t len)
{
    char t[64], s[32];
    if (!len)
        return buf;
    buf[0] = 0;
    if (l->cpu_pct > 0) {
        snprintf(t, sizeof t, "cpu %g%%", l->cpu_pct);
        add(buf, len, t);
    }
    if (l->wmem[2]) {
        units_format_size(l->wmem[2], s, sizeof s);
        snprintf(t, sizeof t, "tcp_wmem max %s", s);
        add(buf, len, t);
    }
    if (l->rmem[2]) {
        units_format_size(l->rmem[2], s, sizeof s);
        snprintf(t, sizeof t, "tcp_rmem max %s", s);
        add(buf, len, t);
    }
    if (l->initcwnd) {
        snprintf(t, sizeof t, "initcwnd %u", l->initcwnd);
        add(buf, len, t);
    }
    if (l->mtu) {
        snprintf(t, sizeof t, "mtu %u", l->mtu);
        add(buf, len, t);
    }
    return buf;
}
