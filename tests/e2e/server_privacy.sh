#!/usr/bin/env bash
# Visitors' privacy (issue 9): transfer IDs are 128 random bits (32 hex digits, never
# sequential); a record (/transfers/ID) is served only to the address that made the
# transfer (another gets the same 404 as an unknown ID) unless privacy.public_transfers;
# privacy.details = false hides the kernel release, interface names, limits and pid from
# /status and the X-Debit-* headers, and debit still gets its own records from such a host
# (also when it sends from another local address).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
H_TRANSFER=$(wire_get WIRE_HDR_TRANSFER) TRANSFERS=$(wire_get WIRE_TRANSFERS_PATH)
# a second loopback address for "another visitor" (all of 127/8 is local on Linux)
curl -s -o /dev/null --interface 127.0.0.2 --max-time 2 http://127.0.0.1:1/ 2>/dev/null
[ $? = 45 ] && skip_all "cannot send from 127.0.0.2 (curl --interface)"

srv_conf "$T_TMP/p.conf" 'files = ( { path = "/f.dat"; size = "64KiB"; } );'
srv_start "$T_TMP/p.conf"
# tr_get FROM ID: "CODE BODY" of the record ID fetched from address FROM
tr_get() { curl -s --interface "$1" -w ' %{http_code}' "$BASE$TRANSFERS$2"; }
tr_code() { curl -s --interface "$1" -o /dev/null -w '%{http_code}' "$BASE$TRANSFERS$2"; }
tid() { curl -s --interface "${1:-127.0.0.1}" -o /dev/null -D - "$BASE/f.dat" | hdr /dev/stdin "$H_TRANSFER"; }

# --- IDs ------------------------------------------------------------------------------------
for i in $(seq 20); do tid; done >"$T_TMP/ids"
check_eq "20 IDs, each 32 lowercase hex digits" 20 "$(grep -cE '^[0-9a-f]{32}$' "$T_TMP/ids")"
check_eq "20 IDs, all different" 20 "$(sort -u "$T_TMP/ids" | wc -l)"
# a counter (BOOT-1, BOOT-2, or a hex counter) keeps a long common prefix between
# consecutive IDs; 128 random bits share 8 leading hex digits with probability 2^-32
check_eq "not sequential: no two consecutive IDs share their first 8 digits" 0 \
  "$(awk 'NR > 1 && substr($0, 1, 8) == substr(p, 1, 8) {n++} {p = $0} END {print n + 0}' "$T_TMP/ids")"

# --- a record is its owner's -----------------------------------------------------------------
id=$(tid 127.0.0.1)
not_sending() { [ "$(curl -s "$BASE$TRANSFERS$id" | jq -r .state)" = done ]; }
wait_for 50 not_sending
out=$(tr_get 127.0.0.1 "$id")
check_eq "record fetched from the address that made it (127.0.0.1): 200, its own" "200 $id done" \
  "${out##* } $(printf '%s' "${out% *}" | jq -r '"\(.id) \(.state)"')"
check_match "its record names that address" '^127\.0\.0\.1:[0-9]+$' "$(printf '%s' "${out% *}" | jq -r .remote)"
other=$(tr_get 127.0.0.2 "$id")
unknown=$(tr_get 127.0.0.2 0123456789abcdef0123456789abcdef)
check_eq "the same record from another address (127.0.0.2): 404" 404 "${other##* }"
check_eq "refused exactly like an unknown ID (same error, nothing of the record)" \
  "$(printf '%s' "${unknown% *}" | jq -c 'del(.id)')" "$(printf '%s' "${other% *}" | jq -c 'del(.id)')"
check_eq "the refusal leaks no field of the record" "id error" "$(printf '%s' "${other% *}" | jq -r 'keys_unsorted | join(" ")')"
id2=$(tid 127.0.0.2)
wait_for 50 eval '[ "$(curl -s --interface 127.0.0.2 "$BASE$TRANSFERS$id2" | jq -r .state)" = done ]'
check_eq "127.0.0.2 reads its own record" 200 "$(tr_code 127.0.0.2 "$id2")"
check_eq "127.0.0.1 cannot read 127.0.0.2's" 404 "$(tr_code 127.0.0.1 "$id2")"
srv_stop

# --- privacy.public_transfers = true: anyone ----------------------------------------------
srv_conf "$T_TMP/pub.conf" 'files = ( { path = "/f.dat"; size = "64KiB"; } );' 'privacy = { public_transfers = true; };'
srv_start "$T_TMP/pub.conf"
id=$(tid 127.0.0.1)
wait_for 50 not_sending
out=$(tr_get 127.0.0.2 "$id")
check_eq "public_transfers: another address gets the record" "200 $id" "${out##* } $(printf '%s' "${out% *}" | jq -r .id)"
check_match "-t prints the privacy settings" 'privacy = \{ details = true; public_transfers = true; \};' \
  "$("$DEBITD" -t -c "$T_TMP/pub.conf" 2>/dev/null)"
srv_stop

# --- privacy.details = false ---------------------------------------------------------------
for mode in true false; do
  srv_conf "$T_TMP/d-$mode.conf" 'files = ( { path = "/f.dat"; size = "64KiB"; } );' "privacy = { details = $mode; };"
  srv_start "$T_TMP/d-$mode.conf"
  curl -s "$BASE/status" >"$T_TMP/status-$mode.json"
  curl -s -o /dev/null -D "$T_TMP/h-$mode" "$BASE/f.dat"
  [ $mode = false ] || srv_stop
done
k=$(uname -r)
check_eq "details = true: /status has pid, kernel, limits, listener interface, the acceptor's limit, connection_memory" "true true true true true true" \
  "$(jq -r '"\(has("pid")) \(has("kernel")) \(has("limits")) \(.listeners[0] | has("interface")) \(.listeners[0].accept | has("limit")) \(.listeners[0] | has("connection_memory"))"' "$T_TMP/status-true.json")"
check_eq "details = false: /status has no pid, kernel, limits, listener interface, acceptor's limit, connection_memory" "false false false false false false" \
  "$(jq -r '"\(has("pid")) \(has("kernel")) \(has("limits")) \(.listeners[0] | has("interface")) \(.listeners[0].accept | has("limit")) \(.listeners[0] | has("connection_memory"))"' "$T_TMP/status-false.json")"
check_eq "details = false: no interface name anywhere in a listener (offload.interface neither)" "0" \
  "$(jq '[.listeners[] | .. | objects | select(has("interface"))] | length' "$T_TMP/status-false.json")"
check_eq "details = true: the offload state names its interface" "true" \
  "$(jq -r '.listeners[0].offload | if . == null then true else has("interface") end' "$T_TMP/status-true.json")"
check_eq "details = false: the acceptor's counters stay" "true true" \
  "$(jq -r '"\(.listeners[0].accept | has("accepted")) \(.listeners[0].accept | has("paused_at_limit"))"' "$T_TMP/status-false.json")"
check_eq "details = false: /status names neither the kernel release nor the pid anywhere" "0 0" \
  "$(grep -cF "$k" "$T_TMP/status-false.json") $(grep -cw "\"pid\"\|$DEBITD_PID" "$T_TMP/status-false.json")"
check_eq "details = false: /status still has the offload state and TCP profile, counters, files" "true true true true" \
  "$(jq -r '"\(.listeners[0].x_debit_offload | type == "string") \(.listeners[0].x_debit_tcp | type == "string") \(has("counters")) \(.files | length == 1)"' "$T_TMP/status-false.json")"
hnames() { grep -io '^x-debit-[a-z]*' "$1" | tr 'A-Z' 'a-z' | sort | tr '\n' ' ' | sed 's/ $//'; }
check_eq "details = true: X-Debit-* headers" "x-debit-cpu x-debit-interface x-debit-kernel x-debit-offload x-debit-tcp x-debit-tls x-debit-transfer" "$(hnames "$T_TMP/h-true")"
check_eq "details = false: no X-Debit-Kernel nor X-Debit-Interface; cpu, offload, tcp, tls, transfer stay" \
  "x-debit-cpu x-debit-offload x-debit-tcp x-debit-tls x-debit-transfer" "$(hnames "$T_TMP/h-false")"
check_eq "details = false: the kernel release appears in no header" 0 "$(grep -cF "$k" "$T_TMP/h-false")"
# the cgroup path (it can name the host's container or service): in /status with details only
check_eq "details = true / false: /status cpu.cgroup.path present / absent (or no cpu controller)" "true true" \
  "$(jq -r '.cpu.cgroup == null or (.cpu.cgroup | has("path"))' "$T_TMP/status-true.json") $(jq -r '.cpu.cgroup == null or (.cpu.cgroup | has("path") | not)' "$T_TMP/status-false.json")"
check_nomatch "details = false: X-Debit-Cpu names no cgroup" 'cgroup=' "$(grep -i '^x-debit-cpu' "$T_TMP/h-false")"

# --- debit against a details = false host, from its own and from another local address -------
for from in "" 127.0.0.2; do
  f=$T_TMP/debit-${from:-default}.json
  "$DEBIT" -q -n 1 --min-bytes 0 --format json -o "$f" ${from:+--local-address "$from"} debitd="$BASE/f.dat"
  check_eq "debit ${from:+--local-address $from }exit 0" 0 $?
  check_eq "debit ${from:+--local-address $from }gets its own record (done, 64 KiB, TCP_INFO)" "done 65536 object" \
    "$(jq -r '.runs[0].server_record | "\(.state) \(.bytes) \(.tcp | type)"' "$f")"
  check_match "debit ${from:+--local-address $from }: the record is of that address" "^${from:-127.0.0.1}:[0-9]+\$" \
    "$(jq -r '.runs[0].server_record.remote' "$f")"
  check_eq "debit ${from:+--local-address $from }: server_record without the cgroup path" null \
    "$(jq -r '.runs[0].server_record.cgroup.path // null' "$f")"
  check_eq "debit ${from:+--local-address $from }: server_config without kernel and interface, with offload and tcp" \
    "false false true true" \
    "$(jq -r '.runs[0].server_config | "\(has("X-Debit-Kernel")) \(has("X-Debit-Interface")) \(has("X-Debit-Offload")) \(has("X-Debit-Tcp"))"' "$f")"
done
"$DEBIT" -q -n 1 --min-bytes 0 --format table debitd="$BASE/f.dat" >"$T_TMP/table" 2>&1
check_eq "debit's table from a details = false host: exit 0" 0 $?
check_match "debit's table has the debitd row" 'debitd' "$(cat "$T_TMP/table")"
"$DEBIT" -q -n 1 --min-bytes 0 --format markdown debitd="$BASE/f.dat" >"$T_TMP/md" 2>&1
check_eq "debit's markdown from a details = false host: exit 0" 0 $?

# --- a refused reload's message names files: /status shows it only with details -------------
# (a TLS listener whose certificate is missing: the error names the configuration and it)
refuse() { # CONF: break CONF, SIGHUP, wait (bounded) for the refusal in /status
  cp "$1" "$1.good"
  echo "listen = ( { address = \"127.0.0.1\"; port = $PORT; tls = { cert = \"$T_TMP/secret-dir/none.crt\"; key = \"$T_TMP/secret-dir/none.key\"; }; } );" >>"$1"
  sed -i '1d' "$1"
  kill -HUP "$DEBITD_PID"
  wait_for 50 eval '[ "$(curl -s "$BASE/status" | jq -r .config.reloads_refused)" = 1 ]'
  mv "$1.good" "$1"
}
refuse "$T_TMP/d-false.conf"
curl -s "$BASE/status" >"$T_TMP/refused-false.json"
check_eq "details = false: a refused reload shows in /status (ok false, counted), without its error" "false 1 false" \
  "$(jq -r '.config | "\(.last_reload.ok) \(.reloads_refused) \(.last_reload | has("error"))"' "$T_TMP/refused-false.json")"
check_eq "details = false: /status names neither the configuration nor the certificate path" "0 0" \
  "$(grep -c "d-false\.conf" "$T_TMP/refused-false.json") $(grep -c secret-dir "$T_TMP/refused-false.json")"
check_match "... the log has the whole message" "reload refused: .*d-false\.conf.*secret-dir/none\.crt" "$(cat "$T_TMP/debitd.log")"
srv_stop
srv_start "$T_TMP/d-true.conf"
refuse "$T_TMP/d-true.conf"
check_match "details = true: /status has the refusal's message, paths and all" "d-true\.conf.*secret-dir/none\.crt" \
  "$(curl -s "$BASE/status" | jq -r .config.last_reload.error)"
srv_stop
check_match "etc/debitd.conf (for a public host) ships details = false" 'privacy = \{ details = false;' \
  "$("$DEBITD" -t -c "$DEBIT_TOP/etc/debitd.conf" 2>/dev/null)"
t_done
