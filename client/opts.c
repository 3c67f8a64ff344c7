/* opts: see opts.h. */
#include "opts.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "err.h"

struct client_opts *opts_new(void)
{
    return calloc(1, sizeof(struct client_opts));
}

void opts_free(struct client_opts *o)
{
    if (!o)
        return;
    free(o->args);
    free(o);
}

void opts_usage(FILE *out)
{
    fputs("Usage: debit [OPTIONS] [NAME=]URL...\n"
          "Download test files from several servers, N times each, alternating, and report the\n"
          "median of each download's average throughput (wget's figure), per server.\n"
          "\n"
          "Measurement:\n"
          "  -n, --runs N              downloads per server (default 5)\n"
          "      --order ORDER         alternate (A B A B, default), sequential or random\n"
          "      --seed N              seed of the random order (default: from the clock, printed)\n"
          "      --pause SECONDS       pause between downloads (default 0)\n"
          "      --max-bytes SIZE      stop each download after SIZE bytes (Range request, else abort)\n"
          "      --stall SECONDS       fail a download that receives less than --stall-rate\n"
          "                            over the last SECONDS (default: no stall check)\n"
          "      --stall-rate RATE     minimum rate for --stall, e.g. 1kB/s (default), 64kbit;\n"
          "                            0: only a complete stop\n"
          "      --max-time SECONDS    fail a download that lasts longer (default 600; 0: no limit)\n"
          "      --timeout SECONDS     connect timeout\n"
          "Network:\n"
          "  -4, -6                    IPv4 or IPv6 only\n"
          "      --resolve HOST:PORT:ADDR      use ADDR for HOST:PORT (repeatable, as curl)\n"
          "      --connect-to HOST:PORT:HOST2:PORT2  connect there instead (repeatable, as curl)\n"
          "      --interface DEV       send from interface DEV\n"
          "      --local-address ADDR  send from address ADDR\n"
          "      --user-agent STRING   User-Agent header (default debit/VERSION)\n"
          "      --rcvbuf SIZE         fixed socket receive buffer (default: kernel autotuning)\n"
          "      --offload DEV:tso=on|off,gso=on|off[,gro=on|off]\n"
          "                            set client offloads for the measurement, restored at exit\n"
          "      --delay DURATION      add round-trip delay (e.g. 10ms) for the measurement, removed at exit\n"
          "      --delay-dev DEV       interface that gets it (netem, else debit's NFQUEUE delay line)\n"
          "Output:\n"
          "      --format FMT          table (default), markdown, csv or json\n"
          "  -o, --output FILE         write the result there (atomically) instead of stdout\n"
          "      --jsonl FILE          append each finished run as a JSON line (fsynced)\n"
          "      --plot FILE           plot medians and throughput over time (.png or .svg, gnuplot)\n"
          "      --progress, --no-progress   live progress line on stderr (default: if a TTY)\n"
          "  -q, --quiet               no progress line and no messages but errors\n"
          "  -w, --write-out FORMAT    print FORMAT per server instead of the report, as curl -w:\n"
          "                            %{server} %{median_mbps} %{runs_ok} %{runs_failed} %{json} ... \\n\n"
          "Experiments:\n"
          "      --scenario FILE       run a scenario file (servers x latency x client offloads)\n"
          "  -t, --check               validate the options (and scenario file), print the plan, exit\n"
          "  -h, --help                this help\n"
          "  -V, --version             version\n"
          "\n"
          "Exit status: 0 all runs ok, 1 some runs failed, 2 usage error; interrupted\n"
          "(finished runs reported, settings put back): 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP.\n",
          out);
}

enum {
    OPT_ORDER = 256,
    OPT_SEED,
    OPT_PAUSE,
    OPT_MAX_BYTES,
    OPT_STALL,
    OPT_STALL_RATE,
    OPT_MAX_TIME,
    OPT_TIMEOUT,
    OPT_RESOLVE,
    OPT_CONNECT_TO,
    OPT_INTERFACE,
    OPT_LOCAL_ADDRESS,
    OPT_USER_AGENT,
    OPT_FORMAT,
    OPT_JSONL,
    OPT_PROGRESS,
    OPT_NO_PROGRESS,
    OPT_OFFLOAD,
    OPT_SCENARIO,
    OPT_PLOT,
    OPT_DELAY,
    OPT_DELAY_DEV,
    OPT_RCVBUF,
};

static const struct option long_opts[] = {
    {"runs", required_argument, NULL, 'n'},
    {"order", required_argument, NULL, OPT_ORDER},
    {"seed", required_argument, NULL, OPT_SEED},
    {"pause", required_argument, NULL, OPT_PAUSE},
    {"max-bytes", required_argument, NULL, OPT_MAX_BYTES},
    {"stall", required_argument, NULL, OPT_STALL},
    {"stall-rate", required_argument, NULL, OPT_STALL_RATE},
    {"max-time", required_argument, NULL, OPT_MAX_TIME},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"resolve", required_argument, NULL, OPT_RESOLVE},
    {"connect-to", required_argument, NULL, OPT_CONNECT_TO},
    {"interface", required_argument, NULL, OPT_INTERFACE},
    {"local-address", required_argument, NULL, OPT_LOCAL_ADDRESS},
    {"user-agent", required_argument, NULL, OPT_USER_AGENT},
    {"rcvbuf", required_argument, NULL, OPT_RCVBUF},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"output", required_argument, NULL, 'o'},
    {"jsonl", required_argument, NULL, OPT_JSONL},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"quiet", no_argument, NULL, 'q'},
    {"write-out", required_argument, NULL, 'w'},
    {"offload", required_argument, NULL, OPT_OFFLOAD},
    {"scenario", required_argument, NULL, OPT_SCENARIO},
    {"plot", required_argument, NULL, OPT_PLOT},
    {"delay", required_argument, NULL, OPT_DELAY},
    {"delay-dev", required_argument, NULL, OPT_DELAY_DEV},
    {"check", no_argument, NULL, 't'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

/* Which setter an option feeds; value, when set, replaces optarg (flags). */
static const struct {
    int val;
    settings_setter set;
    const char *value;
} setters[] = {
    {'n', settings_set_runs, NULL},
    {OPT_ORDER, settings_set_order, NULL},
    {OPT_SEED, settings_set_seed, NULL},
    {OPT_PAUSE, settings_set_pause, NULL},
    {OPT_MAX_BYTES, settings_set_max_bytes, NULL},
    {OPT_STALL, settings_set_stall, NULL},
    {OPT_STALL_RATE, settings_set_stall_rate, NULL},
    {OPT_MAX_TIME, settings_set_max_time, NULL},
    {OPT_TIMEOUT, settings_set_timeout, NULL},
    {OPT_RESOLVE, settings_add_resolve, NULL},
    {OPT_CONNECT_TO, settings_add_connect_to, NULL},
    {OPT_INTERFACE, settings_set_interface, NULL},
    {OPT_LOCAL_ADDRESS, settings_set_local_address, NULL},
    {OPT_USER_AGENT, settings_set_user_agent, NULL},
    {OPT_RCVBUF, settings_set_rcvbuf, NULL},
    {'4', settings_set_ip_version, "4"},
    {'6', settings_set_ip_version, "6"},
    {OPT_FORMAT, settings_set_format, NULL},
    {'o', settings_set_output, NULL},
    {OPT_JSONL, settings_set_jsonl, NULL},
    {OPT_PROGRESS, settings_set_progress, "on"},
    {OPT_NO_PROGRESS, settings_set_progress, "off"},
    {'q', settings_set_quiet, "on"},
    {'w', settings_set_write_out, NULL},
    {OPT_OFFLOAD, settings_add_offload, NULL},
    {OPT_PLOT, settings_set_plot, NULL},
    {OPT_DELAY, settings_set_delay, NULL},
    {OPT_DELAY_DEV, settings_set_delay_dev, NULL},
};

static const char *opt_name(int c, char *buf, size_t len)
{
    for (const struct option *lo = long_opts; lo->name; lo++)
        if (lo->val == c) {
            snprintf(buf, len, "--%s", lo->name);
            return buf;
        }
    snprintf(buf, len, "-%c", c);
    return buf;
}

/* Record one setting and check its value on the scratch settings. */
static int add_arg(struct client_opts *o, struct settings *scratch, settings_setter set, const char *value,
                   const char *name, char *err, size_t errlen)
{
    if (set(scratch, value, err, errlen) != 0)
        return err_prefix(err, errlen, "%s", name);
    struct opts_arg *a = &o->args[o->nargs++];
    a->set = set;
    a->value = value;
    snprintf(a->name, sizeof a->name, "%s", name);
    return 0;
}

/* One option from getopt: -t and --scenario belong to the command line itself, the
 * rest are settings. */
static int one_opt(struct client_opts *o, struct settings *scratch, int c, const char *name, const char *arg, char *err,
                   size_t errlen)
{
    if (c == 't') {
        o->check = 1;
        return 0;
    }
    if (c == OPT_SCENARIO) {
        if (!*arg)
            return err_set(err, errlen, "%s: empty file name", name);
        o->scenario = arg;
        return 0;
    }
    for (size_t i = 0; i < ARRAY_SIZE(setters); i++)
        if (setters[i].val == c)
            return add_arg(o, scratch, setters[i].set, setters[i].value ? setters[i].value : arg, name, err, errlen);
    return err_set(err, errlen, "%s: unknown option", name);
}

static enum opts_result parse_argv(struct client_opts *o, struct settings *scratch, int argc, char **argv, char *err,
                                   size_t errlen)
{
    optind = 0; /* 0: full getopt reset, so tests can parse several command lines */
    opterr = 0;
    int c, li;
    for (;;) {
        li = -1;
        c = getopt_long(argc, argv, ":n:o:qw:46thV", long_opts, &li);
        if (c == -1)
            break;
        char nb[48];
        if (c == 'h')
            return OPTS_HELP;
        if (c == 'V')
            return OPTS_VERSION;
        if (c == '?') {
            if (optopt)
                err_set(err, errlen, "-%c: unknown option (see --help)", optopt);
            else
                err_set(err, errlen, "%s: unknown option (see --help)", argv[optind - 1]);
            return OPTS_ERROR;
        }
        if (c == ':') {
            if (optopt)
                err_set(err, errlen, "%s: missing argument", opt_name(optopt, nb, sizeof nb));
            else
                err_set(err, errlen, "%s: missing argument", argv[optind - 1]);
            return OPTS_ERROR;
        }
        /* Name the option as the user spelled it: -n or --runs. */
        if (li >= 0)
            snprintf(nb, sizeof nb, "--%s", long_opts[li].name);
        else
            snprintf(nb, sizeof nb, "-%c", c);
        if (one_opt(o, scratch, c, nb, optarg, err, errlen) != 0)
            return OPTS_ERROR;
    }
    int urls = argc - optind;
    for (int i = optind; i < argc; i++)
        if (add_arg(o, scratch, settings_add_server, argv[i], "URL", err, errlen) != 0)
            return OPTS_ERROR;
    if (urls == 0 && !o->scenario) {
        err_set(err, errlen, "URL: at least one URL is needed (see --help)");
        return OPTS_ERROR;
    }
    if (o->scenario && urls) {
        err_set(err, errlen, "--scenario: servers come from the scenario file, not the command line");
        return OPTS_ERROR;
    }
    /* With a scenario file, main checks the combination once the file is applied. */
    if (!o->scenario && settings_check(scratch, err, errlen) != 0)
        return OPTS_ERROR;
    return OPTS_RUN;
}

enum opts_result opts_parse(struct client_opts *o, int argc, char **argv, char *err, size_t errlen)
{
    free(o->args);
    memset(o, 0, sizeof *o);
    /* At most one setting per argv element. */
    o->args = calloc(argc > 0 ? (size_t)argc : 1, sizeof *o->args);
    struct settings *scratch = settings_new();
    enum opts_result r = OPTS_ERROR;
    if (!o->args || !scratch)
        err_set(err, errlen, "out of memory");
    else
        r = parse_argv(o, scratch, argc, argv, err, errlen);
    settings_free(scratch);
    return r;
}

int opts_apply(const struct client_opts *o, struct settings *s, char *err, size_t errlen)
{
    for (size_t i = 0; i < o->nargs; i++)
        if (o->args[i].set(s, o->args[i].value, err, errlen) != 0)
            return err_prefix(err, errlen, "%s", o->args[i].name);
    return 0;
}
