#!/usr/bin/env bash
# debitd's limits (connections, per_ip, idle_timeout), signals (SIGINT/SIGTERM without a
# drain: clean exit 0, even mid-transfer) and start-up errors (port in use, bad address: exit 2 with a message).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
need_cmd python3

# hold N PORT: N idle TCP connections to 127.0.0.1:PORT, held (at most 60 s) until
# release; returns once they are established and debitd has accepted them (bounded), so
# that what follows never races with the holder's start-up on a loaded machine.
hold() {
  rm -f "$T_TMP/held"
  python3 - "$1" "$2" "$T_TMP/held" <<'PY' &
import socket, sys, time
n, port, flag = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
ss = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
open(flag, "w").close()
time.sleep(60)
PY
  HOLD_PID=$!
  t_track $HOLD_PID
  wait_for 100 test -e "$T_TMP/held"
  # accepted: the server side of each connection shows up as established
  wait_for 50 eval "[ \$(ss -Htn state established \"sport = :$2\" | wc -l) -ge $1 ]"
  # (with one worker thread, connections are accepted in order: a later one cannot overtake)
}
release() { stop_pid "$HOLD_PID" KILL; }
code_f() { curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$BASE/f.dat"; }
served() { [ "$(code_f)" = 200 ]; }

# limit_case NAME LIMITS N: debitd (one worker thread) with LIMITS; a first connection is
# served; with N connections held, one more gets no answer; once they close, served again.
# per_ip: meanwhile another address is served, and the refusal log's summary (written at
# the latest at stop) names the refused address with the reason "limit".
limit_case() {
  local name=$1 limits=$2 n=$3
  srv_conf "$T_TMP/$name.conf" 'threads = 1;' 'files = ( { path = "/f.dat"; size = 1000; } );' "limits = $limits;"
  srv_start "$T_TMP/$name.conf"
  check_eq "$name: a first connection is served" 200 "$(code_f)"
  hold "$n" "$PORT"
  check_eq "$name: with $n held, one more connection gets no answer" 000 "$(code_f)"
  if [ "$name" = per_ip ]; then
    check_eq "per_ip: another address (127.0.0.2) is served meanwhile" 200 \
      "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 --interface 127.0.0.2 "$BASE/f.dat")"
  fi
  release
  wait_for 50 served
  check_eq "$name: served again once they close" 200 "$(code_f)"
  srv_stop
  if [ "$name" = per_ip ]; then
    local sum; sum=$(grep 'refused or closed in the last' "$T_TMP/debitd.log" | tail -1)
    t_diag "per_ip: $sum"
    check_match "per_ip: the refusal log names the refused address, reason limit" \
      'limit [0-9]+.*; top addresses: 127\.0\.0\.1 [0-9]+ \([^)]*limit [0-9]+' "$sum"
  fi
}
# per_ip: the connections from one address; connections: the total per listener
limit_case per_ip '{ per_ip = 2; connections = 100; idle_timeout = 30; }' 2
limit_case connections '{ connections = 3; idle_timeout = 30; }' 3

# per_ip on a dual-stack "::" listener: IPv4 clients arrive as IPv4-mapped IPv6 addresses
# and are counted, and named, as IPv4; ::1 is another address
srv_conf "$T_TMP/ds.conf" 'threads = 1;' 'files = ( { path = "/f.dat"; size = 1000; } );' \
  'limits = { per_ip = 2; connections = 100; idle_timeout = 30; };'
sed -i '1s/address = "127.0.0.1"/address = "::"/' "$T_TMP/ds.conf"
srv_start "$T_TMP/ds.conf"
hold 2 "$PORT"
check_eq "per_ip on \"::\": with 2 held from 127.0.0.1, one more gets no answer" 000 "$(code_f)"
check_eq "per_ip on \"::\": ::1 is another address, served" 200 \
  "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 -g "http://[::1]:$PORT/f.dat")"
release
srv_stop
sum=$(grep 'refused or closed in the last' "$T_TMP/debitd.log" | tail -1)
t_diag "per_ip on \"::\": $sum"
check_match "per_ip on \"::\": the refused IPv4-mapped address named as IPv4" \
  'top addresses: 127\.0\.0\.1 [0-9]+ \([^)]*limit [0-9]+' "$sum"

# idle_timeout: an idle connection is closed after about that long
srv_conf "$T_TMP/t.conf" 'files = ( { path = "/f.dat"; size = 1000; } );' 'limits = { idle_timeout = 1; };'
srv_start "$T_TMP/t.conf"
idle=$(python3 - "$PORT" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.settimeout(10)
t = time.monotonic()
try:
    s.recv(1)
except OSError:
    pass
print("%.2f" % (time.monotonic() - t))
PY
)
check_cmp "idle_timeout = 1: closed after >= 0.9 s ($idle s)" "$idle" ">=" 0.9
check_cmp "idle_timeout = 1: closed before 4 s ($idle s)" "$idle" "<" 4

# SIGTERM in the middle of a transfer (a client reading at 1 MB/s: 64 s) without a drain
# (limits.drain_timeout = 0; the graceful stop is tests/e2e/server_stop.sh): exit 0, promptly
srv_stop
srv_conf "$T_TMP/s.conf" 'files = ( { path = "/big.dat"; size = "64MiB"; } );' 'limits = { drain_timeout = 0; };'
srv_start "$T_TMP/s.conf"
curl -s -o /dev/null -D "$T_TMP/big.h" --limit-rate 1M --max-time 60 "$BASE/big.dat" & cpid=$!; t_track $cpid
wait_for 100 grep -q '^HTTP/1.1 200' "$T_TMP/big.h"
check_cmp "a download is running when SIGTERM comes" "$(curl -s "$BASE/status" | jq '.counters.active_connections - 1')" '>=' 1
t0=$(date +%s.%N); srv_stop; t1=$(date +%s.%N)
check_eq "SIGTERM during a download: exit 0" 0 "$SRV_RC"
check_cmp "SIGTERM: stopped within 2 s" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" "<" 2
check_match "SIGTERM: logged" 'SIGTERM: stopping' "$(cat "$T_TMP/debitd.log")"
stop_pid $cpid   # it would read what its socket buffer still holds at 1 MB/s
srv_start "$T_TMP/s.conf"
kill -INT "$DEBITD_PID"; wait "$DEBITD_PID"; rc=$?
check_eq "SIGINT: exit 0" 0 "$rc"
check_match "SIGINT: logged" 'SIGINT: stopping' "$(cat "$T_TMP/debitd.log")"

# -f/--foreground: the process started is the one that serves (never forks), until SIGTERM
debitd_conf "$T_TMP/f.conf" 'files = ( { path = "/f.dat"; size = 1000; } );'
t_bg debitd "$DEBITD" -f -c "$T_TMP/f.conf"; DEBITD_PID=$T_LAST_PID
wait_http "$DEBITD_BASE/status" 150 "" "$DEBITD_PID"
check_eq "-f: the started process serves, /status pid is its pid" "$DEBITD_PID" "$(curl -s "$DEBITD_BASE/status" | jq .pid)"
check_eq "-f: no other debitd process was forked" "" "$(pgrep -P "$DEBITD_PID" 2>/dev/null)"
stop_pid "$DEBITD_PID"
check_eq "-f: SIGTERM exit 0" 0 "$STOP_RC"

# start-up errors: exit 2 and a message that names the listener
srv_start "$T_TMP/s.conf"
"$DEBITD" -c "$T_TMP/s.conf" >"$T_TMP/o" 2>&1; rc=$?
check_eq "port in use: exit 2" 2 "$rc"
check_match "port in use: clear message" "listen 127\.0\.0\.1:$PORT: cannot bind: Address already in use" "$(cat "$T_TMP/o")"
srv_stop
"$DEBITD" -c "$T_TMP/s.conf" --listen 192.0.2.1:8080 >"$T_TMP/o" 2>&1; rc=$?
check_eq "address not on this host: exit 2" 2 "$rc"
check_match "address not on this host: message" 'listen 192\.0\.2\.1:8080: cannot bind: Cannot assign requested address' "$(cat "$T_TMP/o")"
"$DEBITD" -c "$T_TMP/s.conf" --listen 300.1.1.1:8080 >"$T_TMP/o" 2>&1; rc=$?
check_eq "bad address: exit 2" 2 "$rc"
check_match "bad address: message" '--listen: "300\.1\.1\.1" is not a numeric IPv4 or IPv6 address' "$(cat "$T_TMP/o")"
t_done
