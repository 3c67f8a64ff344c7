#!/usr/bin/env bash
# debit against nginx serving tmpfs files (the public-mirror stand-in): alternation and
# other orders, run and byte counts, medians recomputed from the JSON runs, the four
# output formats, -o atomicity, --max-bytes (Range), --resolve, --connect-to.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/client_lib.bash"
need_cmd nginx
www_new
nginx_up
A=$NGINX/files/10Mio.dat
B=$NGINX/files/1Mio.dat

# --- JSON, alternate order --------------------------------------------------------------
out=$T_TMP/out.json
"$DEBIT" -n 3 --no-progress --format json -o "$out" A="$A" B="$B" 2>"$T_TMP/err1"
check_eq "exit 0 when every run succeeds" 0 $?
check "-o wrote valid JSON" jq -e . "$out"
check_eq "no temporary file left beside -o" "out.json" "$(ls "$T_TMP" | grep '^out\.json' | tr '\n' ' ' | sed 's/ $//')"
check_eq "6 runs in JSON" 6 "$(jqr '.runs | length' "$out")"
check_eq "alternate order A B A B A B" "A B A B A B" "$(jqr '[.runs[].server] | join(" ")' "$out")"
check_eq "run numbers 1 1 2 2 3 3" "1 1 2 2 3 3" "$(jqr '[.runs[].run | tostring] | join(" ")' "$out")"
check_eq "seq 1..6" "1 2 3 4 5 6" "$(jqr '[.runs[].seq | tostring] | join(" ")' "$out")"
check_eq "A: every run has 10 MiB" "10485760" "$(jqr '[.runs[] | select(.server=="A") | .bytes] | unique | map(tostring) | join(" ")' "$out")"
check_eq "B: every run has 1 MiB" "1048576" "$(jqr '[.runs[] | select(.server=="B") | .bytes] | unique | map(tostring) | join(" ")' "$out")"
check_eq "all runs ok with status 200" "true 200" "$(jqr '[.runs[].ok] | all | tostring' "$out") $(jqr '[.runs[].http_status] | unique | map(tostring) | join(" ")' "$out")"
check_eq "issue's run fields present" "true" "$(jqr '[.runs[] | has("server","url","run","ok","error","bytes","avg_mbps","total_mbps","ttfb_s","slow_start_s","rtt_ms","tcp","server_config","series")] | all | tostring' "$out")"
check_eq "issue's summary fields present" "true" "$(jqr '[.summary[] | has("server","runs_ok","runs_failed","median_mbps","min_mbps","max_mbps")] | all | tostring' "$out")"
check_eq "quartiles: min <= q1 <= median <= q3 <= max" true \
  "$(jqr '[.summary[] | .min_mbps <= .q1_mbps and .q1_mbps <= .median_mbps and .median_mbps <= .q3_mbps and .q3_mbps <= .max_mbps] | all' "$out")"
# Medians, min and max recomputed from the runs.
recomputed=$(jq -r '
  def median: sort | if length % 2 == 1 then .[length/2|floor] else (.[length/2-1] + .[length/2]) / 2 end;
  [ .summary[] as $s
    | [.runs[] | select(.server == $s.server and .ok) | .avg_mbps] as $v
    | (($v | median) - $s.median_mbps | fabs) < 1e-6 * $s.median_mbps
      and ($v | min) == $s.min_mbps and ($v | max) == $s.max_mbps
      and $s.runs_ok == ($v | length) and $s.runs_failed == 0 ] | all' "$out")
check_eq "summary median/min/max equal those recomputed from the runs" true "$recomputed"
check_eq "avg_mbps == bytes*8/body_s for every run" true \
  "$(jqr '[.runs[] | ((.bytes * 8 / .body_s / 1e6) - .avg_mbps | fabs) < 1e-6 * .avg_mbps] | all' "$out")"
check_eq "total_mbps == bytes*8/total_s, and <= avg_mbps" true \
  "$(jqr '[.runs[] | (((.bytes * 8 / .total_s / 1e6) - .total_mbps | fabs) < 1e-3 * .total_mbps) and .total_mbps <= .avg_mbps * 1.0001] | all' "$out")"
check_eq "times ordered: 0 < connect <= ttfb <= total" true \
  "$(jqr '[.runs[] | .connect_s > 0 and .connect_s <= .ttfb_s and .ttfb_s <= .total_s] | all' "$out")"
# Peak and slow start are numbers from 10 intervals on; below, null with the reason.
check_eq "series present; peak and slow start numbers, or null with a note under 10 intervals" true \
  "$(jqr '[.runs[] | (.series | length) >= 1 and .series_interval_s == 0.1 and
      (if (.series | length) < 10 then .peak_mbps == null and .slow_start_s == null and (.figures_note | test("fewer than 10 intervals"))
       else .peak_mbps > 0 and .slow_start_s > 0 end)] | all' "$out")"
check_eq "receiver TCP_INFO recorded (rtt, 0 <= min_rtt <= rtt, rcv_rtt, rcv_mss, total_retrans, bytes_received >= body)" true \
  "$(jqr '[.runs[] | .tcp.rtt_ms > 0 and .tcp.min_rtt_ms >= 0 and .tcp.min_rtt_ms <= .tcp.rtt_ms and (.tcp.rcv_rtt_ms | type) == "number"
      and .tcp.rcv_mss > 0 and .tcp.total_retrans >= 0 and .tcp.rcv_space > 0 and .tcp.bytes_received >= .bytes] | all' "$out")"
check_eq "headline RTTs at the top level equal those of .tcp; no ambiguous retransmits/mss keys" true \
  "$(jqr '[.runs[] | .rtt_ms == .tcp.rtt_ms and .min_rtt_ms == .tcp.min_rtt_ms and .rcv_rtt_ms == .tcp.rcv_rtt_ms
      and (has("retransmits") or has("mss") or has("tcp_info") or (.tcp | has("retransmits")) | not)] | all' "$out")"
check_eq "B compared to A: ratio, CI, p-value and method" true \
  "$(jqr '.summary[1] | .ratio > 0 and (.ratio_ci95 | length) == 2 and .ratio_ci95[0] <= .ratio and .ratio <= .ratio_ci95[1] and .p_value > 0 and .p_value <= 1 and .p_method == "exact"' "$out")"
check_match "per-run lines on stderr" 'A run 3: [0-9.]+ Mb/s, 10485760 bytes' "$(cat "$T_TMP/err1")"
check_match "table on stderr with -o" 'Mann-Whitney' "$(cat "$T_TMP/err1")"
# The table shows the JSON's figures: runs, median, min, max (integer Mb/s) of each server.
check_eq "table rows = JSON summary (runs ok/failed, median, min, max)" \
  "$(jqr '.summary[] | "\(.server) \(.runs_ok) \(.runs_failed) \(.median_mbps | round) \(.min_mbps | round) \(.max_mbps | round)"' "$out")" \
  "$(grep -E '^[AB] ' "$T_TMP/err1" | awk '{print $1, $2, $3, $4, $6, $8}')"

# --- --pause: the gap between the end of a download and the start of the next -------------
"$DEBIT" -q -n 2 --pause 0.4 --format json A="$B" B="$B" >"$T_TMP/pause.json"
check_eq "--pause 0.4: every download starts >= 0.4 s (ms timestamps) after the previous one started" true \
  "$(jqr '[.runs[].started_at | sub("\\.[0-9]+Z$"; "Z") as $s | (($s | fromdateiso8601) + ((capture("\\.(?<f>[0-9]+)Z$").f | "0." + .) | tonumber))] as $t
         | [range(1; $t | length) | $t[.] - $t[. - 1] >= 0.395] | all' "$T_TMP/pause.json")"
check_eq "--pause: 4 runs, all ok" "4 true" "$(jqr '"\(.runs | length) \([.runs[].ok] | all)"' "$T_TMP/pause.json")"

# --- names: NAME=URL, else the host; host:port/FILE for every server whose host and port repeat
"$DEBIT" -q -n 1 --format csv "$B" "http://localhost:$NGINX_PORT/files/1Mio.dat" "$NGINX/files/10Mio.dat" >"$T_TMP/names.csv"
check_eq "default names: a unique host alone, host:port/FILE when host and port repeat" \
  "127.0.0.1:$NGINX_PORT/1Mio.dat localhost 127.0.0.1:$NGINX_PORT/10Mio.dat" \
  "$(tail -n +2 "$T_TMP/names.csv" | cut -d, -f3 | tr '\n' ' ' | sed 's/ $//')"
# -q: only the result on stdout, nothing on stderr when all is well
"$DEBIT" -q -n 1 --format csv "$B" >/dev/null 2>"$T_TMP/q.err"
check_eq "-q: nothing on stderr" "" "$(cat "$T_TMP/q.err")"

# --- other orders -------------------------------------------------------------------------
"$DEBIT" -q -n 2 --order sequential --format json A="$B" B="$B" >"$T_TMP/seq.json"
check_eq "sequential order A A B B" "A A B B" "$(jqr '[.runs[].server] | join(" ")' "$T_TMP/seq.json")"
"$DEBIT" -n 3 --order random --seed 7 --format json A="$B" B="$B" C="$B" >"$T_TMP/r1.json" 2>"$T_TMP/r1.err"
"$DEBIT" -q -n 3 --order random --seed 7 --format json A="$B" B="$B" C="$B" >"$T_TMP/r2.json"
check_match "random order prints its seed" 'seed 7' "$(cat "$T_TMP/r1.err")"
check_eq "random order recorded in JSON" "random 7" "$(jqr '"\(.order) \(.seed)"' "$T_TMP/r1.json")"
o1=$(jqr '[.runs[].server] | join(" ")' "$T_TMP/r1.json")
check_eq "same seed, same order" "$o1" "$(jqr '[.runs[].server] | join(" ")' "$T_TMP/r2.json")"
check_nomatch "random order is not the alternate one" '^A B C A B C A B C$' "$o1"
check_eq "random order: 3 runs per server, numbered 1..3 in time order" true \
  "$(jqr '[.runs | group_by(.server)[] | sort_by(.seq) | map(.run) == [1,2,3]] | all' "$T_TMP/r1.json")"

# --- Markdown, CSV, table -------------------------------------------------------------------
"$DEBIT" -q -n 3 --format markdown -o "$T_TMP/out.md" OVH="$A" DegroupTest="$B"
check_eq "markdown exit 0" 0 $?
md=$(cat "$T_TMP/out.md")
check_match "markdown: seed-style header" '^\| scenario \| Srv OVH \| Srv DegroupTest \|$' "$(grep -m1 '^| scenario' "$T_TMP/out.md")"
check_match "markdown: separator row" '^\|---\|---\|---\|$' "$(grep -m1 '^|---' "$T_TMP/out.md")"
check_match "markdown: one row of integer Mb/s medians" '^\| measured \| [0-9]+ \| [0-9]+ \|$' "$(grep '^| measured' "$T_TMP/out.md")"
check_match "markdown: details table" '^\| OVH \| 3 \| 0 \| [0-9]+ \|' "$md"
check_match "markdown: says the unit and the method" 'Mb/s \(10\^6 bit/s' "$md"
"$DEBIT" -q -n 2 --format csv OVH="$A" "DT,x=$B" >"$T_TMP/out.csv"
check_eq "csv: header" "scenario,variant,server,url,runs_ok,runs_failed,median_mbps,min_mbps,max_mbps,median_total_mbps,median_slow_start_s,median_rtt_ms,ratio,ci95_low,ci95_high,p_value,p_method,limited_by,limited_by_runs,predicted_mbps" "$(head -1 "$T_TMP/out.csv")"
check_eq "csv: 3 lines" 3 "$(wc -l <"$T_TMP/out.csv")"
# Slow start is empty when no run of these small files had 10 intervals.
check_match "csv: reference row" '^,,OVH,http://[^,]+,2,0,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]+,[0-9.]*,[0-9.]+,,,,,,(network|receiver_window|congestion|receiver_cpu|unknown),[12],[0-9.]*$' "$(sed -n 2p "$T_TMP/out.csv")"
check_match "csv: quoted name with a comma, compared row" '^,,"DT,x",http://[^,]+,2,0,([0-9.]+,){4}[0-9.]*,([0-9.]+,){4}[0-9.e-]+,exact,[a-z_]+,[12],[0-9.]*$' "$(sed -n 3p "$T_TMP/out.csv")"
table=$("$DEBIT" -n 2 --no-progress A="$B" B="$B" 2>/dev/null)
check_match "table: header" '^server +runs ok +failed +median +min +max +slow start +RTT +ratio \[95% CI\] +p \(Mann-Whitney\)' "$table"
check_match "table: reference row" '^A +2 +0 +[0-9]+ Mb/s' "$table"
check_match "table: states the methods" 'percentile bootstrap \(10000 resamples, seed 1\).*Mann-Whitney U \(exact' "$table"

# --- --max-bytes (Range), --resolve, --connect-to ------------------------------------------
"$DEBIT" -q -n 2 --max-bytes 1MiB --format json "$A" >"$T_TMP/mb.json"
check_eq "--max-bytes: 1 MiB per run via a 206" "1048576 206 true true" \
  "$(jqr '[.runs[] | "\(.bytes) \(.http_status) \(.ranged) \(.max_bytes_reached)"] | unique | join(",")' "$T_TMP/mb.json")"
"$DEBIT" -q -n 1 --max-bytes 100 --format json "$A" >"$T_TMP/mb2.json"
check_eq "--max-bytes 100: exactly 100 bytes" "100 true" "$(jqr '.runs[0] | "\(.bytes) \(.ok)"' "$T_TMP/mb2.json")"
"$DEBIT" -q -n 1 --max-bytes 1GiB --format json "$B" >"$T_TMP/mb3.json"
check_eq "--max-bytes larger than the file: whole file, ok" "1048576 true false" \
  "$(jqr '.runs[0] | "\(.bytes) \(.ok) \(.max_bytes_reached)"' "$T_TMP/mb3.json")"
"$DEBIT" -q -n 1 --resolve "mirror.test:$NGINX_PORT:127.0.0.1" --format json "http://mirror.test:$NGINX_PORT/files/1Mio.dat" >"$T_TMP/res.json"
check_eq "--resolve: mirror.test reached at 127.0.0.1, named after the host" "mirror.test 127.0.0.1 1048576 true" \
  "$(jqr '.runs[0] | "\(.server) \(.remote_ip) \(.bytes) \(.ok)"' "$T_TMP/res.json")"
"$DEBIT" -q -n 1 --connect-to "other.test:80:127.0.0.1:$NGINX_PORT" --format json "http://other.test/files/1Mio.dat" >"$T_TMP/ct.json"
check_eq "--connect-to: other.test:80 reached at nginx" "127.0.0.1 1048576 true" \
  "$(jqr '.runs[0] | "\(.remote_ip) \(.bytes) \(.ok)"' "$T_TMP/ct.json")"
"$DEBIT" -q -n 1 -4 --local-address 127.0.0.1 --format json "$B" >"$T_TMP/la.json"
check_eq "-4 --local-address 127.0.0.1" "true" "$(jqr '.runs[0].ok | tostring' "$T_TMP/la.json")"
"$DEBIT" -q -n 1 --interface lo --format json "$B" >"$T_TMP/if.json"
check_eq "--interface lo" "true" "$(jqr '.runs[0].ok | tostring' "$T_TMP/if.json")"
# IPv6: nginx on [::1]; -6 reaches it, -4 cannot (localhost resolves to both).
if ip -6 addr show dev lo 2>/dev/null | grep -q '::1/128'; then
  p6=$(free_port)
  nginx_spawn "$WWW" "$p6" "" "[::1]"
  if wait_http "http://[::1]:$p6/" 50; then
    "$DEBIT" -q -n 1 -6 --format json "http://localhost:$p6/files/1Mio.dat" >"$T_TMP/v6.json"
    check_eq "-6: reached nginx on ::1" "true ::1 1048576" "$(jqr '.runs[0] | "\(.ok) \(.remote_ip) \(.bytes)"' "$T_TMP/v6.json")"
    "$DEBIT" -q -n 1 -4 --format json "http://localhost:$p6/files/1Mio.dat" >"$T_TMP/v4.json"
    check_eq "-4: the IPv6-only server is refused" "false connect" "$(jqr '.runs[0] | "\(.ok) \(.error_kind)"' "$T_TMP/v4.json")"
  else
    t_fail "nginx on [::1]"
  fi
else
  t_skip "IPv6 -6/-4" "no ::1 on lo"
fi
"$DEBIT" -q -n 1 --rcvbuf 256KiB --format json "$A" >"$T_TMP/rb.json"
check_eq "--rcvbuf 256KiB: ok, and the receive window stayed small (rcv_ssthresh <= 512 KiB)" "true true" \
  "$(jqr '.runs[0] | "\(.ok) \(.tcp.rcv_ssthresh <= 524288)"' "$T_TMP/rb.json")"
t_done
