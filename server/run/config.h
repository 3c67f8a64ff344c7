/* config: debitd's settings. Defaults come from config_defaults(), then the libconfig file
 * (config_load_file), then the command line; every scalar setting is a row of
 * config_table.c (type, bounds, default, what a reload does with it), read and checked
 * there; the lists (listen, files, metrics.allow) and TLS go through the setters below.
 * Errors fill a caller's buffer (config errors read "FILE:LINE: setting: reason"). The
 * struct owns every string and array it points to; config_free releases them. */
#ifndef DEBITD_CONFIG_H
#define DEBITD_CONFIG_H

#include <netinet/in.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "access_log.h"
#include "acl.h"
#include "log.h"
#include "offload.h"
#include "tcp_profile.h"

#define CONFIG_MAX_LISTENERS 64
#define CONFIG_MAX_FILES 1024
#define CONFIG_MAX_FILE_SIZE (1ULL << 44) /* 16 TiB: beyond that a typo is likelier */
/* listen[].connection_memory: libmicrohttpd's own default (32 KiB); under 8 KiB, with 2 KiB
 * kept for the answer (http_guard.c), a browser's 1-2 KiB of headers would come close to a
 * 431; at 1 MiB every
 * request zeroes a megabyte, and the default limits.connections (10,000) hold 10 GiB
 * (docs/server.md, "Connection memory") */
#define CONFIG_CONN_MEMORY_DEFAULT (32ULL << 10)
#define CONFIG_CONN_MEMORY_MIN (8ULL << 10)
#define CONFIG_CONN_MEMORY_MAX (1ULL << 20)

struct listen_cfg {
    char *address;              /* as written ("::", "127.0.0.1") */
    uint16_t port;
    struct sockaddr_storage sa; /* resolved numeric address */
    socklen_t salen;
    struct tcp_profile tcp;     /* applied on every accepted socket */
    int tcp_nopush;             /* file bodies (sendfile, iovec) leave with their headers (nopush.h); default 1 */
    /* libmicrohttpd's memory pool per connection, bytes: it holds a request's header block
     * and the answer's, half of it is an upload's read buffer, and libmicrohttpd zeroes all
     * of it after every request (docs/server.md, "Connection memory") */
    uint64_t conn_memory;
    /* tls = { cert; key; priorities; } (tls.h): cert NULL = plain HTTP. Paths as written;
     * priorities NULL = TLS_DEFAULT_PRIORITIES. */
    struct {
        char *cert, *key, *priorities;
    } tls;
};

struct file_cfg {
    char *path; /* URL path, starts with '/', never ends with '/' */
    uint64_t size;
};

#define CONFIG_OFFLOAD_STATE_FILE "/run/debitd/offload.state"

/* offload = { interface; tso; gso; gro; restore; required; state_file; } */
struct offload_cfg {
    char *interface;          /* NULL = debitd does not manage offloads */
    unsigned interface_line;  /* where the file set it (0: not from a file), for messages */
    struct offload_wish wish; /* tso/gso/gro: LEAVE when absent */
    int restore;              /* put the original state back on exit (default true) */
    int required;             /* failure to apply is fatal (default true), else a warning */
    char *state_file;         /* crash-recovery record of the original state */
};

/* What the seccomp filter does with a system call outside debitd's list (privdrop.h). */
/* speedtest.telemetry: LibreSpeed's POSTed results (telemetry.h) */
enum config_telemetry {
    CONFIG_TELEMETRY_OFF = 0,  /* "Telemetry is disabled", nothing kept (the default) */
    CONFIG_TELEMETRY_ON,       /* kept as sent */
    CONFIG_TELEMETRY_REDACTED, /* kept with the addresses and host names redacted */
};

enum config_seccomp {
    CONFIG_SECCOMP_EPERM = 0, /* fail it with EPERM, logged by the kernel (the default) */
    CONFIG_SECCOMP_KILL,      /* kill the process (logged by the kernel) */
    CONFIG_SECCOMP_LOG,       /* allow it, logged by the kernel: for finding a missing one */
    CONFIG_SECCOMP_OFF,       /* no filter */
};

/* The user and group as debitd resolved them once, at start, before the privilege drop
 * (main owns it). A reload's `user` and `group` are compared with it instead of being looked
 * up again: after the drop no name lookup may happen (glibc may try nscd's socket, whose
 * connect the seccomp filter refuses; "kill" would end debitd), and a reload that changes
 * them needs a restart anyway. */
struct config_ids {
    char *user, *group; /* as configured at start; NULL: unset */
    uid_t uid;
    gid_t user_gid;     /* the user's primary group */
    gid_t group_gid;    /* group's gid, when group is set */
};

struct config {
    const struct config_ids *ids; /* borrowed; NULL: user and group are looked up (getpwnam) */
    char *source; /* file the settings came from, or "(defaults)" */
    struct listen_cfg *listen;
    size_t n_listen;
    unsigned threads; /* per listener; 0 = one per online CPU */
    uint64_t seed;
    uint64_t ram; /* cap of the shared content region; 0 = as large as the largest file */
    unsigned ram_line; /* where the file set it (0: not from a file), for messages */
    struct file_cfg *files;
    size_t n_files;
    char *upload_path; /* NULL = no upload sink */
    uint64_t upload_max;
    unsigned max_connections; /* per listener, 0 = MHD's default (FD_SETSIZE-bound) */
    unsigned per_ip;          /* 0 = unlimited */
    unsigned idle_timeout;    /* seconds, 0 = never */
    uint64_t per_ip_bytes;     /* limits.per_ip_bytes: file bytes per address per window, 0 = no quota */
    uint64_t per_ip_window_ms; /* limits.per_ip_window */
    unsigned per_ip_table;     /* limits.per_ip_table: addresses the quota tracks at once */
    unsigned drain_timeout_ms; /* limits.drain_timeout: SIGTERM lets downloads run this long */
    enum log_level log_level;
    char *access_log; /* "-" = stderr, "off", or a file path (appended) */
    unsigned access_log_line; /* where the file set it (0: not from a file), for messages */
    enum access_format access_format; /* log.access_format: json (default) or combined */
    unsigned transfers_keep; /* ring size of /transfers/ID records */
    int transfers_acked;     /* watch each body of 1 MiB or more until the client acknowledged it */
    /* privacy = { details; public_transfers; } (docs/server.md, "Visitors' privacy") */
    int details;          /* /status and X-Debit-* name the kernel, interfaces, limits, pid */
    int public_transfers; /* /transfers/ID to any address, not only the transfer's own */
    uint64_t header_timeout_ms; /* accept (or end of a response) to end of headers; 0 = none */
    uint64_t body_min_rate;     /* request body bytes/s over DEADLINE_BODY_WINDOW_MS; 0 = none */
    int http_strict;         /* http.strict: refuse ambiguous requests (docs/http-strictness.md) */
    struct offload_cfg offload;
    /* least privilege (privdrop.h): user = NULL: keep the identity debitd was started with */
    char *user, *group; /* names as configured; group NULL = the user's primary group */
    uid_t uid;          /* resolved when set: the user's uid and primary (or group's) gid */
    gid_t gid;
    gid_t user_gid;     /* the user's primary group (gid when no group is set) */
    enum config_seccomp seccomp;
    struct { /* metrics = { enabled; allow = ( ... ); }: GET /metrics */
        int enabled;      /* 0: /metrics is a 404 */
        struct acl allow; /* clients that may read it (others get a 403); default loopback */
    } metrics;
    struct { /* speedtest = { librespeed; cloudflare; max_bytes; per_ip; colo; isp_map; telemetry; telemetry_keep; } */
        int librespeed;     /* garbage, empty, getIP (.php, /backend/): 0 = 404 */
        int cloudflare;     /* __down, __up: 0 = 404 */
        uint64_t max_bytes; /* largest body a test sends (ckSize clamped, bytes= refused) or takes */
        unsigned per_ip;    /* tests under way per client address; 0 = unlimited */
        char *colo;         /* Cloudflare's cf-meta-colo: this site's name ("" = not sent) */
        char *isp_map;      /* the offline prefix map's path (isp_map.h), NULL: none */
        struct isp_map *isp; /* that file as read when the configuration was (owned) */
        enum config_telemetry telemetry;
        unsigned telemetry_keep; /* results kept (the ring's size, fixed at start) */
    } speedtest;
    struct { /* ndt7 = { enabled; per_ip; }: M-Lab's ndt7 on /ndt/v7/ (docs/server.md "ndt7") */
        int enabled;     /* 0: /ndt/v7/download and /ndt/v7/upload are 404s */
        unsigned per_ip; /* concurrent tests per client address; 0 = unlimited */
    } ndt7;
};

/* Fill *c with the built-in defaults: every scalar's from the table (config_table.c), one
 * listener [::]:8080, the seed's two files, /metrics for loopback. */
int config_defaults(struct config *c, char *err, size_t errlen);
/* Release everything *c owns and zero it. */
void config_free(struct config *c);
/* "FILE:LINE" for a setting the file set on LINE, "FILE" when LINE is 0 (a default), into
 * BUF; returns BUF. For messages about a setting found wrong after the file was read. */
const char *config_place(const struct config *c, unsigned line, char *buf, size_t len);

/* Read FILE over the current settings: the file's listeners and files replace the current
 * ones; other keys override one by one. Returns 0, or -1 with "FILE:LINE: setting: reason". */
int config_load_file(struct config *c, const char *path, char *err, size_t errlen);

/* Setters shared by the file parser and the command line. Each returns 0, or -1 with a
 * plain reason in err (no FILE:LINE: the caller adds where the value came from). */
/* Drop every listener (a --listen or the file's list replaces the current ones). Returns 0. */
int config_clear_listeners(struct config *c);
/* Drop every file (the config file's files list replaces the current one). */
void config_clear_files(struct config *c);
/* Add a listener on numeric ADDRESS (IPv4 or IPv6) and PORT (1-65535); duplicates fail. */
int config_add_listener(struct config *c, const char *address, uint64_t port, char *err, size_t errlen);
/* "ADDR:PORT", "[V6ADDR]:PORT" or "PORT" (= [::]:PORT), as in nginx's listen. */
int config_add_listener_spec(struct config *c, const char *spec, char *err, size_t errlen);
/* Make listener L serve HTTPS with CERT and KEY (PEM files) and GnuTLS PRIORITIES (NULL =
 * the default): the files are read and checked now (tls_check), so that debitd -t reports a
 * missing file, a key that does not match or a bad priority string. On failure *FIELD says
 * which setting is wrong ("cert", "key" or "priorities"). */
int config_set_listener_tls(struct listen_cfg *l, const char *cert, const char *key, const char *priorities,
                            const char **field, char *err, size_t errlen);
/* listen[].connection_memory: BYTES of libmicrohttpd's memory pool per connection of L,
 * CONFIG_CONN_MEMORY_MIN to CONFIG_CONN_MEMORY_MAX. It bounds a request's header block
 * (http_guard.c refuses what would leave no room for an answer) and sets an upload's read
 * size; libmicrohttpd zeroes all of it after every request. */
int config_set_listener_memory(struct listen_cfg *l, uint64_t bytes, char *err, size_t errlen);
/* Add file PATH of SIZE bytes; a bad path or one colliding with another file, its
 * .sha256, the upload path or a reserved page fails. */
int config_add_file(struct config *c, const char *path, uint64_t size, char *err, size_t errlen);
/* Upload sink at PATH (NULL or "" = none), bodies up to MAX_SIZE bytes. */
int config_set_upload(struct config *c, const char *path, uint64_t max_size, char *err, size_t errlen);
/* "error", "warn", "info" or "debug". */
int config_set_log_level(struct config *c, const char *name, char *err, size_t errlen);
/* limits.header_timeout: a DURATION as units.h spells it ("5s", "0" = none), 100 ms to 1
 * hour, whole ms. (The table's setters, config_table.h, as for every scalar.) */
int config_set_header_timeout(struct config *c, const char *duration, char *err, size_t errlen);
/* limits.body_min_rate: a rate as units.h spells it ("1kB/s", "8kbit"), "0" = none; at
 * most 1GB/s (a floor, not a target). */
int config_set_body_min_rate(struct config *c, const char *rate, char *err, size_t errlen);

/* user = NAME: must exist (getpwnam); sets uid, and gid to its primary group unless a
 * group was set. With c->ids, no lookup: NAME must be the user debitd started as. */
int config_set_user(struct config *c, const char *name, char *err, size_t errlen);
/* group = NAME: must exist (getgrnam); needs a user (checked by config_validate). With
 * c->ids, no lookup: NAME must be the group debitd started with. */
int config_set_group(struct config *c, const char *name, char *err, size_t errlen);
/* Fill *IDS from C's resolved user and group (strings copied), for later configurations'
 * c->ids. 0, or -1 when out of memory. config_ids_free releases the copies. */
int config_ids_pin(struct config_ids *ids, const struct config *c);
void config_ids_free(struct config_ids *ids);

/* The configured name of a seccomp mode ("eperm"...). */
const char *config_seccomp_name(enum config_seccomp m);

/* metrics.allow: add a client address or network (acl.h: "127.0.0.1", "10.0.0.0/8");
 * acl_clear(&c->metrics.allow) empties the list first (a file's list replaces the default). */
int config_add_metrics_allow(struct config *c, const char *spec, char *err, size_t errlen);

/* Cross-checks that need the whole configuration (paths that collide with each other or
 * with /status, /transfers/, the upload path, NAME.sha256, a file that is also a folder).
 * Returns 0 or -1 with a message naming the settings. */
int config_validate(const struct config *c, char *err, size_t errlen);

/* Effective worker threads per listener (threads, or the CPU count). */
unsigned config_threads_effective(const struct config *c);
/* Size of the shared content region: min(largest file, ram) (ram = 0: largest file). */
uint64_t config_region_size(const struct config *c);

/* debitd -t's warning when the content region (config_region_size: ram, or the largest
 * file) is larger than MEM_TOTAL, the host's MemTotal in bytes (0: unknown, no warning). The
 * region is generated into RAM and stays resident, so it can never fit in more than
 * MemTotal; MemAvailable is not the measure, since -t often runs while the debitd it will
 * replace still holds its own region. 1 with the message in WARN, else 0. */
int config_region_warning(const struct config *c, uint64_t mem_total, char *warn, size_t len);

/* Write the effective settings in the config file's own syntax (what `debitd -t` prints). */
void config_print(const struct config *c, FILE *out);

#endif
