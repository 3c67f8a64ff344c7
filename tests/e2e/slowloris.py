#!/usr/bin/env python3
"""Slow-header clients (slowloris) for tests/e2e/server_slowloris.sh: not a test itself.

slowloris.py HOST PORT DURATION OUT.json ADDR:N [ADDR:N ...]
keeps N connections from each source ADDR open to HOST:PORT for DURATION seconds; each
sends a request line, then one more header line every 2 s and never ends its headers.
A connection the server closes is reopened 0.5 s later. Writes to OUT.json how long each
closed connection lived (from its connect to the server's close), how many were still open
at the end and their ages, and the peak number open. Bounded: it stops after DURATION
seconds whatever happens (and the caller runs it under `timeout`)."""
import json, resource, selectors, socket, sys, time

TRICKLE_S, REOPEN_S = 2.0, 0.5

host, port, duration, out = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
plan = []
for spec in sys.argv[5:]:
    addr, n = spec.rsplit(":", 1)
    plan += [addr] * int(n)
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

sel = selectors.DefaultSelector()
t0 = time.monotonic()
end = t0 + duration
lived = []     # seconds from connected to closed by the server
failed = 0     # connects that did not complete
slots = [{"addr": a, "sock": None, "reopen": t0 + 0.1 * (i // 200)} for i, a in enumerate(plan)]
peak = 0
open_now = 0


def close(slot, now, by_server):
    global open_now
    s = slot["sock"]
    sel.unregister(s)
    s.close()
    slot["sock"] = None
    if slot.get("connected") is not None:
        open_now -= 1
        if by_server:
            lived.append(now - slot["started"])
    slot["reopen"] = now + REOPEN_S


def open_slot(slot, now):
    global failed
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setblocking(False)
    try:
        s.bind((slot["addr"], 0))
        s.connect_ex((host, port))
    except OSError:
        s.close()
        failed += 1
        slot["reopen"] = now + REOPEN_S
        return
    # lifetimes count from here, before the handshake: never later than the server's accept,
    # so a lifetime is never shorter than the time the server gave the connection
    slot.update(sock=s, connected=None, next=None, started=now)
    sel.register(s, selectors.EVENT_WRITE, slot)


while True:
    now = time.monotonic()
    if now >= end:
        break
    for slot in slots:
        if slot["sock"] is None and now >= slot["reopen"]:
            open_slot(slot, now)
        elif slot["sock"] is not None and slot["next"] is not None and now >= slot["next"]:
            try:
                slot["sock"].send(b"X-Slow: 1\r\n")
                slot["next"] = now + TRICKLE_S
            except OSError:
                close(slot, now, True)
    for key, ev in sel.select(timeout=0.05):
        slot, s, now = key.data, key.fileobj, time.monotonic()
        if slot["connected"] is None:  # connect finished (or failed)
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0:
                sel.unregister(s)
                s.close()
                slot["sock"] = None
                slot["reopen"] = now + REOPEN_S
                failed += 1
                continue
            slot["connected"] = now
            open_now += 1
            peak = max(peak, open_now)
            try:
                s.send(b"GET /ram/1GiB.dat HTTP/1.1\r\nHost: slow\r\n")
            except OSError:
                close(slot, now, True)
                continue
            slot["next"] = now + TRICKLE_S
            sel.modify(s, selectors.EVENT_READ, slot)
            continue
        try:
            data = s.recv(4096)
        except OSError:
            data = b""
        if not data:
            close(slot, now, True)
        # (an answer would be data: the server never answers headers that never end)

now = time.monotonic()
ages = [now - sl["started"] for sl in slots if sl["sock"] is not None and sl.get("connected") is not None]
for sl in slots:
    if sl["sock"] is not None:
        sl["sock"].close()
json.dump({"lived": lived, "open_at_end": len(ages), "max_open_age": max(ages, default=0.0),
           "peak_open": peak, "failed_connects": failed, "seconds": now - t0}, open(out, "w"))
