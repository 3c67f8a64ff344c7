/* urlpath: see urlpath.h. */
#include "urlpath.h"

#include <string.h>
#include <strings.h>

const char *urlpath_strerror(enum urlpath_result r)
{
    switch (r) {
    case URLPATH_OK: return "ok";
    case URLPATH_ABOVE_ROOT: return "\"..\" above the root";
    case URLPATH_TOO_LONG: return "path too long";
    case URLPATH_NOT_PATH: return "not a path";
    }
    return "?";
}

/* IN without "http://authority" or "https://authority" (the scheme in any case), or IN */
static const char *skip_authority(const char *in)
{
    size_t n = strncasecmp(in, "http://", 7) == 0 ? 7 : strncasecmp(in, "https://", 8) == 0 ? 8 : 0;
    if (!n)
        return in;
    const char *p = in + n;
    return p + strcspn(p, "/#");
}

enum urlpath_result urlpath_normalize(const char *in, char *out, size_t outlen)
{
    if (!in || outlen < 2)
        return URLPATH_TOO_LONG;
    const char *p = skip_authority(in);
    int absolute_form = p != in;
    if (*p != '/' && !(absolute_form && (*p == 0 || *p == '#')))
        return URLPATH_NOT_PATH;
    size_t len = strcspn(p, "#"); /* the fragment is the client's, never the server's */
    size_t o = 0;
    out[o++] = '/';
    /* Each segment between slashes: empty ones (repeated slashes) and "." are dropped, ".."
     * removes the last segment written; out always ends with '/' between segments. */
    size_t i = 0;
    while (i < len) {
        while (i < len && p[i] == '/')
            i++;
        size_t s = i;
        while (i < len && p[i] != '/')
            i++;
        size_t seg = i - s;
        int last = i >= len;
        if (seg == 0)
            break;
        if (seg == 1 && p[s] == '.')
            continue;
        if (seg == 2 && p[s] == '.' && p[s + 1] == '.') {
            if (o == 1)
                return URLPATH_ABOVE_ROOT;
            o--; /* the '/' after the last segment */
            while (o > 0 && out[o - 1] != '/')
                o--;
            continue;
        }
        size_t slash = !last || p[len - 1] == '/'; /* a segment ends with '/' unless it ends the path */
        if (o + seg + slash >= outlen)               /* and the NUL */
            return URLPATH_TOO_LONG;
        memcpy(out + o, p + s, seg);
        o += seg;
        if (slash)
            out[o++] = '/';
    }
    out[o] = 0;
    return URLPATH_OK;
}
