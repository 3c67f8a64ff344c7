#!/usr/bin/env python3
"""Send one raw request to HOST:PORT and report what came back, for server_strict.sh.

usage: server_strict_send.py HOST PORT TIMEOUT REQUEST

REQUEST is written with Python escapes (\\r, \\n, \\x00 ...) and sent as latin-1 bytes, in one
send. Then the answer is read until the server closes or TIMEOUT seconds (the whole read is
bounded by it) pass. Prints one line: CODE CONN N BODY1 JUNK
  CODE   the first status code, or "none" (nothing came back)
  CONN   "close" (the server closed: EOF or reset) or "open" (still open at TIMEOUT)
  N      how many status lines came back (a second one: a smuggled request was answered)
  BODY1  the first line of the first body, or "-"
  JUNK   bytes after the last well-framed response (0: every byte was a response)
"""
import codecs
import re
import socket
import sys
import time


def parse(data):
    """Split DATA into responses by their Content-Length: the status codes, the first
    line of the first body ("-" if none) and how many bytes follow the last response that
    are not a response (a server that framed its answer wrongly)."""
    codes, body = [], "-"
    while data.startswith(b"HTTP/1."):
        end = data.find(b"\r\n\r\n")
        if end < 0:
            break
        head, data = data[:end].decode("latin-1"), data[end + 4:]
        codes.append(head[9:12])
        m = re.search(r"(?im)^content-length:\s*(\d+)", head)
        n = int(m.group(1)) if m else len(data)
        if len(codes) == 1:
            first = data[:n].split(b"\n", 1)[0].strip()
            if first:
                body = first[:60].decode("latin-1").replace(" ", "_")
        data = data[n:]
    return codes, body, len(data)


def main():
    host, port, timeout, raw = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    req = codecs.decode(raw, "unicode_escape").encode("latin-1")
    s = socket.create_connection((host, port), timeout=timeout)
    s.sendall(req)
    data = b""
    conn = "open"
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        s.settimeout(left)
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        except ConnectionResetError:
            conn = "close"
            break
        if not chunk:
            conn = "close"
            break
        data += chunk
        if len(data) > 4 << 20:  # bounded: nothing here asks for more
            break
    s.close()
    codes, body, junk = parse(data)
    code = codes[0] if codes else "none"
    print(code, conn, len(codes), body, junk)


if __name__ == "__main__":
    main()
