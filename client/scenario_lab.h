/* scenario_lab: a scenario file's declaration of the lab's servers — the `lab` group of a
 * `servers` entry — parsed and checked at load time, so that `debit -t --scenario F`
 * catches every mistake before lab/lab.sh builds anything:
 *
 *   servers = (
 *     { name = "OVH"; url = "http://198.18.1.2/files/256Mio.dat";
 *       lab = { tso = true; gso = true; cpu = "3%"; }; },
 *     { name = "capped"; url = "http://198.18.4.2/files/256Mio.dat";
 *       lab = { sndbuf = "1MiB"; initcwnd = 10; mtu = 1500; }; }
 *   );
 *
 * debitd settings (spelled as in debitd's config, checked by the same common/ setters):
 *   tso, gso        booleans (absent: the interface as it is, on)
 *   cc              congestion control (an available algorithm: reno bbr cubic here)
 *   pacing          SO_MAX_PACING_RATE, a rate "500Mbit"
 *   sndbuf          a size (SO_SNDBUFFORCE; the kernel doubles it)
 *   notsent_lowat   a size
 * Host settings the lab applies to that server's namespace:
 *   cpu             a CPU budget in % of one CPU ("3%", "1.5%", 3): 1 % .. 100 % x CPUs
 *                   online (a cgroup cpu quota over a 100 ms period)
 *   tcp_wmem,       "min default max": three sizes, 4 KiB .. 1 GiB, min <= default <= max
 *   tcp_rmem        (net.ipv4.tcp_wmem / tcp_rmem in the server's namespace)
 *   initcwnd        1 .. 1000 segments (ip route ... initcwnd on the server's routes)
 *   mtu             576 .. 65535 (both ends of the server's veth)
 * Address plan: a lab server's URL is http:// with an IPv4 literal in 198.18.0.0/15, host
 * part 2..254 (the router is .1 of the same /24), each lab server in a /24 of its own,
 * never the client's 198.18.3.0/24. */
#ifndef DEBIT_SCENARIO_LAB_H
#define DEBIT_SCENARIO_LAB_H

#include <jansson.h>
#include <libconfig.h>
#include <stddef.h>
#include <stdint.h>

#include "tcp_profile.h"

#define SCENARIO_LAB_CLIENT_NET "198.18.3" /* the client's /24, lab/lab.sh's */

struct scenario_lab {
    char *server;           /* owned: the server's name as the plan labels it */
    char addr[16];          /* dotted IPv4 of the URL */
    unsigned port;
    int tso, gso;           /* -1: not set; 0 off; 1 on */
    struct tcp_profile tcp; /* debitd's listener tcp group */
    double cpu_pct;         /* 0: no budget */
    uint64_t wmem[3];       /* all 0: not set */
    uint64_t rmem[3];
    unsigned initcwnd;      /* 0: the kernel's */
    unsigned mtu;           /* 0: the veth's */
    char host[160];         /* the host settings in words (scenario_lab_describe) */
};

/* Parse the `lab` group G of a server whose name and URL are given, into L (zeroed by
 * the caller); others[0..nothers) are the lab servers parsed before it (distinct /24s).
 * Returns 0, or -1 with "FILE:LINE: servers.[i].lab.KEY: reason" in err. */
int scenario_lab_parse(const config_setting_t *g, const char *name, const char *url,
                       const struct scenario_lab *others, size_t nothers, struct scenario_lab *l, char *err,
                       size_t errlen);
void scenario_lab_clear(struct scenario_lab *l);

/* A scenario file's scalar as the text a setter takes: integers and strings as written, a
 * float in plain decimal (a units parser knows no exponent). NULL for other types. */
const char *scenario_value_text(const config_setting_t *m, char *buf, size_t len);

/* {"name":..,"address":..,"port":..,"tso":..,"gso":..,"cc":..,"pacing_bps":..,"sndbuf":..,
 *  "notsent_lowat":..,"cpu_pct":..,"tcp_wmem":"min default max","tcp_rmem":..,"initcwnd":..,
 *  "mtu":..}; unset members are null (new reference, NULL on allocation failure). */
json_t *scenario_lab_to_json(const struct scenario_lab *l);

/* The host settings in words, for column headers: "cpu 3%, tcp_wmem max 1MiB, initcwnd
 * 10, mtu 1500"; "" when none. Returns buf. */
const char *scenario_lab_describe(const struct scenario_lab *l, char *buf, size_t len);

#endif
