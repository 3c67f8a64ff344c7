#!/usr/bin/env python3
"""A minimal ndt7 client (RFC 6455 by hand, standard library only) for tests/e2e/server_ndt7.sh:
it checks the opening handshake's bytes itself (Sec-WebSocket-Accept, the echoed subprotocol),
then runs a download or an upload and prints one JSON object: the 101's headers, the bytes of
binary payload received (download) or sent (upload), the frames' sizes, every measurement
message the server sent, the close code, and the elapsed seconds.

  ndt7_peer.py ws|wss HOST PORT download|upload [--no-protocol] [--raw-handshake]
"""
import base64, hashlib, json, os, socket, ssl, struct, sys, time

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
PROTO = "net.measurementlab.ndt.v7"


def connect(scheme, host, port):
    s = socket.create_connection((host, port), timeout=15)
    if scheme == "wss":
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        s = ctx.wrap_socket(s, server_hostname=host)
    return s


def handshake(s, host, port, path, protocol=True):
    key = base64.b64encode(os.urandom(16)).decode()
    req = (f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\nOrigin: http://elsewhere.example\r\n")
    if protocol:
        req += f"Sec-WebSocket-Protocol: {PROTO}\r\n"
    s.sendall((req + "\r\n").encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(4096)
        if not d:
            break
        buf += d
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and len(lines[0].split()) > 1 else 0
    hdrs = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    want = base64.b64encode(hashlib.sha1((key + GUID).encode()).digest()).decode()
    return status, hdrs, want, rest, lines[0]


class Reader:
    def __init__(self, s, rest):
        self.s, self.buf = s, bytearray(rest)

    def need(self, n):
        while len(self.buf) < n:
            d = self.s.recv(1 << 20)
            if not d:
                raise EOFError
            self.buf += d
        out = bytes(self.buf[:n])
        del self.buf[:n]
        return out

    def skip(self, n):  # payload we only count
        take = min(n, len(self.buf))
        del self.buf[:take]
        n -= take
        while n > 0:
            d = self.s.recv(min(n, 1 << 20))
            if not d:
                raise EOFError
            n -= len(d)

    def frame(self, keep):
        b0, b1 = self.need(2)
        op, masked, n = b0 & 15, b1 >> 7, b1 & 127
        if n == 126:
            n = struct.unpack(">H", self.need(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", self.need(8))[0]
        if masked:
            raise ValueError("server frame masked")
        if keep or op != 2:
            return op, n, self.need(n)
        self.skip(n)
        return op, n, None


def send_frame(s, op, payload):
    mask = os.urandom(4)
    n = len(payload)
    hdr = bytes([0x80 | op])
    if n < 126:
        hdr += bytes([0x80 | n])
    elif n < 65536:
        hdr += bytes([0x80 | 126]) + struct.pack(">H", n)
    else:
        hdr += bytes([0x80 | 127]) + struct.pack(">Q", n)
    if payload:
        a = int.from_bytes(payload, "big") ^ int.from_bytes((mask * (n // 4 + 1))[:n], "big")
        payload = a.to_bytes(n, "big")
    s.sendall(hdr + mask + payload)


def main():
    scheme, host, port, test = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    proto = "--no-protocol" not in sys.argv
    s = connect(scheme, host, port)
    t0 = time.time()
    status, hdrs, want, rest, line = handshake(s, host, port, f"/ndt/v7/{test}", proto)
    out = {"status": status, "status_line": line, "headers": hdrs, "accept_expected": want,
           "measurements": [], "bytes": 0, "frames": 0, "max_frame": 0, "min_frame": None, "close_code": None}
    if status != 101:
        print(json.dumps(out))
        return
    print("upgraded", file=sys.stderr, flush=True)  # for a test that waits for a running test
    r = Reader(s, rest)
    if test == "download":
        while True:
            try:
                op, n, data = r.frame(False)
            except (EOFError, ConnectionError):
                out["eof"] = True
                break
            if op == 2:
                out["bytes"] += n
                out["frames"] += 1
                out["max_frame"] = max(out["max_frame"], n)
                out["min_frame"] = n if out["min_frame"] is None else min(out["min_frame"], n)
            elif op == 1:
                out["measurements"].append(json.loads(data))
            elif op == 8:
                out["close_code"] = struct.unpack(">H", data[:2])[0] if len(data) >= 2 else None
                send_frame(s, 8, data[:2])
                break
    else:
        import select
        payload = os.urandom(1 << 13)
        closed = False
        while not closed and time.time() - t0 < 15:
            w = select.select([], [s], [], 0.05)[1]
            if w:
                send_frame(s, 2, payload)  # blocking: a frame is never cut
                out["bytes"] += len(payload)
                out["frames"] += 1
            while not closed and (s.pending() if scheme == "wss" else 0 or select.select([s], [], [], 0)[0]):
                d = s.recv(1 << 16)
                if not d:
                    closed = True
                    break
                r.buf += d
                while len(r.buf) >= 2:
                    b1 = r.buf[1] & 127
                    hl = 2 + (2 if b1 == 126 else 8 if b1 == 127 else 0)
                    if len(r.buf) < hl:
                        break
                    n = b1 if b1 < 126 else struct.unpack(">H" if b1 == 126 else ">Q", bytes(r.buf[2:hl]))[0]
                    if len(r.buf) < hl + n:
                        break
                    op = r.buf[0] & 15
                    data = bytes(r.buf[hl:hl + n])
                    del r.buf[:hl + n]
                    if op == 1:
                        out["measurements"].append(json.loads(data))
                    elif op == 8:
                        out["close_code"] = struct.unpack(">H", data[:2])[0] if len(data) >= 2 else None
                        send_frame(s, 8, data[:2])
                        closed = True
                        break
        out["min_frame"] = out["max_frame"] = len(payload)
    out["seconds"] = time.time() - t0
    print(json.dumps(out))


if __name__ == "__main__":
    main()
