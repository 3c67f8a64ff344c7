/* ws_frame: an incremental reader of a server's WebSocket frames (RFC 6455 5.2). */
#include "ws_frame.h"

#include <string.h>

void ws_rx_init(struct ws_rx *rx)
{
    memset(rx, 0, sizeof *rx);
}

/* Bytes the header will have, from its first two (0: not known yet). */
static size_t header_len(const struct ws_rx *rx)
{
    if (rx->hlen < 2)
        return 2;
    unsigned l7 = rx->hdr[1] & 0x7f;
    return l7 == 127 ? 10 : l7 == 126 ? 4 : 2;
}

static int fail(struct ws_rx *rx, const char *why)
{
    rx->error = why;
    return -1;
}

/* The header is complete: check it and start its payload. */
static int header_done(struct ws_rx *rx, uint64_t max, const struct ws_rx_cb *cb, void *ud)
{
    unsigned b0 = rx->hdr[0], b1 = rx->hdr[1], op = b0 & 0x0f;
    if (b0 & 0x70)
        return fail(rx, "reserved bits set (no extension was negotiated)");
    if (b1 & 0x80)
        return fail(rx, "a masked frame from the server");
    uint64_t n = b1 & 0x7f;
    if (n == 126)
        n = (uint64_t)rx->hdr[2] << 8 | rx->hdr[3];
    else if (n == 127) {
        n = 0;
        for (int i = 0; i < 8; i++)
            n = n << 8 | rx->hdr[2 + i];
        if (n >> 63)
            return fail(rx, "a length with the top bit set");
    }
    int ctrl = op & 0x8;
    if (ctrl && (op > WS_OP_PONG || !(b0 & 0x80) || n > 125))
        return fail(rx, op > WS_OP_PONG ? "an unknown opcode" : "a control frame fragmented or over 125 bytes");
    if (!ctrl) {
        if (op > WS_OP_BINARY)
            return fail(rx, "an unknown opcode");
        if (op == WS_OP_CONT && !rx->msg_op)
            return fail(rx, "a continuation frame outside a message");
        if (op != WS_OP_CONT && rx->msg_op)
            return fail(rx, "a new message inside a fragmented one");
        if (n > max)
            return fail(rx, "a frame larger than the largest message accepted");
        if (op != WS_OP_CONT)
            rx->msg_op = op;
    }
    rx->op = op;
    rx->fin = (b0 & 0x80) != 0;
    rx->left = n;
    rx->in_payload = 1;
    rx->hlen = 0;
    if (n == 0) { /* an empty frame ends at once */
        rx->in_payload = 0;
        unsigned mop = ctrl ? op : rx->msg_op;
        if (!ctrl && rx->fin)
            rx->msg_op = 0;
        if (cb->frame_end)
            cb->frame_end(op, mop, rx->fin, ud);
    }
    return 0;
}

int ws_rx_feed(struct ws_rx *rx, const unsigned char *p, size_t len, uint64_t max, const struct ws_rx_cb *cb,
               void *ud)
{
    if (rx->error)
        return -1;
    while (len) {
        if (!rx->in_payload) {
            size_t want = header_len(rx);
            while (len && rx->hlen < want) {
                rx->hdr[rx->hlen++] = *p++;
                len--;
                want = header_len(rx);
            }
            if (rx->hlen < want)
                return 0;
            if (header_done(rx, max, cb, ud) < 0)
                return -1;
            continue;
        }
        size_t n = rx->left < len ? (size_t)rx->left : len;
        int ctrl = rx->op & 0x8;
        unsigned mop = ctrl ? rx->op : rx->msg_op;
        if (cb->payload)
            cb->payload(rx->op, mop, p, n, ud);
        p += n;
        len -= n;
        rx->left -= n;
        if (!rx->left) {
            rx->in_payload = 0;
            if (!ctrl && rx->fin)
                rx->msg_op = 0;
            if (cb->frame_end)
                cb->frame_end(rx->op, mop, rx->fin, ud);
        }
    }
    return 0;
}
