#!/usr/bin/env bash
# Sendfile steps (server/http/sendstep.h, docs/server.md "Send path"): a worker with one or two
# file bodies in flight sends them in steps of up to 2 MiB instead of libmicrohttpd's
# 128 KiB, keeping libmicrohttpd's own last call; with more in flight it keeps 128 KiB.
# Checked in the system calls (strace: the sizes asked of the kernel), in the bytes (sha256,
# a range), and in /status's counters, on one worker thread.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
need_cmd strace

srv_conf "$T_TMP/d.conf" 'threads = 1;' \
  'files = ( { path = "/ram/64MiB.dat"; size = "64MiB"; }, { path = "/ram/8MiB.dat"; size = "8MiB"; } );'
srv_start "$T_TMP/d.conf"
counters() { curl -s "$BASE/status" | jq -r '"\(.counters.sendfile_calls) \(.counters.sendfile_widened) \(.listeners[0].zero_copy.transfers)"'; }
SHA=$(sha_of "$BASE/ram/64MiB.dat")

# one download alone, traced: the sizes debitd's sendfile64 asked of the kernel
strace -f -qq -e trace=sendfile -o "$T_TMP/trace" -p "$DEBITD_PID" 2>/dev/null &
ST=$!
t_track "$ST"
sleep 0.5 # strace attaches to every thread
read -r c0 w0 _ <<<"$(counters)"
got=$(curl -s "$BASE/ram/64MiB.dat" | sha256sum | cut -d' ' -f1)
read -r c1 w1 _ <<<"$(counters)"
sleep 0.2
kill -INT "$ST" 2>/dev/null
wait "$ST" 2>/dev/null
check_eq "one download alone: the file's bytes" "$SHA" "$got"
asked=$(sed -nE 's/.*sendfile\(.*, ([0-9]+)\) += .*/\1/p' "$T_TMP/trace")
n=$(grep -c . <<<"$asked")
n2m=$(grep -cx 2097152 <<<"$asked")
check_cmp "... in widened steps: $n2m of $n calls asked 2 MiB" "$n2m" ">" 0
check_eq "... none asked more than 2 MiB" "" "$(awk '$1 > 2097152' <<<"$asked")"
check_cmp "... far fewer calls than 128 KiB steps would make (512): $n" "$n" "<" 256
check_eq "... and the last call is libmicrohttpd's own, 64 KiB or less" yes \
  "$(tail -1 <<<"$asked" | awk '{print ($1 <= 65536) ? "yes" : "no"}')"
check_cmp "/status: sendfile_widened counted them ($((w1 - w0)))" $((w1 - w0)) ">=" "$n2m"
check_cmp "... among sendfile_calls ($((c1 - c0)))" $((c1 - c0)) ">=" "$n"

# a range ends earlier in the region than its file: its bytes, in widened steps
r0=$(counters)
curl -s -r 1000-5000999 -o "$T_TMP/range" "$BASE/ram/64MiB.dat"
read -r _ wr _ <<<"$(counters)"
check_eq "a 5,000,000-byte range: its bytes" \
  "$(curl -s "$BASE/ram/64MiB.dat" | head -c 5001000 | tail -c 5000000 | sha256sum)" "$(sha256sum <"$T_TMP/range")"
check_cmp "... widened too" $((wr - $(cut -d' ' -f2 <<<"$r0"))) ">" 0

# three slow downloads in flight on the one worker: a fourth gets libmicrohttpd's steps
read -r _ _ z0 <<<"$(counters)"
for i in 1 2 3; do
  t_bg "slow$i" curl -s -o /dev/null --limit-rate 2M --max-time 60 "$BASE/ram/64MiB.dat?slow$i"
done
wait_for 100 sh -c "[ \$(curl -s '$BASE/status' | jq .listeners[0].zero_copy.transfers) -ge $((z0 + 3)) ]" ||
  t_fail "three slow downloads started"
sleep 0.3
read -r c2 w2 _ <<<"$(counters)"
got=$(curl -s "$BASE/ram/8MiB.dat" | sha256sum | cut -d' ' -f1)
read -r c3 w3 _ <<<"$(counters)"
check_eq "a fourth body in flight: its bytes" "$(sha_of "$BASE/ram/8MiB.dat")" "$got"
check_cmp "... sent in sendfile calls ($((c3 - c2)), the slow ones' included)" $((c3 - c2)) ">=" 64
check_eq "... none widened (four in flight on the worker)" 0 $((w3 - w2))
for p in "${T_PIDS[@]}"; do [ "$p" = "$DEBITD_PID" ] || kill "$p" 2>/dev/null; done
wait_for 100 sh -c "[ \$(curl -s '$BASE/status' | jq .counters.active_connections) -le 1 ]" ||
  t_fail "the slow downloads ended"
# alone again (their ends counted down on the worker): widened again
read -r _ w4 _ <<<"$(counters)"
curl -s -o /dev/null "$BASE/ram/8MiB.dat"
read -r _ w5 _ <<<"$(counters)"
check_cmp "alone again after they ended: widened ($((w5 - w4)))" $((w5 - w4)) ">" 0
srv_stop
check_eq "debitd stopped cleanly" 0 "$SRV_RC"
t_done
