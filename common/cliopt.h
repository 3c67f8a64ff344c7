/* cliopt: command-line option values that carry numbers, checked with units.h, and the
 * one error form both programs print for a bad value: "OPT: 'ARG': WHY" (e.g.
 * "--queue-num: '7x': not a number (0..65535)"). Errors go to the caller's buffer; nothing
 * here prints or exits. */
#ifndef DEBIT_CLIOPT_H
#define DEBIT_CLIOPT_H

#include <stddef.h>
#include <stdint.h>

/* Fill err with "OPT: 'ARG': WHY", or "OPT: WHY" when arg is NULL. Always returns -1. */
int cliopt_error(char *err, size_t errlen, const char *opt, const char *arg, const char *why);

/* Parse arg with units_parse_uint / _duration. Return 0 with *out set, or -1 with
 * "OPT: 'ARG': <units_strerror>" in err, followed by " (HINT)" when hint is not NULL. */
int cliopt_uint(const char *opt, const char *arg, uint64_t min, uint64_t max, const char *hint, uint64_t *out,
                char *err, size_t errlen);
int cliopt_duration(const char *opt, const char *arg, const char *hint, uint64_t *usec, char *err, size_t errlen);

#endif
