/* err: the one error convention of this code base (redis's anetSetError, generalised).
 *
 * A function that can fail takes `char *err, size_t errlen` as its last two parameters
 * and, when it fails, writes one human sentence there (no trailing newline, no program
 * name: only main() adds "debit: " and prints). err may be NULL or errlen 0 (nothing is
 * written). Library code never prints and never exits.
 *
 * What a return value means depends on the kind of function, and only on that:
 *   - an action ("apply", "load", "write"): 0 done, -1 failed (err filled);
 *   - a lookup that may legitimately find nothing ("get this setting", "fetch the
 *     server's record"): 1 found, 0 absent (not an error; err untouched), -1 failed;
 *   - anything with more outcomes returns a named enum (MODULE_OK = 0, ...), never a
 *     bare 1 or -2; where its values reach a message, one MODULE_strerror() names them
 *     (an enum only a main() maps to exit codes needs none).
 * Constructors return a new object or NULL (err filled).
 *
 * Context is added by the caller that has it, in front: err_prefix(err, len, "--offload")
 * turns "eth0: no such device" into "--offload: eth0: no such device". */
#ifndef DEBIT_ERR_H
#define DEBIT_ERR_H

#include <stdarg.h>
#include <stddef.h>

/* Fill err with the formatted message (truncated to errlen). Always returns -1, so that
 * `return err_set(err, errlen, "...");` is the whole failure path of an action. */
int err_set(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* err_set with a va_list, for the specialised formatters built on it (cfg_error,
 * cliopt_error). Always returns -1. */
int err_vset(char *err, size_t errlen, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

/* Prepend "CONTEXT: " (formatted) to the message already in err, in place, truncating
 * the old message's tail if the buffer is too small. Always returns -1. An empty err
 * becomes just the context. */
int err_prefix(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
