#!/usr/bin/env python3
"""A misbehaving HTTP/1.1 server for debit's failure tests (loopback only).

usage: client_fakesrv.py PORT [ADDR]   (ADDR default 127.0.0.1)
Paths:
  /slow/N?rate=BYTES_PER_S   N bytes with Content-Length, paced (to be killed mid-transfer)
  /slowcode/N?code=C&rate=R  status C (default 500), N bytes of application/octet-stream, paced
  /short/N                   Content-Length N, sends N/2 bytes, closes
  /stall/N                   Content-Length N, sends 64 KiB, then nothing for 30 s
  /loop                      302 to itself (redirect loop)
  /norange/N                 N bytes, 200, ignores Range
  /debit/N                   N bytes with X-Debit-* headers, like debitd
  /ua/N                      N bytes; the request's User-Agent echoed as X-Debit-Echo-User-Agent
  /echo/N                    N bytes; every request header X-Test-* echoed as X-Debit-Echo-X-Test-*
  /redirect?to=URL           302 to URL (another host, for -H across a redirect)
  /gzip/N                    N bytes sent with Content-Encoding: gzip (not really gzip: debit decodes nothing)
  /code/C                    HTTP status C (e.g. 500, 503) with a short body
  /hostile/C                 status C (200: N=1000 bytes of body) whose reason phrase and
                             X-Debit-* values hold ESC sequences, BEL, CR, C1 and bad UTF-8
  /trickle/N?rate=R&fast=F   Content-Length N: F bytes at once, then R bytes/s in 10 pieces
                             a second (a server dribbling above "nothing received")
Every loop is bounded in time; the server exits after 120 s whatever happens.
"""
import http.server
import socketserver
import sys
import threading
import time
import os
import urllib.parse

CHUNK = b"\xa5" * 65536

# What a hostile server puts where a terminal would act on it (tests/e2e/client_hostile.sh
# checks that none of these bytes reaches debit's stdout or stderr raw).
HOSTILE_REASON = b"\x1b[31mOWNED\x07\rFake OK \x1b]0;title\x07"
HOSTILE_OFFLOAD = b"tso=off\x1b[2J\x1b[H gso=\x9b31m on \xc2\x9b1m \xff"
HOSTILE_TCP = b"cc=cubic\rHIDDEN \x1b]52;c;ZWNobw==\x07"


def send_body(wfile, n, rate=None):
    sent = 0
    t0 = time.monotonic()
    while sent < n:
        k = min(len(CHUNK), n - sent)
        wfile.write(CHUNK[:k])
        sent += k
        if rate:
            ahead = sent / rate - (time.monotonic() - t0)
            if ahead > 0:
                time.sleep(ahead)


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def head(self, code, n, extra=()):
        self.send_response(code)
        self.send_header("Content-Type", "application/octet-stream")
        if n is not None:
            self.send_header("Content-Length", str(n))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()

    def do_HEAD(self):
        """Headers only, for /redirect and /echo (debit --split's size probe)."""
        u = urllib.parse.urlparse(self.path)
        parts = u.path.strip("/").split("/")
        if parts[0] == "redirect":
            self.head(302, 0, [("Location", urllib.parse.parse_qs(u.query).get("to", ["/"])[0])])
        elif parts[0] == "echo" and len(parts) > 1 and parts[1].isdigit():
            self.head(200, int(parts[1]), [("Content-Type", "application/octet-stream")])
        else:  # as without do_HEAD: client_streams.sh checks how --split says it
            self.send_error(501, "Unsupported method ('HEAD')")

    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(u.query)
        parts = u.path.strip("/").split("/")
        kind = parts[0]
        n = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
        try:
            if kind == "slow":
                self.head(200, n)
                send_body(self.wfile, n, float(q.get("rate", ["1000000"])[0]))
            elif kind == "slowcode":  # an error status with a binary body, paced: not a result
                self.head(int(q.get("code", ["500"])[0]), n)
                send_body(self.wfile, n, float(q.get("rate", ["1000000"])[0]))
            elif kind == "short":
                self.head(200, n)
                send_body(self.wfile, n // 2)
                self.wfile.flush()
                self.close_connection = True
            elif kind == "stall":
                self.head(200, n)
                send_body(self.wfile, 65536)
                self.wfile.flush()
                time.sleep(30)
                self.close_connection = True
            elif kind == "loop":
                self.head(302, 0, [("Location", "/loop")])
            elif kind == "norange":
                self.head(200, n)
                send_body(self.wfile, n)
            elif kind == "debit":
                self.head(200, n, [("X-Debit-Offload", "tso=off gso=off gro=on"),
                                   ("X-Debit-Tcp", "cc=cubic pacing=500Mbit sndbuf=4194304"),
                                   ("x-debit-kernel", "6.18.0-test")])
                send_body(self.wfile, n)
            elif kind == "ua":
                self.head(200, n, [("X-Debit-Echo-User-Agent", self.headers.get("User-Agent", ""))])
                send_body(self.wfile, n)
            elif kind == "echo":
                echo = [("X-Debit-Echo-" + k, v) for k, v in self.headers.items() if k.lower().startswith("x-test-")]
                self.head(200, n, echo + [("Content-Type", "application/octet-stream")])
                send_body(self.wfile, n)
            elif kind == "gzip":
                self.head(200, n, [("Content-Encoding", "gzip"), ("Content-Type", "application/octet-stream")])
                send_body(self.wfile, n)
            elif kind == "redirect":
                self.head(302, 0, [("Location", q.get("to", ["/"])[0])])
            elif kind == "hostile":
                code = n or 200
                body = CHUNK[:1000] if code == 200 else b"no\n"
                self.wfile.write(b"HTTP/1.1 %d %s\r\n" % (code, HOSTILE_REASON))
                self.wfile.write(b"Content-Length: %d\r\n" % len(body))
                self.wfile.write(b"X-Debit-Offload: " + HOSTILE_OFFLOAD + b"\r\n")
                self.wfile.write(b"X-Debit-Tcp: " + HOSTILE_TCP + b"\r\n\r\n")
                self.wfile.write(body)
                self.wfile.flush()
            elif kind == "trickle":
                self.head(200, n)
                fast = int(q.get("fast", ["65536"])[0])
                rate = float(q.get("rate", ["100"])[0])
                send_body(self.wfile, min(fast, n))
                self.wfile.flush()
                sent, piece, t_end = min(fast, n), max(1, int(rate / 10)), time.monotonic() + 60
                while sent < n and time.monotonic() < t_end:
                    k = min(piece, n - sent)
                    self.wfile.write(CHUNK[:k])
                    self.wfile.flush()
                    sent += k
                    time.sleep(0.1)
                self.close_connection = True
            elif kind == "code":
                body = b"fake error\n"
                self.head(n, len(body))
                self.wfile.write(body)
            else:
                self.head(404, 0)
        except (BrokenPipeError, ConnectionResetError):
            pass


class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    port = int(sys.argv[1])
    addr = sys.argv[2] if len(sys.argv) > 2 else "127.0.0.1"
    srv = S((addr, port), H)
    threading.Timer(120, lambda: os._exit(0)).start()
    srv.serve_forever()


if __name__ == "__main__":
    main()
