/* plan_json: `debit -t --format json`: what would run, as one JSON document, so that
 * scripts (lab/lab.sh reads it with jq) never parse a scenario file themselves. */
#ifndef DEBIT_PLAN_JSON_H
#define DEBIT_PLAN_JSON_H

#include <jansson.h>
#include <stdio.h>

#include "scenario.h"
#include "settings.h"

/* {"file":..,"servers":[{"name","url","upload","lab":{scenario_lab_to_json}|null}],
 *  "runs":N,"order":..,"latency":[{"name","delay_ms","device"}],
 *  "client_offload":[{"name","device","offload"}],"downloads":N,
 *  "store":{"kind","location","source","problem"} (store_choice_json)}; scn may be NULL
 * (no scenario: file null, no axes). New reference, NULL on allocation failure. */
json_t *plan_json(const struct settings *s, const struct scenario *scn);

/* plan_json written to out with a newline. Returns 0 or -1 (no memory, write error). */
int plan_json_print(FILE *out, const struct settings *s, const struct scenario *scn);

#endif
