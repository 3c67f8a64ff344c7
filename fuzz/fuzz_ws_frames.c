/* libFuzzer harness for client/measure/ws_frame.c: the frames an ndt7 (WebSocket) server
 * sends to debit. Input: the first byte chooses where the stream is cut into reads, the
 * rest is the stream. Invariants: the payload handed on never exceeds the input, cut or
 * whole the stream gives the same payload, frame ends and verdict; a control frame's
 * payload is at most 125 bytes; after an error the reader stays stopped. */
#include <stdint.h>
#include <string.h>

#include "fuzzlib.h"
#include "ws_frame.h"

struct tally {
    uint64_t payload, ends, ctl_run;
    uint64_t sum; /* of the payload bytes' values, to compare two readings */
};

static void on_payload(unsigned op, unsigned msg_op, const unsigned char *d, size_t n, void *ud)
{
    struct tally *t = ud;
    FUZZ_CHECK(op <= WS_OP_PONG && msg_op <= WS_OP_PONG);
    t->payload += n;
    if (op & 0x8) {
        t->ctl_run += n;
        FUZZ_CHECK(t->ctl_run <= 125);
    }
    for (size_t i = 0; i < n; i++)
        t->sum += d[i];
}

static void on_end(unsigned op, unsigned msg_op, int fin, void *ud)
{
    struct tally *t = ud;
    (void)msg_op, (void)fin;
    if (op & 0x8)
        t->ctl_run = 0;
    t->ends++;
}

static int read_all(const uint8_t *p, size_t n, size_t step, struct tally *t)
{
    static const struct ws_rx_cb cb = {on_payload, on_end};
    struct ws_rx rx;
    ws_rx_init(&rx);
    int rc = 0;
    for (size_t off = 0; off < n && rc == 0; off += step)
        rc = ws_rx_feed(&rx, p + off, n - off < step ? n - off : step, 1u << 20, &cb, t);
    if (rc < 0) {
        FUZZ_CHECK(rx.error && rx.error[0]);
        FUZZ_CHECK(ws_rx_feed(&rx, p, n, 1u << 20, &cb, t) == -1); /* stays stopped */
    }
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t step = (size_t)data[0] % 17 + 1;
    struct tally whole = {0}, cut = {0};
    int a = read_all(data + 1, size - 1, size, &whole);
    int b = read_all(data + 1, size - 1, step, &cut);
    FUZZ_CHECK(a == b);
    FUZZ_CHECK(whole.payload <= size - 1);
    FUZZ_CHECK(whole.payload == cut.payload && whole.sum == cut.sum && whole.ends == cut.ends);
    return 0;
}
