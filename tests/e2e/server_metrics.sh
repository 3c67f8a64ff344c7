#!/usr/bin/env bash
# GET /metrics: the Prometheus text format (checked by promtool), values that match what was
# downloaded (bytes per file and listener, status classes, histogram count = transfers),
# metrics.allow (127.0.0.2 gets a 403) and metrics.enabled = false (404).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"

METRICS=$(wire_get WIRE_METRICS_PATH)
srv_conf "$T_TMP/d.conf" \
  'files = ( { path = "/ram/1MiB.dat"; size = "1MiB"; }, { path = "/files/3000.bin"; size = 3000; } );'
# a second listener, on a line of its own (debitd_up reads the first port from line 1)
PORT2=$(free_port)
sed -i "1s/ } );\$/ },\\n  { address = \"127.0.0.1\"; port = $PORT2; tcp = { pacing_rate = \"800mbit\"; }; } );/" "$T_TMP/d.conf"
srv_start "$T_TMP/d.conf"
B2=http://127.0.0.1:$PORT2

code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
sum=0
got=$(curl -s "$BASE/ram/1MiB.dat" | wc -c); sum=$((sum + got))
got=$(curl -s "$BASE/ram/1MiB.dat" | wc -c); sum=$((sum + got))
check_eq "two whole downloads" 2097152 "$sum"
check_eq "a Range request: 206" 206 "$(code -r 0-99 "$BASE/ram/1MiB.dat")"
check_eq "the small file through the second listener" 200 "$(code "$B2/files/3000.bin")"
check_eq "404" 404 "$(code "$BASE/nope")"
check_eq "HEAD (no transfer)" 200 "$(code -I "$BASE/ram/1MiB.dat")"

curl -s -D "$T_TMP/mh" -o "$T_TMP/m" "$BASE$METRICS"
check_match "200" '^HTTP/1.1 200' "$(head -1 "$T_TMP/mh")"
check_match "Content-Type names the format version" '^text/plain; version=0\.0\.4' "$(hdr "$T_TMP/mh" Content-Type)"
val() { awk -v k="$1" '$1 == k {print $2; f=1} END {if (!f) print "absent"}' "$T_TMP/m"; }
L1="127.0.0.1:$PORT" L2="127.0.0.1:$PORT2"
check_eq "bytes of /ram/1MiB.dat on listener 1 = what was downloaded (2 x 1 MiB + 100)" $((2097152 + 100)) \
  "$(val "debitd_sent_bytes_total{file=\"/ram/1MiB.dat\",listener=\"$L1\"}")"
check_eq "bytes of /files/3000.bin on listener 2" 3000 \
  "$(val "debitd_sent_bytes_total{file=\"/files/3000.bin\",listener=\"$L2\"}")"
check_eq "no bytes of /files/3000.bin on listener 1" 0 \
  "$(val "debitd_sent_bytes_total{file=\"/files/3000.bin\",listener=\"$L1\"}")"
# 200 x 3 + HEAD + the 206 (2xx); the /status polls of srv_start are 2xx too: compare with /status
st=$(curl -s "$BASE/status")  # after the scrape: one more 2xx than the scrape saw
check_eq "2xx = /status's responses_2xx at the scrape" "$(( $(jq .counters.responses_2xx <<<"$st") - 1 ))" \
  "$(val 'debitd_responses_total{code="2xx"}')"
check_eq "4xx: the one 404" 1 "$(val 'debitd_responses_total{code="4xx"}')"
check_eq "5xx: none" 0 "$(val 'debitd_responses_total{code="5xx"}')"
check_eq "histogram count = transfers (3 GETs + 1 Range)" 4 "$(val debitd_transfer_duration_seconds_count)"
check_eq "+Inf bucket = count" 4 "$(val 'debitd_transfer_duration_seconds_bucket{le="+Inf"}')"
check_eq "600 s bucket holds them all" 4 "$(val 'debitd_transfer_duration_seconds_bucket{le="600"}')"
check_eq "build info" 1 "$(val "debitd_build_info{version=\"$("$DEBITD" --version | awk '{print $2; exit}')\"}")"
check_match "TCP profile of listener 2 (pacing as X-Debit-Tcp spells it)" \
  "^debitd_tcp_profile_info\\{listener=\"$L2\",cc=\"[a-z0-9_]+\",pacing=\"800Mbit\",sndbuf=\"auto\",notsent_lowat=\"off\"\\} 1\$" \
  "$(grep "^debitd_tcp_profile_info{listener=\"$L2\"" "$T_TMP/m")"
check_match "offload state of lo" '^debitd_offload_enabled\{interface="lo",feature="tso"\} [01]$' \
  "$(grep '^debitd_offload_enabled{interface="lo",feature="tso"}' "$T_TMP/m")"
check_match "refusals by reason" '^debitd_refusals_total\{reason="[a-z_]+"\} 0$' "$(grep -m1 '^debitd_refusals_total' "$T_TMP/m")"
# the acceptors: listener 2 had one connection before the scrape, listener 1 the rest
check_eq "accepted on listener 2: the one connection, handed" 1 \
  "$(val "debitd_accepted_connections_total{listener=\"$L2\",result=\"handed\"}")"
check_eq "accepted on listener 1 = /status accept.accepted at the scrape" \
  "$(( $(jq .listeners[0].accept.accepted <<<"$st") - 1 ))" \
  "$(val "debitd_accepted_connections_total{listener=\"$L1\",result=\"handed\"}")"
check_eq "none refused, no pause, no accept error on listener 1" "0 0 0" \
  "$(val "debitd_accepted_connections_total{listener=\"$L1\",result=\"refused\"}") $(val "debitd_accept_paused_total{listener=\"$L1\"}") $(val "debitd_accept_errors_total{listener=\"$L1\"}")"
check_cmp "listener 1's open connections (the scrape's own)" "$(val "debitd_listener_connections{listener=\"$L1\"}")" ">=" 1
check_match "active connections (the scrape's own)" '^[1-9]' "$(val debitd_active_connections)"
if command -v promtool >/dev/null; then
  out=$(promtool check metrics <"$T_TMP/m" 2>&1); rc=$?
  check_eq "promtool check metrics: no problem${out:+: $out}" "0|" "$rc|$out"
else
  t_fail "promtool check metrics" "promtool missing: tools/deps installs the Debian package prometheus"
fi
check_eq "POST /metrics: 405" 405 "$(code -X POST -d x "$BASE$METRICS")"

# the default allow list is loopback 127.0.0.1 and ::1: another address is refused
check_eq "from 127.0.0.2 (not in the default allow list): 403" 403 "$(code --interface 127.0.0.2 "$BASE$METRICS")"
check_eq "a file from 127.0.0.2 is still served" 200 "$(code --interface 127.0.0.2 "$B2/files/3000.bin")"
srv_stop

srv_conf "$T_TMP/e.conf" 'metrics = { allow = ( "127.0.0.2", "10.0.0.0/8" ); };'
srv_start "$T_TMP/e.conf"
check_eq "allow = 127.0.0.2: 127.0.0.2 reads it" 200 "$(code --interface 127.0.0.2 "$BASE$METRICS")"
check_eq "allow = 127.0.0.2: 127.0.0.1 gets a 403" 403 "$(code "$BASE$METRICS")"
check_match "-t prints the list" '^metrics = \{ enabled = true; allow = \( "127.0.0.2", "10.0.0.0/8" \); \};$' \
  "$("$DEBITD" -t -c "$T_TMP/e.conf" 2>/dev/null | grep '^metrics')"
srv_stop

srv_conf "$T_TMP/f.conf" 'metrics = { enabled = false; };'
srv_start "$T_TMP/f.conf"
check_eq "enabled = false: 404" 404 "$(code "$BASE$METRICS")"
srv_stop

# bad values: FILE:LINE: setting: reason, exit 2
bad() {
  printf 'metrics = %s;\n' "$1" >"$T_TMP/bad.conf"
  msg=$("$DEBITD" -t -c "$T_TMP/bad.conf" 2>&1 >/dev/null); rc=$?
  check_match "metrics = $1: exit 2 and $2" "^2 .*$T_TMP/bad.conf:1: $2" "$rc $msg"
}
bad '{ allow = ( "localhost" ); }' 'metrics.allow\[0\]: "localhost": not a numeric IPv4 or IPv6 address'
bad '{ allow = ( "10.0.0.1/8" ); }' 'metrics.allow\[0\]: "10.0.0.1/8": host bits set beyond the /8 prefix'
bad '{ allow = ( "::1/129" ); }' 'metrics.allow\[0\]: "::1/129": prefix "129"'
bad '{ allow = "127.0.0.1"; }' 'metrics.allow: expected a list'
bad '{ enable = true; }' 'metrics.*enable'
printf 'files = ( { path = "/metrics"; size = 1; } );\n' >"$T_TMP/bad.conf"
check_match "a file at /metrics is refused (reserved)" 'reserved' "$("$DEBITD" -t -c "$T_TMP/bad.conf" 2>&1)"
t_done
