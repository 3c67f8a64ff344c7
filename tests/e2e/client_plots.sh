#!/usr/bin/env bash
# Issue 31, --plot's pictures, read back from their SVG text: a server whose runs all
# failed is marked ("0/3 ok", a cross in the key), never a silent key entry; the time
# plot's key lists only the lines it draws; both titles carry n, the file size and the
# date; many bars get standing value labels rather than labels over each other; on
# loopback the RTT picture is in µs and lists no predicted curve it cannot draw. The PNG
# twins are checked as valid pictures (lab_plotcheck.py).
. "$(dirname "$0")/../lib/common.sh"
. "$DEBIT_TOP/tests/e2e/client_lib.bash"
need_cmd python3 gnuplot
fake_up
ok=$FAKE/norange/1100000
texts() { grep -o '<text>[^<]*</text>' "$1" | sed 's/<[^>]*>//g'; }

"$DEBIT" -q -n 3 --plot "$T_TMP/p.svg" A="$ok" C="$FAKE/code/500" >/dev/null 2>&1
check_eq "one server failing every run: exit 1" 1 $?
t=$(texts "$T_TMP/p.svg")
check_match "the failed server's key entry says 0/3 ok" '^C \(0/3 ok\)$' "$t"
check_match "its place among the bars says 0/3 ok" '^0/3 ok$' "$t"
check_nomatch "no bare key entry for it (the time plot draws no line for it)" '^C$' "$t"
check_match "the time plot's key lists the line it draws" '^A$' "$t"
# the key plot holds the entries and nothing else (no placeholder plot beside them)
if out=$(python3 "$DEBIT_TOP/tests/e2e/lab_plotcheck.py" svg "$T_TMP/p.svg" --key A --lines 1 2>&1); then
  t_ok "the time plot's key plot: exactly A, in the style of the one line drawn"
else t_fail "the time plot's key plot: exactly A, in the style of the one line drawn" "$out"; fi
day=$(date -u +%Y-%m-%d)
check_match "the title carries n, the file size and the date" "^3 runs per server, file 1\.05 MiB, $day [0-9]{2}:[0-9]{2} UTC$" "$t"
rt=$(texts "$T_TMP/p-rtt.svg")
check_match "RTT picture: the same line in its title" "^3 runs per server, file 1\.05 MiB, $day" "$rt"
check_match "RTT picture: the failed server marked there too" '^C \(0/3 ok\)$' "$rt"
check_match "RTT picture on loopback: the axis in µs" '^RTT \(µs' "$rt"
check_nomatch "RTT picture on loopback: no key entry for a curve above the scale" 'predicted' "$rt"

# twelve bars in one group: their values stand (rotated), so that they cannot overlap
args=(); for i in $(seq 1 12); do args+=("s$i=$ok"); done
"$DEBIT" -q -n 1 --plot "$T_TMP/m.svg" "${args[@]}" >/dev/null 2>&1
check_eq "12 servers: exit 0" 0 $?
rot=$(grep -c 'rotate(-90)' "$T_TMP/m.svg")
check_eq "12 bars: each value label stands (rotated)" 12 "$rot"
"$DEBIT" -q -n 1 --plot "$T_TMP/two.svg" a="$ok" b="$ok" >/dev/null 2>&1
check_eq "2 bars: the values lie flat" 0 "$(grep -c 'rotate(-90)' "$T_TMP/two.svg")"

"$DEBIT" -q -n 3 --plot "$T_TMP/p.png" A="$ok" C="$FAKE/code/500" >/dev/null 2>&1
for f in p.png p-rtt.png; do
  if out=$(python3 "$DEBIT_TOP/tests/e2e/lab_plotcheck.py" png "$T_TMP/$f" 1200 "$([ $f = p.png ] && echo 1000 || echo 700)" 2>&1); then
    t_ok "$f: a valid PNG of its size"; else t_fail "$f: a valid PNG of its size" "$out"; fi
done
t_done
