/* wire: the contract between debitd, debit, the lab and the tests, defined once.
 *
 * Response headers debitd adds to every test-file response (debit keeps every X-Debit-*
 * header it receives in a run's "server_config"; docs/server.md documents the values):
 *   X-Debit-Offload    live offload state of the listener's interface ("tso=on gso=on gro=on")
 *   X-Debit-Interface  that interface's name
 *   X-Debit-Tcp        the listener's TCP profile ("cc=cubic pacing=unlimited sndbuf=auto")
 *   X-Debit-Kernel     the server's kernel release (uname -r)
 *   X-Debit-Tls        the connection's TLS version and cipher suite ("TLS1.3; TLS_AES_256_GCM_SHA384"),
 *                      "none" on a plain HTTP listener
 *   X-Debit-Transfer   the ID of this transfer's record, served at WIRE_TRANSFERS_PATH ID
 *                      (32 hex digits, 128 random bits)
 *   X-Debit-Cpu        debitd's own CPU budget: "quota=5%; period=100ms; cgroup=v1:/debit/x"
 *                      or "none" (common/cgroup.h; refreshed once a second)
 * X-Debit-Interface and X-Debit-Kernel are left out when debitd runs with
 * privacy.details = false: a client must do without them.
 *
 * The shell side (lab/lab.sh, tests/lib) reads the string values below out of this file
 * (tests/lib/common.sh: wire_get NAME), so keep each on one line as `#define NAME "value"`. */
#ifndef DEBIT_WIRE_H
#define DEBIT_WIRE_H

#define WIRE_HEADER_PREFIX "X-Debit-"
#define WIRE_HDR_OFFLOAD "X-Debit-Offload"
#define WIRE_HDR_INTERFACE "X-Debit-Interface"
#define WIRE_HDR_TCP "X-Debit-Tcp"
#define WIRE_HDR_KERNEL "X-Debit-Kernel"
#define WIRE_HDR_TRANSFER "X-Debit-Transfer"
#define WIRE_HDR_TLS "X-Debit-Tls"
#define WIRE_HDR_CPU "X-Debit-Cpu"

/* GET WIRE_TRANSFERS_PATH ID: 200 with a JSON object whose "state" is "sending", "done" or
 * "aborted"; 404 until the record exists, after it left the ring, and to any address but
 * the one that made the transfer (unless privacy.public_transfers). */
#define WIRE_TRANSFERS_PATH "/transfers/"
#define WIRE_STATUS_PATH "/status"
/* Prometheus text format 0.0.4 (docs/server.md "Metrics"); 403 outside metrics.allow. */
#define WIRE_METRICS_PATH "/metrics"
/* ndt7 (M-Lab's spec/ndt7-protocol.md): WebSocket paths and the subprotocol both ends name. */
#define WIRE_NDT7_DOWNLOAD_PATH "/ndt/v7/download"
#define WIRE_NDT7_UPLOAD_PATH "/ndt/v7/upload"
#define WIRE_NDT7_PROTOCOL "net.measurementlab.ndt.v7"

/* The first word of the line a delay program (debit-delayline, debit-netctl) prints on
 * stdout once packets are being delayed; whoever started it waits for it (bounded). */
#define WIRE_DELAY_READY "debit-delay: ready"

#endif
