#!/usr/bin/env bash
# The one-machine lab (lab/lab.sh) with its latency scenarios: built small (64 MiB of
# content, 32 MiB downloads), it must add +10/+30 ms within 1 ms (TCP_INFO min_rtt of an
# iperf3 flow and of debit's downloads), make a fixed-size download slower as the delay rises, use the
# delay line where the kernel has no netem (and say so), set the servers' offloads as
# configured (the TSO/GSO-off server's veth sends MTU-sized packets, the other ~64 KB
# ones), and leave nothing behind: namespaces, qdiscs, iptables rules, processes — also
# when interrupted by Ctrl-C (SIGINT to the process group) in the middle.
. "$DEBIT_TOP/tests/lib/common.sh"
. "$DEBIT_TOP/tests/e2e/lab_lib.bash"
lab_require
need_cmd ip tc iptables ethtool curl iperf3 jq
t_diag "$LAB_CHECK"

# The root namespace must come out exactly as it went in (read-only snapshots).
lab_snap_root >"$T_TMP/root.before"
lab_expected_mechanism; want=$LAB_MECH
READY=$(wire_get WIRE_DELAY_READY) || { t_fail "WIRE_DELAY_READY is defined in common/wire.h"; t_done; }
t_diag "this kernel calls for: $want"

DIR=$T_TMP/lab
t_on_exit "'$LAB' down '$DIR'"
out=$("$LAB" up "$DIR" --ram 64MiB 2>&1); rc=$?
check_eq "lab up: exit 0" 0 "$rc"
[ $rc -eq 0 ] || { t_diag "$out"; t_done; }
. "$DIR/lab.env"
cp "$DIR/pids" "$T_TMP/pids"
check_match "env names four namespaces with one prefix" "^dbl$LAB_ID(c|r|s1|s2)$" "$(ip netns list | awk '{print $1}' | grep "^dbl$LAB_ID" | head -1)"
check_eq "four namespaces" 4 "$(ip netns list | grep -c "^dbl$LAB_ID")"
check_match "bottleneck: tbf 1Gbit toward the client, burst >= 64 KB" "tbf .* rate 1Gbit burst (2[0-9]{5}|[3-9][0-9]{5})b" \
  "$(ip netns exec "$LAB_NS_R" tc qdisc show dev c)"
check_match "s1 keeps TSO/GSO on" "tcp-segmentation-offload: on" "$(ip netns exec "$LAB_NS_S1" ethtool -k eth0)"
k2=$(ip netns exec "$LAB_NS_S2" ethtool -k eth0)
check_match "s2 has TSO and GSO off" "tcp-segmentation-offload: off.*generic-segmentation-offload: off" "$(printf '%s' "$k2" | tr '\n' ' ')"
check_match "GRO on at the client (where the delay line works)" "generic-receive-offload: on" "$(ip netns exec "$LAB_NS_C" ethtool -k eth0)"
check_eq "buffers raised in the client netns" "4096	131072	67108864" "$(ip netns exec "$LAB_NS_C" sysctl -n net.ipv4.tcp_rmem)"

# The proof that the servers' offload states took effect (testbed notes): bytes per packet
# their veth sends during a download — MTU-sized with TSO/GSO off, tens of KB with them on.
read -r avg1 bytes1 < <(lab_tx_avg "$LAB_NS_S1" eth0 ip netns exec "$LAB_NS_C" curl -s -o /dev/null "$LAB_S1_URL/files/32Mio.dat")
read -r avg2 bytes2 < <(lab_tx_avg "$LAB_NS_S2" eth0 ip netns exec "$LAB_NS_C" curl -s -o /dev/null "$LAB_S2_URL/files/32Mio.dat")
t_diag "tx during a 32 MiB download: s1 $avg1 B/packet ($bytes1 B), s2 $avg2 B/packet ($bytes2 B)"
check_cmp "s1 (TSO/GSO on): the download went out of its veth" "$bytes1" ">=" 33554432
check_cmp "s1 (TSO/GSO on): large packets on its veth (> 16 KB each)" "$avg1" ">" 16000
check_cmp "s2 (TSO/GSO off): the download went out of its veth" "$bytes2" ">=" 33554432
check_cmp "s2 (TSO/GSO off): MTU-sized packets on its veth (>= 1400 B)" "$avg2" ">=" 1400
check_cmp "s2 (TSO/GSO off): MTU-sized packets on its veth (<= 1514 B)" "$avg2" "<=" 1514

# min_rtt (us) of an iperf3 flow client -> s1 at 10 Mb/s: no queue inflates it, and at
# 100-500 Mb/s the receiver's ACK timing adds up to ~1 ms to the samples (docs/lab.md).
# The kernel's minimum RTT of the flow's connections, else iperf3's srtt.
rtt_us() {
  local port=$1
  ip netns exec "$LAB_NS_S1" iperf3 -s -1 -p "$port" >/dev/null 2>&1 &
  local sp=$! i
  t_track "$sp"
  for ((i = 0; i < 50; i++)); do ip netns exec "$LAB_NS_S1" ss -Htln "sport = :$port" | grep -q . && break; sleep 0.05; done
  ip netns exec "$LAB_NS_C" timeout 20 iperf3 -c "$LAB_S1_ADDR" -p "$port" -t 1 -b 10M -J >"$T_TMP/iperf.$port.json" 2>/dev/null &
  local cp=$! kmin
  # the kernel's minimum RTT, read mid-flow (ss_min_rtt_us, lab_lib.bash: why not iperf3's)
  sleep 0.6
  kmin=$(ss_min_rtt_us "$LAB_NS_C" "$port")
  wait "$cp" 2>/dev/null
  wait "$sp" 2>/dev/null
  awk -v k="$kmin" '/"min_rtt":/ {gsub(/[^0-9]/, "", $2); m = $2} END {if (k != "" && (m == "" || k + 0 < m + 0)) m = k; printf "%d\n", m + 0}' "$T_TMP/iperf.$port.json"
}

# Median avg_mbps of N downloads of a 32 MiB file from both servers (debit, alternating),
# and the least min_rtt_ms debit measured in them (the path's minimum: a delay line never
# releases early, so a larger one is a moment this VM ran the line late, which inflated
# the median of 6 to 31.1 ms at +30 once in CI while iperf3 said 30.3); curl when debit
# is not built.
download() { # LABEL
  if [ -x "$DEBIT" ]; then
    ip netns exec "$LAB_NS_C" "$DEBIT" -q -n 3 --format json -o "$T_TMP/$1.json" \
      "ovh=$LAB_S1_URL/files/32Mio.dat" "degrouptest=$LAB_S2_URL/files/32Mio.dat" >/dev/null 2>"$T_TMP/$1.err"
    # Only successful runs count, read with jq (not grep on the pretty-printer's spacing):
    # failed runs (avg_mbps null) used to come out as 0 Mb/s and pass "slower than before".
    # A failure gives "0 0", which fails the checks below.
    jq -r '[.runs[] | select(.ok)] as $ok
      | def med(f): [$ok[] | f] | sort | .[(length - 1) / 2 | floor];
      if ($ok | length) == 6 then "\(med(.avg_mbps)) \([$ok[] | .min_rtt_ms | select(. != null)] | min)" else "0 0" end' "$T_TMP/$1.json" 2>/dev/null || echo "0 0"
  else
    local s sp=()
    for i in 1 2 3; do for s in "$LAB_S1_URL" "$LAB_S2_URL"; do
      sp+=("$(ip netns exec "$LAB_NS_C" curl -s -o /dev/null -w '%{speed_download}' "$s/files/32Mio.dat")")
    done; done
    printf '%s\n' "${sp[@]}" | sort -n | awk '{a[NR]=$1*8/1e6} END {print a[int((NR+1)/2)], 0}'
  fi
}

base=$(rtt_us 5401)
read -r mb0 drtt0 < <(download d0)
t_diag "natural: iperf3 min_rtt $base us; median ${mb0} Mb/s, debit min_rtt ${drtt0} ms"
# The natural RTT is tens of microseconds; one sample can catch a busy machine: keep the
# smaller of the two measurements.
if [ -x "$DEBIT" ]; then base=$(awk -v a="$base" -v b="$drtt0" 'BEGIN {b *= 1000; printf "%d\n", (b > 0 && b < a) ? b : a}'); fi
check_cmp "natural RTT measured (< 1 ms)" "$base" "<" 1000
check_cmp "natural: near the 1 Gbit/s bottleneck (> 800 Mb/s)" "$mb0" ">" 800
check_cmp "natural: below the bottleneck (< 1010 Mb/s)" "$mb0" "<" 1010

check_match "lab check names the same mechanism" "via (debit-)?$want" "$("$LAB" check 2>&1)"
# Forcing the other mechanism: netem where the kernel lacks it fails cleanly (exit 2, a
# message, nothing left on the client's eth0); where it has it, it works.
out=$("$LAB" delay "$DIR" 10ms --mechanism netem 2>&1); rc=$?
if [ "$want" = netem ]; then
  check_eq "--mechanism netem: exit 0 (the kernel has netem)" 0 "$rc"
  check_match "--mechanism netem: printed" "via netem" "$out"
  "$LAB" delay "$DIR" off >/dev/null
else
  check_eq "--mechanism netem without sch_netem: exit 2" 2 "$rc"
  check_match "--mechanism netem without sch_netem: says why" "netem failed .*delayline" "$out"
fi
check_eq "after it: no netem, ingress or IFB left at the client" "" \
  "$(ip netns exec "$LAB_NS_C" tc qdisc show | grep -E 'netem|ingress'; ip -n "$LAB_NS_C" -br link show type ifb)"
check_eq "after it: no delay recorded" no "$([ -f "$DIR/delay" ] && echo yes || echo no)"
prev=$mb0
for d in 10 30; do
  out=$("$LAB" delay "$DIR" "${d}ms" 2>&1)
  check_match "+$d ms applied via $want (printed)" "^delay: \+$d\.000 ms round trip on the client \(both\) via $want" "$out"
  read -r _ _ hp _ <"$DIR/delay"  # mech us pid loss=P
  check_eq "+$d ms: held by debit-netctl in the client netns" "debit-netctl $LAB_NS_C" \
    "$(cat "/proc/${hp:-0}/comm" 2>/dev/null) $(ip netns identify "${hp:-0}" 2>/dev/null)"
  check_match "+$d ms: its ready line (common/wire.h): mechanism, halves" \
    "^$READY mechanism=$want dev=eth0 direction=both rtt_us=${d}000 out_us=$((d * 500)) in_us=$((d * 500)) " "$(cat "$DIR/delayline.log")"
  if [ "$want" = delayline ]; then
    check_eq "+$d ms: delay line rules in the client netns (in + out)" 2 \
      "$(ip netns exec "$LAB_NS_C" iptables -w -t mangle -S | grep -c 'NFQUEUE --queue-num 7302 --queue-bypass')"
  fi
  r=$(rtt_us $((5401 + d)))
  # A stretch in which this 2-core VM does not run the delay line on time can leave a
  # 1 s flow without an on-time packet (iperf3's srtt, read before rtt_us took the
  # kernel's minimum, was 11.1 then 13.0 ms for +10 under ASan): measure again, up to
  # twice more, while it is off, and keep the smallest (a delay line never releases
  # early, so the smaller is the truer).
  for again in 5501 5601; do
    if [ $((r - base)) -gt $((d * 1000 + 1000)) ] || [ $((r - base)) -lt $((d * 1000 - 1000)) ]; then
      r2=$(rtt_us $((again + d)))
      t_diag "+$d ms: min_rtt so far $r us, measured again: $r2 us"
      [ "$r2" -gt 0 ] && [ "$r2" -lt "$r" ] && r=$r2
    fi
  done
  added=$((r - base))
  t_diag "+$d ms: min_rtt $r us (added $added us)"
  check_cmp "+$d ms: added RTT >= $d ms - 1 ms" "$added" ">=" $((d * 1000 - 1000))
  check_cmp "+$d ms: added RTT <= $d ms + 1 ms" "$added" "<=" $((d * 1000 + 1000))
  read -r mb drtt < <(download "d$d")
  t_diag "+$d ms: median ${mb} Mb/s, debit min_rtt ${drtt} ms (least of its runs)"
  if [ -x "$DEBIT" ]; then
    check_cmp "+$d ms: debit's min RTT within 1 ms of delay + base" \
      "$(awk -v a="$drtt" -v d="$d" -v b="$base" 'BEGIN {x = a - d - b / 1000; print (x < 0 ? -x : x)}')" "<=" 1
  fi
  check_cmp "+$d ms: slower than the previous scenario (the seed's effect)" "$mb" "<" "$prev"
  prev=$mb
done
if [ "$want" = delayline ]; then
  dlpid=$(awk '{print $3}' "$DIR/delay")
  dlchild=$(ps -o pid= --ppid "$dlpid" | tr -d ' ')
  check_eq "the delay line runs under debit-netctl" debit-delayline "$(cat "/proc/${dlchild:-0}/comm" 2>/dev/null)"
  "$LAB" delay "$DIR" off >/dev/null
  check "delay off: debit-netctl is gone" sh -c "! kill -0 $dlpid 2>/dev/null"
  check "delay off: the delay line process is gone" sh -c "! kill -0 ${dlchild:-0} 2>/dev/null"
  check_eq "delay off: its rules are gone" 0 "$(ip netns exec "$LAB_NS_C" iptables -w -t mangle -S | grep -c NFQUEUE)"
  check_match "delay line stats: nothing dropped" "kernel_dropped=0" "$(grep stats "$DIR/delayline.log")"
fi
r=$(rtt_us 5450)
check_cmp "delay off: RTT back to natural (< 1 ms)" "$r" "<" 1000
# `delay off` verifies: something of a delay left in the client netns is named, exit 2.
ip -n "$LAB_NS_C" link add dblleft0 type ifb
out=$("$LAB" delay "$DIR" off 2>&1); rc=$?
check_match "delay off with a leftover IFB: exit 2, names it" "^2 .*left behind in $LAB_NS_C: ifb" "$rc $(printf '%s' "$out" | tr '\n' ' ')"
ip -n "$LAB_NS_C" link del dblleft0
out=$("$LAB" delay "$DIR" off 2>&1); rc=$?
check_match "delay off, clean again: exit 0" "^0 delay: off" "$rc $out"

cp "$DIR/pids" "$T_TMP/pids"
"$LAB" down "$DIR" >/dev/null 2>&1
check_eq "down: no namespace of the lab left" 0 "$(ip netns list | grep -c "^dbl$LAB_ID")"
alive=0; while read -r p _; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done <"$T_TMP/pids"
check_eq "down: no process of the lab left" 0 "$alive"
check_eq "down: env file removed (down is idempotent)" "no" "$([ -f "$DIR/lab.env" ] && echo yes || echo no)"
check_match "down twice is harmless" "nothing to take down" "$("$LAB" down "$DIR" 2>&1)"

# --- Ctrl-C in the middle of a measurement ---------------------------------------------------
DIR2=$T_TMP/lab2
t_on_exit "'$LAB' down '$DIR2'"
# A background job of a script starts with SIGINT ignored (and bash cannot trap a signal
# ignored on entry): restore the default, as for a command typed at a terminal.
setsid env --default-signal=INT "$LAB" run "$DIR2" --ram 64MiB --delay 30ms -- \
  sh -c 'exec curl -s -o /dev/null --max-time 60 --limit-rate 20M "$LAB_S1_URL/files/1Gio.dat"' \
  >"$T_TMP/run.log" 2>&1 &
runpid=$!
t_track "$runpid"
ok=0
for ((i = 0; i < 100; i++)); do [ -f "$DIR2/delay" ] && { ok=1; break; }; sleep 0.1; done
check_eq "interrupted run: got as far as the delay" 1 "$ok"
. "$DIR2/lab.env"
cp "$DIR2/pids" "$T_TMP/pids2"
sleep 1
kill -INT -- "-$runpid" 2>/dev/null
for ((i = 0; i < 150; i++)); do kill -0 "$runpid" 2>/dev/null || break; sleep 0.1; done
wait "$runpid" 2>/dev/null; rc=$?
# 130: the download was cut by the SIGINT and `lab run` passed its status on.
check_eq "Ctrl-C: the run stops (exit 130)" 130 "$rc"
check_eq "Ctrl-C: no namespace of the lab left" 0 "$(ip netns list | grep -c "^dbl$LAB_ID")"
alive=0; while read -r p _; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done <"$T_TMP/pids2"
check_eq "Ctrl-C: no process of the lab left" 0 "$alive"

# --- the seed's "natural ping": a base RTT at the router --------------------------------------
DIR3=$T_TMP/lab3
t_on_exit "'$LAB' down '$DIR3'"
"$LAB" run "$DIR3" --ram 16MiB --base-delay 5ms -- \
  sh -c 'printf "%s " "$LAB_ID"; for i in 1 2 3; do curl -s -o /dev/null -w "%{time_connect}\n" "$LAB_S2_URL/files/10Mio.dat.sha256"; done |
         sort -g | head -1' \
  >"$T_TMP/run3.out" 2>/dev/null
# The smallest of three connects: one SYN/SYN-ACK on a busy 2-core machine was seen 1.9 ms
# late; a delay line never releases early, so the smallest is the truest.
read -r id3 ct <"$T_TMP/run3.out"
t_diag "--base-delay 5ms: TCP connect took ${ct:-?} s (lab $id3)"
check_cmp "--base-delay 5ms: connect RTT >= 5 ms" "${ct:-0}" ">=" 0.005
check_cmp "--base-delay 5ms: connect RTT < 6.5 ms" "${ct:-1}" "<" 0.0065
check_match "--base-delay: the run's lab had an ID" "^[0-9a-f]{6}$" "${id3:-}"
check_eq "--base-delay: torn down by run" 0 "$(ip netns list | grep -c "^dbl${id3:-none}")"

lab_snap_root >"$T_TMP/root.after"
check "root namespace untouched (qdiscs, iptables, links)" diff "$T_TMP/root.before" "$T_TMP/root.after"
t_done
