/* libFuzzer harness for debit's scenario loader (client/scenario.c through the
 * client/settings.c setters, as `debit --scenario FILE` runs it): the input is the file,
 * read by the very same scenario_load through a memfd path (fuzzlib.h). A loaded scenario
 * is checked as main does (settings_check) and its cells' JSON built; everything freed.
 * Invariant: a failure always says why. Nothing is applied to the host: loading only
 * parses (offload specs, delays, device names are checked, not used). */
#include <stdint.h>

#include "fuzzlib.h"
#include "scenario.h"
#include "settings.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size);
    struct settings *s = path ? settings_new() : NULL;
    if (!s)
        return 0;
    char err[1024] = "";
    struct scenario *scn = scenario_load(path, s, err, sizeof err);
    if (scn) {
        err[0] = 0;
        if (settings_check(s, err, sizeof err) != 0)
            FUZZ_CHECK(err[0] != 0);
        FUZZ_CHECK(s->nservers > 0);
        scenario_free(scn);
    } else {
        FUZZ_CHECK(err[0] != 0);
    }
    settings_free(s);
    return 0;
}
