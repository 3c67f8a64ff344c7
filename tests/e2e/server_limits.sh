#!/usr/bin/env bash
# debitd's limits (connections, per_ip, idle_timeout), signals (SIGINT/SIGTERM: clean exit
# 0, even mid-transfer) and start-up errors (port in use, bad address: exit 2 with a message).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
need_cmd python3

# hold N PORT SECONDS: N idle TCP connections to 127.0.0.1:PORT for SECONDS (background)
hold() {
  python3 - "$1" "$2" "$3" <<'PY' &
import socket, sys, time
n, port, secs = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
ss = [socket.create_connection(("127.0.0.1", port)) for _ in range(n)]
time.sleep(secs)
PY
  t_track $!
  HOLD_PID=$!
}
# per_ip: with 2 connections held, a third from the same address is refused
srv_conf "$T_TMP/ip.conf" 'threads = 1;' 'files = ( { path = "/f.dat"; size = 1000; } );' \
  'limits = { per_ip = 2; connections = 100; idle_timeout = 30; };'
srv_start "$T_TMP/ip.conf"
check_eq "per_ip: a first connection is served" 200 "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/f.dat")"
hold 2 "$PORT" 3; sleep 0.5
check_eq "per_ip = 2: a third connection gets no answer" 000 "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$BASE/f.dat")"
kill "$HOLD_PID" 2>/dev/null; wait "$HOLD_PID" 2>/dev/null; sleep 0.3
check_eq "per_ip: served again once they close" 200 "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/f.dat")"
srv_stop

# connections: the total per listener
srv_conf "$T_TMP/c.conf" 'threads = 1;' 'files = ( { path = "/f.dat"; size = 1000; } );' \
  'limits = { connections = 3; idle_timeout = 30; };'
srv_start "$T_TMP/c.conf"
hold 3 "$PORT" 3; sleep 0.5
check_eq "connections = 3: a fourth gets no answer" 000 "$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$BASE/f.dat")"
kill "$HOLD_PID" 2>/dev/null; wait "$HOLD_PID" 2>/dev/null; sleep 0.3
check_eq "connections: served again" 200 "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/f.dat")"
srv_stop

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

# SIGTERM in the middle of a transfer: exit 0, promptly
curl -s -o /dev/null --limit-rate 200k "$BASE/f.dat" &
srv_conf "$T_TMP/s.conf" 'files = ( { path = "/big.dat"; size = "64MiB"; } );'
kill -TERM "$DEBITD_PID"; wait "$DEBITD_PID" 2>/dev/null
srv_start "$T_TMP/s.conf"
curl -s -o /dev/null --limit-rate 1M "$BASE/big.dat" & cpid=$!; t_track $cpid
sleep 0.5
t0=$(date +%s.%N); srv_stop; t1=$(date +%s.%N)
check_eq "SIGTERM during a download: exit 0" 0 "$SRV_RC"
check_cmp "SIGTERM: stopped within 2 s" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')" "<" 2
check_match "SIGTERM: logged" 'SIGTERM: stopping' "$(cat "$T_TMP/debitd.log")"
wait $cpid 2>/dev/null
srv_start "$T_TMP/s.conf"
kill -INT "$DEBITD_PID"; wait "$DEBITD_PID"; rc=$?
check_eq "SIGINT: exit 0" 0 "$rc"
check_match "SIGINT: logged" 'SIGINT: stopping' "$(cat "$T_TMP/debitd.log")"

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
