/* plan_text: `debit -t`: what would run, like `nginx -t`, from the settings as
 * validated: servers, runs, the scenario's cells, offloads, delay, how each connection is
 * made (values escaped, as everything debit prints that the user or a server chose). The
 * JSON form is plan_json's. */
#ifndef DEBIT_PLAN_TEXT_H
#define DEBIT_PLAN_TEXT_H

#include <stdio.h>

#include "scenario.h"
#include "settings.h"

/* The plan of S (and SCN, NULL without a scenario file) as lines on OUT. */
void plan_text_print(FILE *out, const struct settings *s, const struct scenario *scn);

#endif
