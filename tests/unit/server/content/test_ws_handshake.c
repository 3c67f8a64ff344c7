/* Unit tests for server/content/ws_handshake.c: RFC 6455's own Sec-WebSocket-Accept example,
 * and by table which header sets make an ndt7 upgrade (tokens case-insensitive in lists,
 * the subprotocol exact and listed, the version 13, a 16-byte key). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ws_handshake.h"

#define P "net.measurementlab.ndt.v7"
#define KEY "dGhlIHNhbXBsZSBub25jZQ==" /* RFC 6455 1.3 */

static void test_accept_rfc(void **state)
{
    (void)state;
    struct ws_request h = {"websocket", "Upgrade", "13", KEY, P};
    char acc[WS_ACCEPT_LEN];
    assert_int_equal(ws_handshake_check(&h, P, acc), WS_OK);
    assert_string_equal(acc, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="); /* the RFC's answer */
}

static void test_verdicts(void **state)
{
    (void)state;
    static const struct {
        struct ws_request h;
        enum ws_verdict want;
    } rows[] = {
        {{"websocket", "Upgrade", "13", KEY, P}, WS_OK},
        {{"WebSocket", "keep-alive, Upgrade", "13", KEY, "other, " P}, WS_OK},
        {{"websocket", "upgrade", "13", KEY, " " P " ,x"}, WS_OK},
        {{NULL, "Upgrade", "13", KEY, P}, WS_NOT_UPGRADE},
        {{"websocket", NULL, "13", KEY, P}, WS_NOT_UPGRADE},
        {{"h2c", "Upgrade", "13", KEY, P}, WS_NOT_UPGRADE},
        {{"websocket", "keep-alive", "13", KEY, P}, WS_NOT_UPGRADE},
        {{"websocket", "Upgradex", "13", KEY, P}, WS_NOT_UPGRADE},
        {{"websocket", "Upgrade", "8", KEY, P}, WS_BAD_VERSION},
        {{"websocket", "Upgrade", NULL, KEY, P}, WS_BAD_VERSION},
        {{"websocket", "Upgrade", "13", NULL, P}, WS_BAD_KEY},
        {{"websocket", "Upgrade", "13", "short==", P}, WS_BAD_KEY},
        {{"websocket", "Upgrade", "13", "dGhlIHNhbXBsZSBub25jZQ=!", P}, WS_BAD_KEY},
        {{"websocket", "Upgrade", "13", "dGhlIHNhbXBsZSBub25j*Q==", P}, WS_BAD_KEY},
        {{"websocket", "Upgrade", "13", KEY, NULL}, WS_NO_PROTOCOL},
        {{"websocket", "Upgrade", "13", KEY, ""}, WS_NO_PROTOCOL},
        {{"websocket", "Upgrade", "13", KEY, "NET.MEASUREMENTLAB.NDT.V7"}, WS_NO_PROTOCOL}, /* exact */
        {{"websocket", "Upgrade", "13", KEY, P "x"}, WS_NO_PROTOCOL},
        {{"websocket", "Upgrade", "13", KEY, "net.measurementlab.ndt.v5"}, WS_NO_PROTOCOL},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char acc[WS_ACCEPT_LEN] = "x";
        enum ws_verdict v = ws_handshake_check(&rows[i].h, P, acc);
        if (v != rows[i].want)
            fail_msg("row %zu: verdict %d, want %d", i, (int)v, (int)rows[i].want);
        assert_int_equal(strlen(acc), v == WS_OK ? 28 : 0);
        assert_non_null(ws_verdict_str(v));
    }
}

static void test_list(void **state)
{
    (void)state;
    assert_true(ws_list_has("a, b ,\tc", "c", 0));
    assert_true(ws_list_has(",,b", "b", 0));
    assert_false(ws_list_has("ab", "b", 0));
    assert_false(ws_list_has("", "b", 0));
    assert_false(ws_list_has(NULL, "b", 0));
    assert_false(ws_list_has("B", "b", 0));
    assert_true(ws_list_has("B", "b", 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accept_rfc),
        cmocka_unit_test(test_verdicts),
        cmocka_unit_test(test_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
