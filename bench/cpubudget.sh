#!/usr/bin/env bash
# Benchmark (the figures of docs/lab.md's "The CPU budget" and etc/lab-experiment.conf's
# comment): in the lab (lab/lab.sh: 1 Gbit/s tbf, the seed's 5.5 ms natural ping at the
# router), two debitd servers on the same CPU budget (a cgroup quota that also pays for
# their packets: the lab's cost line), one with TSO/GSO on and one off, cubic, `debit
# --scenario` alternating between them, RUNS downloads each of 256 MiB. Per budget
# (BUDGETS, default "10% 20% 30%") with notsent_lowat 128 KiB, then 20 % without it: both
# medians, the ratio off/on, the verdict debit gave each (its summary's limited_by), and
# what left each server's eth0 per packet (tx_bytes / tx_packets of its veth). Needs root.
#   RUNS=3 BUDGETS="10% 20% 30%" LAB_COST_BYTE_NS=2 bench/cpubudget.sh
. "$(dirname "$0")/../tests/lib/common.sh"
need_root "the lab (network namespaces, cgroups)"
need_cmd jq ip tc
RUNS=${RUNS:-3}
BUDGETS=${BUDGETS:-10% 20% 30%}
LAB=$DEBIT_TOP/lab/lab.sh
[ -x "$DEBIT" ] || { echo "build debit first (make)"; exit 1; }
"$LAB" check >/dev/null 2>&1 || { echo "skipped: $("$LAB" check 2>&1 | tail -1)"; exit 0; }

# scenario BUDGET LOWAT: the two servers of etc/lab-experiment.conf's first columns
scenario() {
  local lowat=${2:+notsent_lowat = \"$2\"; }
  cat <<CONF
servers = (
  { name = "TSO/GSO on";  url = "http://198.18.1.2/files/256Mio.dat"; lab = { tso = true;  gso = true;  cpu = "$1"; cc = "cubic"; $lowat}; },
  { name = "TSO/GSO off"; url = "http://198.18.2.2/files/256Mio.dat"; lab = { tso = false; gso = false; cpu = "$1"; $lowat}; }
);
runs = $RUNS;
order = "alternate";
max_time = 120;
CONF
}

echo "machine: $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ); $RUNS x 256 MiB per server, 1 Gbit/s tbf, base RTT 5.5 ms, cost line ${LAB_COST_BYTE_NS:-2} ns/B + ${LAB_COST_PACKET_NS:-0} ns/packet"
printf '%-28s %12s %12s %10s %15s  %s\n' budget "on Mb/s" "off Mb/s" "off/on" "B/packet on|off" "limited_by (on | off)"
n=0
for c in $(for b in $BUDGETS; do echo "$b:128KiB"; done) "20%:"; do
  b=${c%%:*} lw=${c#*:} n=$((n + 1))
  scenario "$b" "$lw" >"$T_TMP/s$n.conf"
  DIR=$T_TMP/lab$n
  t_on_exit "'$LAB' down '$DIR' >/dev/null 2>&1"
  LAB_QUIET=1 "$LAB" up "$DIR" --ram 256MiB --base-delay 5.5ms --scenario "$T_TMP/s$n.conf" >"$T_TMP/up$n.log" 2>&1 ||
    { echo "$b: the lab did not come up: $(tail -2 "$T_TMP/up$n.log")"; continue; }
  . "$DIR/lab.env"
  tx() { ip netns exec "$1" cat /sys/class/net/eth0/statistics/tx_bytes /sys/class/net/eth0/statistics/tx_packets | tr '\n' ' '; }
  read -r b10 p10 <<<"$(tx "$LAB_NS_S1")"; read -r b20 p20 <<<"$(tx "$LAB_NS_S2")"
  ip netns exec "$LAB_NS_C" "$DEBIT" -q --scenario "$T_TMP/s$n.conf" --bottleneck "$LAB_RATE" --format json \
    -o "$T_TMP/r$n.json" 2>"$T_TMP/d$n.err"
  read -r b11 p11 <<<"$(tx "$LAB_NS_S1")"; read -r b21 p21 <<<"$(tx "$LAB_NS_S2")"
  bpp="$(((b11 - b10) / (p11 - p10 + 1)))|$(((b21 - b20) / (p21 - p20 + 1)))"
  "$LAB" down "$DIR" >/dev/null 2>&1
  jq -r --arg b "$b" --arg lw "${lw:-none}" --arg bpp "$bpp" '
    (.summary | map({(.server): .}) | add) as $m
    | [($b + ", notsent_lowat " + $lw), ($m["TSO/GSO on"].median_mbps // 0), ($m["TSO/GSO off"].median_mbps // 0),
       ($m["TSO/GSO on"].limited_by // "-"), ($m["TSO/GSO off"].limited_by // "-"), $bpp]
    | "\(.[0])\t\(.[1])\t\(.[2])\t\(.[3])\t\(.[4])\t\(.[5])"' "$T_TMP/r$n.json" 2>/dev/null |
    awk -F'\t' '{printf "%-28s %12.0f %12.0f %10.3f %15s  %s | %s\n", $1, $2, $3, ($2 > 0 ? $3 / $2 : 0), $6, $4, $5}'
  [ -s "$T_TMP/r$n.json" ] || echo "$b: debit wrote no result: $(tail -2 "$T_TMP/d$n.err")"
done
echo "the budgeted servers also compete for what the machine's other jobs leave: these move with its load"
