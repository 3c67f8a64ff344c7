#!/usr/bin/env bash
# libmicrohttpd's public API only (server/http/mhd_compat.h): with DEBITD_MHD_COMPAT=plain
# debitd treats its libmicrohttpd as a version it was not verified with, says so at start,
# and every trick beneath the API falls back; debitd still serves correctly. Checked: the
# start line (and the one without the variable), a sendfile download whole without
# tcp_nopush or widened steps, a small response sent again on a kept-alive connection with
# a new X-Debit-Transfer (the header deleted and added, not written over) and the file's
# bytes, a 304 with the 200's Content-Length and no body, an HTTPS download (the
# certificate found through the worker thread, not the GnuTLS session pointer) and the
# libmicrohttpd messages logged as lines rather than counted; ndt7 over wss through
# libmicrohttpd's upgrade relay both ways.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
need_cmd openssl python3
H_TRANSFER=$(wire_get WIRE_HDR_TRANSFER)

C=$T_TMP/pki
mkdir -p "$C"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 -subj "/CN=debit-test-plain" \
  -addext "subjectAltName=IP:127.0.0.1" -keyout "$C/a.key" -out "$C/a.crt" 2>"$C/err" ||
  { t_fail "openssl made a test certificate" "$(cat "$C/err")"; t_done; }

srv_conf "$T_TMP/d.conf" 'ram = "1MiB";' \
  'files = ( { path = "/ram/1MiB.dat"; size = "1MiB"; }, { path = "/s4.dat"; size = "4KiB"; } );'
TPORT=$(free_port)
while [ "$TPORT" = "$PORT" ]; do TPORT=$(free_port); done
sed -i "1s| } );\$| },\\n  { address = \"127.0.0.1\"; port = $TPORT; tls = { cert = \"$C/a.crt\"; key = \"$C/a.key\"; }; } );|" \
  "$T_TMP/d.conf"

DEBITD_MHD_COMPAT=plain srv_start "$T_TMP/d.conf"
check_match "start: the fallback is said, naming what is off" \
  'warn: libmicrohttpd [0-9.]+: DEBITD_MHD_COMPAT=plain .*its public API only, off: setsockopt interposer, sendfile64 interposer, header value rewrite, query cut, read buffer layout, log texts, TLS session pointer, Expect blanking, TLS session at connection start, TLS session written by ndt7, upgrade relay read by ndt7$' \
  "$(grep 'DEBITD_MHD_COMPAT=plain' "$T_TMP/debitd.log")"
check_eq "/status: tcp_nopush enabled but not interposed" '{"enabled":true,"interposed":false,"responses":0}' \
  "$(curl -s "$BASE/status" | jq -c '.listeners[0].tcp_nopush')"

SHA1M=$(sha_of "$BASE/ram/1MiB.dat")
r=$(srv_transfer "$BASE/ram/1MiB.dat")
check_eq "a sendfile download: whole, without tcp_nopush" "sendfile false 1048576 $SHA1M" \
  "$(jq -r '"\(.send_path) \(.tcp_nopush) \(.bytes)"' <<<"$r") $(sha256sum <"$T_TMP/body" | cut -d' ' -f1)"
check_eq "... and no sendfile step widened or even noted" '0 0' \
  "$(curl -s "$BASE/status" | jq -r '"\(.counters.sendfile_calls) \(.counters.sendfile_widened)"')"

# the same small file twice on one connection: the second is the first's response again
ids=$(curl -s -D - -o "$T_TMP/s1" -o "$T_TMP/s2" "$BASE/s4.dat" "$BASE/s4.dat" | tr -d '\r' |
  awk -v h="$H_TRANSFER" 'tolower($1) == tolower(h ":") {print $2}' | tr '\n' ' ')
read -r id1 id2 <<<"$ids"
check_match "a response sent again: two transfer IDs ($ids)" '^[0-9a-f]+ [0-9a-f]+ $' "$ids"
[ "$id1" != "$id2" ] && t_ok "... distinct" || t_fail "... distinct" "$ids"
S4=$(sha_of "$BASE/s4.dat")
check_eq "... both bodies are the file's" "$S4 $S4" \
  "$(sha256sum <"$T_TMP/s1" | cut -d' ' -f1) $(sha256sum <"$T_TMP/s2" | cut -d' ' -f1)"
check_eq "... reused once (/status)" 1 "$(curl -s "$BASE/status" | jq -r '.listeners[0].response_reuse.reused')"
for id in $id1 $id2; do
  check_eq "... record $id found" "/s4.dat" "$(curl -s "$BASE/transfers/$id" | jq -r .path)"
done

etag=$(curl -s -I "$BASE/s4.dat" | tr -d '\r' | awk 'tolower($1) == "etag:" {print $2}')
: >"$T_TMP/b304" # curl writes no file for an empty body
hdrs=$(curl -s -D - -o "$T_TMP/b304" -H "If-None-Match: $etag" "$BASE/s4.dat" | tr -d '\r')
check_match "a 304 ..." '^HTTP/1.1 304 ' "$hdrs"
check_match "... with the 200's Content-Length" $'\ncontent-length: 4096\n' "$(tr 'A-Z' 'a-z' <<<"$hdrs")"
check_eq "... and no body" 0 "$(stat -c %s "$T_TMP/b304")"

id=$(curl -s -D - -o "$T_TMP/body" --cacert "$C/a.crt" "https://127.0.0.1:$TPORT/s4.dat" | tr -d '\r' |
  awk -v h="$H_TRANSFER" 'tolower($1) == tolower(h ":") {print $2}')
check_eq "HTTPS: the handshake has its certificate, the bytes are the file's" "$S4" \
  "$(sha256sum <"$T_TMP/body" | cut -d' ' -f1)"
wait_for 50 sh -c "curl -s '$BASE/transfers/$id' | grep -q '\"done\"'"
check_eq "... its record: sent over TLS, whole" "tls 4096" \
  "$(curl -s "$BASE/transfers/$id" | jq -r '"\(.send_path) \(.bytes)"')"

# ndt7 over wss, a download and an upload at once: the test's thread neither writes nor
# reads the GnuTLS session (MHD_TRICK_TLS_WRITE, MHD_TRICK_RELAY_RECV off), libmicrohttpd's
# relay carries both ways (4 bytes a step in 0.9.75: slow, but whole)
t_bg pwd "$DEBIT" -n 1 --db none -k --jsonl "$T_TMP/pwd.jsonl" "wss://127.0.0.1:$TPORT/ndt/v7/download"
P1=$T_LAST_PID
"$DEBIT" -n 1 --db none -k --jsonl "$T_TMP/pwu.jsonl" "wss://127.0.0.1:$TPORT/ndt/v7/upload" >"$T_TMP/pwu.out" 2>&1
wait "$P1"
check_eq "wss ndt7 download through the relay: ok, close 1000, the record done, its bytes = debit's, some" \
  "true 1000 done true true" "$(tail -n 1 "$T_TMP/pwd.jsonl" |
    jq -r '"\(.ok) \(.ndt7.close_code) \(.server_record.state) \(.bytes == .server_record.bytes) \(.bytes > 0)"')"
j=$(tail -n 1 "$T_TMP/pwu.jsonl")
check_eq "wss ndt7 upload through the relay: ok, close 1000" "true 1000" "$(jq -r '"\(.ok) \(.ndt7.close_code)"' <<<"$j")"
# what debit wrote at 10 s still sat in the sockets, drained 4 bytes a relay step after it
id=$(jq -r .server_record.id <<<"$j")
wait_for 100 sh -c "curl -s '$BASE/transfers/$id' | grep -q '\"done\"'"
check_eq "... its record done, with some bytes, not more than debit sent" "done true" \
  "$(curl -s "$BASE/transfers/$id" | jq -r --argjson sent "$(jq .bytes <<<"$j")" '"\(.state) \(.bytes > 0 and .bytes <= $sent)"')"

# a request libmicrohttpd answers itself (505): its message is a log line, not a count
python3 - "$PORT" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"GET /s4.dat HTTP/9.9\r\nHost: x\r\n\r\n")
s.recv(4096)
s.close()
PY
wait_for 30 grep -q 'libmicrohttpd: Error processing request' "$T_TMP/debitd.log"
check_match "libmicrohttpd's message logged as it is" 'warn: 127.0.0.1:[0-9]+: libmicrohttpd: Error processing request' \
  "$(cat "$T_TMP/debitd.log")"
check_eq "... not counted as a refusal" 0 "$(curl -s "$BASE/status" | jq .counters.refusals.malformed_request)"
srv_stop
check_eq "debitd stops cleanly" 0 "$SRV_RC"

# without the variable: the verified version, every trick on (this build exports both)
srv_start "$T_TMP/d.conf"
check_match "start: the tricks beneath the API, said once" \
  'info: libmicrohttpd [0-9.]+: beneath its API: setsockopt interposer, sendfile64 interposer, header value rewrite, query cut, read buffer layout, log texts, TLS session pointer, Expect blanking, TLS session at connection start, TLS session written by ndt7, upgrade relay read by ndt7$' \
  "$(grep 'beneath its API' "$T_TMP/debitd.log")"
srv_stop
t_done
