/* tcp_profile: see tcp_profile.h. */
#include "tcp_profile.h"
#include "cfg.h"
#include "err.h"
#include "units.h"

#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SO_MAX_PACING_RATE
#define SO_MAX_PACING_RATE 47
#endif

#define CC_AVAILABLE "/proc/sys/net/ipv4/tcp_available_congestion_control"
#define CC_ALLOWED "/proc/sys/net/ipv4/tcp_allowed_congestion_control"
#define CC_DEFAULT "/proc/sys/net/ipv4/tcp_congestion_control"

/* SO_SNDBUF stores twice the value; INT_MAX / 2 keeps that from overflowing. */
#define SNDBUF_MIN 4096ULL
#define SNDBUF_MAX ((uint64_t)INT_MAX / 2)
#define LOWAT_MAX ((uint64_t)INT_MAX)
/* One byte per second is the kernel's floor for a non-zero pacing rate. */
#define PACING_MIN_BPS 8ULL

void tcp_profile_defaults(struct tcp_profile *p)
{
    memset(p, 0, sizeof *p);
}

int tcp_profile_is_default(const struct tcp_profile *p)
{
    return !p->congestion[0] && !p->pacing_rate_bps && !p->sndbuf && !p->notsent_lowat;
}

static int read_line(const char *path, char *buf, size_t len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return err_set(err, errlen, "cannot read %s: %s", path, strerror(errno));
    if (!fgets(buf, (int)len, f)) {
        fclose(f);
        return err_set(err, errlen, "cannot read %s: empty", path);
    }
    fclose(f);
    buf[strcspn(buf, "\n")] = 0;
    return 0;
}

int tcp_cc_available(char *buf, size_t len, char *err, size_t errlen)
{
    return read_line(CC_AVAILABLE, buf, len, err, errlen);
}

int tcp_cc_default(char *buf, size_t len, char *err, size_t errlen)
{
    return read_line(CC_DEFAULT, buf, len, err, errlen);
}

/* The third of the three numbers in PATH (tcp_wmem, tcp_rmem: min default max). */
static int mem_max(const char *path, uint64_t *max, char *err, size_t errlen)
{
    char line[128];
    if (read_line(path, line, sizeof line, err, errlen) < 0)
        return -1;
    unsigned long long v[3];
    if (sscanf(line, "%llu %llu %llu", &v[0], &v[1], &v[2]) != 3)
        return err_set(err, errlen, "%s: not three numbers: \"%s\"", path, line);
    *max = v[2];
    return 0;
}

int tcp_wmem_max(uint64_t *max, char *err, size_t errlen)
{
    return mem_max("/proc/sys/net/ipv4/tcp_wmem", max, err, errlen);
}

int tcp_rmem_max(uint64_t *max, char *err, size_t errlen)
{
    return mem_max("/proc/sys/net/ipv4/tcp_rmem", max, err, errlen);
}

static int word_in_list(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; *p;) {
        while (*p == ' ' || *p == '\t')
            p++;
        size_t w = strcspn(p, " \t");
        if (w == n && n && strncmp(p, word, n) == 0)
            return 1;
        p += w;
    }
    return 0;
}

int tcp_profile_set_congestion(struct tcp_profile *p, const char *name, char *err, size_t errlen)
{
    if (!name || !*name) {
        p->congestion[0] = 0;
        return 0;
    }
    if (strlen(name) >= TCP_PROFILE_CC_LEN)
        return err_set(err, errlen, "'%s' is too long for a congestion control name (max %d characters)", name,
                       TCP_PROFILE_CC_LEN - 1);
    char list[512];
    if (tcp_cc_available(list, sizeof list, err, errlen) < 0)
        return -1;
    if (!word_in_list(list, name))
        return err_set(err, errlen, "'%s' is not available (available: %s)", name, list);
    snprintf(p->congestion, sizeof p->congestion, "%s", name);
    return 0;
}

static int set_units(const char *s, enum units_err (*parse)(const char *, uint64_t *), uint64_t min,
                     uint64_t max, const char *what, const char *example, uint64_t *out, char *err, size_t errlen)
{
    uint64_t v;
    enum units_err e = parse(s ? s : "", &v);
    if (e != UNITS_OK)
        return err_set(err, errlen, "'%s' is not a %s (%s; e.g. \"%s\")", s ? s : "", what, units_strerror(e), example);
    if (v != 0 && (v < min || v > max))
        return err_set(err, errlen, "'%s' is out of range (0 for the kernel default, or %llu to %llu)", s,
                       (unsigned long long)min, (unsigned long long)max);
    *out = v;
    return 0;
}

int tcp_profile_set_pacing_rate(struct tcp_profile *p, const char *rate, char *err, size_t errlen)
{
    /* bytes/s in a u64 setsockopt: any bit rate that fits a u64 fits once divided by 8. */
    return set_units(rate, units_parse_rate, PACING_MIN_BPS, UINT64_MAX, "rate", "500Mbit",
                     &p->pacing_rate_bps, err, errlen);
}

int tcp_profile_set_sndbuf(struct tcp_profile *p, const char *size, char *err, size_t errlen)
{
    return set_units(size, units_parse_size, SNDBUF_MIN, SNDBUF_MAX, "size", "4MiB", &p->sndbuf, err, errlen);
}

int tcp_profile_set_notsent_lowat(struct tcp_profile *p, const char *size, char *err, size_t errlen)
{
    return set_units(size, units_parse_size, 1, LOWAT_MAX, "size", "128KiB", &p->notsent_lowat, err, errlen);
}

/* A number or a string with units, passed to SETTER as text so that both config and
 * command line go through the same validation. */
static int cfg_member(const config_setting_t *group, const char *name,
                      int (*setter)(struct tcp_profile *, const char *, char *, size_t), struct tcp_profile *p,
                      char *err, size_t errlen)
{
    const config_setting_t *s = config_setting_get_member(group, name);
    if (!s)
        return 0;
    char text[64];
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_STRING:
        snprintf(text, sizeof text, "%s", config_setting_get_string(s));
        if (strlen(config_setting_get_string(s)) >= sizeof text)
            return cfg_error(err, errlen, s, "value too long");
        break;
    case CONFIG_TYPE_INT:
    case CONFIG_TYPE_INT64: {
        long long v = 0;
        cfg_int_value(s, &v);
        if (v < 0)
            return cfg_error(err, errlen, s, "%lld is negative", v);
        snprintf(text, sizeof text, "%lld", v);
        break;
    }
    default:
        return cfg_error(err, errlen, s, "expected a number or a string with a unit");
    }
    if (setter(p, text, err, errlen) < 0)
        return cfg_error_prefix(err, errlen, s);
    return 0;
}

int tcp_profile_from_cfg(const config_setting_t *group, struct tcp_profile *p, char *err, size_t errlen)
{
    static const char *const keys[] = {"congestion", "pacing_rate", "sndbuf", "notsent_lowat", NULL};
    if (!group)
        return 0;
    if (!config_setting_is_group(group))
        return cfg_error(err, errlen, group, "expected a group { congestion = ...; pacing_rate = ...; }");
    if (cfg_check_keys(group, keys, err, errlen) < 0)
        return -1;
    const char *cc;
    int r = cfg_get_string(group, "congestion", &cc, err, errlen);
    if (r < 0)
        return -1;
    if (r > 0 && tcp_profile_set_congestion(p, cc, err, errlen) < 0)
        return cfg_error_prefix(err, errlen, config_setting_get_member(group, "congestion"));
    if (cfg_member(group, "pacing_rate", tcp_profile_set_pacing_rate, p, err, errlen) < 0 ||
        cfg_member(group, "sndbuf", tcp_profile_set_sndbuf, p, err, errlen) < 0 ||
        cfg_member(group, "notsent_lowat", tcp_profile_set_notsent_lowat, p, err, errlen) < 0)
        return -1;
    return 0;
}

static int apply_congestion(int fd, const char *cc, char *err, size_t errlen)
{
    if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, (socklen_t)strlen(cc)) == 0)
        return 0;
    int e = errno;
    if (e == EPERM) {
        char allowed[512] = "?", ignored[128];
        read_line(CC_ALLOWED, allowed, sizeof allowed, ignored, sizeof ignored);
        return err_set(err, errlen,
                       "TCP_CONGESTION %s: not permitted: without CAP_NET_ADMIN only "
                       "net.ipv4.tcp_allowed_congestion_control (%s) may be used; run as root",
                       cc, allowed);
    }
    if (e == ENOENT)
        return err_set(err, errlen, "TCP_CONGESTION %s: the kernel has no such algorithm", cc);
    return err_set(err, errlen, "TCP_CONGESTION %s: %s", cc, strerror(e));
}

static int apply_sndbuf(int fd, uint64_t bytes, char *err, size_t errlen)
{
    int v = (int)bytes;
    /* SO_SNDBUFFORCE ignores net.core.wmem_max (212992 by default, far below a
     * bandwidth-delay product); without CAP_NET_ADMIN fall back and check for a clamp. */
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof v) == 0)
        return 0;
    if (errno != EPERM)
        return err_set(err, errlen, "SO_SNDBUFFORCE %d: %s", v, strerror(errno));
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof v) < 0)
        return err_set(err, errlen, "SO_SNDBUF %d: %s", v, strerror(errno));
    int got = 0;
    socklen_t gl = sizeof got;
    if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &got, &gl) < 0)
        return err_set(err, errlen, "SO_SNDBUF: read back: %s", strerror(errno));
    if ((uint64_t)got < 2 * bytes) {
        char max[64] = "?", ignored[128];
        read_line("/proc/sys/net/core/wmem_max", max, sizeof max, ignored, sizeof ignored);
        return err_set(err, errlen,
                       "SO_SNDBUF %d: clamped to %d by net.core.wmem_max=%s (run as root for SO_SNDBUFFORCE, "
                       "or raise the sysctl)",
                       v, got / 2, max);
    }
    return 0;
}

int tcp_profile_apply(int fd, const struct tcp_profile *p, char *err, size_t errlen)
{
    if (p->congestion[0] && apply_congestion(fd, p->congestion, err, errlen) < 0)
        return -1;
    if (p->pacing_rate_bps) {
        uint64_t bytes = p->pacing_rate_bps / 8;
        if (bytes == 0)
            bytes = 1;
        /* A u64 value has been accepted since Linux 4.20; older kernels take a u32. */
        if (setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &bytes, sizeof bytes) < 0) {
            uint32_t b32 = bytes > UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)bytes;
            if (errno != EINVAL || setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &b32, sizeof b32) < 0)
                return err_set(err, errlen, "SO_MAX_PACING_RATE %llu bytes/s: %s", (unsigned long long)bytes,
                               strerror(errno));
        }
    }
    if (p->sndbuf && apply_sndbuf(fd, p->sndbuf, err, errlen) < 0)
        return -1;
    if (p->notsent_lowat) {
        int v = (int)p->notsent_lowat;
        if (setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &v, sizeof v) < 0)
            return err_set(err, errlen, "TCP_NOTSENT_LOWAT %d: %s", v, strerror(errno));
    }
    return 0;
}

int tcp_profile_read(int fd, const struct tcp_profile *applied, struct tcp_profile *p, char *err, size_t errlen)
{
    tcp_profile_defaults(p);
    char cc[TCP_PROFILE_CC_LEN + 1] = "";
    socklen_t len = TCP_PROFILE_CC_LEN;
    if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cc, &len) < 0)
        return err_set(err, errlen, "TCP_CONGESTION: read back: %s", strerror(errno));
    memcpy(p->congestion, cc, TCP_PROFILE_CC_LEN - 1);
    /* the kernel answers an 8-byte buffer with its unsigned long (~0UL: unlimited), a
     * 4-byte one with min(rate, ~0U); ~0U set through a 32-bit value also means unlimited */
    union {
        uint64_t u64;
        uint32_t u32;
    } rate = {0};
    len = sizeof rate.u64;
    if (getsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, &len) < 0)
        return err_set(err, errlen, "SO_MAX_PACING_RATE: read back: %s", strerror(errno));
    uint64_t bytes = len == sizeof rate.u32 ? rate.u32 : rate.u64;
    if (bytes != UINT64_MAX && bytes != UINT32_MAX)
        p->pacing_rate_bps = bytes * 8;
    int v = 0;
    len = sizeof v;
    if (getsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &v, &len) < 0)
        return err_set(err, errlen, "TCP_NOTSENT_LOWAT: read back: %s", strerror(errno));
    p->notsent_lowat = v > 0 ? (uint64_t)v : 0;
    if (applied && applied->sndbuf) {
        v = 0;
        len = sizeof v;
        if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, &len) < 0)
            return err_set(err, errlen, "SO_SNDBUF: read back: %s", strerror(errno));
        p->sndbuf = v > 0 ? (uint64_t)v / 2 : 0;
    }
    return 0;
}

int tcp_profile_probe(const struct tcp_profile *p, int family, char *err, size_t errlen)
{
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
    if (fd < 0)
        return err_set(err, errlen, "cannot create a TCP socket: %s", strerror(errno));
    struct tcp_profile got;
    int r = tcp_profile_apply(fd, p, err, errlen);
    if (r == 0)
        r = tcp_profile_read(fd, p, &got, err, errlen);
    if (r == 0 && p->congestion[0] && strncmp(got.congestion, p->congestion, TCP_PROFILE_CC_LEN) != 0)
        r = err_set(err, errlen, "TCP_CONGESTION: asked for %s, socket uses %s", p->congestion, got.congestion);
    uint64_t want = p->pacing_rate_bps / 8 ? p->pacing_rate_bps / 8 : 1;
    if (r == 0 && p->pacing_rate_bps && got.pacing_rate_bps / 8 != want)
        r = err_set(err, errlen, "SO_MAX_PACING_RATE: asked for %llu bytes/s, socket has %llu",
                    (unsigned long long)want, (unsigned long long)(got.pacing_rate_bps / 8));
    if (r == 0 && p->notsent_lowat && got.notsent_lowat != p->notsent_lowat)
        r = err_set(err, errlen, "TCP_NOTSENT_LOWAT: asked for %llu, socket has %llu",
                    (unsigned long long)p->notsent_lowat, (unsigned long long)got.notsent_lowat);
    close(fd);
    return r;
}

void tcp_profile_words(const struct tcp_profile *p, struct tcp_profile_words *w)
{
    snprintf(w->cc, sizeof w->cc, "%s", p->congestion[0] ? p->congestion : "default");
    if (p->pacing_rate_bps)
        units_format_rate_tc(p->pacing_rate_bps, w->pacing, sizeof w->pacing);
    else
        snprintf(w->pacing, sizeof w->pacing, "unlimited");
    snprintf(w->sndbuf, sizeof w->sndbuf, p->sndbuf ? "%llu" : "auto", (unsigned long long)p->sndbuf);
    snprintf(w->notsent_lowat, sizeof w->notsent_lowat, p->notsent_lowat ? "%llu" : "off",
             (unsigned long long)p->notsent_lowat);
}

int tcp_profile_format(const struct tcp_profile *p, char *buf, size_t len)
{
    struct tcp_profile_words w;
    tcp_profile_words(p, &w);
    return snprintf(buf, len, "cc=%s pacing=%s sndbuf=%s", w.cc, w.pacing, w.sndbuf);
}

static json_t *uint_or_null(uint64_t v)
{
    return v ? json_integer((json_int_t)v) : json_null();
}

json_t *tcp_profile_to_json(const struct tcp_profile *p)
{
    json_t *o = json_object();
    json_object_set_new(o, "congestion", p->congestion[0] ? json_string(p->congestion) : json_null());
    /* json_int_t is signed: a rate beyond INT64_MAX bit/s is not a real configuration. */
    json_object_set_new(o, "pacing_rate_bps",
                        uint_or_null(p->pacing_rate_bps > INT64_MAX ? INT64_MAX : p->pacing_rate_bps));
    json_object_set_new(o, "sndbuf_bytes", uint_or_null(p->sndbuf));
    json_object_set_new(o, "notsent_lowat_bytes", uint_or_null(p->notsent_lowat));
    return o;
}
