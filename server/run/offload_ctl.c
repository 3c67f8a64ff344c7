/* offload_ctl: see offload_ctl.h. */
#include "offload_ctl.h"

#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "err.h"
#include "log.h"
#include "offload.h"
#include "offload_session.h"

/* ERR (which starts with the interface's name) prefixed with where the file set it */
static void offload_ctl_where(const struct config *cfg, char *err, size_t errlen)
{
    if (cfg->offload.interface_line)
        err_prefix(err, errlen, "%s:%u: offload.interface", cfg->source, cfg->offload.interface_line);
    else
        err_prefix(err, errlen, "%s: offload.interface", cfg->source);
}

/* A failure in ERR, placed (offload_ctl_where): fatal when offload.required, else a warning
 * that says what happens instead (WHAT: "continuing", "a start would continue") */
static enum offload_ctl_status failed(const struct config *cfg, const char *what, char *err, size_t errlen)
{
    offload_ctl_where(cfg, err, errlen);
    if (cfg->offload.required)
        return OFFLOAD_CTL_FAILED;
    size_t n = strnlen(err, errlen);
    snprintf(err + n, errlen - n, " (%s: offload.required = false)", what);
    return OFFLOAD_CTL_WARNING;
}

enum offload_ctl_status offload_ctl_check(const struct config *cfg, char *err, size_t errlen)
{
    const struct offload_cfg *o = &cfg->offload;
    if (!o->interface || if_nametoindex(o->interface) != 0)
        return OFFLOAD_CTL_OK;
    err_set(err, errlen, "%s: no such network interface (in this network namespace)", o->interface);
    return failed(cfg, "a start would continue", err, errlen);
}

enum offload_ctl_status offload_ctl_start(struct offload_ctl *ctl, const struct config *cfg, char *err,
                                          size_t errlen)
{
    const struct offload_cfg *o = &cfg->offload;
    memset(ctl, 0, sizeof *ctl);
    if (!o->interface)
        return OFFLOAD_CTL_OK;
    char note[512] = "", now[128] = "", was[128] = "";
    enum offload_err e;
    struct offload_state before, after;
    if (offload_wish_empty(&o->wish)) { /* only reported, never changed */
        e = offload_get(o->interface, &after, err, errlen);
        if (e == OFFLOAD_OK) {
            offload_format(&after, now, sizeof now);
            log_info("offload: %s: %s (not changed: no tso/gso/gro in the configuration)", o->interface, now);
            return OFFLOAD_CTL_OK;
        }
    } else if (o->restore) {
        ctl->session = offload_session_new();
        if (!ctl->session) {
            err_set(err, errlen, "out of memory");
            return OFFLOAD_CTL_FAILED;
        }
        e = offload_session_begin(ctl->session, o->interface, &o->wish, o->state_file, note, sizeof note, err,
                                  errlen);
        if (note[0])
            log_warn("offload: %s", note);
        if (e == OFFLOAD_OK) {
            offload_format(offload_session_before(ctl->session), was, sizeof was);
            offload_format(offload_session_after(ctl->session), now, sizeof now);
        }
    } else {
        e = offload_apply(o->interface, &o->wish, &before, &after, err, errlen);
        if (e == OFFLOAD_OK) {
            offload_format(&before, was, sizeof was);
            offload_format(&after, now, sizeof now);
        }
    }
    if (e != OFFLOAD_OK) {
        offload_session_free(ctl->session);
        ctl->session = NULL;
        return failed(cfg, "continuing", err, errlen);
    }
    ctl->applied = 1;
    log_info("offload: %s: %s, verified (was %s; %s)", o->interface, now, was,
             o->restore ? "restored at exit, state saved in the state file" : "left so at exit: restore = false");
    return OFFLOAD_CTL_OK;
}

enum offload_ctl_status offload_ctl_change(struct offload_ctl *ctl, const struct config *cfg, char *err,
                                           size_t errlen)
{
    const struct offload_cfg *o = &cfg->offload;
    if (!o->interface || offload_wish_empty(&o->wish))
        return OFFLOAD_CTL_OK;
    if (!ctl->session && !ctl->applied) /* nothing changed yet: as at start (saves the original) */
        return offload_ctl_start(ctl, cfg, err, errlen);
    struct offload_state before, after;
    enum offload_err e = offload_apply(o->interface, &o->wish, &before, &after, err, errlen);
    if (e != OFFLOAD_OK) {
        offload_ctl_where(cfg, err, errlen);
        return o->required ? OFFLOAD_CTL_FAILED : OFFLOAD_CTL_WARNING;
    }
    char was[128] = "", now[128] = "";
    offload_format(&before, was, sizeof was);
    offload_format(&after, now, sizeof now);
    log_info("offload: %s: %s, verified (was %s; the original state is still the one restored at exit)",
             o->interface, now, was);
    return OFFLOAD_CTL_OK;
}

int offload_ctl_stop(struct offload_ctl *ctl, char *err, size_t errlen)
{
    if (!ctl->session)
        return 0;
    int ret = 0;
    if (offload_session_end(ctl->session, err, errlen) != OFFLOAD_OK) {
        size_t n = strnlen(err, errlen);
        snprintf(err + n, errlen - n, " (the state file is kept: `debitd --restore-offload` retries)");
        err_prefix(err, errlen, "offload: restore failed");
        ret = -1;
    } else {
        const struct offload_state *b = offload_session_before(ctl->session);
        char was[128] = "";
        if (b)
            offload_format(b, was, sizeof was);
        log_info("offload: %s restored", was[0] ? was : "original state");
    }
    offload_session_free(ctl->session);
    ctl->session = NULL;
    return ret;
}

int offload_ctl_recover(const struct config *cfg, char *note, size_t notelen, char *err, size_t errlen)
{
    const struct offload_cfg *o = &cfg->offload;
    struct offload_state st;
    if (!o->interface) {
        snprintf(note, notelen, "no offload.interface in %s: nothing to restore", cfg->source);
        return 0;
    }
    enum offload_err e = offload_state_recover(o->state_file, &st, err, errlen);
    if (e == OFFLOAD_ERR_NO_STATE) {
        snprintf(note, notelen, "%s: no saved state: nothing to restore", o->state_file);
        return 0;
    }
    if (e != OFFLOAD_OK)
        return err_prefix(err, errlen, "%s", o->state_file);
    char now[128];
    offload_format(&st, now, sizeof now);
    snprintf(note, notelen, "%s restored to %s (from %s)", st.ifname, now, o->state_file);
    return 0;
}
