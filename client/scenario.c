/* scenario: see scenario.h. */
#include "scenario.h"

#include <libconfig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cfg.h"
#include "err.h"
#include "lossrate.h"
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
    for (size_t i = 0; i < s->nlab; i++)
        scenario_lab_clear(&s->lab[i]);
    free(s->lab);
    free(s->lat);
    free(s->var);
    free(s->path);
    free(s);
}

/* The one place that puts "FILE:LINE: setting" in front of a message already in err
 * (a setter's "'VALUE': why"). cfg_error does the same for messages written here. */
static int at_setting(const config_setting_t *s, const char *path, char *err, size_t errlen)
{
    char name[256];
    const char *file = config_setting_source_file(s);
    return err_prefix(err, errlen, "%s:%u: %s", file ? file : path, config_setting_source_line(s),
                      cfg_setting_path(s, name, sizeof name));
}

/* Apply one member through a setter. Returns 1 applied, 0 absent, -1 bad (err has
 * FILE:LINE). */
static int apply_member(const config_setting_t *group, const char *key, settings_setter set, struct settings *st,
                        const char *path, char *err, size_t errlen)
{
    const config_setting_t *m = config_setting_get_member(group, key);
    if (!m)
        return 0;
    char buf[64];
    const char *text = scenario_value_text(m, buf, sizeof buf);
    if (!text)
        return cfg_error(err, errlen, m, "expected a number or a string");
    if (set(st, text, err, errlen) != 0)
        return at_setting(m, path, err, errlen);
    return 1;
}

/* servers[i].librespeed = { server = "http://H/"; dlURL = "garbage.php"; ulURL = "empty.php";
 * ckSize = 100; upload = "20MiB"; }: LibreSpeed's server-list entry (its dlURL and ulURL
 * relative to server, or absolute) as two servers: NAME, a download of dlURL?ckSize=N
 * (default 100, the web client's), and "NAME upload", an upload of UPLOAD bytes (default
 * 20MiB, the web client's blob) to ulURL. Either URL may be left out, not both. */
static int load_librespeed(const config_setting_t *e, const char *name, struct settings *st, const char *path,
                           char *err, size_t errlen)
{
    static const char *const keys[] = {"server", "dlURL", "ulURL", "ckSize", "upload", NULL};
    const config_setting_t *g = config_setting_get_member(e, "librespeed");
    if (!config_setting_is_group(g))
        return cfg_error(err, errlen, g, "expected a group { server = \"http://HOST/\"; dlURL = \"garbage.php\"; "
                                         "ulURL = \"empty.php\"; }");
    if (cfg_check_keys(g, keys, err, errlen))
        return -1;
    static const char *const not_here[] = {"url", "upload", "lab"};
    for (size_t i = 0; i < ARRAY_SIZE(not_here); i++)
        if (config_setting_get_member(e, not_here[i]))
            return cfg_error(err, errlen, config_setting_get_member(e, not_here[i]),
                             "not with librespeed (its URLs are dlURL and ulURL, its upload size librespeed.upload)");
    const char *server = "", *dl = NULL, *ul = NULL, *up = "20MiB";
    uint64_t ck = 100;
    if (cfg_get_string(g, "server", &server, err, errlen) < 0 || cfg_get_string(g, "dlURL", &dl, err, errlen) < 0 ||
        cfg_get_string(g, "ulURL", &ul, err, errlen) < 0 || cfg_get_string(g, "upload", &up, err, errlen) < 0 ||
        cfg_get_uint(g, "ckSize", 1, 1024, &ck, err, errlen) < 0)
        return -1;
    if (!server)
        server = "";
    if (!dl && !ul)
        return cfg_error(err, errlen, g, "dlURL and ulURL: missing (at least one)");
    const char *urls[2] = {dl, ul};
    for (int k = 0; k < 2; k++) {
        if (!urls[k])
            continue;
        const char *base = strstr(urls[k], "://") ? "" : server;
        char arg[4096];
        int n = snprintf(arg, sizeof arg, "%s%s%s%s", name ? name : "", name && k ? " upload" : "", name ? "=" : "",
                         base);
        /* "http://h/backend/" + "garbage.php", or "http://h/backend" + "/garbage.php" */
        const char *rel = urls[k];
        if (*base && base[strlen(base) - 1] == '/' && *rel == '/')
            rel++;
        n += snprintf(arg + n, sizeof arg - (size_t)n, "%s", rel);
        if (k == 0 && !strstr(rel, "ckSize="))
            snprintf(arg + n, sizeof arg - (size_t)n, "%sckSize=%llu", strchr(rel, '?') ? "&" : "?",
                     (unsigned long long)ck);
        if (settings_add_server(st, arg, err, errlen) != 0) {
            err_prefix(err, errlen, "librespeed.%s", k ? "ulURL" : "dlURL");
            return at_setting(g, path, err, errlen);
        }
        if (k == 1 && settings_set_server_upload(st, up, err, errlen) != 0) {
            err_prefix(err, errlen, "librespeed.upload");
            return at_setting(g, path, err, errlen);
        }
    }
    return 0;
}

static int load_servers(const config_setting_t *list, struct settings *st, struct scenario *scn, const char *path,
                        char *err, size_t errlen)
{
    static const char *const keys[] = {"name", "url", "upload", "lab", "librespeed", NULL};
    if (!list) {
        err_set(err, errlen, "servers: missing (a list of { name = \"...\"; url = \"...\"; })");
        return err_prefix(err, errlen, "%s", path);
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
        if (name && (!*name || strchr(name, '=')))
            return cfg_error(err, errlen, config_setting_get_member(e, "name"), "must be non-empty and without '='");
        if (config_setting_get_member(e, "librespeed")) {
            if (load_librespeed(e, name, st, path, err, errlen) < 0)
                return -1;
            continue;
        }
        if (!url)
            return cfg_error(err, errlen, e, "url: missing");
        if (name && (!*name || strchr(name, '=')))
            return cfg_error(err, errlen, config_setting_get_member(e, "name"), "must be non-empty and without '='");
        char arg[4096];
        snprintf(arg, sizeof arg, "%s%s%s", name ? name : "", name ? "=" : "", url);
        if (settings_add_server(st, arg, err, errlen) != 0) {
            err_prefix(err, errlen, "URL");
            return at_setting(e, path, err, errlen);
        }
        /* Per server, so one file can measure both directions. */
        if (apply_member(e, "upload", settings_set_server_upload, st, path, err, errlen) < 0)
            return -1;
        const config_setting_t *lab = config_setting_get_member(e, "lab");
        if (lab) {
            if (!scn->lab && !(scn->lab = calloc((size_t)config_setting_length(list), sizeof *scn->lab)))
                return cfg_error(err, errlen, lab, "out of memory");
            struct scenario_lab *l = &scn->lab[scn->nlab];
            int rc = scenario_lab_parse(lab, st->servers[st->nservers - 1].name, url, scn->lab, scn->nlab, l, err,
                                        errlen);
            scn->nlab++; /* counted even when bad, so that scenario_free frees its name */
            if (rc)
                return -1;
        }
    }
    return 0;
}

/* The group's "name", which must be there (names label the cells). */
static int get_name(const config_setting_t *e, const char **out, char *err, size_t errlen)
{
    *out = NULL;
    if (cfg_get_string(e, "name", out, err, errlen) < 0)
        return -1;
    return *out ? 0 : cfg_error(err, errlen, e, "name: missing");
}

/* The group's "device": absent (NULL) or a valid interface name, checked as --delay-dev. */
static int get_device(const config_setting_t *e, const char *path, const char **out, char *err, size_t errlen)
{
    *out = NULL;
    if (cfg_get_string(e, "device", out, err, errlen) < 0)
        return -1;
    if (*out && settings_check_ifname(*out, err, errlen) != 0)
        return at_setting(config_setting_get_member(e, "device"), path, err, errlen);
    return 0;
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* One element of an axis, checked by load_axis: its group, name and device (NULL when
 * absent); i of n (the element array is allocated at i == 0). 0 or -1. */
typedef int (*axis_add_fn)(struct scenario *s, const config_setting_t *e, int i, int n, const char *name,
                           const char *dev, char *err, size_t errlen);

/* An axis (latency, client_offload): a non-empty list of groups of the allowed keys,
 * each with a name no earlier element has (names label the cells) and, if any, a valid
 * device; add() takes each. 0 or -1. */
static int load_axis(const config_setting_t *list, const char *const *keys, const char *example, struct scenario *s,
                     axis_add_fn add, char *err, size_t errlen)
{
    if (!config_setting_is_list(list) || config_setting_length(list) == 0)
        return cfg_error(err, errlen, list, "expected a non-empty list ( %s, ... )", example);
    int n = config_setting_length(list);
    for (int i = 0; i < n; i++) {
        const config_setting_t *e = config_setting_get_elem(list, (unsigned)i);
        const char *name, *dev;
        if (!config_setting_is_group(e))
            return cfg_error(err, errlen, e, "expected a group %s", example);
        if (cfg_check_keys(e, keys, err, errlen) || get_name(e, &name, err, errlen) ||
            get_device(e, s->path, &dev, err, errlen))
            return -1;
        for (int k = 0; k < i; k++) {
            const char *other = NULL;
            config_setting_lookup_string(config_setting_get_elem(list, (unsigned)k), "name", &other);
            if (other && strcmp(other, name) == 0)
                return cfg_error(err, errlen, e, "name: \"%s\" is used twice", name);
        }
        if (add(s, e, i, n, name, dev, err, errlen) != 0)
            return -1;
    }
    return 0;
}

static int add_latency(struct scenario *s, const config_setting_t *e, int i, int n, const char *name,
                       const char *dev, char *err, size_t errlen)
{
    if (i == 0 && !(s->lat = calloc((size_t)n, sizeof *s->lat)))
        return cfg_error(err, errlen, e, "out of memory");
    uint64_t us = 0;
    const config_setting_t *d = config_setting_get_member(e, "delay");
    char buf[64];
    const char *text = d ? scenario_value_text(d, buf, sizeof buf) : "0";
    if (!text)
        return cfg_error(err, errlen, d, "expected a number or a string such as \"10ms\"");
    if (settings_parse_delay(text, &us, err, errlen) != 0)
        return at_setting(d, s->path, err, errlen);
    /* The path's loss, per direction, parsed as --loss is. */
    uint32_t ppm = 0;
    const config_setting_t *ls = config_setting_get_member(e, "loss");
    const char *ltext = ls ? scenario_value_text(ls, buf, sizeof buf) : "0";
    if (!ltext)
        return cfg_error(err, errlen, ls, "expected a string such as \"1%%\"");
    if (lossrate_parse(ltext, &ppm, err, errlen) != 0)
        return at_setting(ls, s->path, err, errlen);
    int any = us > 0 || ppm > 0;
    if (any && !dev)
        return cfg_error(err, errlen, e, "device: missing (the interface that gets the %s)", us ? "delay" : "loss");
    struct scenario_latency *l = &s->lat[s->nlat++];
    l->name = strdup(name);
    l->delay_us = us;
    l->loss_ppm = ppm;
    l->device = any ? dup_or_null(dev) : NULL;
    if (!l->name || (any && !l->device))
        return cfg_error(err, errlen, e, "out of memory");
    return 0;
}

static int add_variant(struct scenario *s, const config_setting_t *e, int i, int n, const char *name,
                       const char *dev, char *err, size_t errlen)
{
    if (i == 0 && !(s->var = calloc((size_t)n, sizeof *s->var)))
        return cfg_error(err, errlen, e, "out of memory");
    struct offload_wish wish = {{OFFLOAD_LEAVE}};
    /* The settable features are offload.h's, by its names. */
    for (int f = 0; f < OFFLOAD_SETTABLE; f++) {
        int v;
        int r = cfg_get_bool(e, offload_feature_name((enum offload_feature)f), &v, err, errlen);
        if (r < 0)
            return -1;
        if (r == 1)
            wish.want[f] = v ? OFFLOAD_ON : OFFLOAD_OFF;
    }
    int any = !offload_wish_empty(&wish);
    if (any && !dev)
        return cfg_error(err, errlen, e, "device: missing (the client interface whose offloads change)");
    struct scenario_variant *v = &s->var[s->nvar++];
    v->name = strdup(name);
    v->wish = wish;
    v->device = any ? dup_or_null(dev) : NULL;
    if (!v->name || (any && !v->device))
        return cfg_error(err, errlen, e, "out of memory");
    return 0;
}

static int load_latency(const config_setting_t *list, struct scenario *s, char *err, size_t errlen)
{
    static const char *const keys[] = {"name", "delay", "loss", "device", NULL};
    return load_axis(list, keys, "{ name = \"...\"; delay = \"10ms\"; device = \"eth0\"; }", s, add_latency, err,
                     errlen);
}

static int load_variants(const config_setting_t *list, struct scenario *s, char *err, size_t errlen)
{
    const char *keys[2 + OFFLOAD_SETTABLE + 1] = {"name", "device"};
    for (int f = 0; f < OFFLOAD_SETTABLE; f++)
        keys[2 + f] = offload_feature_name((enum offload_feature)f);
    return load_axis(list, keys, "{ name = \"...\"; device = \"eth0\"; tso = false; gso = false; }", s, add_variant,
                     err, errlen);
}

/* The file's measurement settings, with the setters of the options of the same meaning. */
static const struct {
    const char *key;
    settings_setter set;
} file_settings[] = {
    {"runs", settings_set_runs},       {"order", settings_set_order},         {"seed", settings_set_seed},
    {"pause", settings_set_pause},     {"stall", settings_set_stall},         {"max_time", settings_set_max_time},
    {"timeout", settings_set_timeout}, {"max_bytes", settings_set_max_bytes}, {"stall_rate", settings_set_stall_rate},
    {"parallel", settings_set_parallel}, {"split", settings_set_split},      {"upload", settings_set_upload},
    {"upload_method", settings_set_upload_method}, {"duration", settings_set_duration},
    {"interval", settings_set_interval}, {"min_bytes", settings_set_min_bytes},
    {"bottleneck", settings_set_bottleneck},
};

struct scenario *scenario_load(const char *path, struct settings *st, char *err, size_t errlen)
{
    const char *keys[ARRAY_SIZE(file_settings) + 4] = {"servers", "latency", "client_offload"};
    for (size_t i = 0; i < ARRAY_SIZE(file_settings); i++)
        keys[3 + i] = file_settings[i].key;
    config_t cfg;
    config_init(&cfg);
    struct scenario *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        err_set(err, errlen, "out of memory");
        goto fail;
    }
    if (cfg_load(&cfg, path, err, errlen) != 0)
        goto fail;
    const config_setting_t *root = config_root_setting(&cfg);
    if (cfg_check_keys(root, keys, err, errlen) ||
        load_servers(config_setting_get_member(root, "servers"), st, s, path, err, errlen))
        goto fail;
    for (size_t i = 0; i < ARRAY_SIZE(file_settings); i++)
        if (apply_member(root, file_settings[i].key, file_settings[i].set, st, path, err, errlen) < 0)
            goto fail;
    const config_setting_t *lat = config_setting_get_member(root, "latency");
    const config_setting_t *var = config_setting_get_member(root, "client_offload");
    if ((lat && load_latency(lat, s, err, errlen)) || (var && load_variants(var, s, err, errlen)))
        goto fail;
    st->format = REPORT_MARKDOWN; /* the seed's table, unless --format says otherwise */
    config_destroy(&cfg);
    return s;
fail:
    config_destroy(&cfg);
    scenario_free(s);
    return NULL;
}

struct scenario_cells *scenario_cells_new(void)
{
    return calloc(1, sizeof(struct scenario_cells));
}

void scenario_cells_free(struct scenario_cells *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->cell[i].description);
        json_decref(c->cell[i].settings);
    }
    free(c->cell);
    free(c);
}

json_t *scenario_cells_to_json(const struct scenario_cells *c)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < c->n; i++) {
        const struct scenario_cell *x = &c->cell[i];
        json_t *o = json_object();
        json_object_set_new(o, "scenario", x->latency ? json_string(x->latency) : json_null());
        json_object_set_new(o, "variant", x->variant ? json_string(x->variant) : json_null());
        json_object_set_new(o, "delay_ms", json_real(x->delay_us / 1000.0));
        json_object_set_new(o, "loss_pct", json_real(lossrate_pct(x->loss_ppm)));
        json_object_set(o, "settings", x->settings);
        json_object_set_new(o, "description", json_string(x->description));
        if (json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* Record a cell: what was applied, read back from the two netcfgs. 0 or -1 (no memory). */
static int cells_add(struct scenario_cells *c, const struct scenario_latency *L, const struct scenario_variant *V,
                     const char *desc, const struct netcfg *lat_cfg, const struct netcfg *var_cfg)
{
    struct scenario_cell *n = realloc(c->cell, (c->n + 1) * sizeof *n);
    if (!n)
        return -1;
    c->cell = n;
    json_t *a = netcfg_to_json(lat_cfg), *b = netcfg_to_json(var_cfg);
    json_object_update(a, b);
    json_decref(b);
    c->cell[c->n] = (struct scenario_cell){
        .latency = L ? L->name : NULL,
        .variant = V ? V->name : NULL,
        .delay_us = L ? L->delay_us : 0,
        .loss_ppm = L ? L->loss_ppm : 0,
        .description = strdup(desc),
        .settings = a,
    };
    if (!c->cell[c->n].description || !a) {
        free(c->cell[c->n].description);
        json_decref(a);
        return -1;
    }
    c->n++;
    return 0;
}

/* Run one cell's plan; the caller applied its settings and undoes them. */
static enum plan_status run_cell(const struct scenario_latency *L, const struct scenario_variant *V, uint64_t seed,
                    const struct settings *st, struct result_set *rs, const struct scenario_hooks *hooks)
{
    struct plan plan = {
        .servers = st->servers,
        .nservers = st->nservers,
        .runs = st->runs,
        .order = st->order,
        .seed = seed,
        .pause_s = st->pause_s,
        .dl = &st->dl,
        .scenario = L ? L->name : NULL,
        .variant = V ? V->name : NULL,
    };
    return plan_execute(&plan, rs, hooks ? &hooks->plan : NULL);
}

enum scenario_status scenario_run(const struct scenario *scn, const struct settings *st, struct result_set *rs,
                                  const struct scenario_hooks *hooks, struct scenario_cells *cells, char *err,
                                  size_t errlen)
{
    size_t nlat = scn->nlat ? scn->nlat : 1, nvar = scn->nvar ? scn->nvar : 1;
    struct netcfg *lat_cfg = netcfg_new(), *var_cfg = netcfg_new();
    enum scenario_status rc = SCENARIO_DONE;
    if (!lat_cfg || !var_cfg) {
        err_set(err, errlen, "out of memory");
        rc = SCENARIO_ERR_NOMEM;
    }
    volatile sig_atomic_t *stop = hooks ? hooks->plan.stop : NULL;
    for (size_t li = 0; li < nlat && rc == SCENARIO_DONE; li++) {
        const struct scenario_latency *L = scn->nlat ? &scn->lat[li] : NULL;
        if (L && L->device && netcfg_delay(lat_cfg, L->device, L->delay_us, L->loss_ppm, err, errlen) != 0) {
            err_prefix(err, errlen, "latency \"%s\"", L->name);
            rc = SCENARIO_ERR_SETTING;
            break;
        }
        for (size_t vi = 0; vi < nvar && rc == SCENARIO_DONE; vi++) {
            const struct scenario_variant *V = scn->nvar ? &scn->var[vi] : NULL;
            if (stop && *stop) {
                rc = SCENARIO_STOPPED;
                break;
            }
            if (V && V->device && netcfg_offload(var_cfg, V->device, &V->wish, err, errlen) != 0) {
                err_prefix(err, errlen, "client_offload \"%s\"", V->name);
                rc = SCENARIO_ERR_SETTING;
                break;
            }
            if (V && V->device && *netcfg_note(var_cfg) && hooks && hooks->note)
                hooks->note(netcfg_note(var_cfg), hooks->plan.ud);
            char d1[512] = "", d2[512] = "", desc[sizeof d1 + sizeof d2 + 2];
            netcfg_describe(lat_cfg, d1, sizeof d1);
            netcfg_describe(var_cfg, d2, sizeof d2);
            snprintf(desc, sizeof desc, "%s%s%s", d1, d1[0] && d2[0] ? "; " : "", d2);
            if (hooks && hooks->cell_start)
                hooks->cell_start(L ? L->name : NULL, V ? V->name : NULL, desc, hooks->plan.ud);
            if (cells && cells_add(cells, L, V, desc, lat_cfg, var_cfg) != 0) {
                err_set(err, errlen, "out of memory");
                rc = SCENARIO_ERR_NOMEM;
            }
            /* each random cell shuffled differently, reproducibly */
            enum plan_status prc =
                rc == SCENARIO_DONE ? run_cell(L, V, st->seed + li * 1000 + vi, st, rs, hooks) : PLAN_DONE;
            char e2[512];
            if (netcfg_end(var_cfg, e2, sizeof e2) != 0) {
                err_set(err, errlen, "restoring client_offload \"%s\": %s", V ? V->name : "", e2);
                rc = SCENARIO_ERR_SETTING;
            }
            if (prc == PLAN_FAILED && rc == SCENARIO_DONE) {
                err_set(err, errlen, "out of memory");
                rc = SCENARIO_ERR_NOMEM;
            } else if (prc == PLAN_STOPPED && rc == SCENARIO_DONE) {
                rc = SCENARIO_STOPPED;
            }
        }
        char e3[512];
        if (netcfg_end(lat_cfg, e3, sizeof e3) != 0 && (rc == SCENARIO_DONE || rc == SCENARIO_STOPPED)) {
            err_set(err, errlen, "removing latency \"%s\": %s", L ? L->name : "", e3);
            rc = SCENARIO_ERR_SETTING;
        }
    }
    netcfg_free(var_cfg);
    netcfg_free(lat_cfg);
    return rc;
}
