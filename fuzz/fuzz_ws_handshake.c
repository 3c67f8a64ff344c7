/* libFuzzer harness for server/content/ws_handshake.c: the WebSocket upgrade headers of an
 * ndt7 request as a client sends them. Input: up to five header values separated by '\n'
 * (Upgrade, Connection, Sec-WebSocket-Version, Sec-WebSocket-Key, Sec-WebSocket-Protocol;
 * missing ones are absent headers). Invariants: the verdict is one of five and has a
 * reason; an accepted upgrade has a 28-character base64 accept value, the key is 24
 * characters and the subprotocol is listed; the list matcher agrees with itself on a
 * token built from the input. */
#include <stdint.h>
#include <string.h>

#include "fuzzlib.h"
#include "ws_handshake.h"

#define P "net.measurementlab.ndt.v7"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_cstr(data, size);
    if (!text)
        return 0;
    const char *f[5] = {NULL, NULL, NULL, NULL, NULL};
    char *p = text;
    for (int i = 0; i < 5 && p; i++) {
        f[i] = p;
        p = strchr(p, '\n');
        if (p)
            *p++ = 0;
    }
    struct ws_request h = {f[0], f[1], f[2], f[3], f[4]};
    char acc[WS_ACCEPT_LEN];
    enum ws_verdict v = ws_handshake_check(&h, P, acc);
    FUZZ_CHECK(v >= WS_OK && v <= WS_NO_PROTOCOL);
    FUZZ_CHECK(ws_verdict_str(v) && ws_verdict_str(v)[0]);
    if (v == WS_OK) {
        FUZZ_CHECK(strlen(acc) == 28);
        for (size_t i = 0; i < 28; i++)
            FUZZ_CHECK(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=", acc[i]));
        FUZZ_CHECK(strlen(h.key) == 24);
        FUZZ_CHECK(ws_list_has(h.protocol, P, 0));
    } else {
        FUZZ_CHECK(acc[0] == 0);
    }
    /* a token without separators, put in a list of its own, is found */
    if (f[0] && f[0][0] && !strpbrk(f[0], ", \t")) {
        size_t n = strlen(f[0]);
        char *list = malloc(n + 8);
        if (list) {
            memcpy(list, "x, ", 3);
            memcpy(list + 3, f[0], n);
            memcpy(list + 3 + n, " ,y", 4);
            FUZZ_CHECK(ws_list_has(list, f[0], 0) && ws_list_has(list, f[0], 1));
            free(list);
        }
    }
    free(text);
    return 0;
}
