/* cfg_literal: the integer literals of a libconfig file against the values libconfig kept.
 * libconfig 1.5 as Debian 12 builds it keeps a bare integer in 32 bits with nothing in the
 * setting to tell (4294967296 reads as 0, 4294986497 as 19201) and saturates past 64 bits
 * with the L suffix; the literal is gone once parsed, so the file's text is scanned again
 * here, with libconfig's lexical rules, and each literal paired with its setting.
 * cfg_load (cfg.h) calls it; nothing else needs to. */
#ifndef DEBIT_CFG_LITERAL_H
#define DEBIT_CFG_LITERAL_H

#include <libconfig.h>
#include <stddef.h>

/* The whole of PATH in a new NUL-terminated buffer (caller frees), its length in *LEN; NULL
 * with errno set when it cannot be read (EFBIG beyond 16 MiB: no configuration is that
 * large). */
char *cfg_read_all(const char *path, size_t *len);

/* CFG was parsed from TEXT (LEN bytes, the file PATH; files it @includes are read again):
 * 0 when every integer setting holds the value its literal wrote, else -1 with err
 * "FILE:LINE: setting: 4294967296 does not fit a libconfig integer (32 bits): write it with
 * the L suffix (4294967296L) or, for a size, as a string ("4GiB")". */
int cfg_literal_check(const config_t *cfg, const char *text, size_t len, const char *path, char *err, size_t errlen);

#endif
