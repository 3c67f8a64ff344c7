/* speedtest: paths, queries and sizes of the speed-test protocols (see speedtest.h). */
#include "speedtest.h"

#include <string.h>
#include <strings.h>

static const struct {
    const char *name; /* the path without "/", "/backend/" and ".php" */
    enum speedtest_endpoint e;
    int php; /* also under /backend/ and with ".php" (LibreSpeed's) */
} endpoints[] = {
    {"garbage", SPEEDTEST_GARBAGE, 1}, {"empty", SPEEDTEST_EMPTY, 1}, {"getIP", SPEEDTEST_GETIP, 1},
    {"__down", SPEEDTEST_DOWN, 0},     {"__up", SPEEDTEST_UP, 0},
    /* results/telemetry.php, speedtest-go's results/telemetry; results/json.php */
    {"results/telemetry", SPEEDTEST_TELEMETRY, 1}, {"results/json", SPEEDTEST_RESULTS, 1},
};

enum speedtest_endpoint speedtest_endpoint(const char *path)
{
    if (!path || path[0] != '/')
        return SPEEDTEST_NONE;
    const char *p = path + 1;
    int backend = strncmp(p, "backend/", 8) == 0;
    if (backend)
        p += 8;
    size_t n = strlen(p);
    int php = n > 4 && strcmp(p + n - 4, ".php") == 0;
    if (php)
        n -= 4;
    for (size_t i = 0; i < sizeof endpoints / sizeof endpoints[0]; i++)
        if (strlen(endpoints[i].name) == n && memcmp(p, endpoints[i].name, n) == 0 &&
            (endpoints[i].php || (!backend && !php)))
            return endpoints[i].e;
    return SPEEDTEST_NONE;
}

enum speedtest_protocol speedtest_protocol_of(enum speedtest_endpoint e)
{
    return e == SPEEDTEST_DOWN || e == SPEEDTEST_UP ? SPEEDTEST_CLOUDFLARE : SPEEDTEST_LIBRESPEED;
}

const char *speedtest_protocol_name(enum speedtest_protocol p)
{
    return p == SPEEDTEST_CLOUDFLARE ? "cloudflare" : "librespeed";
}

const char *speedtest_endpoint_name(enum speedtest_endpoint e)
{
    static const char *const names[SPEEDTEST_N_ENDPOINTS] = {"",   "garbage", "empty",     "getip",
                                                                    "down", "up",     "telemetry", "results"};
    return (unsigned)e < SPEEDTEST_N_ENDPOINTS ? names[e] : "";
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* [S, END) percent-decoded ('+' is a space, as in a form) into BUF (LEN > 0), cut to fit. */
static void decode(const char *s, const char *end, char *buf, size_t len)
{
    size_t n = 0;
    while (s < end && n + 1 < len) {
        if (*s == '%' && end - s >= 3 && hexval(s[1]) >= 0 && hexval(s[2]) >= 0) {
            buf[n++] = (char)(hexval(s[1]) * 16 + hexval(s[2]));
            s += 3;
        } else {
            buf[n++] = *s == '+' ? ' ' : *s;
            s++;
        }
    }
    buf[n] = 0;
}

/* PHP's intval of a decimal string: blanks, a sign, the leading digits (saturated). */
static int64_t php_intval(const char *v)
{
    while (*v == ' ' || *v == '\t' || *v == '\n' || *v == '\r' || *v == '\v' || *v == '\f')
        v++;
    int neg = *v == '-';
    if (*v == '-' || *v == '+')
        v++;
    int64_t x = 0;
    for (; *v >= '0' && *v <= '9'; v++)
        x = x > (INT64_MAX - 9) / 10 ? INT64_MAX : x * 10 + (*v - '0');
    return neg ? -x : x;
}

/* A whole decimal number without sign or blanks that fits in 64 bits: 1, else 0. */
static int plain_u64(const char *v, uint64_t *out)
{
    if (!*v)
        return 0;
    uint64_t x = 0;
    for (; *v; v++) {
        if (*v < '0' || *v > '9' || x > (UINT64_MAX - (uint64_t)(*v - '0')) / 10)
            return 0;
        x = x * 10 + (uint64_t)(*v - '0');
    }
    *out = x;
    return 1;
}

void speedtest_query_parse(const char *query, struct speedtest_query *q)
{
    memset(q, 0, sizeof *q);
    for (const char *p = query; p && *p;) {
        const char *amp = strchr(p, '&'), *end = amp ? amp : p + strlen(p);
        const char *eq = memchr(p, '=', (size_t)(end - p));
        char name[16], value[32];
        decode(p, eq ? eq : end, name, sizeof name);
        decode(eq ? eq + 1 : end, end, value, sizeof value);
        if (strcmp(name, "ckSize") == 0) { /* PHP's $_GET keeps the last of a repeated name */
            q->has_cksize = 1;
            q->cksize = php_intval(value);
        } else if (strcmp(name, "bytes") == 0) {
            q->has_bytes = 1;
            q->bytes_ok = (size_t)(end - (eq ? eq + 1 : end)) < sizeof value && plain_u64(value, &q->bytes);
            if (!q->bytes_ok)
                q->bytes = 0;
        } else if (strcmp(name, "cors") == 0) {
            q->cors = 1;
        } else if (strcmp(name, "isp") == 0) { /* getIP.php's isset(): any value */
            q->isp = 1;
        } else if (strcmp(name, "id") == 0) {
            if ((size_t)(end - (eq ? eq + 1 : end)) >= sizeof value || !plain_u64(value, &q->id))
                q->id = 0;
        }
        p = amp ? amp + 1 : end;
    }
}

uint64_t speedtest_garbage_bytes(const struct speedtest_query *q, uint64_t cap)
{
    int64_t n = q->has_cksize ? q->cksize : SPEEDTEST_CKSIZE_DEFAULT;
    if (n == 0) /* PHP's empty(): 0, and what intval reads as 0 */
        n = SPEEDTEST_CKSIZE_DEFAULT;
    if (n > SPEEDTEST_CKSIZE_MAX)
        n = SPEEDTEST_CKSIZE_MAX;
    if (n < 1) /* PHP sends nothing: a test of no bytes helps nobody */
        n = 1;
    uint64_t cap_mib = cap / SPEEDTEST_MIB;
    if (cap_mib < 1)
        cap_mib = 1;
    if ((uint64_t)n > cap_mib)
        n = (int64_t)cap_mib;
    return (uint64_t)n * SPEEDTEST_MIB;
}

/* The address prefixes LibreSpeed's getIP.php names (its order). */
static const struct {
    const char *prefix;
    const char *note;
} notes[] = {
    {"127.", " - localhost IPv4 access"}, {"10.", " - private IPv4 access"},
    {"192.168.", " - private IPv4 access"}, {"169.254.", " - link-local IPv4 access"},
};

static int digits2(const char *p, int lo, int hi, const char *after)
{
    if (p[0] < '0' || p[0] > '9' || p[1] < '0' || p[1] > '9')
        return 0;
    int v = (p[0] - '0') * 10 + (p[1] - '0');
    return v >= lo && v <= hi && strncmp(p + 2, after, strlen(after)) == 0;
}

/* fc00::/7 as getIP.php matches it: /^(fc|fd)([0-9a-f]{0,4}:){1,7}[0-9a-f]{1,4}$/i (IP is
 * inet_ntop's, so its groups are well formed: "fc"/"fd", hex digits and colons, a colon
 * within, a hex digit last). */
static int ula(const char *ip)
{
    if (strncasecmp(ip, "fc", 2) != 0 && strncasecmp(ip, "fd", 2) != 0)
        return 0;
    size_t n = strlen(ip);
    int colon = 0;
    for (size_t i = 2; i < n; i++) {
        if (ip[i] == ':')
            colon = 1;
        else if (!strchr("0123456789abcdefABCDEF", ip[i]))
            return 0;
    }
    return colon && ip[n - 1] != ':' && strchr(ip, ':') - ip <= 6;
}

const char *speedtest_ip_note(const char *ip)
{
    if (strcmp(ip, "::1") == 0)
        return " - localhost IPv6 access";
    if (strncasecmp(ip, "fe80:", 5) == 0)
        return " - link-local IPv6 access";
    if (ula(ip))
        return " - ULA IPv6 access";
    for (size_t i = 0; i < sizeof notes / sizeof notes[0]; i++)
        if (strncmp(ip, notes[i].prefix, strlen(notes[i].prefix)) == 0)
            return notes[i].note;
    if (strncmp(ip, "172.", 4) == 0 && digits2(ip + 4, 16, 31, "."))
        return " - private IPv4 access";
    /* 100.64.0.0/10 (getIP.php's pattern is looser: it also takes 100.108-119, which is not
     * CGNAT) */
    if (strncmp(ip, "100.", 4) == 0 &&
        (digits2(ip + 4, 64, 99, ".") || (ip[4] == '1' && digits2(ip + 5, 0, 27, "."))))
        return " - CGNAT IPv4 access";
    return "";
}
