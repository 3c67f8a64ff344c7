#!/usr/bin/env python3
"""A plain PUT-accepting HTTP/1.1 server for debit's upload test (loopback only): not
debitd, so debit measures the upload alone. It logs "PUT PATH N" per request (N = body
bytes read) on stdout, answers 201 with a short text body, and GET / with 200 (readiness).

usage: client_putsrv.py PORT
The server exits after 120 s whatever happens.
"""
import http.server
import socketserver
import sys
import threading
import os


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        body = b"ready\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_PUT(self):
        left = int(self.headers.get("Content-Length", "0"))
        got = 0
        while left > 0:
            chunk = self.rfile.read(min(left, 1 << 20))
            if not chunk:
                break
            got += len(chunk)
            left -= len(chunk)
        print("PUT %s %d" % (self.path, got), flush=True)
        body = b"stored\n"
        self.send_response(201)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    srv = S(("127.0.0.1", int(sys.argv[1])), H)
    threading.Timer(120, lambda: os._exit(0)).start()
    srv.serve_forever()


if __name__ == "__main__":
    main()
