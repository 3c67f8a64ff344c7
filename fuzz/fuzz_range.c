/* libFuzzer harness for server/content/range.c: HTTP Range and If-Range of a request, as a client
 * sends them. Input: 8 bytes of resource size (little endian), then the Range header value;
 * the If-Range checks take the same text against an ETag and a date cut from it, and so do
 * the preconditions (server/content/conditional.c: the HTTP-date parser, the entity-tag lists).
 * Invariant: a single range is inside the resource, first <= last. */
#include <stdint.h>
#include <string.h>

#include "conditional.h"
#include "fuzzlib.h"
#include "range.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint64_t rsize = 0;
    size_t n = size < 8 ? size : 8;
    memcpy(&rsize, data, n);
    char *hdr = fuzz_cstr(data + n, size - n);
    if (!hdr)
        return 0;
    /* small sizes too, where the edge cases are */
    const uint64_t sizes[] = {rsize, rsize & 0xffff, 0, 1};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        struct range r = {0, 0};
        enum range_kind k = range_parse(hdr, sizes[i], &r);
        FUZZ_CHECK(k == RANGE_NONE || k == RANGE_ONE || k == RANGE_MULTI || k == RANGE_UNSATISFIABLE);
        if (k == RANGE_ONE)
            FUZZ_CHECK(r.first <= r.last && r.last < sizes[i]);
    }
    size_t half = strlen(hdr) / 2;
    char *etag = fuzz_cstr((const uint8_t *)hdr, half);
    if (etag) {
        int ok = range_if_range_ok(hdr, etag, hdr + half);
        FUZZ_CHECK(ok == 0 || ok == 1);
        FUZZ_CHECK(range_if_range_ok(NULL, etag, hdr) == 1);
        const struct cond_headers ch[] = {{hdr, NULL, NULL, NULL}, {NULL, hdr, NULL, NULL},
                                          {NULL, NULL, hdr, NULL}, {NULL, NULL, NULL, hdr}, {hdr, hdr, hdr, hdr}};
        for (size_t i = 0; i < sizeof ch / sizeof ch[0]; i++) {
            enum cond_result c = cond_evaluate(&ch[i], etag, hdr + half);
            FUZZ_CHECK(c == COND_PASS || c == COND_NOT_MODIFIED || c == COND_PRECONDITION_FAILED);
        }
        time_t t;
        FUZZ_CHECK(cond_parse_date(hdr, &t) == 0 || cond_parse_date(hdr, &t) == -1);
        free(etag);
    }
    free(hdr);
    return 0;
}
