#!/usr/bin/env bash
# debit for scripts: -w/--write-out (one line per server, values equal to the JSON
# summary's, escapes, once-only formats, unknown variables refused by -t with exit 2),
# --version as curl -V (libcurl's version, protocols, features), and a broken stdout pipe
# (`| head -1`, a reader gone before the report) is not a failure: no message, the exit
# status the measurement had.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/client_lib.bash"
need_cmd nginx python3
www_new
nginx_up
A=$NGINX/files/1Mio.dat
refused=$(free_port)
DEAD=http://127.0.0.1:$refused/x

# --- --write-out -------------------------------------------------------------------------
"$DEBIT" -q -n 3 --format json -o "$T_TMP/w.json" \
  -w '%{server} %{runs_ok}/%{runs_failed} %{median_mbps} %{ratio}\n' A="$A" B="$NGINX/files/10Mio.dat" >"$T_TMP/w.out"
check_eq "-w: exit 0" 0 $?
check_eq "-w: one line per server, nothing else on stdout" 2 "$(wc -l <"$T_TMP/w.out")"
got=$(awk '{ printf "%s %s %s %s\n", $1, $2, $3 + 0, ($4 == "-" ? "-" : sprintf("%.6f", $4)) }' "$T_TMP/w.out")
check_match "-w: A is the reference (ratio -), B has a ratio" '^A 3/0 [0-9.]+ -
B 3/0 [0-9.]+ [0-9]+\.[0-9]{6}$' "$got"
check_eq "-w: %{median_mbps} is the JSON summary's median (to its 3 decimals)" "A ok B ok" \
  "$(paste -d' ' <(jq -r '.summary[] | "\(.server) \(.median_mbps)"' "$T_TMP/w.json") "$T_TMP/w.out" |
     awk '{ d = $2 - $5; printf "%s%s %s", (NR > 1 ? " " : ""), $1, ($1 == $3 && d < 0.0005 && d > -0.0005) ? "ok" : "bad:" $0 }')"
check_eq "-w with -o: the report went to the file, 6 runs" 6 "$(jq '.runs | length' "$T_TMP/w.json")"

out=$("$DEBIT" -q -n 1 -w 'runs=%{runs_per_server}\torder=%{order} 100%%\n' A="$A" B="$A")
check_eq "-w without a per-server variable: printed once; \\t, %% escapes" "$(printf 'runs=1\torder=alternate 100%%')" "$out"

out=$("$DEBIT" -q -n 2 -w '%{server} %{runs_ok} %{runs_failed} %{median_mbps} %{total_runs_failed}\n' A="$A" dead="$DEAD")
check_eq "-w with failed runs: exit 1" 1 $?
check_match "-w: the dead server's line says 0 ok, 2 failed, median -" '^dead 0 2 - 2$' "$out"

"$DEBIT" -t -w '%{median}\n' A="$A" >"$T_TMP/t.out" 2>"$T_TMP/t.err"
check_eq "-t -w with an unknown variable: exit 2, nothing on stdout" "2 0" "$? $(wc -c <"$T_TMP/t.out")"
check_match "... and the error names it" "^debit: -w: '%\{median\}': unknown variable \(known: server url .*median_mbps" "$(cat "$T_TMP/t.err")"
"$DEBIT" --write-out 'x\q' "$A" >/dev/null 2>"$T_TMP/t.err"
check_eq "--write-out with a bad escape: exit 2" 2 $?
check_match "... named as spelled" "^debit: --write-out: '\\\\q': unknown escape" "$(cat "$T_TMP/t.err")"
check_match "-t prints the write-out format" '^write-out: %\{server\}$' "$("$DEBIT" -t -w '%{server}' "$A")"

# --- --version -----------------------------------------------------------------------------
v=$("$DEBIT" --version)
check_eq "--version: exit 0" 0 $?
curl_v=$(curl-config --version 2>/dev/null | awk '{print $2}')
[ -n "$curl_v" ] || curl_v=$(curl -V | awk 'NR==1{print $2}')
check_match "--version: debit's version and libcurl's" "^debit [0-9.]+ \(libcurl/$curl_v " "$v"
check_match "--version: a libcurl line" "^libcurl $curl_v" "$v"
check_match "--version: protocols, http and https among them" '^Protocols:.* http( .*)? https( |$)' "$v"
check_match "--version: features as curl -V spells them (IPv6, Largefile)" '^Features:.* IPv6 .*Largefile' "$v"
missing=$(for p in $(curl -V | sed -n 's/^Protocols: //p'); do
  printf '%s\n' "$v" | grep -q "^Protocols:.* $p\( \|$\)" || echo "$p"; done)
check_eq "--version: every protocol curl -V lists (same libcurl; curl folds the rtmp variants)" "" "$missing"

# --- a broken pipe --------------------------------------------------------------------------
# A reader that is gone before the report is written (deterministic: the pipe's read end
# is closed before debit starts).
closed_pipe() { # ARGS... : run debit with stdout on a pipe nobody reads; prints "rc stderr-bytes"
  python3 - "$DEBIT" "$@" <<'PY'
import os, subprocess, sys
r, w = os.pipe()
os.close(r)
p = subprocess.run(sys.argv[1:], stdout=w, stderr=subprocess.PIPE)
sys.stderr.buffer.write(p.stderr)
print(p.returncode, len(p.stderr))
PY
}
check_eq "closed stdout, every run ok: exit 0, nothing said" "0 0" "$(closed_pipe -q -n 1 A="$A" 2>"$T_TMP/p.err")"
check_eq "closed stdout, --format json: exit 0, nothing said" "0 0" "$(closed_pipe -q -n 1 --format json A="$A" 2>>"$T_TMP/p.err")"
check_eq "closed stdout, -w: exit 0, nothing said" "0 0" "$(closed_pipe -q -n 1 -w '%{server}\n' A="$A" 2>>"$T_TMP/p.err")"
# -q still says why a run failed (issue 12), and nothing about the closed pipe.
check_eq "closed stdout, a failed run: exit 1 (the measurement's)" "1" \
  "$(closed_pipe -q -n 1 A="$A" dead="$DEAD" 2>"$T_TMP/pf.err" | cut -d' ' -f1)"
check_eq "... stderr: only the failed run's line" "debit: [2/2] dead run 1: FAILED: connect" \
  "$(sed 's/: connect.*/: connect/' "$T_TMP/pf.err")"
cat "$T_TMP/pf.err" >>"$T_TMP/p.err"
check_nomatch "no 'Broken pipe' anywhere" 'Broken pipe|--output' "$(cat "$T_TMP/p.err")"
# The issue's case: | head -1 on a report larger than the pipe's buffer (64 KiB): 30 runs
# of JSON (~3 KiB each) fill it, head has gone by the time debit writes the rest.
"$DEBIT" -q -n 30 --format json A="$A" 2>"$T_TMP/h.err" | head -1 >"$T_TMP/h.out"
st=("${PIPESTATUS[@]}")
check_eq "| head -1 on 30 runs of JSON: debit exits 0, head printed '{'" "0 {" "${st[0]} $(cat "$T_TMP/h.out")"
check_eq "| head -1: nothing on stderr" "" "$(cat "$T_TMP/h.err")"
# Not EPIPE: a full disk is still an error (exit 1, said).
if [ -w /dev/full ]; then
  "$DEBIT" -q -n 1 A="$A" >/dev/full 2>"$T_TMP/full.err"
  check_eq "stdout on /dev/full: exit 1" 1 $?
  check_match "... with the reason" '^debit: stdout: No space left on device' "$(cat "$T_TMP/full.err")"
else
  t_skip "stdout on /dev/full" "no writable /dev/full"
fi
t_done
