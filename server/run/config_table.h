/* config_table: debitd's settings in one table, as redis's standardConfig: each scalar
 * setting's name (its full path in the file, "limits.per_ip"), type, bounds, field in
 * struct config (offsetof), default, and what a reload does with a change (a restart is
 * needed, or which part of the running server takes it over). Parsing (config_file.c),
 * the defaults (config_defaults), `debitd -t`'s printing (config_print) and the reload's
 * "needs a restart" check (config_diff.c) all come from it. The lists (listen, files,
 * metrics.allow) and TLS are hand code (config_file.c, config_diff.c); they have rows here
 * too (CONFIG_HAND), so that the table names every setting, in the order of the file. */
#ifndef DEBITD_CONFIG_TABLE_H
#define DEBITD_CONFIG_TABLE_H

#include <libconfig.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "config.h"

enum config_kind {
    CONFIG_HAND,     /* a list or group parsed, printed and compared by hand (hooks below) */
    CONFIG_BOOL,     /* int: true/false */
    CONFIG_UINT,     /* unsigned or uint64_t: an integer in [min, max] */
    CONFIG_SIZE,     /* uint64_t bytes: 1048576 or "1MiB"; [min, max] (min with zero_ok) */
    CONFIG_MSEC,     /* milliseconds: a duration ("2.5s"), whole ms, [min, max] (min with zero_ok) */
    CONFIG_SEC,      /* unsigned seconds: a duration, whole seconds, at most max */
    CONFIG_RATE,     /* uint64_t bytes/s: "1kB/s", "8kbit", or 0 */
    CONFIG_ENUM,     /* an enum: one of names[] (its index) */
    CONFIG_TRISTATE, /* enum offload_want: true/false, absent = OFFLOAD_LEAVE */
    CONFIG_STRING,   /* char * (owned): a string, checked by set when there is one */
};

/* What a reload does when the setting changes (config_diff.h's fields). */
enum config_reload {
    CONFIG_RESTART = 0, /* fixed at start: a reload that changes it is refused */
    CONFIG_RELOAD_CONTENT, /* a new content region */
    CONFIG_RELOAD_REGION,  /* through the region size (ram): new only when that changes */
    CONFIG_RELOAD_LIMITS,
    CONFIG_RELOAD_UPLOAD,
    CONFIG_RELOAD_OFFLOAD,
    CONFIG_RELOAD_LOG_LEVEL,
    CONFIG_RELOAD_ACCESS_LOG,
    CONFIG_RELOAD_ACCESS_FORMAT,
    CONFIG_RELOAD_OTHER, /* privacy, http.strict, metrics: read per request */
    CONFIG_RELOAD_HAND,  /* compared by hand (listen, files) */
};

struct config_entry {
    const char *name; /* "limits.per_ip"; top-level settings have no dot */
    enum config_kind kind;
    size_t offset, width; /* the field in struct config */
    uint64_t min, max;
    int zero_ok;          /* SIZE, MSEC: 0 (none) is allowed below min */
    uint64_t def;         /* the default: a number, 0/1, an enum value */
    const char *def_str;  /* CONFIG_STRING's default (NULL: unset) */
    enum config_reload reload;
    const char *range_msg; /* SIZE, MSEC, SEC: the reason when out of range; %llu = the value (bytes, ms, s) */
    const char *const *names; /* CONFIG_ENUM: the names by value, NULL-terminated */
    const char *what;         /* CONFIG_ENUM: "level" in "unknown level \"x\" (expected ...)" */
    /* CONFIG_STRING: check the value before it is stored (NULL: any), or store it (set) */
    int (*check)(const char *value, char *err, size_t errlen);
    int (*set)(struct config *c, const char *value, char *err, size_t errlen);
    size_t line_offset;       /* where the line that set it is kept (unsigned), 0: not kept */
    /* left out of its group's object in /status (config_json.h): every other row of the
     * "limits" group is shown there, so that a new limit cannot be forgotten */
    int status_hidden;
};

extern const struct config_entry config_table[];
extern const size_t config_table_len;

/* The entry named NAME ("limits.per_ip"), or NULL. */
const struct config_entry *config_table_find(const char *name);
/* The leaf of E's name ("per_ip"); its group is the part before the dot. */
const char *config_entry_leaf(const struct config_entry *e);
/* 1 when E belongs to the group GROUP (NULL: the top level). */
int config_entry_in(const struct config_entry *e, const char *group);

/* Every scalar's default into C (strings duplicated). 0, or -1 when out of memory. */
int config_table_defaults(struct config *c);
/* Free C's table strings. */
void config_table_free(struct config *c);

/* Read E from GROUP (libconfig's group holding it; the root for top-level settings): 0 when
 * absent, 1 when set, -1 with "FILE:LINE: name: reason" in err. */
int config_table_read(struct config *c, const struct config_entry *e, const config_setting_t *group, char *err,
                      size_t errlen);
/* Set E from TEXT as the file would write it in a string ("info", "2.5s", "1GiB"): for the
 * command line and the setters of config.h. 0, or -1 with the plain reason. */
int config_table_set_text(struct config *c, const struct config_entry *e, const char *text, char *err,
                          size_t errlen);

/* E's number in C (BOOL, UINT, SIZE, MSEC, SEC, RATE, ENUM, TRISTATE): the field as stored
 * (bytes, ms, s, bytes/s, the enum's value). */
uint64_t config_table_num(const struct config *c, const struct config_entry *e);
/* E's string in C (CONFIG_STRING), NULL when unset. */
const char *config_table_str(const struct config *c, const struct config_entry *e);

/* E's value in C as the file would spell it ("100", "\"1d\"", "true"); "" for an unset
 * string or an untouched tristate. Into BUF; returns BUF. */
const char *config_table_format(const struct config *c, const struct config_entry *e, char *buf, size_t len);
/* 1 when E's value is the same in A and B (CONFIG_HAND: 1). */
int config_table_equal(const struct config *a, const struct config *b, const struct config_entry *e);

/* Sizes and durations as the file spells them: the largest exact binary unit ("\"4MiB\"")
 * or bytes (with libconfig's L beyond 32 bits); the largest whole unit of milliseconds. */
const char *config_fmt_size(uint64_t v, char *buf, size_t len);
const char *config_fmt_ms(uint64_t ms, char *buf, size_t len);

#endif
