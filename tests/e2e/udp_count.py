#!/usr/bin/env python3
"""UDP datagrams for the loss tests (tests/e2e/delay_loss.sh): count what arrives.

  udp_count.py recv ADDR PORT MAX_S   bind, print "ready" on stdout, count datagrams until
                                      1 s passes without one (after the first) or MAX_S
                                      in all, print the count of distinct sequence numbers
  udp_count.py send ADDR PORT N PPS   send N numbered datagrams at PPS per second
Bounded in count and time; loopback or test namespaces only (the caller picks ADDR)."""
import socket
import struct
import sys
import time


def recv(addr, port, max_s):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
    s.bind((addr, port))
    print("ready", flush=True)
    seen = set()
    end = time.monotonic() + max_s
    s.settimeout(max_s)
    while time.monotonic() < end:
        try:
            data = s.recv(2048)
        except socket.timeout:
            break
        if len(data) >= 4:
            seen.add(struct.unpack("!I", data[:4])[0])
        s.settimeout(max(0.01, min(1.0, end - time.monotonic())))
    print(len(seen), flush=True)


def send(addr, port, n, pps):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    t0 = time.monotonic()
    pad = b"x" * 60
    for i in range(n):
        due = t0 + i / pps
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        s.sendto(struct.pack("!I", i) + pad, (addr, port))


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "recv":
        recv(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    elif len(sys.argv) == 6 and sys.argv[1] == "send":
        send(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]))
    else:
        sys.exit(__doc__)
