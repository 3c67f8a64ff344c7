/* offload_fmt: see offload.h ("names, formatting, parsing"). Everything here is pure:
 * no ioctl, no file, so that debit -t and the config check can validate a spec without
 * touching a device. The ethtool engine is offload.c. */
#include "offload.h"
#include "offload_int.h"

#include <stdio.h>
#include <string.h>

#include "err.h"

const char *const offload_names[OFFLOAD_NFEATURES] = {
    [OFFLOAD_TSO] = "tso",  [OFFLOAD_GSO] = "gso",       [OFFLOAD_GRO] = "gro",
    [OFFLOAD_SG] = "sg",    [OFFLOAD_TXCSUM] = "txcsum", [OFFLOAD_LRO] = "lro",
};

const char *offload_strerror(enum offload_err e)
{
    switch (e) {
    case OFFLOAD_OK: return "success";
    case OFFLOAD_ERR_ARG: return "invalid argument";
    case OFFLOAD_ERR_NO_DEVICE: return "no such network interface";
    case OFFLOAD_ERR_PERM: return "needs CAP_NET_ADMIN (run as root)";
    case OFFLOAD_ERR_NOT_SUPPORTED: return "the device does not support ethtool features";
    case OFFLOAD_ERR_NO_FEATURE: return "the kernel has no such feature";
    case OFFLOAD_ERR_FIXED: return "the feature is fixed on this device";
    case OFFLOAD_ERR_REFUSED: return "the device refused the change";
    case OFFLOAD_ERR_SYSTEM: return "system error";
    case OFFLOAD_ERR_SPEC: return "malformed offload specification";
    case OFFLOAD_ERR_NO_STATE: return "no saved offload state";
    case OFFLOAD_ERR_STATE_FILE: return "bad offload state file";
    case OFFLOAD_ERR_STATE_OWNER: return "the offload state belongs to a running process";
    case OFFLOAD_ERR_STATE_STALE: return "the saved offload state does not apply here";
    }
    return "unknown error";
}

const char *offload_feature_name(enum offload_feature f)
{
    return (unsigned)f < OFFLOAD_NFEATURES ? offload_names[f] : NULL;
}

int offload_feature_parse(const char *name, enum offload_feature *f)
{
    for (int i = 0; i < OFFLOAD_NFEATURES; i++)
        if (name && strcmp(name, offload_names[i]) == 0) {
            *f = (enum offload_feature)i;
            return 0;
        }
    return -1;
}

enum offload_err offload_check_ifname(const char *ifname, char *err, size_t errlen)
{
    if (!ifname || !*ifname) {
        err_set(err, errlen, "empty interface name");
        return OFFLOAD_ERR_ARG;
    }
    if (strlen(ifname) >= IF_NAMESIZE) {
        err_set(err, errlen, "interface name '%s' is longer than %d characters", ifname, IF_NAMESIZE - 1);
        return OFFLOAD_ERR_ARG;
    }
    for (const char *p = ifname; *p; p++)
        if (*p == '/' || *p == ':' || *p <= ' ' || *p == 0x7f) {
            err_set(err, errlen, "invalid interface name '%s'", ifname);
            return OFFLOAD_ERR_ARG;
        }
    return OFFLOAD_OK;
}

int offload_wish_empty(const struct offload_wish *w)
{
    for (int f = 0; f < OFFLOAD_SETTABLE; f++)
        if (w->want[f] != OFFLOAD_LEAVE)
            return 0;
    return 1;
}

static const char *feature_word(const struct offload_feature_state *fs)
{
    return !fs->known ? "n/a" : fs->on ? "on" : "off";
}

int offload_format(const struct offload_state *st, char *buf, size_t len)
{
    return snprintf(buf, len, "tso=%s gso=%s gro=%s", feature_word(&st->f[OFFLOAD_TSO]),
                    feature_word(&st->f[OFFLOAD_GSO]), feature_word(&st->f[OFFLOAD_GRO]));
}

json_t *offload_to_json(const struct offload_state *st)
{
    json_t *o = json_object();
    json_t *fixed = json_array(), *partial = json_array(), *bits = json_object();
    json_object_set_new(o, "interface", json_string(st->ifname));
    for (int f = 0; f < OFFLOAD_NFEATURES; f++) {
        const struct offload_feature_state *fs = &st->f[f];
        json_object_set_new(o, offload_names[f], fs->known ? json_boolean(fs->on) : json_null());
        if (fs->fixed)
            json_array_append_new(fixed, json_string(offload_names[f]));
        if (fs->partial)
            json_array_append_new(partial, json_string(offload_names[f]));
        for (unsigned b = 0; b < fs->nbits; b++)
            json_object_set_new(bits, fs->bits[b].name, json_boolean(fs->bits[b].active));
    }
    json_object_set_new(o, "fixed", fixed);
    json_object_set_new(o, "partial", partial);
    json_object_set_new(o, "bits", bits);
    return o;
}

int offload_wish_format(const struct offload_wish *w, char *buf, size_t len)
{
    size_t off = 0;
    int total = 0;
    if (len)
        buf[0] = 0;
    for (int f = 0; f < OFFLOAD_SETTABLE; f++) {
        if (w->want[f] == OFFLOAD_LEAVE)
            continue;
        int n = snprintf(buf + off, off < len ? len - off : 0, "%s%s=%s", total ? " " : "",
                         offload_names[f], w->want[f] == OFFLOAD_ON ? "on" : "off");
        if (n < 0)
            return n;
        total += n;
        off = (size_t)total < len ? (size_t)total : len;
    }
    return total;
}

static enum offload_err parse_spec(const char *spec, char *ifname, struct offload_wish *wish,
                                   char *err, size_t errlen)
{
    if (!spec || !*spec) {
        err_set(err, errlen, "empty offload specification (expected DEV:tso=off,gso=off)");
        return OFFLOAD_ERR_SPEC;
    }
    const char *colon = strrchr(spec, ':');
    if (!colon) {
        err_set(err, errlen, "'%s': expected DEV:FEATURE=on|off[,...] (e.g. eth0:tso=off,gso=off)", spec);
        return OFFLOAD_ERR_SPEC;
    }
    size_t n = (size_t)(colon - spec);
    if (n == 0) {
        err_set(err, errlen, "'%s': missing interface name before ':'", spec);
        return OFFLOAD_ERR_SPEC;
    }
    if (n >= IF_NAMESIZE) {
        err_set(err, errlen, "'%s': interface name longer than %d characters", spec, IF_NAMESIZE - 1);
        return OFFLOAD_ERR_SPEC;
    }
    char dev[IF_NAMESIZE];
    memcpy(dev, spec, n);
    dev[n] = 0;
    char e2[128];
    if (offload_check_ifname(dev, e2, sizeof e2)) {
        err_set(err, errlen, "'%s': %s", spec, e2);
        return OFFLOAD_ERR_SPEC;
    }
    const char *p = colon + 1;
    if (!*p) {
        err_set(err, errlen, "'%s': no feature after ':' (expected tso, gso or gro)", spec);
        return OFFLOAD_ERR_SPEC;
    }
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char item[64];
        if (len == 0) {
            err_set(err, errlen, "'%s': empty item", spec);
            return OFFLOAD_ERR_SPEC;
        }
        if (len >= sizeof item) {
            err_set(err, errlen, "'%s': item too long", spec);
            return OFFLOAD_ERR_SPEC;
        }
        memcpy(item, p, len);
        item[len] = 0;
        char *eq = strchr(item, '=');
        if (!eq) {
            err_set(err, errlen, "'%s': '%s' is not FEATURE=on|off", spec, item);
            return OFFLOAD_ERR_SPEC;
        }
        *eq = 0;
        const char *val = eq + 1;
        enum offload_feature f;
        if (offload_feature_parse(item, &f) < 0) {
            err_set(err, errlen, "'%s': unknown feature '%s' (expected tso, gso or gro)", spec, item);
            return OFFLOAD_ERR_SPEC;
        }
        if (f >= OFFLOAD_SETTABLE) {
            err_set(err, errlen, "'%s': %s is reported only, not set (settable: tso, gso, gro)", spec, item);
            return OFFLOAD_ERR_SPEC;
        }
        enum offload_want w;
        if (strcmp(val, "on") == 0)
            w = OFFLOAD_ON;
        else if (strcmp(val, "off") == 0)
            w = OFFLOAD_OFF;
        else {
            err_set(err, errlen, "'%s': %s: '%s' is not on or off", spec, item, val);
            return OFFLOAD_ERR_SPEC;
        }
        if (wish->want[f] != OFFLOAD_LEAVE) {
            err_set(err, errlen, "'%s': %s given twice", spec, item);
            return OFFLOAD_ERR_SPEC;
        }
        wish->want[f] = w;
        if (!end)
            break;
        p = end + 1;
        if (!*p) {
            err_set(err, errlen, "'%s': trailing ','", spec);
            return OFFLOAD_ERR_SPEC;
        }
    }
    memcpy(ifname, dev, n + 1);
    return OFFLOAD_OK;
}

enum offload_err offload_parse_spec(const char *spec, char *ifname, struct offload_wish *wish,
                                    char *err, size_t errlen)
{
    /* Nothing half-parsed reaches the caller. */
    struct offload_wish w;
    char dev[IF_NAMESIZE] = "";
    memset(&w, 0, sizeof w);
    memset(wish, 0, sizeof *wish);
    if (ifname)
        ifname[0] = 0;
    enum offload_err e = parse_spec(spec, dev, &w, err, errlen);
    if (e)
        return e;
    *wish = w;
    if (ifname)
        memcpy(ifname, dev, sizeof dev);
    return OFFLOAD_OK;
}
