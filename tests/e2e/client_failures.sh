#!/usr/bin/env bash
# Failures are data: 404, refused port, DNS failure, redirect loop, short body, stall and a
# server killed mid-transfer each mark the run failed with a clear reason, are counted and
# excluded from the median, and the measurement goes on (exit 1). Also: the --max-bytes
# fallback for a server that ignores Range, and X-Debit-* headers kept as server_config.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/client_lib.bash"
need_cmd nginx python3
nginx_up   # and its tmpfs web root
fake_up
dead=$(free_port)

# --- one measurement with every kind of failure among good runs ---------------------------
t0=$SECONDS
"$DEBIT" -n 2 --no-progress --stall 1 --format json -o "$T_TMP/f.json" \
  good="$NGINX/files/1Mio.dat" nf="$NGINX/files/missing.dat" refused="http://127.0.0.1:$dead/x" \
  short="$FAKE/short/1000000" loop="$FAKE/loop" stall="$FAKE/stall/10000000" 2>"$T_TMP/f.err"
check_eq "exit 1 when some runs failed" 1 $?
check_cmp "bounded: stalls detected in a few seconds" $((SECONDS - t0)) '<' 15
f=$T_TMP/f.json
kind() { jqr --arg s "$1" '[.runs[] | select(.server==$s) | "\(.ok) \(.error_kind)"] | unique | join(",")' "$f"; }
err() { jqr --arg s "$1" '[.runs[] | select(.server==$s) | .error] | first' "$f"; }
check_eq "all 12 runs recorded, in alternation" "good nf refused short loop stall good nf refused short loop stall" \
  "$(jqr '[.runs[].server] | join(" ")' "$f")"
check_eq "good: ok" "true null" "$(kind good)"
check_eq "404: failed, kind http" "false http" "$(kind nf)"
check_eq "404: reason" "HTTP 404 Not Found" "$(err nf)"
check_eq "404: status recorded" "404" "$(jqr '[.runs[] | select(.server=="nf") | .http_status] | first' "$f")"
check_eq "refused: failed, kind connect" "false connect" "$(kind refused)"
check_match "refused: reason" "^connect: .*$dead" "$(err refused)"
check_eq "refused: a socket that never connected leaves no TCP_INFO (tcp, rtt_ms null)" "null null" \
  "$(jqr '[.runs[] | select(.server=="refused") | "\(.tcp) \(.rtt_ms)"] | unique | join(",")' "$f")"
check_eq "good: TCP_INFO kept" "object" "$(jqr '[.runs[] | select(.server=="good") | .tcp | type] | unique | join(",")' "$f")"
check_eq "short body: failed, kind short_body" "false short_body" "$(kind short)"
check_match "short body: reason gives the counts" '^short body: 500000 of 1000000 bytes' "$(err short)"
check_eq "redirect loop: failed, kind redirect" "false redirect" "$(kind loop)"
check_match "redirect loop: reason" '^redirect loop: .*[Mm]aximum \(20\) redirects' "$(err loop)"
check_eq "stall: failed, kind stall" "false stall" "$(kind stall)"
check_match "stall: reason" '^stall: nothing received for 1 s \(after 65536 bytes\)' "$(err stall)"
check_eq "summary counts ok/failed per server" "good:2/0 nf:0/2 refused:0/2 short:0/2 loop:0/2 stall:0/2" \
  "$(jqr '[.summary[] | "\(.server):\(.runs_ok)/\(.runs_failed)"] | join(" ")' "$f")"
check_eq "failed servers have no median" "null null" \
  "$(jqr '[.summary[] | select(.server=="nf" or .server=="stall") | .median_mbps | tostring] | join(" ")' "$f")"
check_eq "good server's median from its own runs only" true \
  "$(jqr '([.runs[] | select(.server=="good") | .avg_mbps] | add / 2) as $m | (.summary[0].median_mbps - $m | fabs) < 1e-6 * $m' "$f")"
check_match "stderr names each failure" 'stall run 2: FAILED: stall' "$(cat "$T_TMP/f.err")"

# --- DNS failure: in a namespace with only loopback, no resolver is reachable --------------
if [ "$(id -u)" -eq 0 ]; then
  ns_new NS dns
  ip netns exec "$NS" "$DEBIT" -q -n 1 --format json "http://no-such-host.invalid/x" >"$T_TMP/dns.json"
  check_eq "DNS failure: exit 1" 1 $?
  check_eq "DNS failure: kind dns" "false dns" "$(jqr '.runs[0] | "\(.ok) \(.error_kind)"' "$T_TMP/dns.json")"
  check_match "DNS failure: reason" '^DNS: .*no-such-host\.invalid' "$(jqr '.runs[0].error' "$T_TMP/dns.json")"
else
  t_skip "DNS failure" "needs root for a namespace without a resolver"
fi

# --- HTTP 5xx: failed with the status line as the reason -----------------------------------
"$DEBIT" -q -n 1 --format json "$FAKE/code/503" >"$T_TMP/5xx.json"
check_eq "HTTP 503: exit 1, failed, kind http, status, reason" "1 false http 503 HTTP 503 Service Unavailable" \
  "$? $(jqr '.runs[0] | "\(.ok) \(.error_kind) \(.http_status) \(.error)"' "$T_TMP/5xx.json")"

# --- connect timeout: SYNs dropped (a namespace whose loopback drops them) -----------------
if [ "$(id -u)" -eq 0 ] && command -v iptables >/dev/null; then
  ns_new NT ct
  if ip netns exec "$NT" iptables -A INPUT -p tcp --syn --dport 9 -j DROP 2>/dev/null; then
    t0=$(date +%s%N)
    ip netns exec "$NT" "$DEBIT" -q -n 2 --timeout 0.5 --format json "http://127.0.0.1:9/x" >"$T_TMP/ct.json"
    rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
    check_eq "--timeout 0.5: both runs fail as connect timeouts, exit 1" "1 false connect,false connect" \
      "$rc $(jqr '[.runs[] | "\(.ok) \(.error_kind)"] | join(",")' "$T_TMP/ct.json")"
    check_match "--timeout: reason says timeout" '^connect timeout: ' "$(jqr '.runs[0].error' "$T_TMP/ct.json")"
    check_cmp "--timeout 0.5: two runs in about 1 s, not the default (${ms} ms)" "$ms" '<' 4000
    check_cmp "--timeout 0.5: each run waited the timeout" "$(jqr '.runs[0].total_s' "$T_TMP/ct.json")" '>=' 0.45
  else
    t_skip "--timeout" "iptables cannot add a rule in a namespace here"
  fi
else
  t_skip "--timeout" "needs root and iptables for a namespace that drops SYNs"
fi

# --- --user-agent: what the server receives (echoed back as an X-Debit-* header) ----------
"$DEBIT" -q -n 1 --format json "$FAKE/ua/1000" >"$T_TMP/ua.json"
check_eq "default User-Agent: debit/VERSION" "debit/$("$DEBIT" --version | awk 'NR == 1 {print $2}')" \
  "$(jqr '.runs[0].server_config["X-Debit-Echo-User-Agent"]' "$T_TMP/ua.json")"
"$DEBIT" -q -n 1 --user-agent 'Wget/1.21.3 (linux-gnu)' --format json "$FAKE/ua/1000" >"$T_TMP/ua2.json"
check_eq "--user-agent is sent as given" "Wget/1.21.3 (linux-gnu)" \
  "$(jqr '.runs[0].server_config["X-Debit-Echo-User-Agent"]' "$T_TMP/ua2.json")"

# --- the series, peak and slow start of a paced download (4.5 MB at 3 MB/s: ~15 intervals) --
"$DEBIT" -q -n 1 --format json "$FAKE/slow/4500000?rate=3000000" >"$T_TMP/ser.json"
r='.runs[0]'
check_cmp "paced 1.5 s download: at least 14 intervals of 100 ms" "$(jqr "$r.series | length" "$T_TMP/ser.json")" '>=' 14
check_eq "series integrates to the bytes (full intervals x 0.1 s + the partial last one)" true \
  "$(jqr "$r"' | (.series | length) as $n | ((.series[:$n-1] | add) * 0.1 + .series[$n-1] * (.body_s - 0.1 * ($n-1))) as $mbit
      | (($mbit - .bytes * 8 / 1e6) | fabs) < 0.01 * .bytes * 8 / 1e6' "$T_TMP/ser.json")"
check_eq "peak = the highest full interval" true "$(jqr "$r"' | .peak_mbps == (.series[:-1] | max)' "$T_TMP/ser.json")"
check_eq "slow start = end of the first full interval reaching 90% of the peak" true \
  "$(jqr "$r"' | .peak_mbps as $p | ([.series[:-1] | to_entries[] | select(.value >= 0.9 * $p * (1 - 1e-9)) | .key] | first) as $i
      | ((.slow_start_s - 0.1 * ($i + 1)) | fabs) < 1e-9' "$T_TMP/ser.json")"
check_cmp "paced at 24 Mb/s: the wget-style average is below 30 Mb/s" "$(jqr "$r.avg_mbps" "$T_TMP/ser.json")" '<' 30

# --- --max-bytes against a server that ignores Range: abort after exactly SIZE -----------
"$DEBIT" -q -n 1 --max-bytes 1MiB --format json "$FAKE/norange/5000000" >"$T_TMP/nr.json"
check_eq "--max-bytes fallback: exit 0" 0 $?
check_eq "--max-bytes fallback: 1 MiB from a 200, run ok" "1048576 200 false true true" \
  "$(jqr '.runs[0] | "\(.bytes) \(.http_status) \(.ranged) \(.max_bytes_reached) \(.ok)"' "$T_TMP/nr.json")"

# --- --max-time: a download that lasts too long fails as a timeout --------------------------
"$DEBIT" -q -n 1 --max-time 0.5 --format json "$FAKE/slow/10000000?rate=2000000" >"$T_TMP/mt.json"
check_eq "--max-time: exit 1, kind timeout" "1 false timeout" "$? $(jqr '.runs[0] | "\(.ok) \(.error_kind)"' "$T_TMP/mt.json")"
check_cmp "--max-time: stopped after about 0.5 s" "$(jqr '.runs[0].total_s' "$T_TMP/mt.json")" '<' 1.5

# --- X-Debit-* headers become server_config -------------------------------------------------
"$DEBIT" -q -n 1 --format json "$FAKE/debit/100000" >"$T_TMP/xd.json"
check_eq "server_config holds every X-Debit-* header, canonical case" \
  '{"X-Debit-Kernel":"6.18.0-test","X-Debit-Offload":"tso=off gso=off gro=on","X-Debit-Tcp":"cc=cubic pacing=500Mbit sndbuf=4194304"}' \
  "$(jq -cS '.runs[0].server_config' "$T_TMP/xd.json")"
check_eq "no X-Debit-* headers (nginx): empty server_config" '{}' "$(jq -c '[.runs[] | select(.server=="good")][0].server_config' "$f")"

# --- a server killed mid-transfer; the measurement goes on --------------------------------
"$DEBIT" -n 2 --no-progress --format json -o "$T_TMP/kill.json" \
  slow="$FAKE/slow/50000000?rate=5000000" good="$NGINX/files/1Mio.dat" 2>"$T_TMP/kill.err" &
dpid=$!
t_track $dpid
wait_for 100 eval "ss -Htn state established 'sport = :$FAKE_PORT' | grep -q ."
sleep 0.5
stop_pid "$FAKE_PID" KILL
stop_pid $dpid CONT   # just the bounded wait: debit goes on to its other runs and ends
check_eq "killed server: debit exits 1" 1 "$STOP_RC"
check_eq "killed server: first run failed as short body or receive error" "false" \
  "$(jqr '[.runs[] | select(.server=="slow") | .ok] | first | tostring' "$T_TMP/kill.json")"
check_match "killed server: kind" '^(short_body|recv)$' "$(jqr '[.runs[] | select(.server=="slow")][0].error_kind' "$T_TMP/kill.json")"
check_cmp "killed server: some bytes before the kill" "$(jqr '[.runs[] | select(.server=="slow")][0].bytes' "$T_TMP/kill.json")" '>' 0
# The second run to the killed server fails: refused once the kernel has closed its
# listening socket. Its teardown runs while debit goes on: in one CI run (of e563d77)
# that run failed as recv instead, most likely connected to the dying listener just
# before it closed, then reset.
check_match "after the kill: the next run to it fails (refused, or reset by the dying listener), the other server's runs still ok" \
  '^false (connect|recv) good:2/0$' \
  "$(jqr '([.runs[] | select(.server=="slow")][1] | "\(.ok) \(.error_kind)") + " good:\(.summary[1].runs_ok)/\(.summary[1].runs_failed)"' "$T_TMP/kill.json")"
t_done
