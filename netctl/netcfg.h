/* netcfg: the client-side network settings applied around a measurement or a scenario
 * cell — interface offloads (`--offload DEV:tso=off,gso=off`, through
 * common/offload_session.h: state saved for crash recovery, verified, restored) and added
 * round-trip delay (`--delay 10ms --delay-dev DEV`, through netctl/delay.h: netem or the
 * NFQUEUE delay line). Whatever was applied is undone by netcfg_end(), in reverse order,
 * on every exit path of the caller (normal end, Ctrl-C, SIGTERM). */
#ifndef DEBIT_NETCFG_H
#define DEBIT_NETCFG_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "offload.h"

struct netcfg;

/* A new, empty set of settings (nothing applied). Caller owns it: netcfg_free(). */
struct netcfg *netcfg_new(void);
/* Ends what is still applied (errors ignored), then frees. NULL is fine. */
void netcfg_free(struct netcfg *n);

/* Apply the offload wish (parsed from "DEV:tso=off,..." by offload_parse_spec where the
 * option is read) to ifname. Returns 0, or -1 with err filled (no such device, needs
 * root, refused by the device). */
int netcfg_offload(struct netcfg *n, const char *ifname, const struct offload_wish *wish, char *err, size_t errlen);
/* What the last successful netcfg_offload() wants the user told (e.g. offloads
 * restored from a killed run's state file), "" when nothing. Owned by n, valid until the
 * next call. netcfg never prints: the program shows it. */
const char *netcfg_note(const struct netcfg *n);
/* Add round-trip delay (delay_us) and packet loss per direction (loss_ppm, parts per
 * million, common/lossrate.h) on dev; either may be 0, not both. Returns 0, or -1 with err
 * filled. */
int netcfg_delay(struct netcfg *n, const char *dev, uint64_t delay_us, uint32_t loss_ppm, char *err, size_t errlen);

/* Undo everything applied so far, newest first, and verify. Returns 0, or -1 when
 * something could not be restored (err lists it; the other steps are still done). The
 * object can be reused afterwards. */
int netcfg_end(struct netcfg *n, char *err, size_t errlen);

/* What is applied, for the JSON output (new reference):
 *   {"offload":[{"interface":..,"tso":false,...}], "delay":{"device":..,"rtt_ms":10,
 *    "loss_pct":1,"mechanism":"netem","description":"..."}}  (members absent when unused). */
json_t *netcfg_to_json(const struct netcfg *n);
/* One line for logs, e.g. "offloads veth0: tso=off gso=off gro=on; +10 ms ... via netem". */
int netcfg_describe(const struct netcfg *n, char *buf, size_t len);

#endif
