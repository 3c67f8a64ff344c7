/* store_choice: see store_choice.h. */
#include "store_choice.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

int store_choice_make(const struct settings *s, int make, struct store_choice *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    const char *env = getenv("DEBIT_DB");
    c->source = s->db ? STORE_FROM_DB : env && *env ? STORE_FROM_ENV : STORE_FROM_DEFAULT;
    if (s->db ? store_spec_parse(s->db, &c->spec, err, errlen) : store_spec_default(&c->spec, err, errlen))
        return s->db ? err_prefix(err, errlen, "--db") : -1; /* store_spec_default names DEBIT_DB */
    store_spec_display(&c->spec, c->shown, sizeof c->shown);
    if (store_spec_writable(&c->spec, make, c->problem, sizeof c->problem) != 0 && !c->problem[0])
        snprintf(c->problem, sizeof c->problem, "cannot be written");
    return 0;
}

const char *store_choice_source(const struct store_choice *c)
{
    static const char *const names[] = {"--db", "DEBIT_DB", "default"};
    return names[c->source];
}

const char *store_choice_kind(const struct store_choice *c)
{
    return c->spec.kind == STORE_SQLITE ? "sqlite" : c->spec.kind == STORE_PG ? "postgresql" : "none";
}

const char *store_choice_dir(const struct store_choice *c, char *buf, size_t len)
{
    snprintf(buf, len, "%s", c->spec.target);
    char *slash = strrchr(buf, '/');
    if (!slash)
        snprintf(buf, len, ".");
    else
        slash[slash == buf] = '\0';
    return buf;
}

json_t *store_choice_json(const struct store_choice *c)
{
    int none = c->spec.kind == STORE_NONE;
    return json_pack("{s:s, s:s?, s:s, s:s?}", "kind", store_choice_kind(c), "location", none ? NULL : c->shown,
                     "source", store_choice_source(c), "problem", c->problem[0] ? c->problem : NULL);
}
