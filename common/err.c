/* err: see err.h. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int err_vset(char *err, size_t errlen, const char *fmt, va_list ap)
{
    if (err && errlen)
        vsnprintf(err, errlen, fmt, ap);
    return -1;
}

int err_set(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err_vset(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

int err_prefix(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return -1;
    char ctx[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx, sizeof ctx, fmt, ap);
    va_end(ap);
    size_t old = strnlen(err, errlen - 1);
    if (old == 0) {
        snprintf(err, errlen, "%s", ctx);
        return -1;
    }
    size_t pre = strlen(ctx) + 2; /* "CTX: " */
    if (pre >= errlen) {
        snprintf(err, errlen, "%s", ctx);
        return -1;
    }
    size_t keep = old;
    if (pre + keep > errlen - 1)
        keep = errlen - 1 - pre;
    memmove(err + pre, err, keep);
    err[pre + keep] = '\0';
    memcpy(err, ctx, pre - 2);
    err[pre - 2] = ':';
    err[pre - 1] = ' ';
    return -1;
}
