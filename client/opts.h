/* opts: debit's command line. Defaults in opts_defaults(), then getopt_long; every error
 * names the option and what was expected. */
#ifndef DEBIT_OPTS_H
#define DEBIT_OPTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "download.h"
#include "plan.h"
#include "report.h"

#define OPTS_MAX_SERVERS 64
#define OPTS_MAX_OFFLOADS 8

struct opts_server {
    char *name; /* owned */
    char *url;  /* owned */
};

struct client_opts {
    struct opts_server servers[OPTS_MAX_SERVERS];
    size_t nservers;
    unsigned runs;
    enum plan_order order;
    uint64_t seed;
    int seed_given;
    double pause_s;
    struct dl_options dl;        /* dl.resolve / dl.connect_to are owned here */
    enum report_format format;
    const char *output;          /* -o FILE (argv string) */
    const char *jsonl;
    int quiet;
    int progress;                /* -1 auto (stderr is a TTY), 0, 1 */
    const char *offloads[OPTS_MAX_OFFLOADS]; /* --offload DEV:tso=off,... (argv strings) */
    size_t noffloads;
    const char *scenario;        /* --scenario FILE */
    const char *plot;            /* --plot FILE.png|svg */
    double delay_s;              /* --delay */
    const char *delay_dev;       /* --delay-dev */
    int check;                   /* -t/--check: validate, print the plan, run nothing */
    unsigned char given[320];    /* option codes seen on the command line (opts_given) */
};

enum opts_result {
    OPTS_RUN = 0,
    OPTS_HELP,
    OPTS_VERSION,
    OPTS_ERROR,
};

void opts_defaults(struct client_opts *o);
/* Parse argv into o (argv strings are borrowed, so argv must outlive o). On OPTS_ERROR,
 * err holds "OPTION: reason". */
enum opts_result opts_parse(struct client_opts *o, int argc, char **argv, char *err, size_t errlen);
void opts_free(struct client_opts *o);
/* Add a server "[NAME=]URL"; NAME defaults to the URL's host (host:port, then a number,
 * when that would repeat a name). Returns 0 or -1 (err). Used by the scenario runner too. */
int opts_add_server(struct client_opts *o, const char *arg, char *err, size_t errlen);
void opts_usage(FILE *out);
/* Was the long option NAME ("runs", "order", ...) given on the command line? A scenario
 * file's settings yield to the command line's. */
int opts_given(const struct client_opts *o, const char *name);

#endif
