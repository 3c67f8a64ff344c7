/* libFuzzer harness for server/observe/telemetry.c: a LibreSpeed telemetry report as any
 * visitor can POST it (results/telemetry.php). Input: up to ten fields separated by NUL
 * bytes (ip, ispinfo, extra, ua, lang, dl, ul, ping, jitter, log; missing ones absent).
 * Invariants: a report in UTF-8 (http_telemetry.c refuses any other) is kept and read back by its owner, with the fields as sent (when not
 * redacted); the read-back of another address is NULL; results/json.php's shape always has its six keys; format() and
 * the ISP cut stay within their buffers and are NUL-terminated. */
#include <arpa/inet.h>
#include <jansson.h>
#include <stdint.h>
#include <string.h>

#include "fuzzlib.h"
#include "telemetry.h"

static void peer_set(struct peer *p, const char *v4)
{
    memset(p, 0, sizeof *p);
    p->v4 = 1;
    p->addr[10] = p->addr[11] = 0xff;
    inet_pton(AF_INET, v4, p->addr + 12);
    snprintf(p->text, sizeof p->text, "%s", v4);
}

static int same_text(const json_t *row, const char *key, const char *sent)
{
    const char *v = json_string_value(json_object_get(row, key));
    return v && strcmp(v, sent ? sent : "") == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_cstr(data, size);
    if (!s)
        return 0;
    const char *f[TELEMETRY_N_FIELDS] = {0};
    size_t at = 0;
    for (int i = 0; i < TELEMETRY_N_FIELDS && at <= size; i++) {
        f[i] = s + at;
        at += strlen(s + at) + 1;
    }
    struct telemetry_report rep = {f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9]};
    /* as http_telemetry.c: a field that is not UTF-8 is refused (400) before it is kept */
    int utf8 = 1;
    for (int i = 0; i < TELEMETRY_N_FIELDS; i++) {
        json_t *j = f[i] ? json_string(f[i]) : NULL;
        utf8 &= !f[i] || j != NULL;
        json_decref(j);
    }
    struct peer owner, other;
    peer_set(&owner, "198.18.0.1");
    peer_set(&other, "198.18.0.2");
    struct telemetry *t = telemetry_new(2, 1u << 20);
    FUZZ_CHECK(t);
    for (int redact = 0; utf8 && redact <= 1; redact++) {
        uint64_t id = telemetry_add(t, &rep, &owner, 1700000000.5, redact);
        if (id == 0)
            continue; /* larger than the ring: refused, not kept */
        json_t *row = telemetry_get(t, id, &owner);
        FUZZ_CHECK(row);
        FUZZ_CHECK(telemetry_get(t, id, &other) == NULL);
        FUZZ_CHECK(json_integer_value(json_object_get(row, "id")) == (json_int_t)id);
        if (!redact) {
            FUZZ_CHECK(same_text(row, "ua", rep.ua) && same_text(row, "dl", rep.dl) &&
                       same_text(row, "log", rep.log) && same_text(row, "ispinfo", rep.ispinfo));
        }
        json_t *pub = telemetry_public_json(row);
        FUZZ_CHECK(pub);
        static const char *keys[] = {"timestamp", "download", "upload", "ping", "jitter", "ispinfo"};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            FUZZ_CHECK(json_object_get(pub, keys[k]));
        char *text = json_dumps(pub, 0);
        FUZZ_CHECK(text);
        free(text);
        json_decref(pub);
        json_decref(row);
    }
    char buf[32];
    for (int i = 0; i < TELEMETRY_N_FIELDS; i++) {
        if (!f[i])
            continue;
        const char *r = telemetry_format(f[i], buf, sizeof buf);
        FUZZ_CHECK(r && strlen(r) < sizeof buf);
        r = telemetry_isp(f[i], buf, 8);
        FUZZ_CHECK(r && strlen(r) < 8);
        char *red = telemetry_redact(f[i]);
        FUZZ_CHECK(red);
        free(red);
    }
    telemetry_free(t);
    free(s);
    return 0;
}
