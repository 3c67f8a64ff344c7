#!/usr/bin/env bash
# Graceful stop (issue 9): SIGTERM stops accepting (new connections are refused at once),
# lets running downloads finish for up to limits.drain_timeout, then exits 0; a request on
# a kept-alive connection during the drain is answered with Connection: close; the drain
# timeout cuts what is left; a second SIGTERM stops at once; offloads are restored after a
# drain and after a second SIGTERM (in a network namespace, as root).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
need_cmd python3

# term_wait SECS: SIGTERM to debitd, then a bounded wait (SECS) for its exit: sets TERM_RC
# (137 if it had to be killed) and TERM_S (seconds until it exited).
term_wait() {
  local t0 i
  t0=$(date +%s.%N)
  kill -TERM "$DEBITD_PID"
  for ((i = 0; i < $1 * 20; i++)); do kill -0 "$DEBITD_PID" 2>/dev/null || break; sleep 0.05; done
  kill -KILL "$DEBITD_PID" 2>/dev/null
  wait "$DEBITD_PID" 2>/dev/null; TERM_RC=$?
  TERM_S=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}')
}
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b-a}'; }
log_has() { grep -q "$1" "$T_TMP/debitd.log"; }
# started FILE: the slow download whose headers go to FILE has its 200 status line
started() { wait_for 100 grep -q '^HTTP/1.1 200' "$1"; }

# --- a slow download completes during the drain, with the right bytes --------------------
srv_conf "$T_TMP/g.conf" 'files = ( { path = "/slow.dat"; size = "32MiB"; }, { path = "/long.dat"; size = "64MiB"; },' \
  '{ path = "/s.dat"; size = 1000; } );' 'limits = { drain_timeout = "20s"; };'
srv_start "$T_TMP/g.conf"
want=$(sha_of "$BASE/slow.dat")
# 32 MiB at 8 MB/s: about 4 s, more than the socket buffers hold (a few MiB on loopback),
# so debitd itself sends for seconds after SIGTERM and the drain must wait for it;
# --max-time bounds it if the server never lets it finish
curl -s -o "$T_TMP/slow.out" -D "$T_TMP/slow.h" --limit-rate 8M --max-time 30 "$BASE/slow.dat" & cpid=$!
t_track $cpid
started "$T_TMP/slow.h"
t0=$(date +%s.%N)
kill -TERM "$DEBITD_PID"
wait_for 50 log_has 'no new connections'
curl -s -o /dev/null --max-time 2 "$BASE/s.dat"; rc=$?
check_eq "draining: a new connection is refused (curl exit 7, not a hang)" 7 "$rc"
check_eq "draining: debitd still runs while the download does" 0 "$(kill -0 "$DEBITD_PID" 2>/dev/null; echo $?)"
wait $cpid; crc=$?
curl_s=$(since "$t0")
for ((i = 0; i < 100; i++)); do kill -0 "$DEBITD_PID" 2>/dev/null || break; sleep 0.05; done
wait "$DEBITD_PID" 2>/dev/null; SRV_RC=$?
stop_s=$(since "$t0")
t_diag "download ended ${curl_s} s after SIGTERM, debitd exited ${stop_s} s after it (drain_timeout 20 s)"
check_eq "the download completed (curl exit 0)" 0 "$crc"
check_eq "the download has the right bytes (sha256 as announced)" "$want" "$(sha256sum <"$T_TMP/slow.out" | cut -d' ' -f1)"
check_cmp "the drain waited for it (download ended ${curl_s} s after SIGTERM)" "$curl_s" ">=" 2
check_cmp "debitd exited soon after the last download (${stop_s} s)" "$stop_s" "<" "$(awk -v c="$curl_s" 'BEGIN{print c + 3}')"
check_eq "drained stop: exit 0" 0 "$SRV_RC"
check_match "drained stop: logged" 'drained: no request left' "$(cat "$T_TMP/debitd.log")"
check_eq "the access log has the transfer done, all bytes" "done 33554432" \
  "$(jq -r 'select(.path == "/slow.dat") | "\(.state) \(.bytes)"' "$T_TMP/access.log" | tail -1)"

# --- a kept-alive connection during the drain: answered, with Connection: close ----------
srv_start "$T_TMP/g.conf"
rm -f "$T_TMP/slow.h"
# 64 MiB at 1 MB/s: running for the rest of this part and the next
curl -s -o /dev/null -D "$T_TMP/slow.h" --limit-rate 1M --max-time 60 "$BASE/long.dat" & cpid=$!
t_track $cpid
started "$T_TMP/slow.h"
python3 - "$PORT" "$T_TMP/ka" "$DEBITD_PID" "$T_TMP/debitd.log" >"$T_TMP/ka.out" <<'PY'
import os, signal, socket, sys, time
port, out, pid, log = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
s = socket.create_connection(("127.0.0.1", port), timeout=5)
req = b"GET /s.dat HTTP/1.1\r\nHost: x\r\n\r\n"
def recv():
    b = s.recv(65536)
    if not b:
        return None
    return b
def response():  # (head, body length), or ("closed", 0) if the server closed first
    data = b""
    while b"\r\n\r\n" not in data:
        b = recv()
        if b is None:
            return "closed", 0
        data += b
    head, body = data.split(b"\r\n\r\n", 1)
    n = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0])
    while len(body) < n:
        b = recv()
        if b is None:
            break
        body += b
    return head.decode(), len(body)
s.sendall(req)
h1, n1 = response()
os.kill(pid, signal.SIGTERM)
for _ in range(100):  # bounded: until debitd says it drains
    if "no new connections" in open(log).read():
        break
    time.sleep(0.05)
s.sendall(req)
h2, n2 = response()
rest = s.recv(1)  # b"" once the server has closed its side
print("first: %s %d keep-alive=%s" % (h1.split("\r\n")[0], n1, "close" not in h1.lower()))
print("second: %s %d close=%s" % (h2.split("\r\n")[0], n2, "connection: close" in h2.lower()))
print("then closed: %s" % (rest == b""))
PY
check_eq "before SIGTERM: answered, kept alive" "first: HTTP/1.1 200 OK 1000 keep-alive=True" "$(sed -n 1p "$T_TMP/ka.out")"
check_eq "draining: the next request on that connection is answered with Connection: close" \
  "second: HTTP/1.1 200 OK 1000 close=True" "$(sed -n 2p "$T_TMP/ka.out")"
check_eq "draining: then the connection is closed" "then closed: True" "$(sed -n 3p "$T_TMP/ka.out")"

# --- a second SIGTERM stops at once -------------------------------------------------------
term_wait 5
check_eq "second SIGTERM: exit 0" 0 "$TERM_RC"
check_cmp "second SIGTERM: stopped within 2 s ($TERM_S s; the download had seconds to go)" "$TERM_S" "<" 2
check_match "second SIGTERM: logged" 'SIGTERM: stopping now \(1 request\(s\) still running\)' "$(cat "$T_TMP/debitd.log")"
wait $cpid
check_eq "second SIGTERM: the running download was cut (curl exit 18, partial file)" 18 "$?"

# --- the drain timeout cuts what is left --------------------------------------------------
srv_conf "$T_TMP/t.conf" 'files = ( { path = "/slow.dat"; size = "64MiB"; } );' 'limits = { drain_timeout = "1s"; };'
srv_start "$T_TMP/t.conf"
rm -f "$T_TMP/slow.h"
curl -s -o /dev/null -D "$T_TMP/slow.h" --limit-rate 1M --max-time 60 "$BASE/slow.dat" & cpid=$!
t_track $cpid
started "$T_TMP/slow.h"
t0=$(date +%s.%N)
kill -TERM "$DEBITD_PID"
for ((i = 0; i < 100; i++)); do kill -0 "$DEBITD_PID" 2>/dev/null || break; sleep 0.05; done
wait "$DEBITD_PID" 2>/dev/null; SRV_RC=$?
stop_s=$(since "$t0")
check_eq "drain timeout: exit 0" 0 "$SRV_RC"
check_cmp "drain timeout = 1 s: stopped after it (${stop_s} s)" "$stop_s" ">=" 0.95
check_cmp "drain timeout = 1 s: stopped well before the download's 64 s (${stop_s} s)" "$stop_s" "<" 4
check_match "drain timeout: logged" 'drain timeout: closing 1 request\(s\) still running' "$(cat "$T_TMP/debitd.log")"
stop_pid $cpid

# --- offloads restored after a drain and after a second SIGTERM ---------------------------
if [ "$(id -u)" -ne 0 ] || ! command -v ethtool >/dev/null; then
  t_skip "offloads restored after a graceful stop" "needs root and ethtool for a network namespace"
  t_done
fi
ns_new S srv || { t_skip "offloads restored after a graceful stop" "cannot create a network namespace"; t_done; }
ns_new C cli
VS=vs$T_ID VC=vc$T_ID
ns_veth "$S" "$VS" 198.18.4.1/24 "$C" "$VC" 198.18.4.2/24 || { t_skip "offloads restored" "cannot create a veth pair"; t_done; }
feat() { ip netns exec "$S" ethtool -k "$VS" | awk -v f="$1:" '$1 == f {print $2}'; }
check_eq "veth starts with tso on" on "$(feat tcp-segmentation-offload)"
P=$(free_port)
cat >"$T_TMP/o.conf" <<CONF
listen = ( { address = "198.18.4.1"; port = $P; } );
files = ( { path = "/slow.dat"; size = "64MiB"; } );
log = { access = "off"; };
limits = { drain_timeout = "20s"; };
offload = { interface = "$VS"; tso = false; state_file = "$T_TMP/run/offload.state"; };
CONF
for how in drained second; do
  debitd_spawn "$T_TMP/o.conf" "$S"
  wait_http "http://198.18.4.1:$P/status" 150 "$C" || { t_fail "debitd up in the namespace" "$(tail -5 "$T_TMP/debitd-$S.log")"; t_done; }
  debitd_content_ready "http://198.18.4.1:$P" "$C" || { t_fail "debitd's region complete" "$(tail -5 "$T_TMP/debitd-$S.log")"; t_done; }
  check_eq "$how: tso off while debitd runs" off "$(feat tcp-segmentation-offload)"
  rm -f "$T_TMP/slow.h"
  # drained: 4 MiB at 4 MB/s ends within the drain; second: 64 MiB (16 s) is still running
  range=0-4194303; [ $how = second ] && range=0-
  ip netns exec "$C" curl -s -o /dev/null -D "$T_TMP/slow.h" --limit-rate 4M --max-time 60 \
    -r $range "http://198.18.4.1:$P/slow.dat" & cpid=$!
  t_track $cpid
  wait_for 100 grep -q '^HTTP/1.1 206' "$T_TMP/slow.h"
  kill -TERM "$DEBITD_PID"
  if [ $how = second ]; then
    wait_for 50 grep -q 'no new connections' "$T_TMP/debitd-$S.log"
    kill -TERM "$DEBITD_PID"
  fi
  for ((i = 0; i < 200; i++)); do kill -0 "$DEBITD_PID" 2>/dev/null || break; sleep 0.05; done
  kill -KILL "$DEBITD_PID" 2>/dev/null
  wait "$DEBITD_PID" 2>/dev/null; rc=$?
  check_eq "$how: exit 0" 0 "$rc"
  check_match "$how: the stop it was" "$([ $how = second ] && echo 'SIGTERM: stopping now' || echo 'drained: no request left')" \
    "$(cat "$T_TMP/debitd-$S.log")"
  check_eq "$how: tso restored" on "$(feat tcp-segmentation-offload)"
  stop_pid $cpid
done
t_done
