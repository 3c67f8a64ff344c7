#!/usr/bin/env python3
"""One reader for both kinds, so that only debitd's side differs (bench/ndt7.sh): the bytes
received in the first WINDOW seconds (default 9.5: an ndt7 download stops at 10 s) of an
ndt7 download (ws, from the end of its 101), or of back-to-back GETs of PATH on one
keep-alive connection (from the first request). Reads into one 4 MiB buffer, parses no
frame (an ndt7 frame's header is 10 bytes per MiB; its measurement messages ~1 kB per
250 ms). Prints "MBPS BYTES SECONDS".
usage: ndt7_raw.py PORT ndt7|http [PATH] [WINDOW]"""
import base64
import os
import socket
import sys
import time

port, kind = int(sys.argv[1]), sys.argv[2]
path = sys.argv[3] if len(sys.argv) > 3 else "/ram/1GiB.dat"
window = float(sys.argv[4]) if len(sys.argv) > 4 else 9.5
s = socket.create_connection(("127.0.0.1", port))
s.settimeout(15)
buf = bytearray(4 << 20)
mv = memoryview(buf)
n = 0
if kind == "ndt7":
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(("GET /ndt/v7/download HTTP/1.1\r\nHost: bench\r\nUpgrade: websocket\r\n"
               "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n"
               "Sec-WebSocket-Protocol: net.measurementlab.ndt.v7\r\n\r\n" % key).encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += s.recv(1)  # byte by byte: nothing of the frames is taken with it
    if not head.startswith(b"HTTP/1.1 101"):
        sys.exit("no 101: %r" % head[:80])
    t0 = time.monotonic()
    while True:
        k = s.recv_into(mv)
        now = time.monotonic()
        if k <= 0 or now - t0 > window:
            break
        n += k
else:
    req = ("GET %s HTTP/1.1\r\nHost: bench\r\n\r\n" % path).encode()
    t0 = time.monotonic()
    done = False
    while not done:
        s.sendall(req)
        head = b""
        while b"\r\n\r\n" not in head:
            head += s.recv(1)
        length = [int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0]
        got = 0
        while got < length:
            k = s.recv_into(mv, min(len(buf), length - got))
            now = time.monotonic()
            if k <= 0:
                sys.exit("the connection ended")
            got += k
            if now - t0 > window:
                done = True
                break
            n += k
print("%.1f %d %.3f" % (n * 8 / window / 1e6, n, window))
