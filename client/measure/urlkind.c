/* urlkind: see urlkind.h. */
#include "urlkind.h"

#include <string.h>
#include <strings.h>

static const struct {
    const char *segment;
    enum url_kind kind;
} segments[] = {
    {"garbage.php", URL_KIND_LIBRESPEED}, {"garbage", URL_KIND_LIBRESPEED}, {"empty.php", URL_KIND_LIBRESPEED},
    {"empty", URL_KIND_LIBRESPEED},       {"__down", URL_KIND_CLOUDFLARE},  {"__up", URL_KIND_CLOUDFLARE},
};

enum url_kind urlkind_of(const char *url)
{
    if (!url)
        return URL_KIND_FILE;
    if (strncasecmp(url, "ws://", 5) == 0 || strncasecmp(url, "wss://", 6) == 0)
        return URL_KIND_NDT7;
    const char *p = strstr(url, "://");
    p = p ? strchr(p + 3, '/') : NULL; /* the path, after the authority */
    if (!p)
        return URL_KIND_FILE;
    size_t n = strcspn(p, "?#");
    const char *seg = p;
    for (const char *q = p; q < p + n; q++)
        if (*q == '/')
            seg = q + 1;
    size_t len = (size_t)(p + n - seg);
    for (size_t i = 0; i < sizeof segments / sizeof segments[0]; i++)
        if (strlen(segments[i].segment) == len && memcmp(seg, segments[i].segment, len) == 0)
            return segments[i].kind;
    return URL_KIND_FILE;
}

const char *urlkind_name(enum url_kind k)
{
    return k == URL_KIND_LIBRESPEED ? "librespeed" : k == URL_KIND_CLOUDFLARE ? "cloudflare"
                                                   : k == URL_KIND_NDT7       ? "ndt7"
                                                                              : "file";
}
