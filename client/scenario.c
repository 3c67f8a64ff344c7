/* scenario: see scenario.h. */
#include "scenario.h"

#include <libconfig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg.h"
#include "netcfg.h"

void scenario_free(struct scenario *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nlat; i++) {
        free(s->lat[i].name);
        free(s->lat[i].device);
    }
    for (size_t i = 0; i < s->nvar; i++) {
        free(s->var[i].name);
        free(s->var[i].device);
    }
    free(s->lat);
    free(s->var);
    free(s->path);
    free(s);
}

static int load_servers(const config_setting_t *list, struct client_opts *o, char *err, size_t errlen)
{
    static const char *const keys[] = {"name", "url", NULL};
    if (!list) {
        snprintf(err, errlen, "servers: missing (a list of { name = \"...\"; url = \"...\"; })");
        return -1;
    }
    if (!config_setting_is_list(list) || config_setting_length(list) == 0)
        return cfg_error(err, errlen, list, "expected a non-empty list ( { name = \"...\"; url = \"...\"; }, ... )");
    for (int i = 0; i < config_setting_length(list); i++) {
        const config_setting_t *e = config_setting_get_elem(list, (unsigned)i);
        if (!config_setting_is_group(e))
            return cfg_error(err, errlen, e, "expected a group { name = \"...\"; url = \"...\"; }");
        if (cfg_check_keys(e, keys, err, errlen))
            return -1;
        const char *name = NULL, *url = NULL;
        if (cfg_get_string(e, "name", &name, err, errlen) < 0 || cfg_get_string(e, "url", &url, err, errlen) < 0)
            return -1;
        if (!url)
            return cfg_error(err, errlen, e, "url: missing");
        if (name && (!*name || strchr(name, '=')))
            return cfg_error(err, errlen, config_setting_get_member(e, "name"), "must be non-empty and without '='");
        char arg[4096], why[512];
        snprintf(arg, sizeof arg, "%s%s%s", name ? name : "", name ? "=" : "", url);
        if (opts_add_server(o, arg, why, sizeof why) != 0)
            return cfg_error(err, errlen, e, "%s", why);
    }
    return 0;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static int load_latency(const config_setting_t *list, struct scenario *s, char *err, size_t errlen)
{
    static const char *const keys[] = {"name", "delay", "device", NULL};
    if (!config_setting_is_list(list) || config_setting_length(list) == 0)
        return cfg_error(err, errlen, list, "expected a non-empty list ( { name = \"...\"; delay = \"10ms\"; device = \"eth0\"; }, ... )");
    s->nlat = (size_t)config_setting_length(list);
    s->lat = calloc(s->nlat, sizeof *s->lat);
    if (!s->lat)
        return cfg_error(err, errlen, list, "out of memory");
    for (size_t i = 0; i < s->nlat; i++) {
        const config_setting_t *e = config_setting_get_elem(list, (unsigned)i);
        if (!config_setting_is_group(e))
            return cfg_error(err, errlen, e, "expected a group { name = ...; delay = ...; device = ...; }");
        if (cfg_check_keys(e, keys, err, errlen))
            return -1;
        const char *name = NULL, *dev = NULL;
        uint64_t us = 0;
        if (cfg_get_string(e, "name", &name, err, errlen) < 0 || cfg_get_string(e, "device", &dev, err, errlen) < 0 ||
            cfg_get_duration(e, "delay", &us, err, errlen) < 0)
            return -1;
        if (!name)
            return cfg_error(err, errlen, e, "name: missing");
        if (us > 0 && !dev)
            return cfg_error(err, errlen, e, "device: missing (the interface that gets the delay)");
        for (size_t k = 0; k < i; k++)
            if (strcmp(s->lat[k].name, name) == 0)
                return cfg_error(err, errlen, e, "name: \"%s\" is used twice", name);
        s->lat[i].name = strdup(name);
        s->lat[i].delay_us = us;
        s->lat[i].device = us ? dup_or_null(dev) : NULL;
    }
    return 0;
}

static int load_variants(const config_setting_t *list, struct scenario *s, char *err, size_t errlen)
{
    static const char *const keys[] = {"name", "device", "tso", "gso", "gro", NULL};
    static const char *const feats[] = {"tso", "gso", "gro"};
    if (!config_setting_is_list(list) || config_setting_length(list) == 0)
        return cfg_error(err, errlen, list, "expected a non-empty list ( { name = \"...\"; device = \"eth0\"; tso = false; gso = false; }, ... )");
    s->nvar = (size_t)config_setting_length(list);
    s->var = calloc(s->nvar, sizeof *s->var);
    if (!s->var)
        return cfg_error(err, errlen, list, "out of memory");
    for (size_t i = 0; i < s->nvar; i++) {
        const config_setting_t *e = config_setting_get_elem(list, (unsigned)i);
        if (!config_setting_is_group(e))
            return cfg_error(err, errlen, e, "expected a group { name = ...; device = ...; tso = ...; gso = ...; }");
        if (cfg_check_keys(e, keys, err, errlen))
            return -1;
        const char *name = NULL, *dev = NULL;
        if (cfg_get_string(e, "name", &name, err, errlen) < 0 || cfg_get_string(e, "device", &dev, err, errlen) < 0)
            return -1;
        if (!name)
            return cfg_error(err, errlen, e, "name: missing");
        for (size_t k = 0; k < i; k++)
            if (strcmp(s->var[k].name, name) == 0)
                return cfg_error(err, errlen, e, "name: \"%s\" is used twice", name);
        int any = 0;
        for (int f = 0; f < 3; f++) {
            int v;
            int r = cfg_get_bool(e, feats[f], &v, err, errlen);
            if (r < 0)
                return -1;
            if (r == 1) {
                s->var[i].wish.want[f] = v ? OFFLOAD_ON : OFFLOAD_OFF;
                any = 1;
            }
        }
        if (any && !dev)
            return cfg_error(err, errlen, e, "device: missing (the client interface whose offloads change)");
        s->var[i].name = strdup(name);
        s->var[i].device = any ? dup_or_null(dev) : NULL;
    }
    return 0;
}

/* Measurement settings that the command line may override. */
static int load_measurement(const config_setting_t *root, struct client_opts *o, char *err, size_t errlen)
{
    uint64_t v, us;
    int r;
    const char *str;
    if ((r = cfg_get_uint(root, "runs", 1, 100000, &v, err, errlen)) < 0)
        return -1;
    if (r == 1 && !opts_given(o, "runs"))
        o->runs = (unsigned)v;
    if ((r = cfg_get_string(root, "order", &str, err, errlen)) < 0)
        return -1;
    if (r == 1) {
        enum plan_order ord;
        if (plan_order_parse(str, &ord) != 0)
            return cfg_error(err, errlen, config_setting_get_member(root, "order"),
                             "expected \"alternate\", \"sequential\" or \"random\"");
        if (!opts_given(o, "order"))
            o->order = ord;
    }
    if ((r = cfg_get_uint(root, "seed", 0, UINT64_MAX, &v, err, errlen)) < 0)
        return -1;
    if (r == 1 && !opts_given(o, "seed")) {
        o->seed = v;
        o->seed_given = 1;
    }
    struct {
        const char *key;
        double *dst;
    } durs[] = {{"pause", &o->pause_s}, {"stall", &o->dl.stall_s}, {"max_time", &o->dl.max_time_s},
                {"timeout", &o->dl.connect_timeout_s}};
    static const char *const cli[] = {"pause", "stall", "max-time", "timeout"};
    for (size_t i = 0; i < sizeof durs / sizeof durs[0]; i++) {
        if ((r = cfg_get_duration(root, durs[i].key, &us, err, errlen)) < 0)
            return -1;
        if (r == 1 && !opts_given(o, cli[i]))
            *durs[i].dst = us / 1e6;
    }
    if ((r = cfg_get_size(root, "max_bytes", &v, err, errlen)) < 0)
        return -1;
    if (r == 1 && !opts_given(o, "max-bytes"))
        o->dl.max_bytes = v;
    return 0;
}

struct scenario *scenario_load(const char *path, struct client_opts *o, char *err, size_t errlen)
{
    static const char *const keys[] = {"servers", "runs", "order", "seed", "pause", "stall", "max_time",
                                       "timeout", "max_bytes", "latency", "client_offload", NULL};
    config_t cfg;
    config_init(&cfg);
    struct scenario *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        config_destroy(&cfg);
        return NULL;
    }
    s->path = strdup(path);
    const config_setting_t *root;
    if (cfg_load(&cfg, path, err, errlen) != 0)
        goto fail;
    root = config_root_setting(&cfg);
    if (cfg_check_keys(root, keys, err, errlen) || load_servers(config_setting_get_member(root, "servers"), o, err, errlen) ||
        load_measurement(root, o, err, errlen))
        goto fail;
    const config_setting_t *lat = config_setting_get_member(root, "latency");
    const config_setting_t *var = config_setting_get_member(root, "client_offload");
    if (lat && load_latency(lat, s, err, errlen))
        goto fail;
    if (var && load_variants(var, s, err, errlen))
        goto fail;
    config_destroy(&cfg);
    return s;
fail:
    /* cfg_error without a setting cannot know the file: add it. */
    if (strncmp(err, "servers:", 8) == 0) {
        char tmp[1024];
        snprintf(tmp, sizeof tmp, "%s: %s", path, err);
        snprintf(err, errlen, "%s", tmp);
    }
    config_destroy(&cfg);
    scenario_free(s);
    return NULL;
}

int scenario_run(const struct scenario *s, const struct client_opts *o, struct result_set *rs,
                 const struct scenario_hooks *hooks, json_t *cells, char *err, size_t errlen)
{
    struct plan_server servers[OPTS_MAX_SERVERS];
    for (size_t i = 0; i < o->nservers; i++)
        servers[i] = (struct plan_server){o->servers[i].name, o->servers[i].url};
    size_t nlat = s->nlat ? s->nlat : 1, nvar = s->nvar ? s->nvar : 1;
    struct netcfg *lat_cfg = netcfg_new(), *var_cfg = netcfg_new();
    int rc = 0;
    if (!lat_cfg || !var_cfg) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    volatile sig_atomic_t *stop = hooks ? hooks->plan.stop : NULL;
    for (size_t li = 0; li < nlat && rc == 0; li++) {
        const struct scenario_latency *L = s->nlat ? &s->lat[li] : NULL;
        if (L && L->delay_us && netcfg_delay(lat_cfg, L->device, L->delay_us, err, errlen) != 0) {
            char tmp[1024];
            snprintf(tmp, sizeof tmp, "latency \"%s\": %s", L->name, err);
            snprintf(err, errlen, "%s", tmp);
            rc = -1;
            break;
        }
        for (size_t vi = 0; vi < nvar && rc == 0; vi++) {
            const struct scenario_variant *V = s->nvar ? &s->var[vi] : NULL;
            if (stop && *stop) {
                rc = 1;
                break;
            }
            if (V && V->device && netcfg_offload(var_cfg, V->device, &V->wish, err, errlen) != 0) {
                char tmp[1024];
                snprintf(tmp, sizeof tmp, "client_offload \"%s\": %s", V->name, err);
                snprintf(err, errlen, "%s", tmp);
                rc = -1;
                break;
            }
            if (V && V->device && *netcfg_note(var_cfg))
                fprintf(stderr, "debit: %s\n", netcfg_note(var_cfg)); /* netcfg does not print */
            char d1[512] = "", d2[512] = "", desc[sizeof d1 + sizeof d2 + 2];
            netcfg_describe(lat_cfg, d1, sizeof d1);
            netcfg_describe(var_cfg, d2, sizeof d2);
            snprintf(desc, sizeof desc, "%s%s%s", d1, d1[0] && d2[0] ? "; " : "", d2);
            if (hooks && hooks->cell_start)
                hooks->cell_start(L ? L->name : NULL, V ? V->name : NULL, desc, hooks->plan.ud);
            if (cells) {
                json_t *c = json_object();
                json_object_set_new(c, "scenario", L ? json_string(L->name) : json_null());
                json_object_set_new(c, "variant", V ? json_string(V->name) : json_null());
                json_object_set_new(c, "delay_ms", json_real(L ? L->delay_us / 1000.0 : 0));
                json_t *a = netcfg_to_json(lat_cfg), *b = netcfg_to_json(var_cfg);
                json_object_update(a, b);
                json_decref(b);
                json_object_set_new(c, "settings", a);
                json_object_set_new(c, "description", json_string(desc));
                json_array_append_new(cells, c);
            }
            struct plan plan = {
                .servers = servers,
                .nservers = o->nservers,
                .runs = o->runs,
                .order = o->order,
                .seed = o->seed + li * 1000 + vi, /* each random cell shuffled differently, reproducibly */
                .pause_s = o->pause_s,
                .dl = &o->dl,
                .scenario = L ? L->name : NULL,
                .variant = V ? V->name : NULL,
            };
            int prc = plan_execute(&plan, rs, hooks ? &hooks->plan : NULL);
            char e2[512];
            if (netcfg_end(var_cfg, e2, sizeof e2) != 0) {
                snprintf(err, errlen, "restoring client_offload \"%s\": %s", V ? V->name : "", e2);
                rc = -1;
            }
            if (prc < 0 && rc == 0) {
                snprintf(err, errlen, "out of memory");
                rc = -1;
            } else if (prc == 1 && rc == 0) {
                rc = 1;
            }
        }
        char e3[512];
        if (netcfg_end(lat_cfg, e3, sizeof e3) != 0 && rc >= 0) {
            snprintf(err, errlen, "removing latency \"%s\": %s", L ? L->name : "", e3);
            rc = -1;
        }
    }
    netcfg_free(var_cfg);
    netcfg_free(lat_cfg);
    return rc;
}
