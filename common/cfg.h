/* cfg: libconfig helpers shared by debitd and debit. Every error is written into the
 * caller's buffer as "FILE:LINE: setting: reason", the form editors and CI logs jump to.
 * Values that carry units accept either a number or a string ("1GiB", "500Mbit", "10ms"). */
#ifndef DEBIT_CFG_H
#define DEBIT_CFG_H

#include <libconfig.h>
#include <stddef.h>
#include <stdint.h>

/* Read FILE into cfg (initialised by the caller). An action: 0, or -1 with a file:line
 * error. FILE is read once (a pipe works) and parsed from memory; cfg_load owns the hooks
 * of cfg (the root's holds FILE's name for the messages; config_destroy frees it).
 *
 * Every integer literal must keep its value: libconfig 1.5 keeps a bare integer in 32
 * bits without a word (4294967296 reads as 0) and saturates beyond 64 bits with L, so a
 * setting whose value is not its literal's fails here, e.g. "FILE:LINE: files[0].size:
 * 4294967296 does not fit a libconfig integer (32 bits): write it with the L suffix
 * (4294967296L) or, for a size, as a string ("4GiB")". After a successful load, every
 * CONFIG_TYPE_INT or CONFIG_TYPE_INT64 setting holds the value its file wrote. */
int cfg_load(config_t *cfg, const char *path, char *err, size_t errlen);

/* Full dotted path of a setting, e.g. "listen[1].tcp.congestion", into buf. */
const char *cfg_setting_path(const config_setting_t *s, char *buf, size_t len);

/* Fill err with "FILE:LINE: PATH: <fmt>" for setting s (err_set, then cfg_error_prefix).
 * A setting that was not read from a file (built in code) says "(config):0". Always
 * returns -1. */
int cfg_error(char *err, size_t errlen, const config_setting_t *s, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Prepend "FILE:LINE: PATH: " for setting s to the message already in err (err_prefix):
 * how a setter's plain reason gets the place it came from. Always returns -1. */
int cfg_error_prefix(char *err, size_t errlen, const config_setting_t *s);

/* Fail on any member of group whose name is not in allowed (NULL-terminated), and on a
 * name given twice. Returns 0 or -1. */
int cfg_check_keys(const config_setting_t *group, const char *const *allowed, char *err, size_t errlen);

/* The value of an integer setting (CONFIG_TYPE_INT or CONFIG_TYPE_INT64, read by its
 * type), the one way this code base reads a libconfig integer: 1 with *out set, 0 when s
 * is NULL or holds something else (out untouched). */
int cfg_int_value(const config_setting_t *s, long long *out);

/* Getters are lookups (err.h): 1 when the member exists and is valid, 0 when it is absent
 * (out and err untouched: not an error), -1 on a wrong type or value (err filled). */
int cfg_get_bool(const config_setting_t *group, const char *name, int *out, char *err, size_t errlen);
int cfg_get_string(const config_setting_t *group, const char *name, const char **out, char *err, size_t errlen);
int cfg_get_uint(const config_setting_t *group, const char *name, uint64_t min, uint64_t max,
                 uint64_t *out, char *err, size_t errlen);
int cfg_get_size(const config_setting_t *group, const char *name, uint64_t *out, char *err, size_t errlen);
int cfg_get_duration(const config_setting_t *group, const char *name, uint64_t *usec, char *err, size_t errlen);

#endif
