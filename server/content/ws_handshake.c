/* ws_handshake: RFC 6455's opening handshake checks and Sec-WebSocket-Accept. */
#include "ws_handshake.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <string.h>
#include <strings.h>

/* RFC 6455 1.3: the GUID appended to the client's key before hashing */
static const char ws_guid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

int ws_list_has(const char *list, const char *token, int nocase)
{
    size_t tl = strlen(token);
    for (const char *p = list; p && *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        const char *end = p;
        while (*end && *end != ',')
            end++;
        const char *last = end;
        while (last > p && (last[-1] == ' ' || last[-1] == '\t'))
            last--;
        size_t n = (size_t)(last - p);
        if (n == tl && n && (nocase ? strncasecmp(p, token, n) : strncmp(p, token, n)) == 0)
            return 1;
        p = end;
    }
    return 0;
}

/* KEY is base64 of 16 bytes: 22 characters of the alphabet and "==" (RFC 6455 4.2.1 5). */
static int key_ok(const char *key)
{
    if (!key || strlen(key) != 24 || strcmp(key + 22, "==") != 0)
        return 0;
    for (int i = 0; i < 22; i++) {
        char c = key[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/'))
            return 0;
    }
    return 1;
}

static int accept_value(const char *key, char accept[WS_ACCEPT_LEN])
{
    char buf[24 + sizeof ws_guid];
    memcpy(buf, key, 24);
    memcpy(buf + 24, ws_guid, sizeof ws_guid - 1);
    unsigned char sha[20];
    if (gnutls_hash_fast(GNUTLS_DIG_SHA1, buf, 24 + sizeof ws_guid - 1, sha) < 0)
        return -1;
    gnutls_datum_t in = {sha, sizeof sha}, out = {NULL, 0};
    if (gnutls_base64_encode2(&in, &out) < 0)
        return -1;
    int ok = out.size == WS_ACCEPT_LEN - 1;
    if (ok) {
        memcpy(accept, out.data, WS_ACCEPT_LEN - 1);
        accept[WS_ACCEPT_LEN - 1] = 0;
    }
    gnutls_free(out.data);
    return ok ? 0 : -1;
}

enum ws_verdict ws_handshake_check(const struct ws_request *h, const char *protocol, char accept[WS_ACCEPT_LEN])
{
    accept[0] = 0;
    if (!ws_list_has(h->upgrade, "websocket", 1) || !ws_list_has(h->connection, "upgrade", 1))
        return WS_NOT_UPGRADE;
    if (!h->version || strcmp(h->version, "13") != 0)
        return WS_BAD_VERSION;
    if (!key_ok(h->key))
        return WS_BAD_KEY;
    if (!ws_list_has(h->protocol, protocol, 0))
        return WS_NO_PROTOCOL;
    return accept_value(h->key, accept) < 0 ? WS_BAD_KEY : WS_OK;
}

const char *ws_verdict_str(enum ws_verdict v)
{
    switch (v) {
    case WS_OK: return "ok";
    case WS_NOT_UPGRADE: return "not a WebSocket upgrade (Upgrade: websocket, Connection: Upgrade)";
    case WS_BAD_VERSION: return "Sec-WebSocket-Version is not 13";
    case WS_BAD_KEY: return "Sec-WebSocket-Key is not 16 bytes in base64";
    case WS_NO_PROTOCOL: return "Sec-WebSocket-Protocol does not offer the required subprotocol";
    }
    return "?";
}
