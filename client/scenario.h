/* scenario: the seed's whole experiment from one libconfig file — servers × latency
 * scenarios × client offload variants × runs — run cell by cell (alternating servers
 * inside each cell), each axis setting applied before its cells and removed after.
 *
 *   servers = ( { name = "OVH"; url = "http://proof.ovh.net/files/1Gio.dat"; }, ... );
 *   runs = 5;  order = "alternate";  pause = 0;      # optional: seed, max_bytes, stall,
 *                                                    #   max_time, timeout
 *   latency = ( { name = "natural"; delay = 0; },
 *               { name = "+10 ms"; delay = "10ms"; device = "eth0"; } );
 *   client_offload = ( { name = "TSO/GSO on"; device = "eth0"; tso = true; gso = true; },
 *                      { name = "TSO/GSO off"; device = "eth0"; tso = false; gso = false; } );
 *
 * Both axes are optional (one unnamed cell). Rows of the result table are latency
 * scenarios, columns server × client variant, as in the seed's table. */
#ifndef DEBIT_SCENARIO_H
#define DEBIT_SCENARIO_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "offload.h"
#include "opts.h"
#include "plan.h"
#include "result.h"

struct scenario_latency {
    char *name;
    uint64_t delay_us; /* 0: nothing applied */
    char *device;      /* NULL when delay_us is 0 */
};

struct scenario_variant {
    char *name;
    char *device;      /* NULL: nothing applied */
    struct offload_wish wish;
};

struct scenario {
    char *path;
    struct scenario_latency *lat;
    size_t nlat;
    struct scenario_variant *var;
    size_t nvar;
};

/* Load path: servers go into o (through opts_add_server), and runs/order/seed/pause/
 * max_bytes/stall/max_time/timeout into o unless given on the command line. Returns a new
 * scenario (caller frees), or NULL with "FILE:LINE: setting: reason" in err. */
struct scenario *scenario_load(const char *path, struct client_opts *o, char *err, size_t errlen);
void scenario_free(struct scenario *s);

/* Called before each cell with the settings just applied (described), and after it. */
struct scenario_hooks {
    struct plan_hooks plan;
    void (*cell_start)(const char *latency, const char *variant, const char *settings, void *ud);
};

/* Run every cell of s with the servers and options of o, appending to rs. `cells`
 * (a JSON array, borrowed) receives one object per cell: names and the settings applied
 * (offload state read back, delay mechanism). Returns 0 when done, 1 when stopped by
 * *hooks->plan.stop, -1 when a setting could not be applied or restored (err says which;
 * everything applied is undone first). */
int scenario_run(const struct scenario *s, const struct client_opts *o, struct result_set *rs,
                 const struct scenario_hooks *hooks, json_t *cells, char *err, size_t errlen);

#endif
