#!/usr/bin/env bash
# debit --scenario FILE: every cell (latency scenario x client variant) run with the
# servers alternating inside it; JSONL as it goes; the seed-style table (rows = latency
# scenario, columns = server x client variant); plots; -n overriding the file; config
# errors with FILE:LINE. The axes' real settings (delay, offloads) are tested in
# scenario_lab.sh.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/client_lib.bash"
need_cmd nginx gnuplot file
www_new
nginx_up
S=$T_TMP/s.conf
cat >"$S" <<CONF
# two servers, two rows, two client variants: 4 cells x 2 servers x 2 runs = 16 runs
servers = ( { name = "OVH"; url = "$NGINX/files/10Mio.dat"; },
            { name = "DegroupTest"; url = "$NGINX/files/1Mio.dat"; } );
runs = 2;
order = "alternate";
latency = ( { name = "natural ping"; delay = 0; }, { name = "again"; delay = "0ms"; } );
client_offload = ( { name = "as is"; }, { name = "still as is"; } );
CONF
"$DEBIT" --no-progress --scenario "$S" --jsonl "$T_TMP/s.jsonl" --plot "$T_TMP/p.png" >"$T_TMP/s.md" 2>"$T_TMP/s.err"
check_eq "scenario: exit 0" 0 $?
check_eq "markdown by default: seed-style header (columns = server x client variant)" \
  "| scenario | Srv OVH (as is) | Srv DegroupTest (as is) | Srv OVH (still as is) | Srv DegroupTest (still as is) |" \
  "$(grep -m1 '^| scenario |' "$T_TMP/s.md")"
check_match "row per latency scenario, in file order" \
  '^\| natural ping \| [0-9]+ \| [0-9]+ \| [0-9]+ \| [0-9]+ \|
\| again \| [0-9]+ \| [0-9]+ \| [0-9]+ \| [0-9]+ \|$' "$(grep -E '^\| (natural ping|again) \| [0-9]' "$T_TMP/s.md")"
check_eq "JSONL: 16 runs as they finished" 16 "$(wc -l <"$T_TMP/s.jsonl")"
check_eq "cells in order, alternating inside each" \
  "natural ping/as is:OVH,DegroupTest,OVH,DegroupTest natural ping/still as is:OVH,DegroupTest,OVH,DegroupTest again/as is:OVH,DegroupTest,OVH,DegroupTest again/still as is:OVH,DegroupTest,OVH,DegroupTest" \
  "$(jq -rs 'group_by(.scenario + "/" + .variant) | sort_by(.[0].seq) | map("\(.[0].scenario)/\(.[0].variant):" + (sort_by(.seq) | map(.server) | join(","))) | join(" ")' "$T_TMP/s.jsonl")"
check_eq "seq runs 1..16 across cells" "$(seq -s ' ' 16)" "$(jq -r '.seq' "$T_TMP/s.jsonl" | tr '\n' ' ' | sed 's/ $//')"
check_match "stderr announces each cell" 'cell \(again / still as is\)' "$(cat "$T_TMP/s.err")"
check_match "plot: a PNG" 'PNG image data, 1200 x 1000' "$(file "$T_TMP/p.png")"

# JSON output: cells and the markdown medians agree with the runs.
"$DEBIT" -q --scenario "$S" -n 1 --format json -o "$T_TMP/s.json" --plot "$T_TMP/p.svg"
check_eq "-n on the command line overrides the file's runs" 8 "$(jq '.runs | length' "$T_TMP/s.json")"
check_eq "JSON lists the 4 cells with their settings" "4 true" \
  "$(jq -r '"\(.scenario.cells | length) \([.scenario.cells[] | has("settings")] | all)"' "$T_TMP/s.json")"
check_eq "summary per cell and server: 8 rows" 8 "$(jq '.summary | length' "$T_TMP/s.json")"
check_eq "each cell compares DegroupTest to OVH" "DegroupTest DegroupTest DegroupTest DegroupTest" \
  "$(jq -r '[.summary[] | select(has("ratio")) | .server] | join(" ")' "$T_TMP/s.json")"
check_match "plot: an SVG" 'SVG' "$(file "$T_TMP/p.svg")"
check_match "plot: SVG has both panels' titles" 'Median of each download.*Throughput over time' "$(tr '\n' ' ' <"$T_TMP/p.svg")"

# Config errors: exit 2, FILE:LINE: setting: reason.
bad() { # NAME ERE CONFIG
  printf '%s\n' "$3" >"$T_TMP/bad.conf"
  "$DEBIT" --scenario "$T_TMP/bad.conf" >/dev/null 2>"$T_TMP/bad.err"
  local rc=$?
  if [ $rc -eq 2 ] && grep -Eq -- "$2" "$T_TMP/bad.err"; then t_ok "$1"; else t_fail "$1" "exit $rc: $(cat "$T_TMP/bad.err")"; fi
}
SRV="servers = ( { url = \"$NGINX/x\"; } );"
bad "unknown key" "bad.conf:2: colour: unknown setting" "$SRV
colour = \"blue\";"
bad "no servers" "bad.conf: servers: missing" "runs = 3;"
bad "delay without device" "bad.conf:2: latency\[0\]: device: missing" "$SRV
latency = ( { name = \"+10\"; delay = \"10ms\"; } );"
bad "bad delay" "bad.conf:2: latency\[0\].delay" "$SRV
latency = ( { name = \"+10\"; delay = \"ten\"; device = \"lo\"; } );"
bad "tso not a boolean" "bad.conf:2: client_offload\[0\].tso: expected true or false" "$SRV
client_offload = ( { name = \"off\"; device = \"lo\"; tso = \"off\"; } );"
bad "bad order: the same check as --order" "bad.conf:2: order: 'shuffle': expected alternate, sequential or random" "$SRV
order = \"shuffle\";"
bad "runs out of range: the same check as -n" "bad.conf:3: runs: '0': expected an integer from 1 to 100000" "$SRV

runs = 0;"
bad "bad offload variant: device name" "bad.conf:2: client_offload\[0\]\.device: 'eth0/1': an interface name has no" "$SRV
client_offload = ( { name = \"off\"; device = \"eth0/1\"; tso = false; } );"
bad "bad offload variant: unknown feature" "bad.conf:2: client_offload\[0\]\.lro: unknown setting" "$SRV
client_offload = ( { name = \"off\"; device = \"lo\"; lro = false; } );"
bad "bad delay device" "bad.conf:2: latency\[0\]\.device: '0123456789abcdef': interface name longer than 15" "$SRV
latency = ( { name = \"+10\"; delay = \"10ms\"; device = \"0123456789abcdef\"; } );"
bad "syntax error" "bad.conf:1: syntax" "servers = ( { url = ; } );"
bad "bad URL" "bad.conf:1: servers\[0\]: URL: 'ftp://x/'" "servers = ( { url = \"ftp://x/\"; } );"
# -t checks the file as fully as a run would, and says so before printing any plan.
printf '%s\n' "servers = ( { url = \"$NGINX/x\"; } );" "latency = ( { name = \"x\"; delay = \"1 parsec\"; device = \"lo\"; } );" >"$T_TMP/bad.conf"
"$DEBIT" -t --scenario "$T_TMP/bad.conf" >"$T_TMP/t.out" 2>"$T_TMP/t.err"
check_eq "-t on a bad delay: exit 2, no plan" "2 0" "$? $(wc -c <"$T_TMP/t.out")"
check_match "-t on a bad delay: FILE:LINE: setting" "^debit: --scenario: $T_TMP/bad\.conf:2: latency\[0\]\.delay: '1 parsec'" "$(cat "$T_TMP/t.err")"
# The file's settings, then the command line's, whatever the order of the options.
printf '%s\n' "servers = ( { url = \"$NGINX/x\"; } );" "runs = 4; pause = \"2s\"; stall = 3; stall_rate = \"2kB/s\"; max_time = 60;" >"$T_TMP/prec.conf"
check_match "command line over file over defaults" '^runs: 2 per server and cell, order sequential, pause 2 s, stall 9 s below 2000 B/s, max-time 60 s$' \
  "$("$DEBIT" --stall 9 -t --order sequential --scenario "$T_TMP/prec.conf" -n 2)"
check_match "the file's format default (markdown) yields to --format" '^\| server \|' \
  "$("$DEBIT" -q --scenario "$T_TMP/prec.conf" -n 1 --pause 0 --format markdown 2>/dev/null)"
# The shipped seed experiment: valid, checked with -t (which runs nothing: no traffic).
out=$("$DEBIT" -t --scenario "$DEBIT_TOP/etc/seed-experiment.conf")
check_eq "etc/seed-experiment.conf: -t exits 0" 0 $?
check_match "seed experiment: the seed's two URLs" 'server OVH: http://proof.ovh.net/files/1Gio.dat
server DegroupTest: http://ns6351274.ovh.net/ram/1GiB.dat' "$out"
check_match "seed experiment: 5 runs, alternate" 'runs: 5 per server and cell, order alternate' "$out"
check_match "seed experiment: +0/+10/+30 ms" 'latency natural ping: nothing added
latency ping \+10 ms: \+10 ms on eth0
latency ping \+30 ms: \+30 ms on eth0' "$out"
check_match "seed experiment: client TSO/GSO on and off" 'variant client TSO/GSO on: tso=on gso=on on eth0
variant client TSO/GSO off: tso=off gso=off on eth0' "$out"
check_match "seed experiment: 60 downloads" '^downloads: 60 \(6 cells x 2 servers x 5 runs\)$' "$out"
"$DEBIT" --scenario "$S" "$NGINX/files/1Mio.dat" >"$T_TMP/x.out" 2>"$T_TMP/x.err"
check_eq "--scenario with URLs: exit 2, nothing on stdout" "2 0" "$? $(wc -c <"$T_TMP/x.out")"
check_match "--scenario with URLs: says why" '^debit: --scenario: servers come from the scenario file, not the command line' \
  "$(cat "$T_TMP/x.err")"
t_done
