#!/usr/bin/env bash
# The benchmarks' connection_memory knobs work (docs/performance.md, "Connection memory"):
# bench/many.sh CONN_MEMORY= and PEER=debitd PEER_CONN_MEMORY= start debitd with those pools
# (as each debitd's /status reports them, printed by the benchmark), and bench/upload.sh
# measures a listener per pool and nginx. Tiny runs (1 s, 50 connections, 8 MiB uploads):
# the figures are not checked, only that every server was measured and nothing failed.
. "$(dirname "$0")/../lib/common.sh"
need_cmd wrk nginx curl jq sha256sum
export DEBIT_BUILD DEBIT_TOP

out=$(CONN_MEMORY=8KiB REPS=1 DURATION=1s CONNS=50 PAR=2 bash "$DEBIT_TOP/bench/many.sh" 2>&1); rc=$?
check_eq "many.sh CONN_MEMORY=8KiB: exit 0" 0 "$rc"
check_match "... says so in its first line" "connection_memory 8KiB; peer nginx" "$(grep -m1 '^machine:' <<<"$out")"
check_match "... and the pool debitd reports is 8 KiB" "^connection_memory: debitd 8192 bytes$" "$out"
check_match "... both servers measured on 4 KiB" "^4KiB +ratio debitd/nginx requests/s [0-9.]+ " "$out"
check_match "... no socket error, no non-2xx" "wrk socket errors \+ non-2xx, all runs: 0 " "$out"

out=$(PEER=debitd PEER_CONN_MEMORY=16KiB REPS=1 DURATION=1s CONNS=50 PAR=2 bash "$DEBIT_TOP/bench/many.sh" 2>&1); rc=$?
check_eq "many.sh PEER=debitd PEER_CONN_MEMORY=16KiB: exit 0" 0 "$rc"
check_match "... the default pool against 16 KiB" "^connection_memory: debitd 32768 bytes, debitd#2 16384 bytes$" "$out"
out=$(PEER_CONN_MEMORY=16KiB bash "$DEBIT_TOP/bench/many.sh" 2>&1); rc=$?
check_eq "PEER_CONN_MEMORY without PEER=debitd: refused (exit 2)" "2 PEER_CONN_MEMORY needs PEER=debitd" "$rc $out"

out=$(SIZE=8MiB REPS=1 POOLS="8KiB 32KiB" bash "$DEBIT_TOP/bench/upload.sh" 2>&1); rc=$?
check_eq "upload.sh: exit 0" 0 "$rc"
check_eq "... a row per pool and nginx" "debitd@8KiB debitd@32KiB nginx" \
  "$(awk '$1 ~ /^(debitd@|nginx)/ && $2 ~ /^[0-9.]+$/ {printf "%s%s", sep, $1; sep = " "}' <<<"$out")"
check_match "... and the ratio against the default pool" "^debitd@8KiB +against debitd@32KiB: upload rate [0-9.]+ x, server CPU per GiB [0-9.]+ x$" "$out"
out=$(SIZE=1GB bash "$DEBIT_TOP/bench/upload.sh" 2>&1); rc=$?
check_eq "upload.sh SIZE not in binary units: exit 2" 2 "$rc"
check_match "... saying what it takes" "SIZE: a whole number of KiB, MiB or GiB" "$out"
t_done
