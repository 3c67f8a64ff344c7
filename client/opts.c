/* opts: see opts.h. */
#include "opts.h"

#include <curl/curl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cliopt.h"
#include "units.h"

void opts_defaults(struct client_opts *o)
{
    memset(o, 0, sizeof *o);
    o->runs = 5;
    o->order = PLAN_ORDER_ALTERNATE;
    o->format = REPORT_TABLE;
    o->progress = -1;
    dl_options_defaults(&o->dl);
}

void opts_free(struct client_opts *o)
{
    for (size_t i = 0; i < o->nservers; i++) {
        free(o->servers[i].name);
        free(o->servers[i].url);
    }
    o->nservers = 0;
    curl_slist_free_all(o->dl.resolve);
    curl_slist_free_all(o->dl.connect_to);
    o->dl.resolve = o->dl.connect_to = NULL;
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
          "      --stall SECONDS       fail a download that receives nothing for that long\n"
          "      --max-time SECONDS    fail a download that lasts longer\n"
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

static int parse_seconds(const char *opt, const char *arg, double *out, char *err, size_t errlen)
{
    uint64_t us;
    if (cliopt_duration(opt, arg, "expected a duration such as 1.5, 500ms or 2s", &us, err, errlen) < 0)
        return -1;
    *out = us / 1e6;
    return 0;
}

/* Position of the n-th colon outside [brackets] (IPv6 addresses), or NULL. */
static const char *nth_colon(const char *s, int n)
{
    int in = 0;
    for (; *s; s++) {
        if (*s == '[')
            in = 1;
        else if (*s == ']')
            in = 0;
        else if (*s == ':' && !in && n-- == 0)
            return s;
    }
    return NULL;
}

/* "HOST:PORT:ADDR" (want_colons 2) or "HOST:PORT:HOST2:PORT2" (3, HOST and HOST2 may be
 * empty as in curl) with a valid port and a non-empty ADDR. */
static int check_host_port_list(const char *opt, const char *arg, int want_colons, char *err, size_t errlen)
{
    const char *form = want_colons == 2 ? "expected HOST:PORT:ADDR" : "expected HOST:PORT:CONNECT-TO-HOST:CONNECT-TO-PORT";
    const char *c1 = nth_colon(arg, 0), *c2 = nth_colon(arg, 1), *c3 = nth_colon(arg, 2);
    if (!c1 || !c2 || (want_colons == 3 && !c3))
        return cliopt_error(err, errlen, opt, arg, form);
    if (want_colons == 2 && (c1 == arg || c2[1] == 0))
        return cliopt_error(err, errlen, opt, arg, form);
    char port[16];
    size_t l = (size_t)(c2 - c1 - 1);
    if (l >= sizeof port || (l == 0 && want_colons == 2))
        return cliopt_error(err, errlen, opt, arg, form);
    memcpy(port, c1 + 1, l);
    port[l] = 0;
    uint64_t v;
    if (l > 0 && units_parse_uint(port, 1, 65535, &v) != UNITS_OK)
        return cliopt_error(err, errlen, opt, arg, "bad port (expected 1..65535)");
    return 0;
}

static int name_taken(const struct client_opts *o, const char *name)
{
    for (size_t i = 0; i < o->nservers; i++)
        if (strcmp(o->servers[i].name, name) == 0)
            return 1;
    return 0;
}

int opts_add_server(struct client_opts *o, const char *arg, char *err, size_t errlen)
{
    if (o->nservers >= OPTS_MAX_SERVERS)
        return cliopt_error(err, errlen, "URL", arg, "too many servers");
    const char *url = arg, *eq = strchr(arg, '='), *scheme = strstr(arg, "://");
    char name[256] = "";
    /* NAME=URL: the '=' must come before any "://" (a query string may hold '='). */
    if (eq && (!scheme || eq < scheme)) {
        size_t l = (size_t)(eq - arg);
        if (l == 0 || l >= sizeof name)
            return cliopt_error(err, errlen, "URL", arg, "empty or too long NAME in NAME=URL");
        memcpy(name, arg, l);
        name[l] = 0;
        url = eq + 1;
        scheme = strstr(url, "://");
    }
    if (!scheme)
        return cliopt_error(err, errlen, "URL", url, "not a URL (expected http://HOST[:PORT]/PATH)");
    if (strncasecmp(url, "http://", 7) != 0 && strncasecmp(url, "https://", 8) != 0)
        return cliopt_error(err, errlen, "URL", url, "only http:// and https:// URLs are supported");
    CURLU *u = curl_url();
    char *host = NULL, *port = NULL;
    CURLUcode uc = u ? curl_url_set(u, CURLUPART_URL, url, 0) : CURLUE_OUT_OF_MEMORY;
    if (uc != CURLUE_OK) {
        curl_url_cleanup(u);
        char why[160];
        snprintf(why, sizeof why, "not a valid URL (%s)", curl_url_strerror(uc));
        return cliopt_error(err, errlen, "URL", url, why);
    }
    curl_url_get(u, CURLUPART_HOST, &host, 0);
    curl_url_get(u, CURLUPART_PORT, &port, 0);
    if (!name[0]) {
        snprintf(name, sizeof name, "%s", host ? host : "server");
        if (name_taken(o, name) && port)
            snprintf(name, sizeof name, "%s:%s", host ? host : "server", port);
        for (int k = 2; name_taken(o, name) && k < 1000; k++) {
            char base[200];
            snprintf(base, sizeof base, "%s", host ? host : "server");
            snprintf(name, sizeof name, "%s#%d", base, k);
        }
    }
    curl_free(host);
    curl_free(port);
    curl_url_cleanup(u);
    if (name_taken(o, name))
        return cliopt_error(err, errlen, "URL", arg, "this NAME is already used by another server");
    o->servers[o->nservers].name = strdup(name);
    o->servers[o->nservers].url = strdup(url);
    if (!o->servers[o->nservers].name || !o->servers[o->nservers].url) {
        free(o->servers[o->nservers].name);
        free(o->servers[o->nservers].url);
        return cliopt_error(err, errlen, "URL", arg, "out of memory");
    }
    o->nservers++;
    return 0;
}

static int one_opt(struct client_opts *o, int c, const char *optname, const char *arg, char *err, size_t errlen)
{
    uint64_t v;
    enum units_err e;
    switch (c) {
    case 'n':
        if ((e = units_parse_uint(arg, 1, 100000, &v)) != UNITS_OK)
            return cliopt_error(err, errlen, optname, arg, "expected an integer from 1 to 100000");
        o->runs = (unsigned)v;
        return 0;
    case OPT_ORDER:
        if (plan_order_parse(arg, &o->order) != 0)
            return cliopt_error(err, errlen, optname, arg, "expected alternate, sequential or random");
        return 0;
    case OPT_SEED:
        if (units_parse_uint(arg, 0, UINT64_MAX, &v) != UNITS_OK)
            return cliopt_error(err, errlen, optname, arg, "expected an unsigned integer");
        o->seed = v;
        o->seed_given = 1;
        return 0;
    case OPT_PAUSE:
        return parse_seconds(optname, arg, &o->pause_s, err, errlen);
    case OPT_STALL:
        if (parse_seconds(optname, arg, &o->dl.stall_s, err, errlen))
            return -1;
        return o->dl.stall_s > 0 ? 0 : cliopt_error(err, errlen, optname, arg, "must be more than 0");
    case OPT_MAX_TIME:
        if (parse_seconds(optname, arg, &o->dl.max_time_s, err, errlen))
            return -1;
        return o->dl.max_time_s > 0 ? 0 : cliopt_error(err, errlen, optname, arg, "must be more than 0");
    case OPT_TIMEOUT:
        if (parse_seconds(optname, arg, &o->dl.connect_timeout_s, err, errlen))
            return -1;
        return o->dl.connect_timeout_s > 0 ? 0 : cliopt_error(err, errlen, optname, arg, "must be more than 0");
    case OPT_MAX_BYTES:
        if (cliopt_size(optname, arg, "expected a size such as 100MiB or 1GB", &v, err, errlen) < 0)
            return -1;
        if (v == 0)
            return cliopt_error(err, errlen, optname, arg, "must be at least 1 byte");
        o->dl.max_bytes = v;
        return 0;
    case OPT_RCVBUF:
        if ((e = units_parse_size(arg, &v)) != UNITS_OK || v < 4096 || v > (1ULL << 30))
            return cliopt_error(err, errlen, optname, arg, "expected a size from 4KiB to 1GiB, such as 64MiB");
        o->dl.rcvbuf = v;
        return 0;
    case '4':
    case '6':
        o->dl.ip_version = c - '0';
        return 0;
    case OPT_RESOLVE:
    case OPT_CONNECT_TO: {
        if (check_host_port_list(optname, arg, c == OPT_RESOLVE ? 2 : 3, err, errlen))
            return -1;
        struct curl_slist **l = c == OPT_RESOLVE ? &o->dl.resolve : &o->dl.connect_to;
        struct curl_slist *n = curl_slist_append(*l, arg);
        if (!n)
            return cliopt_error(err, errlen, optname, arg, "out of memory");
        *l = n;
        return 0;
    }
    case OPT_INTERFACE:
        if (!*arg)
            return cliopt_error(err, errlen, optname, NULL, "empty interface name");
        o->dl.interface = arg;
        return 0;
    case OPT_LOCAL_ADDRESS:
        if (!*arg)
            return cliopt_error(err, errlen, optname, NULL, "empty address");
        o->dl.local_address = arg;
        return 0;
    case OPT_USER_AGENT:
        o->dl.user_agent = arg;
        return 0;
    case OPT_FORMAT:
        if (report_format_parse(arg, &o->format) != 0)
            return cliopt_error(err, errlen, optname, arg, "expected table, markdown, csv or json");
        return 0;
    case 'o':
        if (!*arg)
            return cliopt_error(err, errlen, optname, NULL, "empty file name");
        o->output = arg;
        return 0;
    case OPT_JSONL:
        if (!*arg)
            return cliopt_error(err, errlen, optname, NULL, "empty file name");
        o->jsonl = arg;
        return 0;
    case OPT_PROGRESS:
        o->progress = 1;
        return 0;
    case OPT_NO_PROGRESS:
        o->progress = 0;
        return 0;
    case 'q':
        o->quiet = 1;
        return 0;
    case 't':
        o->check = 1;
        return 0;
    case OPT_OFFLOAD:
        if (o->noffloads >= OPTS_MAX_OFFLOADS)
            return cliopt_error(err, errlen, optname, arg, "too many --offload options");
        if (!strchr(arg, ':') || strchr(arg, ':') == arg || strchr(arg, ':')[1] == 0)
            return cliopt_error(err, errlen, optname, arg, "expected DEV:tso=on|off,gso=on|off[,gro=on|off]");
        o->offloads[o->noffloads++] = arg;
        return 0;
    case OPT_SCENARIO:
        o->scenario = arg;
        return 0;
    case OPT_PLOT: {
        const char *dot = strrchr(arg, '.');
        if (!dot || (strcmp(dot, ".png") != 0 && strcmp(dot, ".svg") != 0))
            return cliopt_error(err, errlen, optname, arg, "expected a file name ending in .png or .svg");
        o->plot = arg;
        return 0;
    }
    case OPT_DELAY:
        return parse_seconds(optname, arg, &o->delay_s, err, errlen);
    case OPT_DELAY_DEV:
        if (!*arg)
            return cliopt_error(err, errlen, optname, NULL, "empty interface name");
        o->delay_dev = arg;
        return 0;
    }
    return cliopt_error(err, errlen, optname, arg, "unknown option");
}

int opts_given(const struct client_opts *o, const char *name)
{
    for (const struct option *lo = long_opts; lo->name; lo++)
        if (strcmp(lo->name, name) == 0)
            return (unsigned)lo->val < sizeof o->given && o->given[lo->val];
    return 0;
}

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

enum opts_result opts_parse(struct client_opts *o, int argc, char **argv, char *err, size_t errlen)
{
    optind = 0; /* 0: full getopt reset, so tests can parse several command lines */
    opterr = 0;
    int c, li;
    for (;;) {
        li = -1;
        c = getopt_long(argc, argv, ":n:o:q46thV", long_opts, &li);
        if (c == -1)
            break;
        char nb[48];
        if (c == 'h')
            return OPTS_HELP;
        if (c == 'V')
            return OPTS_VERSION;
        if (c == '?') {
            if (optopt)
                snprintf(err, errlen, "-%c: unknown option (see --help)", optopt);
            else
                snprintf(err, errlen, "%s: unknown option (see --help)", argv[optind - 1]);
            return OPTS_ERROR;
        }
        if (c == ':') {
            if (optopt)
                snprintf(err, errlen, "%s: missing argument", opt_name(optopt, nb, sizeof nb));
            else
                snprintf(err, errlen, "%s: missing argument", argv[optind - 1]);
            return OPTS_ERROR;
        }
        /* Name the option as the user spelled it: -n or --runs. */
        if (li >= 0)
            snprintf(nb, sizeof nb, "--%s", long_opts[li].name);
        else
            snprintf(nb, sizeof nb, "-%c", c);
        if (one_opt(o, c, nb, optarg, err, errlen) != 0)
            return OPTS_ERROR;
        if ((unsigned)c < sizeof o->given)
            o->given[c] = 1;
    }
    for (int i = optind; i < argc; i++)
        if (opts_add_server(o, argv[i], err, errlen) != 0)
            return OPTS_ERROR;
    if (o->nservers == 0 && !o->scenario) {
        snprintf(err, errlen, "URL: at least one URL is needed (see --help)");
        return OPTS_ERROR;
    }
    if (o->scenario && o->nservers) {
        snprintf(err, errlen, "--scenario: servers come from the scenario file, not the command line");
        return OPTS_ERROR;
    }
    if (o->seed_given && o->order != PLAN_ORDER_RANDOM) {
        snprintf(err, errlen, "--seed: only meaningful with --order random");
        return OPTS_ERROR;
    }
    if ((o->delay_s > 0) != (o->delay_dev != NULL)) {
        snprintf(err, errlen, "%s", o->delay_dev ? "--delay-dev: needs --delay" : "--delay: needs --delay-dev DEV");
        return OPTS_ERROR;
    }
    if (o->dl.interface && o->dl.local_address) {
        snprintf(err, errlen, "--local-address: cannot be combined with --interface");
        return OPTS_ERROR;
    }
    return OPTS_RUN;
}
