/* log: leveled, one line per message, to stderr. Each line is written with a single
 * write(2) so that lines from several threads never interleave:
 *   2026-11-30T03:10:00.123Z debitd[1234] info: listening on [::]:8080 */
#ifndef DEBIT_LOG_H
#define DEBIT_LOG_H

enum log_level {
    LOG_LEVEL_ERROR = 0,
    LOG_LEVEL_WARN,
    LOG_LEVEL_INFO,
    LOG_LEVEL_DEBUG,
};

/* Name of the program in every line (not copied: pass a string that outlives logging). */
void log_set_prog(const char *prog);
void log_set_level(enum log_level level);
/* "error", "warn", "info", "debug" -> level. Returns 0, or -1 for an unknown name. */
int log_level_parse(const char *name, enum log_level *level);
const char *log_level_name(enum log_level level);

/* One line at LEVEL to stderr (dropped when above log_set_level's); newlines in the text
 * become spaces, other control bytes and invalid UTF-8 are escaped (escape.h: \x1b, \\).
 * Thread-safe. */
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_LEVEL_ERROR, __VA_ARGS__)
#define log_warn(...)  log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define log_info(...)  log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__)

#endif
