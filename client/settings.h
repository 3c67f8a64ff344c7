/* settings: everything one `debit` invocation measures and writes, in one struct, filled
 * by one setter per setting. The command line (opts.c) and a scenario file (scenario.c)
 * call the same setters, in the order defaults -> file -> command line, so the last one
 * applied wins and nothing needs to know which source spelled what (as debitd's
 * server/run/config.c + config_file.c + main.c).
 *
 * Every setter takes the value as text (an argv string, or a scenario file's value
 * printed as text), checks it fully (a value that passes is one the run can use), and
 * returns 0, or -1 with "'VALUE': why" (or just "why") in err. The caller adds the name
 * the user wrote in front with err_prefix: "--runs", "-n", "FILE:LINE: runs", "URL". */
#ifndef DEBIT_SETTINGS_H
#define DEBIT_SETTINGS_H

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>

#include "download.h"
#include "offload.h"
#include "plan.h"
#include "report.h"

#define SETTINGS_MAX_SERVERS 64
#define SETTINGS_MAX_OFFLOADS 8
#define SETTINGS_MAX_PARALLEL 128

/* --offload DEV:tso=off,...: parsed when given, applied before the first download. */
struct settings_offload {
    char ifname[IF_NAMESIZE];
    struct offload_wish wish;
};

struct settings {
    /* plan_server is the one {name, url} of the client: the plan borrows this array, and
     * its const strings borrow the owned ones of server_own (same index). */
    struct plan_server servers[SETTINGS_MAX_SERVERS];
    struct {
        char *name, *url;
    } server_own[SETTINGS_MAX_SERVERS];
    size_t nservers;
    unsigned char named[SETTINGS_MAX_SERVERS]; /* NAME=URL given: never renamed */
    int families; /* --families: each URL is two servers, over IPv4 and over IPv6 */
    unsigned runs;
    enum plan_order order;
    uint64_t seed;
    int seed_given;
    int stall_rate_given; /* --stall-rate or the file's stall_rate: needs a --stall window */
    double pause_s;
    struct dl_options dl; /* its lists are owned; its strings borrow dl_own's */
    struct {
        char *interface, *local_address, *user_agent, *cacert;
    } dl_own;
    enum report_format format;
    char *output;   /* -o FILE, NULL: stdout */
    char *jsonl;
    char *plot;     /* FILE.png or FILE.svg */
    int quiet;
    int progress;   /* -1 auto (stderr is a TTY), 0, 1 */
    struct settings_offload offloads[SETTINGS_MAX_OFFLOADS];
    size_t noffloads;
    uint64_t delay_us;  /* --delay; 0: none */
    uint32_t loss_ppm;  /* --loss, per direction, in parts per million (common/lossrate.h); 0: none */
    char *delay_dev;
    char *write_out;    /* -w FORMAT (checked by writeout_parse), NULL: none */
    char *db;           /* --db SPEC (checked by store_spec_parse), NULL: $DEBIT_DB or the default */
    char *vantage;      /* --vantage NAME, NULL: the host name */
};

/* A new settings struct holding the defaults (5 runs, alternate, table, progress auto,
 * dl_options_defaults). NULL on allocation failure. Free with settings_free (NULL is fine). */
struct settings *settings_new(void);
void settings_free(struct settings *s);

/* The type every setter has, so that a table (opts.c's replay, scenario.c's keys) can
 * hold them. Returns 0 or -1 (err: "'VALUE': why"). */
typedef int (*settings_setter)(struct settings *s, const char *value, char *err, size_t errlen);

/* "[NAME=]URL" (http:// or https://, parsed by libcurl); NAME defaults to the URL's host,
 * then host:port, then host#2 ... when that would repeat a name. */
int settings_add_server(struct settings *s, const char *value, char *err, size_t errlen);
/* What each setter accepts (the option of the same name in --help):
 *   runs 1..100000                   order alternate|sequential|random
 *   seed unsigned 64-bit             pause a duration, 0 allowed
 *   stall, timeout a duration > 0    max_time a duration, 0: no limit
 *   stall_rate a rate (units_parse_rate: 1kB/s, 8kbit), 0: only a complete stop
 *   max_bytes a size >= 1 B          rcvbuf a size in 4KiB..1GiB
 *   ip_version "4" or "6"            resolve HOST:PORT:ADDR, connect_to H:P:H2:P2 (appended)
 *   interface, local_address as curl (no white space; "if!DEV" needs a valid DEV)
 *   user_agent no line break         format table|markdown|csv|json
 *   output, jsonl a non-empty path   plot *.png or *.svg
 *   progress, quiet on|off           offload DEV:tso=on|off,... (appended, offload_parse_spec)
 *   delay a duration, 0: none        delay_dev a valid interface name
 *   loss a percentage 0%..100% ("1%", "0.5%", 0: none; lossrate.h), per direction
 *   parallel 1..128                  split on|off
 *   upload a size, 0: download       upload_method POST|PUT
 *   duration a duration > 0          interval a duration >= 10ms
 *   min_bytes a size, 0: any body
 *   insecure on|off                  cacert a readable file (PEM CAs)
 *   header "Name: value", "Name:" or "Name;" as curl -H (appended) */
int settings_set_runs(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_order(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_seed(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_pause(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_stall(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_stall_rate(struct settings *s, const char *value, char *err, size_t errlen);
/* --bottleneck RATE: the path's rate (units_parse_rate, > 0) for the verdict and the
 * prediction (client/measure/verdict.h). */
int settings_set_bottleneck(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_max_time(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_timeout(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_max_bytes(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_rcvbuf(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_ip_version(struct settings *s, const char *value, char *err, size_t errlen);
/* --families: every server (those added before and after) is measured twice, as two
 * servers "NAME IPv4" and "NAME IPv6", each connecting over that family only. */
int settings_set_families(struct settings *s, const char *value, char *err, size_t errlen);
int settings_add_resolve(struct settings *s, const char *value, char *err, size_t errlen);
int settings_add_connect_to(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_interface(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_local_address(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_user_agent(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_insecure(struct settings *s, const char *value, char *err, size_t errlen);
/* --location-trusted on|off: -H lines go on to another host after a redirect (as curl). */
int settings_set_location_trusted(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_cacert(struct settings *s, const char *value, char *err, size_t errlen);
int settings_add_header(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_format(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_output(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_jsonl(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_db(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_vantage(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_plot(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_progress(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_quiet(struct settings *s, const char *value, char *err, size_t errlen);
int settings_add_offload(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_delay(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_delay_dev(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_loss(struct settings *s, const char *value, char *err, size_t errlen);
/* -w/--write-out FORMAT: a writeout.h template (unknown variable, escape: an error). */
int settings_set_write_out(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_parallel(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_split(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_upload(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_upload_method(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_duration(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_interval(struct settings *s, const char *value, char *err, size_t errlen);
int settings_set_min_bytes(struct settings *s, const char *value, char *err, size_t errlen);
/* The last server added sends SIZE bytes instead of downloading (a scenario file's
 * per-server "upload"): a size, 0: download as the others. */
int settings_set_server_upload(struct settings *s, const char *value, char *err, size_t errlen);

/* What no single setter can see, checked once everything is applied: --seed needs
 * --order random, --delay or --loss and --delay-dev go together, --interface excludes
 * --local-address. Returns 0, or -1 with "--OPTION: why" in err. */
int settings_check(const struct settings *s, char *err, size_t errlen);

/* Shared with the scenario file's axes, so a device or a delay there is checked exactly
 * as --delay-dev and --delay are. A valid Linux interface name (1..15 bytes, not "." or
 * "..", no '/', ':' or white space): 0, or -1 with "'NAME': why". */
int settings_check_ifname(const char *name, char *err, size_t errlen);
/* A duration such as 10ms (bare number: seconds) into microseconds: 0, or -1 ("'V': why"). */
int settings_parse_delay(const char *value, uint64_t *usec, char *err, size_t errlen);

#endif
