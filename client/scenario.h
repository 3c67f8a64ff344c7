/* scenario: the seed's whole experiment from one libconfig file — servers × latency
 * scenarios × client offload variants × runs — run cell by cell (alternating servers
 * inside each cell), each axis setting applied before its cells and removed after.
 *
 *   servers = ( { name = "OVH"; url = "http://proof.ovh.net/files/1Gio.dat"; }, ... );
 *   runs = 5;  order = "alternate";  pause = 0;      # optional: seed, max_bytes, stall,
 *                                                    #   stall_rate, max_time, timeout
 *   latency = ( { name = "natural"; delay = 0; },
 *               { name = "+10 ms"; delay = "10ms"; device = "eth0"; },
 *               { name = "1% loss"; loss = "1%"; device = "eth0"; } );  # per direction
 *   client_offload = ( { name = "TSO/GSO on"; device = "eth0"; tso = true; gso = true; },
 *                      { name = "TSO/GSO off"; device = "eth0"; tso = false; gso = false; } );
 *
 * The measurement settings (servers, runs, order, seed, pause, stall, stall_rate, max_time, timeout,
 * max_bytes) go through the same settings.h setters as the command line's options.
 * Both axes are optional (one unnamed cell). Rows of the result table are latency
 * scenarios, columns server × client variant, as in the seed's table. */
#ifndef DEBIT_SCENARIO_H
#define DEBIT_SCENARIO_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "offload.h"
#include "plan.h"
#include "result.h"
#include "scenario_lab.h"
#include "settings.h"

struct scenario_latency {
    char *name;
    uint64_t delay_us; /* 0: no delay */
    uint32_t loss_ppm; /* packet loss per direction (common/lossrate.h), 0: none */
    char *device;      /* NULL when both are 0 (nothing applied) */
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
    struct scenario_lab *lab; /* the servers with a `lab` group, in file order (scenario_lab.h) */
    size_t nlab;
};

/* Load path and apply its measurement settings to s (through the settings.h setters; the
 * command line is applied after, so it wins). A scenario's output defaults to markdown,
 * the seed's table. Returns a new scenario (caller frees), or NULL with
 * "FILE:LINE: setting: reason" (or "FILE: setting: reason") in err. */
struct scenario *scenario_load(const char *path, struct settings *s, char *err, size_t errlen);
void scenario_free(struct scenario *s);

/* What one cell ran with, kept for the notes and the JSON output. */
struct scenario_cell {
    const char *latency;  /* borrowed from the scenario; NULL without a latency axis */
    const char *variant;  /* likewise */
    uint64_t delay_us;
    uint32_t loss_ppm;
    char *description;    /* owned: the settings applied in words, "" when none */
    json_t *settings;     /* owned: netcfg_to_json of them (offload state read back, delay mechanism) */
};

/* The cells a scenario_run went through, in order. */
struct scenario_cells {
    struct scenario_cell *cell;
    size_t n;
};

/* A new, empty list (NULL on allocation failure); scenario_cells_free(NULL) is fine. */
struct scenario_cells *scenario_cells_new(void);
void scenario_cells_free(struct scenario_cells *c);
/* [{"scenario":..,"variant":..,"delay_ms":..,"loss_pct":..,"settings":{..},"description":".."}, ...]
 * (new reference, NULL on allocation failure). */
json_t *scenario_cells_to_json(const struct scenario_cells *c);

/* Called before each cell with the settings just applied (described), and after it. */
struct scenario_hooks {
    struct plan_hooks plan;
    void (*cell_start)(const char *latency, const char *variant, const char *settings, void *ud);
    /* Something the user should be told while applying a cell's settings (e.g. offloads
     * a killed run had left changed were restored first). May be NULL. */
    void (*note)(const char *msg, void *ud);
};

enum scenario_status {
    SCENARIO_DONE = 0,     /* every cell ran */
    SCENARIO_STOPPED,      /* *hooks->plan.stop became non-zero (a signal) */
    SCENARIO_ERR_SETTING,  /* a delay or offload could not be applied or restored (err says which) */
    SCENARIO_ERR_NOMEM,
};

/* Run every cell of scn with the servers and measurement settings of s, appending to rs
 * and to cells (optional). Whatever was applied is undone before returning, on every
 * status; err is filled for the two errors. */
enum scenario_status scenario_run(const struct scenario *scn, const struct settings *s, struct result_set *rs,
                                  const struct scenario_hooks *hooks, struct scenario_cells *cells, char *err,
                                  size_t errlen);

#endif
