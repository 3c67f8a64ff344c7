/* opts: debit's command line. getopt_long turns argv into a list of (setter, value) pairs,
 * each value checked at once by its settings.h setter, so every error names the option
 * as the user spelled it ("-n: '0': ...") and nothing runs on a bad value. The list is
 * applied (opts_apply) after a scenario file's settings, which is what makes the
 * command line win. */
#ifndef DEBIT_OPTS_H
#define DEBIT_OPTS_H

#include <stddef.h>
#include <stdio.h>

#include "settings.h"

/* One setting of the command line. value is an argv string (borrowed) or a constant
 * ("on" for --progress); name is the option as spelled ("--runs", "-n", "URL"). */
struct opts_arg {
    settings_setter set;
    const char *value;
    char name[32];
};

struct client_opts {
    struct opts_arg *args; /* in command-line order (owned array) */
    size_t nargs;
    const char *scenario;  /* --scenario FILE (argv string) */
    int check;             /* -t/--check: validate, print the plan, run nothing */
};

enum opts_result {
    OPTS_RUN = 0,
    OPTS_HELP,
    OPTS_VERSION,
    OPTS_ERROR,
};

/* A new, empty command line; NULL on allocation failure. opts_free(NULL) is fine. */
struct client_opts *opts_new(void);
void opts_free(struct client_opts *o);

/* Parse argv into o (argv must outlive o). Every value goes through its setter (on
 * scratch settings) and, without --scenario, the combination through settings_check,
 * so OPTS_RUN means the command line is valid. On OPTS_ERROR, err holds
 * "OPTION: 'VALUE': why" or "OPTION: why". */
enum opts_result opts_parse(struct client_opts *o, int argc, char **argv, char *err, size_t errlen);

/* Apply o's settings to s, in command-line order, over what s holds (defaults, then a
 * scenario file's). Returns 0, or -1 with "OPTION: ..." in err (only on out of memory
 * once opts_parse succeeded). */
int opts_apply(const struct client_opts *o, struct settings *s, char *err, size_t errlen);

void opts_usage(FILE *out);

#endif
