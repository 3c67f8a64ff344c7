/* config_json: see config_json.h. */
#include "config_json.h"

#include <stdio.h>

#include "offload.h"

const char *config_json_key(const struct config_entry *e, char *buf, size_t len)
{
    int duration = e->kind == CONFIG_SEC || e->kind == CONFIG_MSEC;
    snprintf(buf, len, "%s%s", config_entry_leaf(e), duration ? "_s" : "");
    return buf;
}

json_t *config_json_value(const struct config *c, const struct config_entry *e)
{
    const char *s;
    uint64_t v = e->kind == CONFIG_STRING || e->kind == CONFIG_HAND ? 0 : config_table_num(c, e);
    switch (e->kind) {
    case CONFIG_BOOL: return json_boolean(v);
    case CONFIG_TRISTATE: return v == OFFLOAD_LEAVE ? json_null() : json_boolean(v == OFFLOAD_ON);
    case CONFIG_UINT:
    case CONFIG_SIZE:
    case CONFIG_SEC:
    case CONFIG_RATE: return json_integer((json_int_t)v);
    case CONFIG_MSEC: return json_real((double)v / 1000);
    case CONFIG_ENUM: return json_string(e->names[v]);
    case CONFIG_STRING: return (s = config_table_str(c, e)) ? json_string(s) : json_null();
    case CONFIG_HAND: break;
    }
    return NULL;
}

json_t *config_json_group(const struct config *c, const char *group)
{
    json_t *o = json_object();
    for (size_t i = 0; o && i < config_table_len; i++) {
        const struct config_entry *e = &config_table[i];
        if (!config_entry_in(e, group) || e->status_hidden || e->kind == CONFIG_HAND)
            continue;
        char key[64];
        if (json_object_set_new(o, config_json_key(e, key, sizeof key), config_json_value(c, e)) != 0) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}
