/* Unit tests for client/measure/ws_frame.c: a server's frames read whole and byte by byte
 * (the three length forms, a fragmented text message, control frames between fragments),
 * and by table the streams it refuses, each with its reason. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ws_frame.h"

struct log {
    char text[64];
    size_t binary, ntext;
    unsigned ends, fins, closes, pings;
};

static void on_payload(unsigned op, unsigned msg_op, const unsigned char *d, size_t n, void *ud)
{
    struct log *g = ud;
    if (op & 0x8)
        return;
    if (msg_op == WS_OP_TEXT) {
        memcpy(g->text + g->ntext, d, n);
        g->ntext += n;
    } else
        g->binary += n;
}

static void on_end(unsigned op, unsigned msg_op, int fin, void *ud)
{
    struct log *g = ud;
    (void)msg_op;
    g->ends++;
    g->fins += fin;
    g->closes += op == WS_OP_CLOSE;
    g->pings += op == WS_OP_PING;
}

static const struct ws_rx_cb cb = {on_payload, on_end};

static void test_stream(void **state)
{
    (void)state;
    static unsigned char s[100000];
    size_t n = 0;
    const unsigned char a[] = {0x82, 3, 'a', 'b', 'c',     /* binary, 7-bit length */
                               0x01, 2, 'h', 'e',          /* text, not FIN */
                               0x89, 1, 'p',               /* a ping between fragments */
                               0x80, 3, 'l', 'l', 'o',     /* continuation, FIN */
                               0x82, 126, 0x01, 0x00};     /* binary, 16-bit length 256 */
    memcpy(s, a, sizeof a);
    n = sizeof a;
    memset(s + n, 'x', 256), n += 256;
    const unsigned char b[] = {0x82, 127, 0, 0, 0, 0, 0, 1, 0x00, 0x00}; /* 64-bit length 65536 */
    memcpy(s + n, b, sizeof b), n += sizeof b;
    memset(s + n, 'y', 65536), n += 65536;
    const unsigned char c[] = {0x88, 2, 0x03, 0xe8}; /* close 1000 */
    memcpy(s + n, c, sizeof c), n += sizeof c;
    for (int bytewise = 0; bytewise < 2; bytewise++) {
        struct log g = {0};
        struct ws_rx rx;
        ws_rx_init(&rx);
        if (bytewise)
            for (size_t i = 0; i < n; i++)
                assert_int_equal(ws_rx_feed(&rx, s + i, 1, 1 << 20, &cb, &g), 0);
        else
            assert_int_equal(ws_rx_feed(&rx, s, n, 1 << 20, &cb, &g), 0);
        assert_int_equal(g.binary, 3 + 256 + 65536);
        assert_int_equal(g.ntext, 5);
        assert_memory_equal(g.text, "hello", 5);
        assert_int_equal(g.ends, 7);
        assert_int_equal(g.fins, 6);
        assert_int_equal(g.closes, 1);
        assert_int_equal(g.pings, 1);
    }
}

static void test_refused(void **state)
{
    (void)state;
    static const struct {
        unsigned char s[12];
        size_t n;
        const char *why; /* a word of the reason */
    } rows[] = {
        {{0x82, 0x81, 1, 2, 3, 4, 'a'}, 7, "masked"},
        {{0xc2, 0}, 2, "reserved"},
        {{0x83, 0}, 2, "opcode"},
        {{0x8b, 0}, 2, "opcode"},
        {{0x09, 0}, 2, "control"},           /* a fragmented ping */
        {{0x89, 126, 0, 126}, 4, "control"}, /* a ping over 125 bytes */
        {{0x80, 0}, 2, "continuation"},
        {{0x01, 1, 'a', 0x82, 0}, 5, "inside"},
        {{0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 0}, 10, "top bit"},
        {{0x82, 127, 0, 0, 0, 0, 0, 0x20, 0, 0}, 10, "larger"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        struct log g = {0};
        struct ws_rx rx;
        ws_rx_init(&rx);
        if (ws_rx_feed(&rx, rows[i].s, rows[i].n, 1 << 20, &cb, &g) != -1)
            fail_msg("row %zu accepted", i);
        if (!strstr(rx.error, rows[i].why))
            fail_msg("row %zu: \"%s\" does not say %s", i, rx.error, rows[i].why);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stream),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
