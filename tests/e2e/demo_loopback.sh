#!/usr/bin/env bash
# `make demo` where the lab cannot run (DEMO_MODE=loopback, a smaller file): debitd with
# two listeners (cubic, bbr) and nginx with the same bytes, debit -n 5 alternating; the
# table has the three servers with 5 ok runs each, the servers' own reports, and nothing
# is left behind. (The lab demo is tests/e2e/lab_demo.sh.)
. "$(dirname "$0")/../lib/common.sh"
need_cmd nginx curl
before=$(ls -d /dev/shm/debit-demo.* 2>/dev/null | sort)
DEMO_MODE=loopback DEMO_SIZE=16Mio "$DEBIT_TOP/tools/demo" >"$T_TMP/out" 2>"$T_TMP/err"
rc=$?
out=$(cat "$T_TMP/out")
check_eq "loopback demo: exit 0" 0 "$rc"
check_match "announces the three servers and the shared checksum" \
  'debitd [0-9.]+ on 127\.0\.0\.1:[0-9]+ \(cubic\) and :[0-9]+ \(bbr\); nginx on :[0-9]+ with the same 16Mio \(sha256 [0-9a-f]{64}\)' "$out"
for s in debitd-cubic debitd-bbr nginx; do
  check_match "table: $s, 5 runs ok, 0 failed, a median in Mb/s" "^$s +5 +0 +[0-9]+ Mb/s" "$out"
done
check_match "alternation: run 1 of each before run 2 of any" \
  '\[1/15\] debitd-cubic run 1.*\[2/15\] debitd-bbr run 1.*\[3/15\] nginx run 1.*\[4/15\] debitd-cubic run 2' \
  "$(tr '\n' ' ' <"$T_TMP/err")"
check_match "the cubic listener reported cc=cubic" '^  debitd-cubic: offload .*; tcp cc=cubic ' "$out"
check_match "the bbr listener reported cc=bbr" '^  debitd-bbr: offload .*; tcp cc=bbr ' "$out"
check_nomatch "nginx reports nothing of itself" '^  nginx:' "$out"
check_eq "its tmpfs copy removed" "$before" "$(ls -d /dev/shm/debit-demo.* 2>/dev/null | sort)"
check_eq "no debitd or nginx of the demo left" "" "$(pgrep -f "$T_TMP|/tmp/debit-demo\." || true)"
t_done
