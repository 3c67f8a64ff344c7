#!/usr/bin/env bash
# Benchmark (issue 4): does the server's TSO/GSO state change throughput? Two server
# namespaces, each with its own veth to one client namespace (no bottleneck, 198.18.0.0/15):
# debitd with TSO/GSO on in one, off in the other (set by debitd itself from its config),
# the same 1 GiB file; `debit -n 5` alternating between them. Prints both medians and the
# ratio (iperf3 measured about 2.2x on this kernel), plus the bytes per packet each server
# veth sent (the proof the toggle took effect). Needs root.
#   RUNS=5 SIZE=1GiB bench/offload.sh
. "$(dirname "$0")/../tests/lib/common.sh"
[ "$(id -u)" -eq 0 ] || { echo "skipped: needs root (network namespaces, ethtool -K)"; exit 0; }
need_cmd jq ip
[ -x "$DEBIT" ] || { echo "build debit first (make)"; exit 1; }
RUNS=${RUNS:-5}
SIZE=${SIZE:-1GiB}

ns_new C cli || { echo "cannot create namespaces"; exit 1; }
ns_new S1 on
ns_new S2 off
ns_veth "$S1" "v1$T_ID" 198.18.1.1/24 "$C" "c1$T_ID" 198.18.1.2/24
ns_veth "$S2" "v2$T_ID" 198.18.2.1/24 "$C" "c2$T_ID" 198.18.2.2/24
PORT=8080
for i in 1 2; do
  [ $i = 1 ] && { ns=$S1; st=true; } || { ns=$S2; st=false; }
  cat >"$T_TMP/s$i.conf" <<CONF
listen = ( { address = "198.18.$i.1"; port = $PORT; } );
files = ( { path = "/files/test.dat"; size = "$SIZE"; } );
log = { access = "off"; level = "warn"; };
offload = { interface = "v$i$T_ID"; tso = $st; gso = $st; gro = true; state_file = "$T_TMP/off$i.state"; };
CONF
  debitd_spawn "$T_TMP/s$i.conf" "$ns"
done
for i in 1 2; do
  wait_http "http://198.18.$i.1:$PORT/status" 300 "$C" || { echo "debitd $i did not start"; cat "$T_TMP"/debitd-*.log; exit 1; }
  wait_for 300 sh -c "ip netns exec $C curl -s --max-time 2 http://198.18.$i.1:$PORT/status | grep -q '\"state\": *\"ready\"'" ||
    { echo "debitd $i: content not ready in 30 s"; exit 1; }
done
for i in 1 2; do
  ns=$S1; [ $i = 2 ] && ns=$S2
  echo "server $i: $(ip netns exec "$C" curl -s -I "http://198.18.$i.1:$PORT/files/test.dat" | tr -d '\r' | grep -i '^x-debit-offload')"
done
tx() { ip netns exec "$1" cat "/sys/class/net/$2/statistics/tx_bytes" "/sys/class/net/$2/statistics/tx_packets" | tr '\n' ' '; }
read -r b10 p10 <<<"$(tx "$S1" "v1$T_ID")"; read -r b20 p20 <<<"$(tx "$S2" "v2$T_ID")"
ip netns exec "$C" "$DEBIT" -q -n "$RUNS" --format json -o "$T_TMP/r.json" \
  on="http://198.18.1.1:$PORT/files/test.dat" off="http://198.18.2.1:$PORT/files/test.dat"
read -r b11 p11 <<<"$(tx "$S1" "v1$T_ID")"; read -r b21 p21 <<<"$(tx "$S2" "v2$T_ID")"
on=$(jq -r '.summary[] | select(.server == "on") | .median_mbps' "$T_TMP/r.json")
off=$(jq -r '.summary[] | select(.server == "off") | .median_mbps' "$T_TMP/r.json")
printf 'debitd TSO/GSO on : median %8.0f Mb/s over %s runs (%s B/packet on its veth)\n' "$on" \
  "$(jq -r '.summary[] | select(.server == "on") | .runs_ok' "$T_TMP/r.json")" $(((b11 - b10) / (p11 - p10)))
printf 'debitd TSO/GSO off: median %8.0f Mb/s over %s runs (%s B/packet on its veth)\n' "$off" \
  "$(jq -r '.summary[] | select(.server == "off") | .runs_ok' "$T_TMP/r.json")" $(((b21 - b20) / (p21 - p20)))
awk -v a="$on" -v b="$off" 'BEGIN{printf "ratio on/off: %.2f (iperf3 measured about 2.2x on this kernel)\n", a/b}'
