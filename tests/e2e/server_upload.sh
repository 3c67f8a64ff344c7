#!/usr/bin/env bash
# debitd's upload sink: POST and PUT bodies, plain and chunked, are counted and discarded;
# {"bytes": N, "seconds": T}; each upload a transfer record with debitd's verdict as the
# receiver (issue 32); over max_size: 413 and the connection is closed. A flood of
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

# Each upload is a transfer (issue 32): its ID in X-Debit-Transfer, its record at
# /transfers/ID with debitd's verdict as the receiver, the same in the access-log line,
# counted in /metrics debitd_transfers_total{listener,limited_by}.
HDR=$(wire_get WIRE_HDR_TRANSFER)
KINDS='["network","receiver_window","sender_buffer","sender_cpu","congestion","receiver_cpu","unknown"]'
up_record() { # CURL ARGS...: POST to /up, the record once no longer "receiving"
  local id
  id=$(curl -s -D - -o /dev/null "$@" "$BASE/up" | tr -d '\r' | awk -v h="$HDR" 'tolower($1) == tolower(h ":") {print $2}')
  srv_record "$BASE" "$id"
}
m0=$(curl -s "$BASE/metrics" | awk '$1 ~ /^debitd_transfers_total\{/ {n += $2} END {print n + 0}')
rec=$(up_record --data-binary @"$T_TMP/3M")
t_diag "an upload's record: $(jq -c '{direction, state, bytes, limited_by, limited_by_evidence, cpu: .cpu.wall_ms}' <<<"$rec")"
check_eq "upload: a record, done, upload, what arrived" "done upload 3000000 receive" \
  "$(jq -r '"\(.state) \(.direction) \(.bytes) \(.send_path)"' <<<"$rec")"
check_eq "... limited_by is one of the seven" true "$(jq --argjson k "$KINDS" '.limited_by as $v | $k | index($v) != null' <<<"$rec")"
check_match "... its evidence is the receiver's" '^upload, seen by its receiver: ' "$(jq -r .limited_by_evidence <<<"$rec")"
check_eq "... no prediction, with the reason" "null an upload: the prediction is a download's" \
  "$(jq -r '"\(.predicted_mbps) \(.predicted_note)"' <<<"$rec")"
check_eq "... the receiving thread's CPU is recorded" true "$(jq '.cpu.wall_ms > 0 and .cpu.share <= 1' <<<"$rec")"
check_eq "... the receive buffer (SO_RCVBUF, tcp_rmem's max)" true \
  "$(jq '(.rcvbuf.so_rcvbuf > 0) and (.rcvbuf.tcp_rmem_max > 0)' <<<"$rec")"
id1=$(jq -r .id <<<"$rec")
# A sender held back by its own kernel (SO_MAX_PACING_RATE 1.5 MB/s, TCP's internal pacing,
# 1,400-byte segments: smooth at the sampler's 100 ms, where curl --limit-rate's bursts and
# a user-space pacer on a busy machine are not), 3 MB: 2 s. debitd's thread idle, its window
# not full, the rate at one level: the path's rate as far as debitd can tell, with the
# sender's side named as unseen.
paced() { # one such upload: its record
  local id
  id=$(timeout 20 python3 - "$PORT" "$HDR" <<'PY'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 1400)
s.setsockopt(socket.SOL_SOCKET, 47, 1500000)  # SO_MAX_PACING_RATE (not in Python's socket module)
s.settimeout(10)
s.connect(("127.0.0.1", int(sys.argv[1])))
n = 3000000
s.sendall(b"POST /up HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % n + b"\0" * n)
head = b""
while b"\r\n\r\n" not in head:
    c = s.recv(4096)
    if not c:
        break
    head += c
for line in head.decode("latin-1").split("\r\n"):
    if line.lower().startswith(sys.argv[2].lower() + ":"):
        print(line.split(":", 1)[1].strip())
PY
)
  srv_record "$BASE" "$id"
}
# The plateau needs 100 ms intervals within 10 % of each other: on a machine loaded by other
# work the kernel's pacing itself (softirq) can burst. Each try's verdict must follow its
# record's own plateau (sampled.plateau_share >= 0.7: network, else unknown), never a rule
# that does not apply (the receiver's CPU or window); up to 3 tries for a clean plateau.
verdicts= net= shares=
for try in 1 2 3; do
  rec=$(paced)
  shares+="$(jq -r '.sampled.plateau_share // "null"' <<<"$rec") "
  t_diag "a paced upload (try $try): $(jq -c '{bytes, duration_s, plateau: .sampled.plateau_share, limited_by, limited_by_evidence}' <<<"$rec")"
  want=$(jq -r 'if (.sampled.plateau_share // 0) >= 0.7 then "network" else "unknown" end' <<<"$rec")
  check_eq "paced upload (try $try): the verdict its plateau gives" "$want" "$(jq -r .limited_by <<<"$rec")"
  verdicts+="$(jq -r .limited_by <<<"$rec") "
  [ "$want" = network ] && { net=$rec; break; }
done
check_nomatch "... never receiver_cpu or receiver_window ($verdicts)" 'receiver_(cpu|window)' "$verdicts"
if [ -n "$net" ]; then
  check_match "... network: at a plateau, the sender's side not seen" \
    '^upload, seen by its receiver: receiver free .* at a plateau of [0-9.]+ Mb/s .*the sender.s side is not seen' \
    "$(jq -r .limited_by_evidence <<<"$net")"
  check_cmp "... the plateau is the pacing's 12 Mb/s (10.8-13.2)" "$(jq .sampled.plateau_mbps <<<"$net")" ">=" 10.8
  check_cmp "... not above it" "$(jq .sampled.plateau_mbps <<<"$net")" "<=" 13.2
else
  # (seen on a quiet machine too, load 0.3: shares 0.63 0.56 0.35 — the kernel's pacing without
  # fq is not smooth at 100 ms here; a known weakness of this check, not of the rule)
  t_skip "... network: at a plateau" "no try had a plateau: plateau shares ${shares% } < 0.7 (the kernel's pacing burst at the sampler's 100 ms; load $(cut -d' ' -f1-3 /proc/loadavg))"
fi
id2=$(jq -r .id <<<"$rec")
wait_for 30 sh -c "[ \$(grep -c '\"direction\": *\"upload\"' '$T_TMP/access.log') -ge 2 ]"
for id in "$id1" "$id2"; do
  check_eq "access log line of upload $id: the record's verdict" \
    "$(curl -s "$BASE/transfers/$id" | jq -c '[.direction, .limited_by, .limited_by_evidence]')" \
    "$(jq -c --arg id "$id" 'select(.id? == $id) | [.direction, .limited_by, .limited_by_evidence]' "$T_TMP/access.log")"
done
m1=$(curl -s "$BASE/metrics" | awk '$1 ~ /^debitd_transfers_total\{/ {n += $2} END {print n + 0}')
tries=$(wc -w <<<"$verdicts")
check_eq "debitd_transfers_total counts the uploads (1 + $tries)" "$((1 + tries))" "$((m1 - m0))"
check_eq "... one under limited_by=\"$(jq -r .limited_by <<<"$rec")\" at least (the last)" true \
  "$(curl -s "$BASE/metrics" | awk -v k="$(jq -r .limited_by <<<"$rec")" '$1 ~ /^debitd_transfers_total\{/ && index($1, "limited_by=\"" k "\"") {print ($2 >= 1) ? "true" : "false"}')"

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
check_eq "/status counts uploads (the 4 above and the $((1 + tries)) with records)" "$((5 + tries))" "$(jq .counters.uploads <<<"$st")"
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
