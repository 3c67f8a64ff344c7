#!/usr/bin/env python3
"""bench/ndt7.sh's load: N ndt7 downloads at once from one asyncio process (one process, so
that 200 clients fit a small machine), each a WebSocket opened by hand (RFC 6455), read until
the server's close, answered. Prints one JSON object: how many ended with a close 1000, the
failures with their reasons, bytes and the slowest test's seconds. Bounded: LIMIT seconds.

  ndt7_many.py HOST PORT N [LIMIT]"""
import asyncio, base64, hashlib, json, os, struct, sys, time

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


async def one(host, port):
    t0 = time.time()
    r, w = await asyncio.open_connection(host, port)
    key = base64.b64encode(os.urandom(16)).decode()
    w.write((f"GET /ndt/v7/download HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
             f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
             f"Sec-WebSocket-Protocol: net.measurementlab.ndt.v7\r\n\r\n").encode())
    head = await r.readuntil(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 101"):
        raise RuntimeError(head.split(b"\r\n")[0].decode())
    want = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest())
    if want not in head:
        raise RuntimeError("wrong Sec-WebSocket-Accept")
    nbytes = 0
    while True:
        b0, b1 = await r.readexactly(2)
        n = b1 & 127
        if n == 126:
            n = struct.unpack(">H", await r.readexactly(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", await r.readexactly(8))[0]
        op = b0 & 15
        if op == 2:
            left = n
            while left:
                d = await r.read(min(left, 1 << 20))
                if not d:
                    raise RuntimeError("EOF in a frame")
                left -= len(d)
            nbytes += n
            continue
        data = await r.readexactly(n)
        if op == 8:
            code = struct.unpack(">H", data[:2])[0] if n >= 2 else None
            mask = os.urandom(4)
            w.write(bytes([0x88, 0x82]) + mask + bytes(a ^ mask[i % 4] for i, a in enumerate(data[:2])))
            await w.drain()
            w.close()
            if code != 1000:
                raise RuntimeError(f"close {code}")
            return nbytes, time.time() - t0


async def main():
    host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    limit = float(sys.argv[4]) if len(sys.argv) > 4 else 40
    tasks = [asyncio.ensure_future(one(host, port)) for _ in range(n)]
    done, pending = await asyncio.wait(tasks, timeout=limit)
    for p in pending:
        p.cancel()
    ok, fails, total, slowest = 0, {}, 0, 0.0
    for t in done:
        e = t.exception()
        if e:
            fails[f"{type(e).__name__}: {e}"] = fails.get(f"{type(e).__name__}: {e}", 0) + 1
        else:
            ok += 1
            total += t.result()[0]
            slowest = max(slowest, t.result()[1])
    if pending:
        fails[f"not over within {limit} s"] = len(pending)
    print(json.dumps({"tests": n, "ok": ok, "failures": fails, "bytes": total, "slowest_s": round(slowest, 3)}))


asyncio.run(main())
