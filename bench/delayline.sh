#!/usr/bin/env bash
# Benchmark: how exact is debit-delayline, the NFQUEUE delay line the lab uses where the
# kernel has no sch_netem (docs/lab.md, "Measured here")? Two namespaces joined by a veth
# (198.18.20.0/24), iperf3 over TCP for SECS seconds per case, 64 MiB buffers. Per case:
# the delay asked for, the kernel's minimum RTT of the flow (ss minrtt, read mid-flow:
# tests/e2e/lab_lib.bash ss_min_rtt_us) and what it adds over the base RTT measured without
# the line in the same run, the throughput, and the delay line's own statistics at exit
# (mean and worst release lateness, bytes per queued packet: GSO/GRO aggregates kept whole).
# The peer is the configured delay itself: "added - delay" is the line's error. Cases: the
# sender's TSO/GSO and the receiver's GRO on, delay on incoming packets (`in`) of 10 and
# 30 ms, at line rate and paced at 100 Mb/s; 2 x 5 and 2 x 15 ms on both directions; TSO/GSO
# off; TSO/GSO and GRO off. Needs root (namespaces, iptables).
#   SECS=2 bench/delayline.sh
. "$(dirname "$0")/../tests/lib/common.sh"
. "$(dirname "$0")/../tests/e2e/lab_lib.bash"
[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root (network namespaces, iptables)"; exit 0; }
need_cmd iperf3 iptables ethtool ss
DL=$DEBIT_BUILD/debit-delayline
[ -x "$DL" ] || { echo "build debit-delayline first (make)"; exit 1; }
SECS=${SECS:-2}

ns_new A a || { echo "cannot create namespaces"; exit 1; }
ns_new B b
ns_veth "$A" "va$T_ID" 198.18.20.1/24 "$B" "vb$T_ID" 198.18.20.2/24
VA=va$T_ID VB=vb$T_ID
for n in "$A" "$B"; do
  ip netns exec "$n" sysctl -q -w net.ipv4.tcp_rmem="4096 131072 67108864" net.ipv4.tcp_wmem="4096 16384 67108864" \
    net.ipv4.tcp_no_metrics_save=1
done
Q=$((7500 + RANDOM % 100))
PORT=5400

# flow RATE: iperf3 from A to B for SECS (RATE 0: line rate) -> "min_rtt_us Mb/s"
flow() {
  PORT=$((PORT + 1))
  ip netns exec "$B" iperf3 -s -1 -p "$PORT" >/dev/null 2>&1 &
  local sp=$! cp i kmin
  t_track "$sp"
  for ((i = 0; i < 50; i++)); do ip netns exec "$B" ss -Htln "sport = :$PORT" | grep -q . && break; sleep 0.05; done
  ip netns exec "$A" timeout $((SECS + 20)) iperf3 -c 198.18.20.2 -p "$PORT" -t "$SECS" -b "$1" -J >"$T_TMP/iperf.json" 2>&1 &
  cp=$!
  sleep "$(awk -v s="$SECS" 'BEGIN{print s * 0.7}')"
  kmin=$(ss_min_rtt_us "$A" "$PORT")
  wait "$cp" 2>/dev/null
  wait "$sp" 2>/dev/null
  awk -v k="$kmin" '/"bits_per_second":/ {gsub(/[^0-9.e+]/, "", $2); b = $2}
       END {printf "%s %.0f\n", (k != "" ? k : "-"), b / 1e6}' "$T_TMP/iperf.json"
}

# offloads TSO_GSO GRO: the sender's TSO/GSO, the receiver's GRO
offloads() {
  ip netns exec "$A" ethtool -K "$VA" tso "$1" gso "$1" >/dev/null 2>&1
  ip netns exec "$B" ethtool -K "$VB" gro "$2" >/dev/null 2>&1
}

offloads on on
read -r base base_mbps < <(flow 10M)
echo "machine: $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ); iperf3 ${SECS}s per case, bbr: $(cat /proc/sys/net/ipv4/tcp_congestion_control)"
echo "base (no delay line, 10 Mb/s): min_rtt $base us"
printf '%-34s %-9s %-10s %12s %10s %9s %10s %11s %9s\n' case delay direction "min_rtt_ms" "added_ms" "error_ms" "Mb/s" "late_avg_us" "B/packet"
N=0
# one CASE DELAY_MS DIRECTION RATE TSO_GSO GRO
one() {
  local name=$1 ms=$2 dir=$3 rate=$4 per=$2
  offloads "$5" "$6"
  [ "$dir" = both ] && per=$(awk -v m="$ms" 'BEGIN{print m / 2}')
  N=$((N + 1))
  t_bg "dl$N" ip netns exec "$B" "$DL" --dev "$VB" --delay "${per}ms" --direction "$dir" --queue-num "$Q"
  local pid=$T_LAST_PID
  delay_wait_ready "$T_TMP/dl$N.log" "$pid" || { echo "$name: the delay line did not start: $(tail -2 "$T_TMP/dl$N.log")"; return; }
  local rtt mbps
  read -r rtt mbps < <(flow "$rate")
  kill -TERM "$pid"
  wait "$pid" 2>/dev/null
  local st
  st=$(grep 'debit-delayline: stats' "$T_TMP/dl$N.log")
  awk -v n="$name" -v ms="$ms" -v d="$dir" -v r="$rtt" -v b="$base" -v m="$mbps" -v st="$st" 'BEGIN{
    split(st, f, " "); for (i in f) { split(f[i], kv, "="); v[kv[1]] = kv[2] }
    bpp = v["packets"] > 0 ? v["bytes"] / v["packets"] : 0
    if (r == "-") printf "%-34s %-9s %-10s %12s %10s %9s %10s %11s %9.0f\n", n, ms " ms", d, "-", "-", "-", m, v["late_avg_us"], bpp
    else printf "%-34s %-9s %-10s %12.3f %10.3f %+9.3f %10s %11s %9.0f\n", n, ms " ms", d, r / 1000, (r - b) / 1000, (r - b) / 1000 - ms, m, v["late_avg_us"], bpp }'
}
one "TSO/GSO on, GRO on, line rate" 10 in 0 on on
one "TSO/GSO on, GRO on, 100 Mb/s" 10 in 100M on on
one "TSO/GSO on, GRO on, 10 Mb/s" 10 in 10M on on
one "TSO/GSO on, GRO on, line rate" 30 in 0 on on
one "TSO/GSO on, GRO on, 100 Mb/s" 30 in 100M on on
one "TSO/GSO on, GRO on, 10 Mb/s" 30 in 10M on on
one "TSO/GSO on, line rate" 10 both 0 on on
one "TSO/GSO on, line rate" 30 both 0 on on
one "TSO/GSO off, GRO on, line rate" 10 in 0 off on
one "TSO/GSO off, GRO off, line rate" 10 in 0 off off
echo "added = min_rtt - base; error = added - delay (the line's); late_avg_us: the mean time each packet was released after its kernel arrival stamp + delay (debit-delayline's stats line)"
