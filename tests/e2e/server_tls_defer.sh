#!/usr/bin/env bash
# An HTTPS listener accepts a connection only once its first bytes have arrived
# (TCP_DEFER_ACCEPT, as nginx's `deferred`; server/run/server.c, docs/performance.md "HTTPS
# handshakes"): a TCP connection that says nothing is not counted in /status
# listeners[].accept.accepted of the TLS listener, and is the moment its first bytes come
# (well before the 1 s deferral runs out); a plain listener beside it still accepts an idle
# connection at once (its acceptor's spread and limit are counted on idle connects:
# server_accept.sh). A real handshake (curl --cacert) gets the right bytes.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
need_cmd openssl python3

C=$T_TMP/pki
mkdir -p "$C"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 -subj "/CN=debit-test" \
  -addext "subjectAltName=IP:127.0.0.1" -keyout "$C/a.key" -out "$C/a.crt" 2>"$C/err" ||
  { t_fail "openssl made a test certificate" "$(cat "$C/err")"; t_done; }
srv_conf "$T_TMP/d.conf" 'files = ( { path = "/f.dat"; size = 1000; } );' 'limits = { idle_timeout = 30; };'
TPORT=$(free_port)
sed -i "1s| } );\$| },\\n  { address = \"127.0.0.1\"; port = $TPORT; tls = { cert = \"$C/a.crt\"; key = \"$C/a.key\"; }; } );|" \
  "$T_TMP/d.conf"
srv_start "$T_TMP/d.conf"
check_eq "listener 1 is the TLS one" "127.0.0.1:$TPORT" "$(curl -s "$BASE/status" | jq -r '.listeners[1].name // .listeners[1].address')"

# accepted counts of both listeners before and after idle connects, then after the TLS
# one's first bytes (reads /status over the plain listener: each read is one of its own)
out=$(python3 - "$PORT" "$TPORT" <<'PY'
import json, socket, sys, time, urllib.request
port, tport = int(sys.argv[1]), int(sys.argv[2])
def acc():
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/status", timeout=5) as r:
        j = json.load(r)
    return [l["accept"]["accepted"] for l in j["listeners"]]
p0, t0 = acc()
idle_p = socket.create_connection(("127.0.0.1", port), timeout=5)
idle_t = socket.create_connection(("127.0.0.1", tport), timeout=5)
time.sleep(0.5)
p1, t1 = acc()
print(f"plain_idle={p1 - p0 - 1}")  # the idle one (less this /status request's own)
print(f"tls_idle={t1 - t0}")
start = time.monotonic()
idle_t.sendall(b"\x16\x03\x01\x00\x04")  # the start of a TLS record, as a ClientHello's
t2 = t1
while t2 == t1 and time.monotonic() - start < 5:
    time.sleep(0.02)
    t2 = acc()[1]
print(f"tls_after_bytes={t2 - t1}")
print(f"tls_after_ms={(time.monotonic() - start) * 1000:.0f}")
idle_p.close(); idle_t.close()
PY
)
echo "$out" | sed 's/^/# /'
kv() { sed -n "s/^$1=//p" <<<"$out"; }
check_eq "plain listener: an idle TCP connection is accepted at once" 1 "$(kv plain_idle)"
check_eq "TLS listener: an idle TCP connection is not accepted (deferred)" 0 "$(kv tls_idle)"
check_eq "TLS listener: accepted when its first bytes arrive" 1 "$(kv tls_after_bytes)"
check_cmp "TLS listener: accepted within 500 ms of the bytes, not at the 1 s deferral's end" "$(kv tls_after_ms)" "<" 500
check_eq "a real handshake gets the right bytes" "$(curl -s "$BASE/f.dat" | sha256sum)" \
  "$(curl -s --cacert "$C/a.crt" "https://127.0.0.1:$TPORT/f.dat" | sha256sum)"
grep -q "TCP_DEFER_ACCEPT" "$T_TMP/debitd.log" && t_fail "no TCP_DEFER_ACCEPT warning" "$(grep TCP_DEFER "$T_TMP/debitd.log")" ||
  t_ok "no TCP_DEFER_ACCEPT warning"
srv_stop
t_done
