/* log: see log.h. */
#include "log.h"

#include "escape.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static const char *log_prog = "debit";
static _Atomic int log_level = LOG_LEVEL_INFO;

static const char *const level_names[] = {"error", "warn", "info", "debug"};

void log_set_prog(const char *prog)
{
    log_prog = prog;
}

void log_set_level(enum log_level level)
{
    log_level = level;
}

int log_level_parse(const char *name, enum log_level *level)
{
    for (int i = 0; i <= LOG_LEVEL_DEBUG; i++) {
        if (strcasecmp(name, level_names[i]) == 0) {
            *level = (enum log_level)i;
            return 0;
        }
    }
    if (strcasecmp(name, "warning") == 0) {
        *level = LOG_LEVEL_WARN;
        return 0;
    }
    return -1;
}

const char *log_level_name(enum log_level level)
{
    return level <= LOG_LEVEL_DEBUG ? level_names[level] : "?";
}

void log_msg(enum log_level level, const char *fmt, ...)
{
    if ((int)level > log_level)
        return;
    char line[2048];
    struct timeval tv;
    gettimeofday(&tv, NULL);
    struct tm tm;
    gmtime_r(&tv.tv_sec, &tm);
    int n = snprintf(line, sizeof line, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s[%d] %s: ",
                     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
                     tm.tm_sec, (long)(tv.tv_usec / 1000), log_prog, (int)getpid(),
                     log_level_name(level));
    char text[sizeof line];
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    if (m < 0)
        text[0] = 0;
    /* One message, one line: a newline inside the text would break log parsers. Other
     * control bytes (a client's request path, a server's header) are escaped, as nginx
     * does in its logs, so that a log read on a terminal cannot drive it (escape.h). */
    for (char *p = text; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    escape_text(line + n, sizeof line - (size_t)n - 1, text);
    size_t len = strlen(line);
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}
