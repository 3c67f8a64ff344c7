/* ws: a WebSocket client connection (RFC 6455) over libcurl's connect-only mode (libcurl
 * 7.88 has no WebSocket of its own): libcurl connects, with the run's network options and,
 * for wss://, TLS; the opening handshake is written and read here with curl_easy_send and
 * curl_easy_recv; the frames we send are libwslay's (the client masks every frame), those
 * we receive ws_frame.c's (256 KiB reads, payload never copied). The caller runs the event
 * loop over ws_socket with ws_pump. */
#ifndef DEBIT_WS_H
#define DEBIT_WS_H

#include <curl/curl.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "download.h"

struct ws_conn;

/* What the connection's owner is told of the frames that arrive. */
struct ws_handlers {
    void (*text)(const char *msg, size_t len, void *ud);  /* a whole text message */
    void (*binary)(size_t n, void *ud);                   /* n more bytes of binary payload */
    void *ud;
};

/* What the opening handshake learnt. */
struct ws_open_info {
    long status;          /* the answer's HTTP status (101 when open) */
    json_t *debit;        /* the answer's X-Debit-* headers, name -> value (new; the caller decrefs) */
    char remote_ip[64];
    double connect_s;     /* TCP (and TLS) connected, from the call */
    double upgraded_s;    /* the 101 read */
    char tls_version[16]; /* "" over ws:// */
};

/* Connect to URL (ws:// or wss://) with O's network options, ask for subprotocol PROTOCOL
 * and check the 101: Sec-WebSocket-Accept as RFC 6455 computes it, the subprotocol echoed.
 * Returns the connection, or NULL with err (INFO filled as far as it got: a 4xx is in
 * INFO->status). */
struct ws_conn *ws_open(const char *url, const char *protocol, const struct dl_options *o,
                        const struct ws_handlers *hd, struct ws_open_info *info, char *err, size_t errlen);
/* The socket to poll. */
int ws_socket(const struct ws_conn *c);
/* Queue a binary message of LEN bytes (copied) or a text message; 0, or -1 (no memory, closed). */
int ws_queue(struct ws_conn *c, int text, const void *data, size_t len);
/* Queue a close (1000). */
void ws_close(struct ws_conn *c);
/* Read what has arrived and write what is queued, without blocking: 0, or -1 when the
 * connection broke or the peer's framing was wrong (err says which). */
int ws_pump(struct ws_conn *c, int readable, char *err, size_t errlen);
/* Queued bytes still to write (a binary message not yet out counts). */
size_t ws_queued(const struct ws_conn *c);
/* 1 when wslay has something to write. */
int ws_want_write(const struct ws_conn *c);
/* The close handshake: our close sent, the peer's received (its code in *CODE, 0 none). */
int ws_closed(const struct ws_conn *c, int *code);
/* Close the connection and free. NULL is fine. */
void ws_free(struct ws_conn *c);

#endif
