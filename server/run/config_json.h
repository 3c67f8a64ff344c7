/* config_json: debitd's settings as /status shows them, made from the settings table
 * (config_table.h) so that a setting added to a shown group is shown without more code. */
#ifndef DEBITD_CONFIG_JSON_H
#define DEBITD_CONFIG_JSON_H

#include <jansson.h>
#include <stddef.h>

#include "config.h"
#include "config_table.h"

/* The /status key of E: its leaf, with "_s" for a duration ("idle_timeout_s"). Into BUF;
 * returns BUF. */
const char *config_json_key(const struct config_entry *e, char *buf, size_t len);
/* E's value in C as JSON (new reference): numbers as integers (bytes, bytes/s, seconds),
 * milliseconds as a real number of seconds, booleans, enum names, strings; null for an
 * unset string or an untouched tristate. NULL for a CONFIG_HAND row or out of memory. */
json_t *config_json_value(const struct config *c, const struct config_entry *e);
/* Every row of GROUP ("limits") but those marked status_hidden, in the table's order, as
 * one object keyed by config_json_key (new; NULL when out of memory). */
json_t *config_json_group(const struct config *c, const char *group);

#endif
