/* plan_json: see plan_json.h. */
#include "plan_json.h"

#include <string.h>

#include "store_choice.h"

static const struct scenario_lab *lab_of(const struct scenario *scn, const char *name)
{
    for (size_t i = 0; scn && i < scn->nlab; i++)
        if (strcmp(scn->lab[i].server, name) == 0)
            return &scn->lab[i];
    return NULL;
}

json_t *plan_json(const struct settings *s, const struct scenario *scn)
{
    json_t *srv = json_array(), *lat = json_array(), *var = json_array();
    size_t cells = 1;
    for (size_t i = 0; srv && i < s->nservers; i++) {
        const struct scenario_lab *l = lab_of(scn, s->servers[i].name);
        json_array_append_new(srv, json_pack("{s:s, s:s, s:I, s:o}", "name", s->servers[i].name, "url",
                                             s->servers[i].url, "upload", (json_int_t)s->servers[i].upload, "lab",
                                             l ? scenario_lab_to_json(l) : json_null()));
    }
    for (size_t i = 0; scn && lat && i < scn->nlat; i++)
        json_array_append_new(lat, json_pack("{s:s, s:f, s:s?}", "name", scn->lat[i].name, "delay_ms",
                                             scn->lat[i].delay_us / 1000.0, "device", scn->lat[i].device));
    for (size_t i = 0; scn && var && i < scn->nvar; i++) {
        char w[128] = "";
        if (scn->var[i].device)
            offload_wish_format(&scn->var[i].wish, w, sizeof w);
        json_array_append_new(var, json_pack("{s:s, s:s?, s:s}", "name", scn->var[i].name, "device",
                                             scn->var[i].device, "offload", w));
    }
    if (scn)
        cells = (scn->nlat ? scn->nlat : 1) * (scn->nvar ? scn->nvar : 1);
    struct store_choice c;
    char err[1024];
    json_t *store = store_choice_make(s, 0, &c, err, sizeof err) == 0 ? store_choice_json(&c) : json_null();
    return json_pack("{s:s?, s:o, s:i, s:s, s:o, s:o, s:I, s:o}", "file", scn ? scn->path : NULL, "servers", srv,
                     "runs", (int)s->runs, "order", plan_order_name(s->order), "latency", lat, "client_offload", var,
                     "downloads", (json_int_t)(cells * s->nservers * s->runs), "store", store);
}

int plan_json_print(FILE *out, const struct settings *s, const struct scenario *scn)
{
    json_t *j = plan_json(s, scn);
    int rc = j && json_dumpf(j, out, JSON_INDENT(2)) == 0 && fputc('\n', out) != EOF ? 0 : -1;
    json_decref(j);
    return rc;
}
