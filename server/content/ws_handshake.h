/* ws_handshake: the server's side of a WebSocket opening handshake (RFC 6455 4.2.1) for
 * one required subprotocol: which request headers make a valid upgrade, and the
 * Sec-WebSocket-Accept value. Pure functions (GnuTLS's SHA-1 and base64), no I/O:
 * unit-tested in tests/unit/server/content/test_ws_handshake.c, fuzzed by
 * fuzz/fuzz_ws_handshake.c. */
#ifndef DEBITD_WS_HANDSHAKE_H
#define DEBITD_WS_HANDSHAKE_H

#include <stddef.h>

#define WS_ACCEPT_LEN 29 /* base64 of a SHA-1 (28) and a NUL */

/* The request's header values; NULL = absent. */
struct ws_request {
    const char *upgrade, *connection, *version, *key, *protocol;
};

enum ws_verdict {
    WS_OK = 0,
    WS_NOT_UPGRADE,   /* no "websocket" in Upgrade or no "upgrade" token in Connection */
    WS_BAD_VERSION,   /* Sec-WebSocket-Version is not 13 */
    WS_BAD_KEY,       /* Sec-WebSocket-Key is not 16 bytes in base64 */
    WS_NO_PROTOCOL,   /* Sec-WebSocket-Protocol does not offer PROTOCOL */
};

/* Check H for an upgrade to PROTOCOL; on WS_OK, ACCEPT holds the Sec-WebSocket-Accept
 * value. Header tokens are compared case-insensitively (Upgrade, Connection), the
 * subprotocol exactly, as a member of a comma-separated list. */
enum ws_verdict ws_handshake_check(const struct ws_request *h, const char *protocol, char accept[WS_ACCEPT_LEN]);
/* A short reason for V ("missing Sec-WebSocket-Protocol ..."), static. */
const char *ws_verdict_str(enum ws_verdict v);
/* 1 when comma-separated LIST (NULL: none) holds TOKEN, compared case-insensitively when
 * NOCASE, with spaces and tabs around members ignored. */
int ws_list_has(const char *list, const char *token, int nocase);

#endif
