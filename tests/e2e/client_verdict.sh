#!/usr/bin/env bash
# Every run's verdict and prediction (common/verdict.c, predict.c; docs/verdict.md)
# on loopback: limited_by one of the seven, its evidence, predicted_mbps, the receiver's
# buffer; --bottleneck (and the scenario key) as a setting, good and bad values; the
# summary's verdict of most runs in JSON, table, Markdown and CSV; 5 loopback runs from debitd
# all receiver_cpu (stable), decided by the client; nginx (not debitd):
# client-side evidence only; --plot's throughput-against-RTT picture. The verdicts the
# lab's servers must get (sender_buffer, sender_cpu, network behind a real bottleneck)
# are tested in the lab tests.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/client_lib.bash"
need_cmd nginx jq
[ -x "$DEBITD" ] || skip_all "build/debitd not built"
www_new
nginx_up
debitd_serve_10mio || { t_fail "debitd serves /files/10Mio.dat" "$(tail -5 "$T_TMP/debitd.log" 2>/dev/null)"; t_done; }
D=$DEBITD_URL
KINDS='["network","receiver_window","sender_buffer","sender_cpu","congestion","receiver_cpu","unknown"]'

f=$T_TMP/v.json
"$DEBIT" -q -n 2 --format json -o "$f" debitd="$D" nginx="$NGINX/files/10Mio.dat"
check_eq "exit 0" 0 $?
check_eq "every run: limited_by is one of the seven" true "$(jq --argjson k "$KINDS" '[.runs[] | .limited_by as $v | $k | index($v) != null] | all' "$f")"
check_eq "every run: evidence non-empty" true "$(jq '[.runs[] | .limited_by_evidence | type == "string" and length > 0] | all' "$f")"
check_eq "every run: predicted_mbps a number or null" true "$(jq '[.runs[] | .predicted_mbps | type == "number" or type == "null"] | all' "$f")"
check_eq "debitd runs: a server-side verdict (no 'server side unknown')" false \
  "$(jq '[.runs[] | select(.server == "debitd") | .limited_by_evidence | startswith("server side unknown")] | any' "$f")"
check_eq "nginx runs: client-side evidence only, said first" true \
  "$(jq '[.runs[] | select(.server == "nginx") | .limited_by_evidence | startswith("server side unknown (not debitd): client-side evidence only")] | all' "$f")"
rmem_max=$(awk '{print $3}' /proc/sys/net/ipv4/tcp_rmem)
check_eq "receiver.tcp_rmem_max = tcp_rmem[2] of this netns ($rmem_max)" "$rmem_max" "$(jq -r '[.runs[].receiver.tcp_rmem_max] | unique | map(tostring) | join(" ")' "$f")"
check_eq "receiver.so_rcvbuf: the socket's, a positive integer" true "$(jq '[.runs[].receiver.so_rcvbuf | type == "number" and . > 0 and . == floor] | all' "$f")"
check_eq "receiver.rcvbuf_setting: null under autotuning" null "$(jq -c '[.runs[].receiver.rcvbuf_setting] | unique | .[0]' "$f")"
check_eq "summary: limited_by one of the seven, its run count, predicted_mbps" true \
  "$(jq --argjson k "$KINDS" '[.summary[] | (.limited_by as $v | $k | index($v) != null) and (.limited_by_runs | add) == .runs_ok and (.limited_by_runs[.limited_by] >= 1) and (.predicted_mbps | type == "number" or type == "null")] | all' "$f")"
check_eq "summary: limited_by is the verdict of most runs" true \
  "$(jq '[.summary[] as $s | [.runs[] | select(.server == $s.server and .ok) | .limited_by] | group_by(.) | map(length) | max == $s.limited_by_runs[$s.limited_by]] | all' "$f")"

# --rcvbuf is the receiver's setting, and the socket's SO_RCVBUF is the kernel's double of it.
"$DEBIT" -q -n 1 --rcvbuf 1MiB --format json -o "$T_TMP/r.json" "$D"
check_eq "--rcvbuf 1MiB: receiver.rcvbuf_setting 1048576, so_rcvbuf 2097152 (Linux doubles it)" "1048576 2097152" \
  "$(jq -r '.runs[0].receiver | "\(.rcvbuf_setting) \(.so_rcvbuf)"' "$T_TMP/r.json")"

# --bottleneck far below loopback's rate: every run is at (above) the path's rate: network,
# with the figures; the prediction is then the bottleneck with slow start at loopback RTT.
"$DEBIT" -q -n 2 --bottleneck 100Mbit --format json -o "$T_TMP/b.json" debitd="$D" nginx="$NGINX/files/10Mio.dat"
check_eq "--bottleneck 100Mbit: every run network" "network" "$(jq -r '[.runs[].limited_by] | unique | join(" ")' "$T_TMP/b.json")"
check_match "its evidence: measured, share of the bottleneck" '^measured [0-9]+ Mb/s = [0-9]+% of the 100 Mb/s bottleneck' \
  "$(jq -r '[.runs[] | select(.server == "debitd")][0].limited_by_evidence' "$T_TMP/b.json")"
check_eq "predicted_mbps: the bottleneck's rate, 100 after slow start (within 2%)" true \
  "$(jq '[.runs[].predicted_mbps | . > 98 and . <= 100.0001] | all' "$T_TMP/b.json")"
check_eq "summary: network with every run" "network:2 network:2" "$(jq -r '[.summary[] | "\(.limited_by):\(.limited_by_runs.network)"] | join(" ")' "$T_TMP/b.json")"

# The same in the other formats: one "limited by" line per server.
"$DEBIT" -q -n 1 --bottleneck 100Mbit debitd="$D" nginx="$NGINX/files/10Mio.dat" >"$T_TMP/t.txt"
check_match "table: a Limited by block" '^Limited by \(the verdict of most successful runs' "$(cat "$T_TMP/t.txt")"
check_match "table: a line per server with runs, prediction and evidence" \
  '^  debitd limited by network \(1 of 1 runs\), predicted [0-9.]+ Mb/s: measured [0-9]+ Mb/s = [0-9]+% of the 100 Mb/s bottleneck' "$(cat "$T_TMP/t.txt")"
check_match "table: nginx's says server side unknown" '^  nginx limited by network \(1 of 1 runs\), predicted [0-9.]+ Mb/s: server side unknown \(not debitd\)' "$(cat "$T_TMP/t.txt")"
"$DEBIT" -q -n 1 --bottleneck 100Mbit --format markdown debitd="$D" nginx="$NGINX/files/10Mio.dat" >"$T_TMP/t.md"
check_match "markdown: the limited-by list" '^- debitd limited by network \(1 of 1 runs\), predicted [0-9.]+ Mb/s: measured' "$(cat "$T_TMP/t.md")"
check_match "markdown: nginx too" '^- nginx limited by network \(1 of 1 runs\)' "$(cat "$T_TMP/t.md")"
"$DEBIT" -q -n 1 --bottleneck 100Mbit --format csv debitd="$D" nginx="$NGINX/files/10Mio.dat" >"$T_TMP/t.csv"
check_match "csv: header ends with limited_by,limited_by_runs,predicted_mbps" ',p_method,limited_by,limited_by_runs,predicted_mbps$' "$(head -1 "$T_TMP/t.csv")"
check_match "csv: each row carries the verdict" '^,,debitd,.*,network,1,[0-9.]+$' "$(sed -n 2p "$T_TMP/t.csv")"

# Loopback's verdict is stable (issue 32): 5 downloads of 100 MiB from a local debitd, all
# the same limited_by. On loopback the receiver copies every byte while the sender's
# sendfile moves pages: debit's transfer thread is on a CPU or waiting for one all the
# time, debitd's serving thread mostly idle: receiver_cpu, decided by the client's own
# figures (debitd cannot see them), with no prediction (no limit known).
debitd_conf "$T_TMP/big.conf" 'files = ( { path = "/files/100Mio.dat"; size = "100Mio"; } );'
if debitd_up "$T_TMP/big.conf"; then
  "$DEBIT" -q -n 5 --format json -o "$T_TMP/l.json" "$DEBITD_BASE/files/100Mio.dat"
  check_eq "5 loopback runs: exit 0" 0 $?
  check_eq "5 of 5 runs: the same limited_by, receiver_cpu" "5 receiver_cpu" \
    "$(jq -r '[.runs[] | select(.ok) | .limited_by] | "\(length) \(unique | join(" "))"' "$T_TMP/l.json")"
  check_eq "... decided by the client's side (its CPU)" client "$(jq -r '[.runs[].limited_by_side] | unique | join(" ")' "$T_TMP/l.json")"
  check_match "... the evidence: the receiver's thread at a full core, or the one-host pair's CPUs full" \
    "^receiver's transfer thread on a CPU [0-9]+% of the transfer( and waiting to run [0-9]+%)? \\((a full core|one host: with the sender's, its CPUs full)\\); sender's serving thread [0-9]+%" \
    "$(jq -r '.runs[0].limited_by_evidence' "$T_TMP/l.json")"
  check_eq "receiver.cpu: figures, share at most 1; on a CPU or waiting >= 50% of the time, or more CPU than debitd's thread" true \
    "$(jq '[.runs[] | .server_record.cpu as $s | .receiver.cpu | .share <= 1 and .share >= 0 and
      ((.user_ms + .sys_ms + (.runqueue_ms // 0)) >= 0.5 * .wall_ms or (.user_ms + .sys_ms) >= ($s.user_ms + $s.sys_ms))] | all' "$T_TMP/l.json")"
  check_eq "no prediction on loopback without --bottleneck: null, with the reason" true \
    "$(jq '[.runs[] | .predicted_mbps == null and (.predicted_note | startswith("no limit known"))] | all' "$T_TMP/l.json")"
  check_eq "the summary: receiver_cpu, 5 of 5" "receiver_cpu 5" \
    "$(jq -r '.summary[0] | "\(.limited_by) \(.limited_by_runs.receiver_cpu)"' "$T_TMP/l.json")"
  check_eq "debitd's own verdict is in each record (a name, and never receiver_cpu: it cannot see the client)" true \
    "$(jq --argjson k "$KINDS" '[.runs[].server_record.limited_by | . as $v | ($k | index($v) != null) and . != "receiver_cpu"] | all' "$T_TMP/l.json")"
else
  t_fail "a second debitd (100 MiB) started" "$(tail -5 "$T_TMP/debitd.log")"
fi

# --bottleneck as a setting: bad values exit 2 before any download, with the reason.
usage_err() { # NAME ERE ARGS...
  local name=$1 re=$2; shift 2
  "$DEBIT" "$@" >"$T_TMP/u.out" 2>"$T_TMP/u.err"
  local rc=$?
  if [ $rc -eq 2 ] && grep -Eq -- "$re" "$T_TMP/u.err" && [ ! -s "$T_TMP/u.out" ]; then t_ok "$name"; else t_fail "$name" "exit $rc: $(cat "$T_TMP/u.err")"; fi
}
usage_err "--bottleneck x: exit 2, says why" "^debit: --bottleneck: 'x': not a number \(expected the path's rate, such as 1Gbit" --bottleneck x "$D"
usage_err "--bottleneck 0: exit 2" "^debit: --bottleneck: '0': must be more than 0" --bottleneck 0 "$D"
usage_err "--bottleneck 1GiB (a size, not a rate): exit 2" "^debit: --bottleneck: '1GiB': " --bottleneck 1GiB "$D"
check_match "-t prints the bottleneck" 'bottleneck 1000 Mb/s' "$("$DEBIT" -t --bottleneck 1Gbit "$D")"

# The scenario key: FILE:LINE: bottleneck: reason; a good one reaches the runs.
printf 'servers = ( { url = "%s"; } );\nbottleneck = "x";\n' "$D" >"$T_TMP/bad.conf"
usage_err "scenario bottleneck = \"x\": FILE:LINE: bottleneck: ..." "bad.conf:2: bottleneck: 'x': not a number" --scenario "$T_TMP/bad.conf"
printf 'servers = ( { name = "debitd"; url = "%s"; } );\nruns = 1;\nbottleneck = "50Mbit";\n' "$D" >"$T_TMP/good.conf"
check_match "scenario bottleneck = \"50Mbit\": -t shows it" 'bottleneck 50 Mb/s' "$("$DEBIT" -t --scenario "$T_TMP/good.conf")"
"$DEBIT" -q --scenario "$T_TMP/good.conf" --format json -o "$T_TMP/g.json"
check_match "scenario bottleneck: the run's evidence uses it" 'of the 50(\.0)? Mb/s bottleneck' "$(jq -r '.runs[0].limited_by_evidence' "$T_TMP/g.json")"

# --plot: the second picture, throughput against RTT, next to the first.
if command -v gnuplot >/dev/null 2>&1; then
  "$DEBIT" -n 1 --no-progress --bottleneck 100Mbit --plot "$T_TMP/p.png" debitd="$D" nginx="$NGINX/files/10Mio.dat" >/dev/null 2>"$T_TMP/p.err"
  check_eq "--plot: exit 0" 0 $?
  check_match "--plot: says where both pictures are" "plot written to $T_TMP/p.png \(throughput against RTT: $T_TMP/p-rtt.png\)" "$(cat "$T_TMP/p.err")"
  if out=$(python3 "$DEBIT_TOP/tests/e2e/lab_plotcheck.py" png "$T_TMP/p-rtt.png" 1200 700 2>&1); then t_ok "p-rtt.png: a valid 1200x700 PNG"; else t_fail "p-rtt.png: a valid 1200x700 PNG" "$out"; fi
  "$DEBIT" -q -n 1 --bottleneck 100Mbit --plot "$T_TMP/p.svg" debitd="$D" >/dev/null
  check_match "p-rtt.svg: the chart's title" 'Throughput against RTT: median per latency cell' "$(cat "$T_TMP/p-rtt.svg")"
  check_match "p-rtt.svg: the server's points and its predicted curve in the key" '>debitd<.*>debitd predicted<' \
    "$(tr '\n' ' ' <"$T_TMP/p-rtt.svg")"
  check_match "p-rtt.svg: the cell's verdict labels its point" '>network<' "$(cat "$T_TMP/p-rtt.svg")"
else
  t_skip "--plot's RTT picture" "gnuplot not installed (run tools/deps)"
fi
t_done
