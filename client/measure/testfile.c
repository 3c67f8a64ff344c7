/* testfile: see testfile.h. */
#include "testfile.h"

#include <stdio.h>
#include <strings.h>

int testfile_check(const char *content_type, uint64_t bytes, int64_t content_length, int cut_short,
                   uint64_t min_bytes, char *why, size_t whylen)
{
    if (min_bytes == 0)
        return 1;
    /* "text/html; charset=utf-8": the media type is what comes before any parameter. */
    if (content_type && strncasecmp(content_type, "text/html", 9) == 0 &&
        (content_type[9] == 0 || content_type[9] == ';' || content_type[9] == ' ')) {
        snprintf(why, whylen, "not a test file: a text/html body (%llu bytes); --min-bytes 0 accepts it",
                 (unsigned long long)bytes);
        return 0;
    }
    uint64_t size = bytes;
    if (cut_short) {
        if (content_length < 0)
            return 1; /* stopped on purpose before the end of a file of unknown size */
        size = (uint64_t)content_length;
    }
    if (size < min_bytes) {
        snprintf(why, whylen, "not a test file: %llu bytes, under --min-bytes %llu; --min-bytes 0 accepts it",
                 (unsigned long long)size, (unsigned long long)min_bytes);
        return 0;
    }
    return 1;
}
