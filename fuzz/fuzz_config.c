/* libFuzzer harness for debitd's config loader (server/run/config_file.c over the defaults of
 * server/run/config.c, as `debitd -c FILE` runs it): the input is the file, given to the very
 * same config_load_file through a memfd path (fuzzlib.h), so no behaviour is changed for
 * the sake of the seam. A loaded config is printed as `debitd -t` does, and freed.
 * Invariant: a failure always says why. */
#include <stdint.h>
#include <stdio.h>

#include "config.h"
#include "fuzzlib.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static FILE *null;
    if (!null && !(null = fopen("/dev/null", "w")))
        return 0;
    const char *path = fuzz_file(data, size);
    if (!path)
        return 0;
    struct config c;
    char err[1024] = "";
    if (config_defaults(&c, err, sizeof err) != 0)
        return 0;
    err[0] = 0;
    if (config_load_file(&c, path, err, sizeof err) == 0)
        config_print(&c, null);
    else
        FUZZ_CHECK(err[0] != 0);
    config_free(&c);
    return 0;
}
