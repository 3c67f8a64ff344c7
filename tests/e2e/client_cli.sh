#!/usr/bin/env bash
# debit's command line as a user meets it: --help, --version, usage errors that name the
# option and exit 2 without touching the network, and the exit status of a run.
. "$(dirname "$0")/../lib/common.sh"

out=$("$DEBIT" --help); rc=$?
check_eq "--help exits 0" 0 $rc
check_match "--help: usage line" '^Usage: debit \[OPTIONS\] \[NAME=\]URL\.\.\.' "$out"
for o in --runs --order --seed --pause --max-bytes --stall --max-time --timeout --resolve --connect-to \
         --interface --local-address --user-agent --rcvbuf --offload --delay --delay-dev --format --output --jsonl \
         --plot --progress --no-progress --quiet --scenario --check; do
  check_match "--help documents $o" -- "$o" "$out"
done
check_match "--version" '^debit [0-9]+\.[0-9]+\.[0-9]+ \(libcurl/' "$("$DEBIT" --version)"

usage() { # NAME EXPECTED_STDERR_ERE ARGS...
  local name=$1 re=$2; shift 2
  "$DEBIT" "$@" >"$T_TMP/u.out" 2>"$T_TMP/u.err"
  local rc=$?
  if [ $rc -eq 2 ] && grep -Eq -- "$re" "$T_TMP/u.err" && [ ! -s "$T_TMP/u.out" ]; then t_ok "$name"
  else t_fail "$name" "exit $rc, stderr: $(cat "$T_TMP/u.err")"; fi
}
usage "no URL: exit 2" '^debit: URL: at least one URL is needed' 
usage "-n abc" "^debit: -n: 'abc': expected an integer" -n abc http://127.0.0.1:9/
usage "--runs=0" "^debit: --runs: '0'" --runs=0 http://127.0.0.1:9/
usage "--format xml" "^debit: --format: 'xml'" --format xml http://127.0.0.1:9/
usage "--max-bytes 12 parsecs" "^debit: --max-bytes: '12parsec'" --max-bytes 12parsec http://127.0.0.1:9/
usage "--stall missing argument" '^debit: --stall: missing argument' http://127.0.0.1:9/ --stall
usage "unknown option" '^debit: --frobnicate: unknown option' --frobnicate http://127.0.0.1:9/
usage "bad URL" "^debit: URL: 'gopher://x/': only http:// and https://" gopher://x/
usage "--resolve format" "^debit: --resolve: 'x': expected HOST:PORT:ADDR" --resolve x http://127.0.0.1:9/
usage "the same NAME twice" "^debit: URL: 'A=http://127\.0\.0\.1:9/b': this NAME is already used" A=http://127.0.0.1:9/a A=http://127.0.0.1:9/b
usage "-o in a missing folder: before any download" '^debit: --output: /nonexistent/dir/x\.json: No such file' -o /nonexistent/dir/x.json http://127.0.0.1:9/
usage "-o a folder" "^debit: --output: $T_TMP: Is a directory" -o "$T_TMP" http://127.0.0.1:9/
usage "--jsonl unwritable" '^debit: --jsonl: /nonexistent/dir/x.jsonl: No such file' --jsonl /nonexistent/dir/x.jsonl http://127.0.0.1:9/
# Every value is checked where it is parsed, so -t cannot say "configuration OK" to a value
# that would fail when applied.
usage "-t --offload eth0:tso=maybe" "^debit: --offload: 'eth0:tso=maybe': tso: 'maybe' is not on or off" -t --offload eth0:tso=maybe http://127.0.0.1:9/
usage "-t --offload with a reported-only feature" "^debit: --offload: 'eth0:lro=off': lro is reported only" -t --offload eth0:lro=off http://127.0.0.1:9/
usage "-t --delay-dev with a bad name" "^debit: --delay-dev: 'a/b': an interface name has no" -t --delay 10ms --delay-dev a/b http://127.0.0.1:9/
usage "-t --delay not a duration" "^debit: --delay: '10parsec':" -t --delay 10parsec --delay-dev lo http://127.0.0.1:9/
usage "-t --interface if!NAME too long" "^debit: --interface: 'if!0123456789abcdef': '0123456789abcdef': interface name longer" -t --interface 'if!0123456789abcdef' http://127.0.0.1:9/
usage "-t --user-agent with a line break" "^debit: --user-agent: 'a" -t --user-agent $'a\r\nX: 1' http://127.0.0.1:9/
usage "-t --order" "^debit: --order: 'zigzag': expected alternate, sequential or random" -t --order zigzag http://127.0.0.1:9/
usage "-t --seed without --order random" "^debit: --seed: only meaningful with --order random" -t --seed 3 http://127.0.0.1:9/
usage "-t URL scheme" "^debit: URL: 'ftp://x/': only http:// and https://" -t ftp://x/
out=$("$DEBIT" -t --offload lo:tso=off,gso=on --delay 10ms --delay-dev lo -n 2 --max-bytes 1MiB A=http://127.0.0.1:9/a http://127.0.0.1:9/b 2>&1); rc=$?
check_eq "-t with valid settings: exit 0" 0 $rc
check_eq "-t prints the plan from the parsed settings" "debit: configuration OK
server A: http://127.0.0.1:9/a
server 127.0.0.1: http://127.0.0.1:9/b
runs: 2 per server, order alternate, pause 0 s, max-bytes 1048576, max-time 600 s
offload: tso=off gso=on on lo
delay: +10 ms on lo
store: sqlite $XDG_DATA_HOME/debit/results.db (default)
downloads: 4 (1 cell x 2 servers x 2 runs)" "$out"
out=$("$DEBIT" -t -4 --timeout 5 --rcvbuf 1MiB -k -H 'X-A: 1' --user-agent 'ua/1' --resolve h.invalid:80:127.0.0.1 --upload 1MiB http://127.0.0.1:9/ 2>&1)
check_eq "-t shows how each connection is made, and an upload plan counts uploads" "connection: IPv4 only
connection: connect timeout 5 s
connection: receive buffer 1048576 bytes (SO_RCVBUF)
connection: resolve h.invalid:80:127.0.0.1
connection: TLS certificate not checked (-k)
header: User-Agent: ua/1
header: X-A: 1
connection: header lines not sent after a redirect to another host
uploads: 5 (1 cell x 1 server x 5 runs)" "$(printf '%s\n' "$out" | sed -n '/^connection:\|^header:\|^uploads:/p')"
usage "-H with a line break: refused, the value escaped in the message" "^debit: -H: 'X-A: a\\\\r\\\\nX-B: b': must not contain a line break$" -t -H $'X-A: a\r\nX-B: b' http://127.0.0.1:9/
usage "--plot in a missing folder: before any download" '^debit: --plot: /nonexistent/dir/x\.png: No such file' --plot /nonexistent/dir/x.png http://127.0.0.1:9/
usage "--stall-rate without --stall: said, as --seed without --order random" '^debit: --stall-rate: only meaningful with --stall SECONDS' -t --stall-rate 10kB/s http://127.0.0.1:9/
usage "a negative duration: said negative" "^debit: --pause: '-1': negative \(expected a duration" -t --pause -1 http://127.0.0.1:9/
usage "a negative size: said negative" "^debit: --max-bytes: '-1': negative \(expected a size" -t --max-bytes -1 http://127.0.0.1:9/
usage "an abbreviation several options share: said ambiguous, with them" '^debit: --max: ambiguous \(--max-bytes, --max-time\)$' -t --max 5 http://127.0.0.1:9/
usage "an unknown long option" '^debit: --bogus: unknown option \(see --help\)$' -t --bogus http://127.0.0.1:9/
# -t checks the files a run would write, as the run does, and creates none
usage "-t --jsonl in a missing folder" '^debit: --jsonl: /nonexistent/dir/x\.jsonl: No such file' -t --jsonl /nonexistent/dir/x.jsonl http://127.0.0.1:9/
usage "-t -o in a missing folder" '^debit: --output: /nonexistent/dir/x\.json: No such file' -t -o /nonexistent/dir/x.json http://127.0.0.1:9/
usage "-t --plot in a missing folder" '^debit: --plot: /nonexistent/dir/x\.svg: No such file' -t --plot /nonexistent/dir/x.svg http://127.0.0.1:9/
"$DEBIT" -t -o "$T_TMP/t-out.json" --jsonl "$T_TMP/t-out.jsonl" http://127.0.0.1:9/ >/dev/null 2>&1
check_eq "-t with writable -o and --jsonl: exit 0, neither file created" "0 0" "$? $(ls "$T_TMP"/t-out.* 2>/dev/null | wc -l)"

# A run that fails is exit 1, not 2; port 9 (discard) is closed on loopback here.
port=$(free_port)
"$DEBIT" -q -n 1 "http://127.0.0.1:$port/x" >"$T_TMP/r.out" 2>&1
check_eq "all runs failed: exit 1" 1 $?
check_match "failed run still gives a table" '^127\.0\.0\.1 +0 +1 ' "$(cat "$T_TMP/r.out")"
t_done
