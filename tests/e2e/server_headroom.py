#!/usr/bin/env python3
"""Header blocks up to and past a listener's connection pool (listen[].connection_memory),
for tests/e2e/server_headroom.sh. Usage: server_headroom.py HOST PORT POOL

For each shape of request (one long header; 50 headers; 200 headers; 100 query arguments
and a long one; 20 cookies and a long one) and each target (a file, a Range of it, HEAD, a
404, a .sha256, /status), the request's header block grows in steps of 48 bytes from well
below POOL to POOL + 1 KiB, one request per connection. Prints one line per shape and target:

  SHAPE TARGET sent=N served_max=BYTES refused_min=BYTES codes=CODE:COUNT,... none=BYTES,...

served_max is the largest header block answered 200/206/404, refused_min the smallest
answered 414 or 431 (a block's bytes as sent: request line, headers, empty line); none
lists, as BLOCK/FOOTPRINT, the requests whose connection ended (or went silent for 2 s)
without a status line. FOOTPRINT is what the request takes in libmicrohttpd 0.9.75's pool:
the block, a 64-byte record per field (header, query argument, cookie) and, for a Cookie
header, the copy its parser makes.
"""
import socket
import sys

HOST, PORT, POOL = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
STEP = 48
SERVED = (200, 206, 404)

TARGETS = {
    "file": ("GET", "/files/4KiB.dat", ""),
    "range": ("GET", "/files/4KiB.dat", "Range: bytes=100-199\r\n"),
    "head": ("HEAD", "/files/4KiB.dat", ""),
    "404": ("GET", "/nothing-here", ""),
    "sha256": ("GET", "/files/4KiB.dat.sha256", ""),
    "status": ("GET", "/status", ""),
}
# the fields (records in libmicrohttpd's pool) each shape adds to Host and Connection
SHAPES = {"one": 1, "many50": 50, "many200": 200, "args": 101, "cookies": 21}


def footprint(shape, extra, req):
    """The pool bytes REQ takes: its block, a record per field, the Cookie header's copy."""
    fields = 2 + extra.count("\r\n") + SHAPES[shape]
    copy = 0
    if shape == "cookies":
        line = next(x for x in req.split(b"\r\n") if x.startswith(b"Cookie: "))
        copy = len(line) - len("Cookie: ") + 1
    return len(req) + 64 * fields + copy


def build(shape, method, path, extra, size):
    """A request whose header block is about SIZE bytes, in SHAPE."""
    head = "Host: t\r\nConnection: close\r\n" + extra
    target = path
    fixed = len(f"{method} {path} HTTP/1.1\r\n") + len(head) + 2
    room = max(size - fixed, 0)
    if shape == "one":  # one long header line
        head += "X-Pad: " + "a" * max(room - len("X-Pad: \r\n"), 1) + "\r\n"
    elif shape.startswith("many"):  # N headers sharing the room
        n = int(shape[4:])
        each = max(room // n - len("X-H000: \r\n"), 1)
        head += "".join(f"X-H{i:03d}: " + "b" * each + "\r\n" for i in range(n))
    elif shape == "args":  # 100 query arguments, then one long one
        args = "&".join(f"a{i}=1" for i in range(100))
        target = path + "?" + args + "&z=" + "q" * max(room - len(args) - 4, 1)
    elif shape == "cookies":  # 20 cookies, then one long one
        jar = "; ".join(f"c{i}=1" for i in range(20))
        rest = max(room - len("Cookie: \r\n") - len(jar) - 4, 1)
        head += "Cookie: " + jar + "; z=" + "k" * rest + "\r\n"
    return f"{method} {target} HTTP/1.1\r\n{head}\r\n".encode()


def status_of(req):
    """The status code of the answer, or None if the connection ended without one."""
    got = b""
    try:
        with socket.create_connection((HOST, PORT), timeout=2) as s:
            s.sendall(req)
            while b"\r\n" not in got and len(got) < 4096:
                chunk = s.recv(4096)
                if not chunk:
                    break
                got += chunk
    except OSError:
        pass
    if not got.startswith(b"HTTP/1.1 ") or len(got) < 12:
        return None
    return int(got[9:12])


def main():
    for shape, fields in SHAPES.items():
        for name, (method, path, extra) in TARGETS.items():
            codes, none = {}, []
            served_max, refused_min, sent = 0, 0, 0
            for size in range(max(POOL - 6144 - 64 * fields, 512), POOL + 1024, STEP):
                req = build(shape, method, path, extra, size)
                code = status_of(req)
                sent += 1
                if code is None:
                    none.append(f"{len(req)}/{footprint(shape, extra, req)}")
                    continue
                codes[code] = codes.get(code, 0) + 1
                if code in SERVED:
                    served_max = max(served_max, len(req))
                elif code in (414, 431) and (refused_min == 0 or len(req) < refused_min):
                    refused_min = len(req)
            c = ",".join(f"{k}:{v}" for k, v in sorted(codes.items()))
            print(f"{shape} {name} sent={sent} served_max={served_max} refused_min={refused_min} codes={c} "
                  f"none={','.join(none) or '-'}", flush=True)


main()
