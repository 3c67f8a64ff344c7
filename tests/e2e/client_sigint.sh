#!/usr/bin/env bash
# Ctrl-C: the JSONL journal keeps every finished run (appended and fsynced as each run
# ends), debit prints the summary of the finished runs and exits 130, also when the
# signal arrives in the middle of a download (which is discarded, not counted).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/client_lib.bash"
need_cmd nginx python3
nginx_up   # and its tmpfs web root
fake_up
J=$T_TMP/runs.jsonl

# Existing content is kept: the journal is appended to.
echo '{"previous":"line"}' >"$J"
"$DEBIT" --min-bytes 0 -n 20 --pause 0.3 --no-progress --jsonl "$J" --format json -o "$T_TMP/int.json" \
  A="$NGINX/files/1Mio.dat" B="$FAKE/slow/400000?rate=4000000" 2>"$T_TMP/int.err" &
pid=$!
t_track $pid
for _ in $(seq 100); do [ "$(wc -l <"$J")" -ge 4 ] && break; sleep 0.1; done
kill -INT $pid
for _ in $(seq 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
wait $pid
check_eq "SIGINT: exit 130" 130 $?
check_eq "journal: the earlier line is kept" '{"previous":"line"}' "$(head -1 "$J")"
n=$(($(wc -l <"$J") - 1))
check_cmp "journal: at least 3 finished runs" "$n" '>=' 3
check_cmp "journal: not all 40 runs" "$n" '<' 40
check_eq "journal: every line is one complete JSON run" "$n" "$(tail -n +2 "$J" | jq -c 'select(.ok == true and (.bytes > 0) and has("series"))' | wc -l)"
check_eq "output: same runs as the journal, marked interrupted" "$n true" "$(jqr '"\(.runs | length) \(.interrupted)"' "$T_TMP/int.json")"
check_eq "output: the summary counts the finished runs" "$n" "$(jqr '[.summary[].runs_ok] | add' "$T_TMP/int.json")"
check_eq "journal and output agree run by run" \
  "$(tail -n +2 "$J" | jq -r '"\(.seq) \(.server) \(.bytes)"')" "$(jqr '.runs[] | "\(.seq) \(.server) \(.bytes)"' "$T_TMP/int.json")"
check_match "stderr: says it was interrupted" "interrupted: summary of the $n finished runs" "$(cat "$T_TMP/int.err")"

# Ctrl-C in the middle of a 10 s download: stops at once; the partial run is not counted.
rm -f "$J"
"$DEBIT" -n 3 --no-progress --jsonl "$J" --format table "$FAKE/slow/50000000?rate=5000000" >"$T_TMP/mid.out" 2>"$T_TMP/mid.err" &
pid=$!
t_track $pid
sleep 1
t0=$(date +%s%N)
kill -INT $pid
for _ in $(seq 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
wait $pid
check_eq "SIGINT mid-download: exit 130" 130 $?
check_cmp "SIGINT mid-download: stops within 2 s" $((($(date +%s%N) - t0) / 1000000)) '<' 2000
check_eq "SIGINT mid-download: journal has no partial run" 0 "$(cat "$J" 2>/dev/null | wc -l)"
check_match "SIGINT mid-download: table printed with 0 ok" '127\.0\.0\.1 +0 +0 ' "$(cat "$T_TMP/mid.out")"

# Ctrl-C during a long --pause: stops at once, the finished run is kept
rm -f "$J"
"$DEBIT" -n 5 --pause 30 --no-progress --jsonl "$J" --format csv "$NGINX/files/1Mio.dat" >"$T_TMP/pause.out" 2>/dev/null &
pid=$!
t_track $pid
wait_for 100 test -s "$J"
t0=$(date +%s%N)
stop_pid $pid INT
check_eq "SIGINT during --pause: exit 130, 1 run in the journal and in the output" "130 1 1" \
  "$STOP_RC $(wc -l <"$J") $(tail -1 "$T_TMP/pause.out" | cut -d, -f5)"
check_cmp "SIGINT during --pause 30: stops within 2 s" $((($(date +%s%N) - t0) / 1000000)) '<' 2000

# SIGTERM: the same, exit 143 (128 + 15)
rm -f "$J"
"$DEBIT" --min-bytes 0 -n 20 --pause 0.3 --no-progress --jsonl "$J" --format json -o "$T_TMP/term.json" \
  A="$NGINX/files/1Mio.dat" 2>/dev/null &
pid=$!
t_track $pid
wait_for 100 eval '[ "$(cat "$J" 2>/dev/null | wc -l)" -ge 2 ]'
stop_pid $pid TERM
check_eq "SIGTERM: exit 143" 143 "$STOP_RC"
check_eq "SIGTERM: output marked interrupted, with the journal's runs" "true $(wc -l <"$J")" \
  "$(jqr '"\(.interrupted) \(.runs | length)"' "$T_TMP/term.json")"

# --jsonl is fsynced once per finished run (seen in the system calls)
if command -v strace >/dev/null; then
  rm -f "$J"
  # LeakSanitizer cannot run under ptrace (check-asan builds): leaks are checked elsewhere.
  # --db none: the results store's own commits (docs/store.md) fsync too.
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 strace -f -qq -e trace=fsync,fdatasync \
    -o "$T_TMP/strace" "$DEBIT" -q -n 3 --db none --jsonl "$J" --format json "$NGINX/files/1Mio.dat" >/dev/null
  jfd=$(grep -c 'fsync\|fdatasync' "$T_TMP/strace")
  check_eq "--jsonl: one fsync per run (3 runs, 3 lines)" "3 3" "$jfd $(wc -l <"$J")"
else
  t_skip "--jsonl fsync" "needs strace"
fi

# --progress forces the live line even without a TTY: run i/N, server, %, rate, ETA,
# rewritten in place and erased before the per-run line.
"$DEBIT" -n 1 --progress --format json "S=$FAKE/slow/3000000?rate=3000000" >/dev/null 2>"$T_TMP/p.err"
check_match "progress line: run, server, percent, rate, ETA" $'\r\e\\[K\\[run 1/1\\] S +[0-9]+% [0-9.]+ Mb/s  ETA [0-9]+s' "$(cat "$T_TMP/p.err")"
check_match "progress line erased before the run's line" $'\r\e\\[Kdebit: \\[1/1\\] S run 1: ' "$(cat "$T_TMP/p.err")"
"$DEBIT" --min-bytes 0 -n 1 --format json "S=$FAKE/slow/1000000?rate=3000000" >/dev/null 2>"$T_TMP/np.err"
check_nomatch "no progress line when stderr is not a TTY" $'\r' "$(cat "$T_TMP/np.err")"
# On a terminal (a pty from script(1)) the line is on by default, and -q turns it off.
if command -v script >/dev/null; then
  script -qec "'$DEBIT' -n 1 --format json 'S=$FAKE/slow/2000000?rate=2000000' >/dev/null" /dev/null >"$T_TMP/tty.out" 2>&1
  check_match "TTY: progress line by default" $'\r\e\\[K\\[run 1/1\\] S +[0-9]+% ' "$(cat "$T_TMP/tty.out")"
  script -qec "'$DEBIT' -q -n 1 --format json 'S=$FAKE/slow/2000000?rate=2000000' >/dev/null" /dev/null >"$T_TMP/ttyq.out" 2>&1
  check_eq "TTY with -q: nothing at all on the terminal" "" "$(tr -d '\r\n' <"$T_TMP/ttyq.out")"
else
  t_skip "progress on a TTY" "needs script(1)"
fi
t_done
