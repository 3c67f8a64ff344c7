/* store_record: see store_record.h. */
#include "store_record.h"

#include "err.h"
#include "offload.h"

#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/utsname.h>
#include <time.h>

int store_new_id(char buf[33], char *err, size_t errlen)
{
    unsigned char b[16];
    if (getrandom(b, sizeof b, 0) != (ssize_t)sizeof b)
        return err_set(err, errlen, "getrandom: %s", strerror(errno));
    for (size_t i = 0; i < sizeof b; i++)
        snprintf(buf + 2 * i, 3, "%02x", b[i]);
    return 0;
}

static uint64_t fnv1a(const char *s, size_t n, uint64_t h)
{
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)s[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

void store_content_id(const char *text, size_t len, char buf[33])
{
    uint64_t a = fnv1a(text, len, 0xcbf29ce484222325ULL), b = fnv1a(text, len, 0x84222325cbf29ce4ULL ^ len);
    snprintf(buf, 33, "%016llx%016llx", (unsigned long long)a, (unsigned long long)b);
}

void store_kernel(char *buf, size_t len)
{
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(buf, len, "%s %s %s", u.sysname, u.release, u.machine);
    else
        snprintf(buf, len, "unknown");
}

/* Is /sys/class/net/NAME up (operstate up or unknown, as a tun or dummy reports)? */
static int iface_up(const char *name)
{
    char path[300], state[32] = "";
    snprintf(path, sizeof path, "/sys/class/net/%s/operstate", name);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int ok = fgets(state, sizeof state, f) != NULL;
    fclose(f);
    return ok && (strncmp(state, "up", 2) == 0 || strncmp(state, "unknown", 7) == 0);
}

void store_offloads(char *buf, size_t len)
{
    buf[0] = '\0';
    DIR *d = opendir("/sys/class/net");
    if (!d)
        return;
    size_t k = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.' || strcmp(e->d_name, "lo") == 0 || strlen(e->d_name) >= IF_NAMESIZE ||
            !iface_up(e->d_name))
            continue;
        struct offload_state st;
        char one[160];
        if (offload_get(e->d_name, &st, NULL, 0) != OFFLOAD_OK)
            continue;
        offload_format(&st, one, sizeof one);
        int n = snprintf(buf + k, len - k, "%s%s %s", k ? "; " : "", e->d_name, one);
        if (n < 0 || (size_t)n >= len - k)
            break;
        k += (size_t)n;
    }
    closedir(d);
}

int store_parse_time(const char *iso, double *t)
{
    struct tm tm = {0};
    int ms = 0;
    char z = 0;
    int n = sscanf(iso, "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                   &tm.tm_min, &tm.tm_sec, &ms, &z);
    if (n < 6)
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    time_t s = timegm(&tm);
    if (s == (time_t)-1)
        return -1;
    *t = (double)s + (n >= 7 ? ms / 1000.0 : 0);
    return 0;
}

static void set_str(json_t *o, const char *key, json_t *from, const char *fkey)
{
    json_t *v = json_object_get(from, fkey);
    json_object_set_new(o, key, json_is_string(v) ? json_incref(v) : json_null());
}

static void set_num(json_t *o, const char *key, json_t *from, const char *fkey)
{
    json_t *v = json_object_get(from, fkey);
    json_object_set_new(o, key, json_is_number(v) ? json_incref(v) : json_null());
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* "https://host/..." -> "https"; NULL when the URL has no scheme. */
static json_t *scheme_of(const char *url)
{
    const char *p = url ? strstr(url, "://") : NULL;
    return p ? json_stringn(url, (size_t)(p - url)) : json_null();
}

json_t *store_record_run(json_t *run, const struct store_context *ctx, const char *run_id, const char *offloads,
                         char *err, size_t errlen)
{
    double at;
    const char *server = json_string_value(json_object_get(run, "server"));
    const char *when = json_string_value(json_object_get(run, "started_at"));
    if (!json_is_object(run) || !server) {
        err_set(err, errlen, "a run without \"server\"");
        return NULL;
    }
    if (!when || store_parse_time(when, &at) != 0) {
        err_set(err, errlen, "a run without a valid \"started_at\"");
        return NULL;
    }
    json_t *o = json_object();
    if (!o) {
        err_set(err, errlen, "out of memory");
        return NULL;
    }
    const char *ip = json_string_value(json_object_get(run, "remote_ip"));
    json_object_set_new(o, "run_id", json_string(run_id));
    json_object_set_new(o, "invocation_id", str_or_null(ctx->invocation_id));
    json_object_set_new(o, "started_at", json_real(at));
    json_object_set_new(o, "vantage", json_string(ctx->vantage ? ctx->vantage : "unknown"));
    json_object_set_new(o, "client_kernel", str_or_null(ctx->kernel));
    json_object_set_new(o, "client_offloads", str_or_null(offloads));
    set_str(o, "server", run, "server");
    set_str(o, "url", run, "url");
    json_object_set_new(o, "remote_ip", str_or_null(ip));
    json_object_set_new(o, "family", ip ? json_integer(strchr(ip, ':') ? 6 : 4) : json_null());
    set_str(o, "scenario", run, "scenario");
    set_str(o, "variant", run, "variant");
    json_object_set_new(o, "protocol", scheme_of(json_string_value(json_object_get(run, "url"))));
    set_str(o, "direction", run, "direction");
    json_t *par = json_object_get(run, "parallel");
    json_object_set_new(o, "streams", json_integer(json_is_integer(par) ? json_integer_value(par) : 1));
    set_num(o, "bytes", run, "bytes");
    set_num(o, "avg_mbps", run, "avg_mbps");
    set_num(o, "rtt_ms", run, "rtt_ms");
    set_str(o, "limited_by", run, "limited_by");
    set_num(o, "predicted_mbps", run, "predicted_mbps");
    json_object_set_new(o, "ok", json_integer(json_is_true(json_object_get(run, "ok"))));
    set_str(o, "error_kind", run, "error_kind");
    json_object_set(o, "run", run);
    return o;
}

json_t *store_record_invocation(const struct store_context *ctx, double started_at, double finished_at,
                                const char *offloads, const char *argv, long runs, long runs_ok, json_t *summary)
{
    json_t *o = json_object();
    if (!o)
        return NULL;
    json_object_set_new(o, "invocation_id", json_string(ctx->invocation_id));
    json_object_set_new(o, "started_at", json_real(started_at));
    json_object_set_new(o, "finished_at", json_real(finished_at));
    json_object_set_new(o, "vantage", json_string(ctx->vantage ? ctx->vantage : "unknown"));
    json_object_set_new(o, "client_kernel", str_or_null(ctx->kernel));
    json_object_set_new(o, "client_offloads", str_or_null(offloads));
    json_object_set_new(o, "debit_version", json_string(DEBIT_VERSION));
    json_object_set_new(o, "argv", str_or_null(argv));
    json_object_set_new(o, "runs", json_integer(runs));
    json_object_set_new(o, "runs_ok", json_integer(runs_ok));
    json_object_set(o, "summary", summary ? summary : json_null());
    return o;
}
