/* cliopt: see cliopt.h. */
#include "cliopt.h"

#include <stdio.h>

#include "err.h"
#include "units.h"

int cliopt_error(char *err, size_t errlen, const char *opt, const char *arg, const char *why)
{
    err_set(err, errlen, "%s", why);
    if (arg)
        return err_prefix(err, errlen, "%s: '%s'", opt, arg);
    return err_prefix(err, errlen, "%s", opt);
}

static int check(enum units_err e, const char *opt, const char *arg, const char *hint, char *err, size_t errlen)
{
    if (e == UNITS_OK)
        return 0;
    char why[160];
    if (hint)
        snprintf(why, sizeof why, "%s (%s)", units_strerror(e), hint);
    else
        snprintf(why, sizeof why, "%s", units_strerror(e));
    return cliopt_error(err, errlen, opt, arg, why);
}

int cliopt_uint(const char *opt, const char *arg, uint64_t min, uint64_t max, const char *hint, uint64_t *out,
                char *err, size_t errlen)
{
    return check(units_parse_uint(arg, min, max, out), opt, arg, hint, err, errlen);
}

int cliopt_duration(const char *opt, const char *arg, const char *hint, uint64_t *usec, char *err, size_t errlen)
{
    return check(units_parse_duration(arg, usec), opt, arg, hint, err, errlen);
}
