#!/usr/bin/env bash
# debitd's upload sink: POST and PUT bodies, plain and chunked, are counted and discarded;
# {"bytes": N, "seconds": T}; over max_size: 413 and the connection is closed. A flood of
# cut chunked uploads writes a bounded number of log lines and a summary (issue 31).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"

srv_conf "$T_TMP/d.conf" 'files = ( { path = "/f.dat"; size = 100; } );' \
  'upload = { path = "/up"; max_size = "4MiB"; };'
srv_start "$T_TMP/d.conf"
head -c 3000000 /dev/urandom >"$T_TMP/3M"
head -c 5000000 /dev/zero >"$T_TMP/5M"

out=$(curl -s -w '\n%{http_code}' --data-binary @"$T_TMP/3M" "$BASE/up")
check_eq "POST: 200" 200 "$(tail -1 <<<"$out")"
check_eq "POST: bytes counted" 3000000 "$(head -n -1 <<<"$out" | jq .bytes)"
check_eq "POST: seconds is a number" number "$(head -n -1 <<<"$out" | jq -r '.seconds | type')"
out=$(curl -s -w '\n%{http_code}' -T "$T_TMP/3M" "$BASE/up")
check_eq "PUT: 200 and bytes" "200 3000000" "$(tail -1 <<<"$out") $(head -n -1 <<<"$out" | jq .bytes)"
out=$(curl -s -w '\n%{http_code}' -H 'Transfer-Encoding: chunked' --data-binary @"$T_TMP/3M" "$BASE/up")
check_eq "chunked POST: 200 and bytes" "200 3000000" "$(tail -1 <<<"$out") $(head -n -1 <<<"$out" | jq .bytes)"
out=$(curl -s -w '\n%{http_code}' -X POST "$BASE/up")
check_eq "empty POST: 0 bytes" "200 0" "$(tail -1 <<<"$out") $(head -n -1 <<<"$out" | jq .bytes)"

# 413 when Content-Length announces too much: before the body (no 100-continue) and closed
curl -s -v -o /dev/null -w '%{http_code}' --data-binary @"$T_TMP/5M" "$BASE/up" >"$T_TMP/c" 2>"$T_TMP/v"
check_eq "Content-Length over max_size: 413" 413 "$(cat "$T_TMP/c")"
check_match "413 closes the connection" 'Connection: close|Closing connection' "$(cat "$T_TMP/v")"
check_nomatch "413 before the body: no 100 Continue" 'HTTP/1.1 100' "$(cat "$T_TMP/v")"
# The same in protocol bytes: headers announcing 5 MB and no body; debitd answers 413 with
# "Connection: close" and closes its end (EOF) without waiting for the body.
python3 - "$PORT" >"$T_TMP/raw413" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"POST /up HTTP/1.1\r\nHost: t\r\nContent-Length: 5000000\r\n\r\n")
data = b""
try:
    while True:
        b = s.recv(65536)
        if not b:
            print("EOF")
            break
        data += b
except socket.timeout:
    print("TIMEOUT")
head = data.split(b"\r\n\r\n")[0].decode("latin-1").lower()
print(head.splitlines()[0] if head else "nothing")
print("close" if "connection: close" in head else "keep")
PY
check_eq "413 in protocol bytes: status, Connection: close, then EOF" "EOF|http/1.1 413 content too large|close|" "$(tr '\n' '|' <"$T_TMP/raw413")"
curl -s -v -o /dev/null -w '%{http_code}' -H 'Transfer-Encoding: chunked' --data-binary @"$T_TMP/5M" "$BASE/up" >"$T_TMP/c" 2>"$T_TMP/v"
check_eq "chunked body over max_size: 413" 413 "$(cat "$T_TMP/c")"
check_match "chunked 413 closes the connection" 'Connection: close|Closing connection' "$(cat "$T_TMP/v")"
check_eq "GET on the upload path: 405" 405 "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/up")"
check_eq "405 Allow: POST, PUT" "POST, PUT" "$(curl -s -D - -o /dev/null "$BASE/up" | grep -i '^allow:' | sed 's/^[^:]*: *//' | tr -d '\r')"
check_eq "POST elsewhere: 405 (a file) with the body drained" 405 "$(curl -s -o /dev/null -w '%{http_code}' --data-binary @"$T_TMP/3M" "$BASE/f.dat")"
st=$(curl -s "$BASE/status")
check_eq "/status counts uploads" 4 "$(jq .counters.uploads <<<"$st")"
check_eq "daemon still serves after the 413s" 100 "$(curl -s "$BASE/f.dat" | wc -c)"
srv_stop

# Per-connection warning lines go through the refusal log's limit (issue 31): a chunked
# upload past max_size + the 64 MiB drain is cut, and libmicrohttpd writes "Application
# reported internal error" for each; one client once wrote 20,000 such lines in 4.5 s.
# Now at most 8 per 10 s are written as they come, the rest counted in a summary line
# (written at the interval's end, or at the stop).
srv_conf "$T_TMP/w.conf" 'files = ( { path = "/f.dat"; size = 100; } );' \
  'upload = { path = "/up"; max_size = 1; };'
srv_start "$T_TMP/w.conf"
N=24
for i in $(seq $N); do
  head -c 68000000 /dev/zero | timeout 20 curl -s -o /dev/null -H 'Transfer-Encoding: chunked' -T - "$BASE/up"
done
check_eq "daemon still serves after $N cut uploads" 100 "$(curl -s "$BASE/f.dat" | wc -c)"
srv_stop
lines=$(grep -c 'libmicrohttpd: Application reported internal error' "$T_TMP/debitd.log")
summaries=$(grep -c 'more warning lines\? not written' "$T_TMP/debitd.log")
summed=$(grep -o '[0-9]* more warning lines\? not written' "$T_TMP/debitd.log" | awk '{n += $1} END {print n + 0}')
check_cmp "at least one summary line" "$summaries" ">=" 1
check_cmp "at most 8 lines written per summary interval ($lines in $summaries)" "$lines" "<=" "$((8 * summaries))"
check_eq "written + summarised = the $N cut uploads" "$N" "$((lines + summed))"
check_match "the summary names the last message" 'not written \(the last: Application reported internal error' \
  "$(grep -m1 'more warning lines\? not written' "$T_TMP/debitd.log")"
t_done
