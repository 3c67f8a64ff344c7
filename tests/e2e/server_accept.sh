#!/usr/bin/env bash
# debitd's acceptor (server/run/acceptor.h): one thread accepts every connection and spreads
# them evenly over the listener's workers (libmicrohttpd's epoll sets); at
# limits.connections it pauses, the next connection waiting in the backlog until one
# closes (then served, not refused); per_ip refusals are counted; /status
# listeners[].accept says all of it. (A graceful stop, the acceptor's stop, refuses new
# connections at once: tests/e2e/server_stop.sh.)
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
. "$(dirname "$0")/../../bench/lib.bash" # epoll_sizes
need_cmd python3 jq curl prlimit

# hold N PORT [ADDR]: N idle TCP connections to 127.0.0.1:PORT (from ADDR), opened at once
# (non-blocking connects, as a benchmark's start), held at most 60 s until release
hold() {
  rm -f "$T_TMP/held"
  python3 - "$1" "$2" "${3:-127.0.0.1}" "$T_TMP/held" <<'PY' &
import socket, sys, time, select
n, port, src, flag = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
ss = []
for _ in range(n):
    s = socket.socket()
    s.bind((src, 0))
    s.setblocking(False)
    s.connect_ex(("127.0.0.1", port))
    ss.append(s)
select.select([], ss, [], 10)
open(flag, "w").close()
time.sleep(60)
PY
  HOLD_PID=$!
  t_track $HOLD_PID
  wait_for 100 test -e "$T_TMP/held"
}
release() { stop_pid "$HOLD_PID" KILL; }
accept_json() { curl -s --max-time 5 "$BASE/status" | jq -c '.listeners[0].accept'; }
accept_key() { curl -s --max-time 5 "$BASE/status" | jq -r ".listeners[0].accept.$1"; }
# metric NAME [ADDR]: /metrics's sample NAME (with its labels) for listener 127.0.0.1:PORT,
# read from ADDR (default 127.0.0.1)
metric() {
  curl -s --max-time 5 --interface "${2:-127.0.0.1}" "$BASE/metrics" |
    awk -v k="$1" '$1 == k {print $2; f=1} END {if (!f) print "absent"}'
}
# per worker: its epoll set's descriptors now minus at start (its own: the channel)
worker_conns() {
  local now=($(epoll_sizes "$DEBITD_PID" | tr / ' ')) i out=()
  for i in "${!now[@]}"; do out+=($((now[i] - BASE_SETS[i]))); done
  echo "${out[*]}"
}

# --- an even split: 2 and 3 workers, 60 connections opened at once
for w in 2 3; do
  srv_conf "$T_TMP/w$w.conf" "threads = $w;" 'files = ( { path = "/f.dat"; size = 1000; } );' \
    'limits = { per_ip = 0; idle_timeout = 30; };'
  srv_start "$T_TMP/w$w.conf"
  BASE_SETS=($(epoll_sizes "$DEBITD_PID" | tr / ' '))
  check_eq "$w workers: one epoll set each (libmicrohttpd's, nothing else)" "$w" "${#BASE_SETS[@]}"
  check_eq "$w workers: /status accept.workers" "$w" "$(accept_key workers)"
  hold 60 "$PORT"
  # open: the held ones and this /status request's own connection
  wait_for 100 eval '[ "$(accept_key open)" = 61 ]'
  a=$(accept_json)
  t_diag "$w workers: $a"
  check_eq "$w workers: 60 held connections open (+ the /status request's), no refusal, no error" \
    '61 0 0' "$(jq -r '"\(.open) \(.refused) \(.errors)"' <<<"$a")"
  check_cmp "$w workers: all accepted (the held ones and every /status request)" "$(jq .accepted <<<"$a")" ">=" 61
  # the /status requests' connections have closed: only the held ones in the sets
  wait_for 50 eval '[ "$(worker_conns | tr " " "\n" | awk "{s+=\$1} END{print s}")" = 60 ]'
  split=$(worker_conns)
  t_diag "$w workers: connections per worker: $split"
  sum=0 max=0 min=1000
  for c in $split; do sum=$((sum + c)); [ "$c" -gt "$max" ] && max=$c; [ "$c" -lt "$min" ] && min=$c; done
  check_eq "$w workers: every held connection is in a worker's set" 60 "$sum"
  # descriptors are numbered in order, so socket % workers alternates: at most one apart
  # (two if another thread took a descriptor number meanwhile)
  check_cmp "$w workers: the split is even (most - fewest = $((max - min)) of $split)" "$((max - min))" "<=" 2
  check_eq "$w workers: the held connections are served (a request on a new one)" 200 \
    "$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$BASE/f.dat")"
  release
  wait_for 100 eval '[ "$(accept_key open)" = 1 ]' # only the /status request's
  check_eq "$w workers: closes counted: open back to the /status request's own" 1 "$(accept_key open)"
  srv_stop
done

# --- the limit: paused, the next connection waits in the backlog and is served after
srv_conf "$T_TMP/lim.conf" 'threads = 2;' 'files = ( { path = "/f.dat"; size = 1000; } );' \
  'limits = { connections = 4; per_ip = 0; idle_timeout = 30; };'
srv_start "$T_TMP/lim.conf"
hold 4 "$PORT"
wait_for 100 eval '[ "$(ss -Htn state established "sport = :$PORT" | wc -l)" -ge 4 ]'
# a request in the backlog: no answer while the 4 are held
curl -s -o "$T_TMP/late.body" -w '%{http_code}' --max-time 20 "$BASE/f.dat" >"$T_TMP/late.code" & late=$!
t_track $late
sleep 1
check_eq "limit 4: with 4 held, a fifth connection is not answered yet" "" "$(cat "$T_TMP/late.code")"
check_match "limit 4: it waits in the backlog (the kernel completed its handshake; not refused)" '^[5-9]$' \
  "$(ss -Htn state established "dport = :$PORT" | wc -l)"
release
wait "$late"
check_eq "limit 4: once they close, the waiting connection is served (200), not refused" 200 "$(cat "$T_TMP/late.code")"
check_eq "limit 4: with its body" 1000 "$(stat -c %s "$T_TMP/late.body")"
a=$(accept_json)
t_diag "limit 4: $a"
check_eq "limit 4: /status accept.limit" 4 "$(jq .limit <<<"$a")"
check_cmp "limit 4: /status counts the pause at the limit" "$(jq .paused_at_limit <<<"$a")" ">=" 1
check_eq "limit 4: none refused (they waited)" 0 "$(jq .refused <<<"$a")"
L="listener=\"127.0.0.1:$PORT\""
check_eq "limit 4: /metrics debitd_accept_paused_total = /status paused_at_limit" "$(jq .paused_at_limit <<<"$a")" \
  "$(metric "debitd_accept_paused_total{$L}")"
check_eq "limit 4: /metrics no refusal" 0 "$(metric "debitd_accepted_connections_total{$L,result=\"refused\"}")"
srv_stop

# --- per_ip refusals go through the acceptor: counted as refused, another address served
srv_conf "$T_TMP/ip.conf" 'threads = 2;' 'files = ( { path = "/f.dat"; size = 1000; } );' \
  'limits = { per_ip = 2; idle_timeout = 30; };' 'metrics = { allow = ( "127.0.0.2" ); };'
srv_start "$T_TMP/ip.conf"
hold 2 "$PORT"
wait_for 100 eval '[ "$(curl -s --interface 127.0.0.2 "$BASE/status" | jq .listeners[0].accept.open)" = 3 ]'
check_eq "per_ip 2: a third connection from 127.0.0.1 gets no answer" 000 \
  "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$BASE/f.dat")"
check_eq "per_ip 2: /status (from 127.0.0.2) counts it refused" 1 \
  "$(curl -s --interface 127.0.0.2 "$BASE/status" | jq .listeners[0].accept.refused)"
L="listener=\"127.0.0.1:$PORT\""
check_eq "per_ip 2: /metrics (from 127.0.0.2) counts it: result=\"refused\" 1" 1 \
  "$(metric "debitd_accepted_connections_total{$L,result=\"refused\"}" 127.0.0.2)"
# open: the 2 held and the scrape's own (once the /status requests' connections have
# closed on the server's side too)
wait_for 50 eval '[ "$(metric "debitd_listener_connections{$L}" 127.0.0.2)" = 3 ]'
check_eq "per_ip 2: /metrics debitd_listener_connections: the 2 held and the scrape's" 3 \
  "$(metric "debitd_listener_connections{$L}" 127.0.0.2)"
release
srv_stop

# --- out of descriptors: accept fails (EMFILE), the connections wait in the backlog, the
# acceptor says so once and tries again; once descriptors are free it serves again
srv_conf "$T_TMP/fd.conf" 'threads = 2;' 'files = ( { path = "/f.dat"; size = 1000; } );' \
  'limits = { per_ip = 0; idle_timeout = 30; };'
srv_start "$T_TMP/fd.conf"
# debitd raises its soft limit to the hard one at start: lowered from outside, once it runs
used=$(ls "/proc/$DEBITD_PID/fd" | wc -l)
prlimit --pid "$DEBITD_PID" --nofile=$((used + 6)):$((used + 6)) # room for a few: 12 run it out
hold 12 "$PORT"
wait_for 100 grep -q 'accept: Too many open files' "$T_TMP/debitd.log"
check_match "out of descriptors: said in the log, with what waits and what to do" \
  'accept: Too many open files; connections wait in the backlog, tried again every 100 ms' "$(cat "$T_TMP/debitd.log")"
check "out of descriptors: debitd still runs" kill -0 "$DEBITD_PID"
release
wait_for 100 eval '[ "$(curl -s -o /dev/null -w "%{http_code}" --max-time 2 "$BASE/f.dat")" = 200 ]'
check_eq "out of descriptors: served again once the held connections close" 200 \
  "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$BASE/f.dat")"
errs=$(accept_key errors)
check_cmp "out of descriptors: /status counts the failed accepts" "$errs" ">=" 1
check_eq "out of descriptors: /metrics debitd_accept_errors_total = /status errors" "$errs" \
  "$(metric "debitd_accept_errors_total{listener=\"127.0.0.1:$PORT\"}")"
check_eq "out of descriptors: said once, not once per retry (every 100 ms)" 1 \
  "$(grep -c 'accept: Too many open files' "$T_TMP/debitd.log")"
srv_stop

t_done
