/* store_choice: which store one debit invocation keeps its runs in (docs/store.md): --db,
 * else $DEBIT_DB, else the default SQLite file; and whether it can be written. Read by the
 * run (main.c) and by `debit -t` (plan_text, plan_json), so both say the same. */
#ifndef DEBIT_STORE_CHOICE_H
#define DEBIT_STORE_CHOICE_H

#include <jansson.h>
#include <stddef.h>

#include "settings.h"
#include "store.h"

enum store_source {
    STORE_FROM_DB = 0,  /* --db (the command line or the settings file) */
    STORE_FROM_ENV,     /* $DEBIT_DB */
    STORE_FROM_DEFAULT, /* $XDG_DATA_HOME/debit/results.db or ~/.local/share/debit/results.db */
};

struct store_choice {
    struct store_spec spec;
    enum store_source source;
    char shown[4200];   /* the location as it may be printed (a password as ***), "none" */
    char problem[1024]; /* why an SQLite store cannot be written ("PATH: why"), "" when it can */
};

/* Choose S's store. MAKE: create the default folder (the run; -t creates nothing). 0, or
 * -1 with err prefixed by the source ("DEBIT_DB: ...") for a spec that does not parse. A
 * store that cannot be written is no error here: c->problem says why. */
int store_choice_make(const struct settings *s, int make, struct store_choice *c, char *err, size_t errlen);
/* "--db", "DEBIT_DB" or "default". */
const char *store_choice_source(const struct store_choice *c);
/* "sqlite", "postgresql" or "none". */
const char *store_choice_kind(const struct store_choice *c);
/* The folder of an SQLite store (its file's), into BUF; returns BUF. */
const char *store_choice_dir(const struct store_choice *c, char *buf, size_t len);
/* {"kind", "location" (null for none), "source", "problem" (null when none)} for -t's
 * JSON; new reference, NULL when out of memory. */
json_t *store_choice_json(const struct store_choice *c);

#endif
