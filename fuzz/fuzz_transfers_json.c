/* libFuzzer harness for the client's reading of debitd's GET /transfers/ID answer
 * (client/measure/server_record.c: server_record_parse, then the record embedded in the
 * run's JSON by result_to_json, as every output and --jsonl line writes it). The body
 * comes from the server: any bytes. Invariants: only objects are kept, and a kept record
 * is written back out. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzzlib.h"
#include "result.h"
#include "server_record.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *body = fuzz_cstr(data, size);
    if (!body)
        return 0;
    int sending = -1;
    json_t *obj = server_record_parse(body, &sending);
    free(body);
    if (!obj)
        return 0;
    FUZZ_CHECK(json_is_object(obj));
    FUZZ_CHECK(sending == 0 || sending == 1);
    struct run_result *r = result_new();
    if (r) {
        r->server_record = obj; /* owned by r from here */
        obj = NULL;
        json_t *j = result_to_json(r);
        FUZZ_CHECK(j != NULL);
        char *dump = json_dumps(j, JSON_COMPACT);
        FUZZ_CHECK(dump != NULL);
        free(dump);
        json_decref(j);
        result_free(r);
    }
    json_decref(obj);
    return 0;
}
