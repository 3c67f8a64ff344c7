#!/usr/bin/env bash
# `lab/lab.sh demo` (what `make demo` runs as root), shortened: a scenario file like
# etc/lab-experiment.conf with 32 MiB files and 2 runs. The seed-style table must have the
# three latency rows and the four server x client-offload columns, medians falling as the
# delay rises, the delay mechanism reported (delay line here: no netem), the JSON lines
# and a valid PNG plot written; and nothing left behind, also after a Ctrl-C mid-way
# (which keeps the runs finished so far and exits 130).
. "$DEBIT_TOP/tests/lib/common.sh"
need_root "network namespaces, tc and iptables"
need_cmd ip tc iptables ethtool curl
LAB=$DEBIT_TOP/lab/lab.sh
[ -x "$DEBITD" ] || skip_all "build/debitd is not built"
[ -x "$DEBIT" ] || skip_all "build/debit is not built"
why=$("$LAB" check 2>&1) || skip_all "$why"
command -v gnuplot >/dev/null 2>&1 || skip_all "needs gnuplot for the plot (run tools/deps)"
if "$LAB" check | grep -q 'via netem'; then mech=netem; else mech=delayline; fi

# The shipped scenario file must load (servers, axes) — checked by debit's own parser.
check_match "etc/lab-experiment.conf: 2 servers, 3 latencies, 2 client states" \
  "OVH.*DegroupTest|DegroupTest.*OVH" "$(tr '\n' ' ' <"$DEBIT_TOP/etc/lab-experiment.conf")"

sed -e 's#/files/256Mio.dat#/files/32Mio.dat#' -e 's/^runs = 5;/runs = 2;/' \
  "$DEBIT_TOP/etc/lab-experiment.conf" >"$T_TMP/small.conf"
check_match "test scenario derived from the shipped one" "runs = 2;" "$(cat "$T_TMP/small.conf")"

snap() { ip netns list | grep '^dbl' | sort; iptables -w -t mangle -S; tc qdisc show; }
snap >"$T_TMP/before"

OUT=$T_TMP/demo
t_on_exit "[ -f '$OUT/lab/lab.env' ] && '$LAB' down '$OUT/lab'"
LAB_SCENARIO=$T_TMP/small.conf LAB_OUT=$OUT timeout -k 5 240 "$LAB" demo >"$T_TMP/demo.out" 2>"$T_TMP/demo.err"
rc=$?
check_eq "demo: exit 0" 0 "$rc"
[ $rc -eq 0 ] || t_diag "$(tail -5 "$T_TMP/demo.err")"
table=$(grep '^| ' "$T_TMP/demo.out" | head -5)
check_match "table header: server x client-offload columns" \
  "^\| scenario \| Srv OVH \(client TSO/GSO on\) \| Srv DegroupTest \(client TSO/GSO on\) \| Srv OVH \(client TSO/GSO off\) \| Srv DegroupTest \(client TSO/GSO off\) \|" "$table"
for row in natural "+10 ms" "+30 ms"; do
  check_match "table row '$row' with four figures" "\| \\$row \| [0-9]+ \| [0-9]+ \| [0-9]+ \| [0-9]+ \|" "$table"
done
col() { printf '%s\n' "$table" | awk -F'|' -v r="$1" -v c="$2" '$2 == " " r " " {gsub(/ /, "", $(c + 2)); print $(c + 2)}'; }
for c in 1 2 3 4; do
  n=$(col natural $c); t=$(col "+10 ms" $c); h=$(col "+30 ms" $c)
  t_diag "column $c: $n / $t / $h Mb/s"
  check_cmp "column $c: +10 ms slower than natural" "$t" "<" "$n"
  check_cmp "column $c: +30 ms slower than +10 ms" "$h" "<" "$t"
done
check_match "the delay mechanism is reported" "via $mech" "$(cat "$T_TMP/demo.out" "$T_TMP/demo.err")"
check_match "the client offload state is reported" "tso=off gso=off" "$(cat "$T_TMP/demo.out")"
check_eq "one JSON line per run (3 x 2 x 2 x 2)" 24 "$(grep -c '"avg_mbps"' "$OUT/runs.jsonl" 2>/dev/null)"
check_match "plot is a PNG" "PNG image data" "$(file "$OUT/plot.png" 2>&1)"
check_match "demo says where results are" "table in $OUT/table.md.*runs.jsonl.*plot.png" "$(cat "$T_TMP/demo.err")"
check_eq "demo: nothing left (namespaces, rules, qdiscs)" "" "$(snap | diff "$T_TMP/before" - )"

# --- Ctrl-C in the middle ------------------------------------------------------------------
OUT2=$T_TMP/demo2
t_on_exit "[ -f '$OUT2/lab/lab.env' ] && '$LAB' down '$OUT2/lab'"
# A script's background job starts with SIGINT ignored: restore it, as at a terminal.
LAB_SCENARIO=$T_TMP/small.conf LAB_OUT=$OUT2 setsid env --default-signal=INT "$LAB" demo \
  >"$T_TMP/demo2.out" 2>"$T_TMP/demo2.err" &
dp=$!
t_track "$dp"
for ((i = 0; i < 300; i++)); do grep -q 'latency +10 ms' "$T_TMP/demo2.err" 2>/dev/null && break; sleep 0.1; done
check_match "interrupted demo reached the +10 ms cell" "latency \+10 ms" "$(cat "$T_TMP/demo2.err")"
pids=$(cat "$OUT2/lab/pids" 2>/dev/null | awk '{print $1}')
kill -INT -- "-$dp"
for ((i = 0; i < 200; i++)); do kill -0 "$dp" 2>/dev/null || break; sleep 0.1; done
wait "$dp"; rc=$?
check_eq "Ctrl-C: exit 130" 130 "$rc"
check_cmp "Ctrl-C: finished runs kept in JSON lines" "$(grep -c '"avg_mbps"' "$OUT2/runs.jsonl" 2>/dev/null || echo 0)" ">=" 8
check_match "Ctrl-C: the table of finished runs is printed" "\| natural \| [0-9]+" "$(cat "$T_TMP/demo2.out")"
alive=0; for p in $pids; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
check_eq "Ctrl-C: servers and delay lines stopped" 0 "$alive"
check_eq "Ctrl-C: nothing left (namespaces, rules, qdiscs)" "" "$(snap | diff "$T_TMP/before" - )"
t_done
