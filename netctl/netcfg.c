/* netcfg: see netcfg.h. */
#include "netcfg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delay.h"
#include "err.h"
#include "lossrate.h"
#include "offload_session.h"

#define NETCFG_MAX_OFFLOADS OFFLOAD_SESSION_MAX

struct netcfg {
    struct offload_session *off[NETCFG_MAX_OFFLOADS];
    size_t noff;
    struct delay *delay;
    uint64_t delay_us;
    uint32_t loss_ppm;
    char delay_dev[64];
    char note[256];     /* what the last netcfg_offload() wants the user to know */
};

struct netcfg *netcfg_new(void)
{
    return calloc(1, sizeof(struct netcfg));
}

void netcfg_free(struct netcfg *n)
{
    if (!n)
        return;
    char err[256];
    netcfg_end(n, err, sizeof err);
    free(n);
}

int netcfg_offload(struct netcfg *n, const char *ifname, const struct offload_wish *wish, char *err, size_t errlen)
{
    if (n->noff >= NETCFG_MAX_OFFLOADS) {
        err_set(err, errlen, "too many interfaces with offload changes");
        return -1;
    }
    struct offload_session *s = offload_session_new();
    if (!s) {
        err_set(err, errlen, "out of memory");
        return -1;
    }
    char path[256];
    n->note[0] = '\0';
    offload_session_default_path(ifname, path, sizeof path);
    if (offload_session_begin(s, ifname, wish, path, n->note, sizeof n->note, err, errlen) != OFFLOAD_OK) {
        offload_session_free(s);
        n->note[0] = '\0';
        return -1;
    }
    n->off[n->noff++] = s;
    return 0;
}

const char *netcfg_note(const struct netcfg *n)
{
    return n->note;
}

int netcfg_delay(struct netcfg *n, const char *dev, uint64_t delay_us, uint32_t loss_ppm, char *err, size_t errlen)
{
    if (n->delay) {
        err_set(err, errlen, "a delay is already applied (on %s)", n->delay_dev);
        return -1;
    }
    struct delay *d = delay_new(dev, delay_us, err, errlen);
    if (!d)
        return -1;
    if (delay_set_loss(d, loss_ppm, err, errlen) < 0 || delay_apply(d, err, errlen) < 0) {
        delay_free(d);
        return -1;
    }
    n->delay = d;
    n->delay_us = delay_us;
    n->loss_ppm = loss_ppm;
    snprintf(n->delay_dev, sizeof n->delay_dev, "%s", dev);
    return 0;
}

int netcfg_end(struct netcfg *n, char *err, size_t errlen)
{
    int rc = 0;
    size_t off = 0;
    err[0] = 0;
    if (n->delay) {
        char e[256];
        if (delay_remove(n->delay, e, sizeof e) < 0) {
            rc = -1;
            off += (size_t)snprintf(err + off, off < errlen ? errlen - off : 0, "delay on %s: %s; ", n->delay_dev, e);
        }
        delay_free(n->delay);
        n->delay = NULL;
    }
    while (n->noff > 0) {
        struct offload_session *s = n->off[--n->noff];
        char e[256];
        if (offload_session_end(s, e, sizeof e) != OFFLOAD_OK) {
            rc = -1;
            if (off < errlen)
                off += (size_t)snprintf(err + off, errlen - off, "offloads: %s; ", e);
        }
        offload_session_free(s);
    }
    return rc;
}

json_t *netcfg_to_json(const struct netcfg *n)
{
    json_t *o = json_object();
    if (n->noff) {
        json_t *a = json_array();
        for (size_t i = 0; i < n->noff; i++) {
            const struct offload_state *after = offload_session_after(n->off[i]);
            const struct offload_state *before = offload_session_before(n->off[i]);
            if (!after)
                continue;
            json_t *j = offload_to_json(after);
            if (before)
                json_object_set_new(j, "before", offload_to_json(before));
            json_array_append_new(a, j);
        }
        json_object_set_new(o, "offload", a);
    }
    if (n->delay) {
        char desc[256];
        delay_describe(n->delay, desc, sizeof desc);
        json_object_set_new(o, "delay",
                            json_pack("{s:s, s:f, s:f, s:s, s:s}", "device", n->delay_dev, "rtt_ms",
                                      n->delay_us / 1000.0, "loss_pct", lossrate_pct(n->loss_ppm), "mechanism", delay_mechanism_name(delay_mechanism_used(n->delay)),
                                      "description", desc));
    }
    return o;
}

int netcfg_describe(const struct netcfg *n, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = 0;
    for (size_t i = 0; i < n->noff && off < len; i++) {
        const struct offload_state *after = offload_session_after(n->off[i]);
        if (!after)
            continue;
        char f[128];
        offload_format(after, f, sizeof f);
        off += (size_t)snprintf(buf + off, len - off, "%soffloads %s: %s", off ? "; " : "", after->ifname, f);
    }
    if (n->delay && off < len) {
        char desc[256];
        delay_describe(n->delay, desc, sizeof desc);
        off += (size_t)snprintf(buf + off, len - off, "%sdelay %s", off ? "; " : "", desc);
    }
    return (int)off;
}
