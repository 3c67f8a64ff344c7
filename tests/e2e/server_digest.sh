#!/usr/bin/env bash
# FILE.sha256 is hashed off the request threads (server/content/digest.c): with ONE worker thread
# and two concurrent first requests for a 4 GiB file waiting, a third client still gets a
# small file within 100 ms (and /status); both digests equal an independent SHA-256 of the
# downloaded bytes; the result is cached; the connection is kept alive after a suspended
# answer; a client that
# leaves while it waits frees its connection while the hash goes on; SIGTERM during a
# 10 GiB hash stops at once (exit 0), and the waiting client gets an answer or a close.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
need_cmd python3 ss

BIG=$((4 * 1024 * 1024 * 1024 + 1000))   # 64 repeats of the 64 MiB region and 1000 bytes
HUGE=$((10 * 1024 * 1024 * 1024))
srv_conf "$T_TMP/d.conf" 'threads = 1;' 'ram = "64MiB";' \
  "files = ( { path = \"/big.dat\"; size = \"$BIG\"; }, { path = \"/huge.dat\"; size = \"$HUGE\"; }," \
  '  { path = "/region.dat"; size = "64MiB"; }, { path = "/small.dat"; size = 1000; } );'
srv_start "$T_TMP/d.conf"

now_ms() { echo $(($(date +%s%N) / 1000000)); }
established() { ss -Htn state established "sport = :$PORT" | wc -l; }
status_sha() { curl -s --max-time 2 "$BASE/status" | jq -r --arg p "$1" '.files[] | select(.path == $p) | .sha256'; }

# --- two concurrent first requests, a third client meanwhile ------------------------------
t0=$(now_ms)
t_bg sha1 curl -s --max-time 60 -o "$T_TMP/sha1.out" "$BASE/big.dat.sha256"; P1=$T_LAST_PID
t_bg sha2 curl -s --max-time 60 -o "$T_TMP/sha2.out" "$BASE/big.dat.sha256"; P2=$T_LAST_PID
wait_for 50 eval '[ "$(established)" -ge 2 ]'
worst=0 all=""
for i in 1 2 3 4 5; do
  t=$(curl -s -o "$T_TMP/small.$i" --max-time 5 -w '%{time_total}' "$BASE/small.dat")
  ms=$(awk -v t="$t" 'BEGIN{printf "%d", t * 1000 + 0.5}')
  all="$all ${ms}ms"
  [ "$ms" -gt "$worst" ] && worst=$ms
done
st=$(curl -s -o /dev/null --max-time 5 -w '%{http_code} %{time_total}' "$BASE/status")
still=0; kill -0 "$P1" 2>/dev/null && kill -0 "$P2" 2>/dev/null && still=1
t_diag "small.dat while two first big.dat.sha256 wait: $all (worst ${worst} ms); /status: $st s"
check_eq "both .sha256 requests were still waiting while small.dat was fetched (else nothing is shown)" 1 "$still"
check_cmp "small.dat served within 100 ms while the 4 GiB digest is computed (worst ${worst} ms)" "$worst" '<' 100
check_eq "small.dat: 1000 bytes" 1000 "$(wc -c <"$T_TMP/small.5")"
check_match "/status answered meanwhile" '^200 ' "$st"
check_eq "/status: no sha256 for big.dat while it is computed" null "$(status_sha /big.dat)"
wait "$P1"; rc1=$?; wait "$P2"; rc2=$?
took=$(($(now_ms) - t0))
t_diag "two first big.dat.sha256 (4 GiB) answered after ${took} ms"
check_eq "both .sha256 curls succeeded" "0 0" "$rc1 $rc2"
check_match "first answer: HEX  big.dat" '^[0-9a-f]{64}  big\.dat$' "$(cat "$T_TMP/sha1.out")"
check_file_eq "both answers are the same" "$T_TMP/sha1.out" "$T_TMP/sha2.out"

# the digest of big.dat, independently: python's hashlib over the downloaded region, repeated
# (a first .sha256, answered after the resume, then a file on the same kept-alive connection)
curl -sv --max-time 30 -o "$T_TMP/region.sha" -o "$T_TMP/region.dat" "$BASE/region.dat.sha256" "$BASE/region.dat" \
  2>"$T_TMP/keepalive.log"
check_match "after a suspended .sha256 answer the connection is kept alive and reused" 'Re-using existing connection' \
  "$(cat "$T_TMP/keepalive.log")"
check_eq "region.dat.sha256 = sha256sum of its download" "$(sha256sum <"$T_TMP/region.dat" | cut -d' ' -f1)" \
  "$(cut -d' ' -f1 "$T_TMP/region.sha")"
want=$(python3 - "$T_TMP/region.dat" "$BIG" <<'PY'
import hashlib, sys
data = open(sys.argv[1], "rb").read()
size, h = int(sys.argv[2]), hashlib.sha256()
for _ in range(size // len(data)):
    h.update(data)
h.update(data[:size % len(data)])
print(h.hexdigest())
PY
)
check_eq "big.dat digest = hashlib over 64 downloaded regions + 1000 bytes" "$want" "$(cut -d' ' -f1 "$T_TMP/sha1.out")"
t=$(curl -s -o "$T_TMP/sha3.out" --max-time 5 -w '%{time_total}' "$BASE/big.dat.sha256")
t_diag "cached big.dat.sha256 answered in $t s"
check_file_eq "a later request gets the cached digest" "$T_TMP/sha1.out" "$T_TMP/sha3.out"
check_eq "/status lists big.dat's digest now" "$want" "$(status_sha /big.dat)"

# --- a client that leaves while it waits ---------------------------------------------------
t_bg gone curl -s --max-time 0.5 "$BASE/huge.dat.sha256"; wait "$T_LAST_PID"
check_eq "huge.dat.sha256 still being computed (10 GiB)" null "$(status_sha /huge.dat)"
active() { curl -s --max-time 2 "$BASE/status" | jq -r .counters.active_connections; }
# the hashing thread looks at waiters' sockets every 100 ms: the slot is back well before the hash ends
wait_for 30 eval '[ "$(active)" = 1 ]'
check_eq "the connection of the client that left is closed while the hash goes on" 1 "$(active)"
check_eq "... and the hash is still running" null "$(status_sha /huge.dat)"

# --- SIGTERM while a 10 GiB hash runs and a client waits for it -------------------------------
t_bg waiter curl -s --max-time 20 -o "$T_TMP/waiter.out" -w '%{http_code}' "$BASE/huge.dat.sha256"; PW=$T_LAST_PID
wait_for 50 eval '[ "$(established)" -ge 1 ]'
t0=$(now_ms)
srv_stop
stop_ms=$(($(now_ms) - t0))
wait "$PW"
t_diag "SIGTERM during the 10 GiB hash: debitd exited in ${stop_ms} ms (rc $SRV_RC); waiting client: $(cat "$T_TMP/waiter.log") after $(($(now_ms) - t0)) ms"
check_eq "SIGTERM during a hash: exit 0" 0 "$SRV_RC"
check_cmp "SIGTERM does not wait for the hash (${stop_ms} ms)" "$stop_ms" '<' 2000
check_nomatch "the waiting client got no digest (a 503 or a close)" "[0-9a-f]{64}" "$(cat "$T_TMP/waiter.out" 2>/dev/null)"
check_match "... its status: 503, or 000 when the daemon closed it first" '^(503|000)$' "$(cat "$T_TMP/waiter.log")"
check_nomatch "no libmicrohttpd panic or error in the log" 'suspended connections|PANIC|libmicrohttpd:' "$(cat "$T_TMP/debitd.log")"
t_done
