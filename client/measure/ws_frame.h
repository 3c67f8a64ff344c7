/* ws_frame: the frames a WebSocket server sends (RFC 6455 5.2), read incrementally from
 * whatever the socket gave: headers of 2 to 10 bytes (a server's frames are not masked),
 * then payload handed on where it lies, never copied — the reason it exists beside
 * libwslay, which reads 4 KiB at a time into a buffer of its own and was the bottleneck of
 * an ndt7 download on loopback (docs/client.md "ndt7"). Writing (masked) stays libwslay's.
 * Pure: fuzzed by fuzz/fuzz_ws_frames.c, unit-tested in tests/unit/client/measure/test_ws_frame.c. */
#ifndef DEBIT_WS_FRAME_H
#define DEBIT_WS_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define WS_OP_CONT 0x0
#define WS_OP_TEXT 0x1
#define WS_OP_BINARY 0x2
#define WS_OP_CLOSE 0x8
#define WS_OP_PING 0x9
#define WS_OP_PONG 0xa

struct ws_rx {
    unsigned char hdr[10];
    size_t hlen;        /* header bytes collected */
    uint64_t left;      /* payload bytes of the current frame still to come */
    int in_payload;     /* between a header and the end of its payload */
    unsigned op;        /* the current frame's opcode */
    int fin;
    unsigned msg_op;    /* the data message's opcode (text or binary), across continuations */
    const char *error;  /* static: why the stream is not a server's WebSocket (then stuck) */
};

struct ws_rx_cb {
    /* N bytes of the current frame's payload, where they lie; OP is the frame's opcode, MSG_OP
     * its message's (a continuation's is the message's first) */
    void (*payload)(unsigned op, unsigned msg_op, const unsigned char *data, size_t n, void *ud);
    /* the current frame ended; FIN: it ended its message */
    void (*frame_end)(unsigned op, unsigned msg_op, int fin, void *ud);
};

/* Zero state. */
void ws_rx_init(struct ws_rx *rx);
/* Feed LEN bytes at P: 0, or -1 with rx->error (a masked frame, reserved bits, an unknown
 * opcode, a control frame over 125 bytes or fragmented, a continuation without a message,
 * a length with the top bit set, a payload over MAX). */
int ws_rx_feed(struct ws_rx *rx, const unsigned char *p, size_t len, uint64_t max, const struct ws_rx_cb *cb,
               void *ud);

#endif
