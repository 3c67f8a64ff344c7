#!/usr/bin/env python3
"""A TLS 1.3 client that holds its Finished back: what the server does while it waits.

tls_slow_finished.py PORT PID PAUSE_S
Handshakes with 127.0.0.1:PORT through memory BIOs, so that the client's last flight
(its Finished) stays here once the server's flight is in; reads how long the
libmicrohttpd workers of process PID (threads named MHD-worker) have run and waited to run
(/proc/PID/task/*/schedstat, its first two fields),
sleeps PAUSE_S, reads it again, then sends the Finished and a GET / and reads the answer.
Prints one line:
  busy_ms=N status=LINE
where N is the time in ms those threads were running or runnable over the pause
(one that waits for the socket: ~0; one that spins on the handshake: about PAUSE_S, on
a loaded machine too, where it runs less but waits the rest) and LINE the answer's status
line. Exit 1 on a connection or TLS failure, or without an MHD-worker thread."""
import glob
import socket
import ssl
import sys
import time


def busy_ns(pid):
    """Run plus runnable time of PID's MHD-worker threads; None when it has none."""
    total, workers = 0, 0
    for task in glob.glob(f"/proc/{pid}/task/*"):
        try:
            with open(f"{task}/comm") as f:
                if f.read().strip() != "MHD-worker":
                    continue
            with open(f"{task}/schedstat") as f:
                run, wait = f.read().split()[:2]
                total += int(run) + int(wait)
                workers += 1
        except (OSError, ValueError, IndexError):
            pass  # a thread that ended meanwhile
    return total if workers else None


def main():
    port, pid, pause = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    ctx.minimum_version = ssl.TLSVersion.TLSv1_3
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = ctx.wrap_bio(inc, out, server_hostname="127.0.0.1")
    deadline = time.monotonic() + 10
    while True:  # ClientHello out, the server's flight in, until the client side is done
        try:
            tls.do_handshake()
            break
        except ssl.SSLWantReadError:
            if out.pending:
                sock.sendall(out.read())
            data = sock.recv(65536)
            if not data or time.monotonic() > deadline:
                print("handshake: the server closed or stalled", file=sys.stderr)
                return 1
            inc.write(data)
    held = out.read()  # the client's Finished, not sent yet
    c0 = busy_ns(pid)
    if c0 is None:
        print(f"process {pid} has no MHD-worker thread", file=sys.stderr)
        return 1
    time.sleep(pause)
    c1 = busy_ns(pid)
    tls.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    sock.sendall(held + out.read())
    answer = b""
    while b"\r\n" not in answer and time.monotonic() < deadline + pause:
        data = sock.recv(65536)
        if not data:
            break
        inc.write(data)
        try:
            answer += tls.read(65536)
        except ssl.SSLWantReadError:
            continue
        except ssl.SSLError as e:
            print(f"read: {e}", file=sys.stderr)
            return 1
    status = answer.split(b"\r\n", 1)[0].decode("latin-1")
    print(f"busy_ms={(c1 - c0) / 1e6:.1f} status={status}")
    return 0 if status else 1


if __name__ == "__main__":
    sys.exit(main())
