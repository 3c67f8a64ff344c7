#!/usr/bin/env bash
# The client against a hostile server (tests/e2e/client_fakesrv.py /hostile, /trickle):
#  - terminal control bytes in the reason phrase and X-Debit-* values (ESC sequences, BEL,
#    CR, C1 in UTF-8 and 8-bit, invalid UTF-8) never reach stdout or stderr raw, in the
#    table, Markdown and CSV outputs and the per-run lines; they are shown escaped (\x1b),
#    and the JSON output keeps them exactly (\u001b);
#  - --stall with --stall-rate fails a download that trickles above "nothing received";
#  - --max-time has a default (600 s), shown by -t; --max-time 0 lifts it.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/client_lib.bash"
need_cmd python3
fake_up

# The raw bytes the fake server sends, none of which may reach a terminal.
raw_count() { LC_ALL=C grep -c $'[\x1b\x07\r\x9b\xff]' "$1"; }

# --- the reason phrase of a failed run: stderr escaped, JSON exact ----------------------
"$DEBIT" -n 1 --no-progress "$FAKE/hostile/500" >"$T_TMP/h5.out" 2>"$T_TMP/h5.err"
check_eq "hostile 500: exit 1 (the run failed)" 1 $?
check_eq "hostile 500: no raw ESC/BEL/CR/C1 on stderr" 0 "$(raw_count "$T_TMP/h5.err")"
check_eq "hostile 500: no raw control bytes on stdout" 0 "$(raw_count "$T_TMP/h5.out")"
check_match "hostile 500: the reason is on stderr, escaped" \
  'FAILED: HTTP 500 \\x1b\[31mOWNED\\x07\\rFake OK \\x1b\]0;title\\x07$' "$(cat "$T_TMP/h5.err")"
"$DEBIT" -q -n 1 --format json "$FAKE/hostile/500" >"$T_TMP/h5.json"
check_eq "hostile 500: JSON keeps the reason exactly" \
  '"HTTP 500 \u001b[31mOWNED\u0007\rFake OK \u001b]0;title\u0007"' "$(jq -c '.runs[0].error' "$T_TMP/h5.json")"

# --- X-Debit-* values of a successful run: every text format -----------------------------
for fmt in table markdown csv; do
  "$DEBIT" -n 1 --no-progress --format $fmt "$FAKE/hostile/200" >"$T_TMP/h.$fmt" 2>"$T_TMP/h.$fmt.err"
  check_eq "hostile headers, --format $fmt: exit 0" 0 $?
  check_eq "hostile headers, --format $fmt: no raw control bytes on stdout" 0 "$(raw_count "$T_TMP/h.$fmt")"
  check_eq "hostile headers, --format $fmt: none on stderr" 0 "$(raw_count "$T_TMP/h.$fmt.err")"
done
check_match "table: X-Debit-Tcp shown, escaped" \
  'tcp cc=cubic\\rHIDDEN \\x1b\]52;c;ZWNobw==\\x07$' "$(cat "$T_TMP/h.table")"
check_match "markdown: X-Debit-Tcp shown, escaped" \
  '^- 127\.0\.0\.1: .*tcp cc=cubic\\rHIDDEN \\x1b\]52;c;ZWNobw==\\x07$' "$(cat "$T_TMP/h.markdown")"
# Not UTF-8 (raw 0x9b, 0xff): jansson cannot hold it, so JSON keeps the escaped text, and
# the table escapes that text's backslashes once more.
check_match "table: X-Debit-Offload (invalid UTF-8) shown" \
  'offload tso=off\\\\x1b\[2J\\\\x1b\[H gso=\\\\x9b31m on \\\\xc2\\\\x9b1m \\\\xff; ' "$(cat "$T_TMP/h.table")"
"$DEBIT" -q -n 1 --format json "$FAKE/hostile/200" >"$T_TMP/h.json"
check_eq "JSON: X-Debit-Tcp exactly as sent" '"cc=cubic\rHIDDEN \u001b]52;c;ZWNobw==\u0007"' \
  "$(jq -c '.runs[0].server_config["X-Debit-Tcp"]' "$T_TMP/h.json")"
check_eq "JSON: X-Debit-Offload (not UTF-8) kept escaped, not dropped" \
  '"tso=off\\x1b[2J\\x1b[H gso=\\x9b31m on \\xc2\\x9b1m \\xff"' \
  "$(jq -c '.runs[0].server_config["X-Debit-Offload"]' "$T_TMP/h.json")"

# --- names from the command line are escaped too (a scenario file may come from elsewhere)
"$DEBIT" -n 1 --no-progress $'ev\x1b[1mil='"$FAKE/hostile/200" >"$T_TMP/n.out" 2>"$T_TMP/n.err"
check_eq "a server NAME with ESC: not raw on stdout or stderr" "0 0" \
  "$(raw_count "$T_TMP/n.out") $(raw_count "$T_TMP/n.err")"
check_match "a server NAME with ESC: escaped in the table" '^ev\\x1b\[1mil +1 +0 ' "$(cat "$T_TMP/n.out")"

# --- --stall-rate: a trickle of 2 kB/s after 64 KiB ------------------------------------
t0=$(date +%s%N)
"$DEBIT" -q -n 1 --stall 1 --stall-rate 10kB/s --format json "$FAKE/trickle/10000000?rate=2000" >"$T_TMP/tr.json"
rc=$? ms=$((($(date +%s%N) - t0) / 1000000))
check_eq "trickle below --stall-rate: exit 1, kind stall" "1 false stall" \
  "$rc $(jqr '.runs[0] | "\(.ok) \(.error_kind)"' "$T_TMP/tr.json")"
check_match "trickle: the reason gives the window and the rate" \
  '^stall: [0-9]+ bytes in 1\.[0-9] s, below --stall-rate 10000 B/s \(after [0-9]+ bytes\)$' "$(jqr '.runs[0].error' "$T_TMP/tr.json")"
t_diag "trickle caught after ${ms} ms (window 1 s; bound checked: < 4000 ms)"
check_cmp "trickle: caught within about the window, not the trickle's 60 s" "$ms" '<' 4000
# The same trickle is above the default minimum (1 kB/s): only --max-time ends it.
"$DEBIT" -q -n 1 --stall 1 --max-time 2 --format json "$FAKE/trickle/10000000?rate=2000" >"$T_TMP/tr2.json"
check_eq "trickle above the default --stall-rate: not a stall, a --max-time timeout" "false timeout" \
  "$(jqr '.runs[0] | "\(.ok) \(.error_kind)"' "$T_TMP/tr2.json")"
check_match "--max-time: the reason names the limit" '^timeout: longer than --max-time 2 s: ' \
  "$(jqr '.runs[0].error' "$T_TMP/tr2.json")"
# --stall-rate 0: only "nothing at all" counts, as before (the trickle never stops).
"$DEBIT" -q -n 1 --stall 1 --stall-rate 0 --max-time 2 --format json "$FAKE/trickle/10000000?rate=500" >"$T_TMP/tr3.json"
check_eq "--stall-rate 0: a 500 B/s trickle is no stall" "false timeout" \
  "$(jqr '.runs[0] | "\(.ok) \(.error_kind)"' "$T_TMP/tr3.json")"
"$DEBIT" -q -n 1 --stall 1 --max-time 3 --format json "$FAKE/trickle/10000000?rate=500" >"$T_TMP/tr4.json"
check_eq "default --stall-rate (1 kB/s): a 500 B/s trickle is a stall" "false stall" \
  "$(jqr '.runs[0] | "\(.ok) \(.error_kind)"' "$T_TMP/tr4.json")"
# A steady download well above the minimum, with a short window: never flagged.
"$DEBIT" -q -n 1 --stall 0.5 --stall-rate 100kB/s --format json "$FAKE/slow/2000000?rate=1000000" >"$T_TMP/ok.json"
check_eq "1 MB/s paced download with --stall 0.5 --stall-rate 100kB/s: ok" "0 true" \
  "$? $(jqr '.runs[0].ok' "$T_TMP/ok.json")"

# --- the default --max-time, and its off switch ---------------------------------------
check_match "-t: the default max-time is shown" ', max-time 600 s$' \
  "$("$DEBIT" -t http://127.0.0.1:9/ | grep '^runs:')"
check_match "-t --max-time 0: no limit" ', no max-time$' "$("$DEBIT" -t --max-time 0 http://127.0.0.1:9/ | grep '^runs:')"
check_match "-t --stall: the minimum rate is shown" ', stall 2 s below 1000 B/s,' \
  "$("$DEBIT" -t --stall 2 http://127.0.0.1:9/ | grep '^runs:')"
usage_out=$("$DEBIT" -t --stall-rate 1GiB http://127.0.0.1:9/ 2>&1)
check_eq "--stall-rate with a size, not a rate: exit 2" "2" "$("$DEBIT" -t --stall-rate 1GiB http://127.0.0.1:9/ >/dev/null 2>&1; echo $?)"
check_match "--stall-rate bad value: the option and the value" "^debit: --stall-rate: '1GiB': " "$usage_out"
t_done
