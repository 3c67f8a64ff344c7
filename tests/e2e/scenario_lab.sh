#!/usr/bin/env bash
# debit --scenario with real axes, in two namespaces joined by a veth pair (198.18.0.0/15):
# latency natural / +20 ms on the client veth (netem, or the NFQUEUE delay line on kernels
# without sch_netem; the mechanism is reported), client TSO/GSO on / off. Checks the
# measured min RTT against the configured delay, the offload state recorded per cell,
# the SVG plot (valid XML, one line style per server x client setting), and that every
# qdisc, iptables rule, process and offload change is gone afterwards.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/client_lib.bash"
. "$(dirname "$0")/lab_lib.bash"
need_root "network namespaces, qdiscs and iptables"
need_cmd nginx ethtool tc iptables python3 gnuplot
www_new
ns_new SRV s
ns_new CLI c
ns_veth "$SRV" "vs$T_ID" 198.18.0.1/24 "$CLI" "vc$T_ID" 198.18.0.2/24
DEV=vc$T_ID
port=8080
nginx_spawn "$WWW" $port "$SRV" 198.18.0.1
wait_http "http://198.18.0.1:$port/files/1Mio.dat" 100 "$CLI" || { t_fail "nginx in the server namespace"; t_done; }
ip netns exec "$CLI" sysctl -qw net.ipv4.tcp_no_metrics_save=1

S=$T_TMP/lab.conf
cat >"$S" <<CONF
servers = ( { name = "A"; url = "http://198.18.0.1:$port/files/10Mio.dat"; },
            { name = "B"; url = "http://198.18.0.1:$port/files/1Mio.dat"; } );
runs = 2;
stall = 10;
latency = ( { name = "natural"; delay = 0; },
            { name = "+20 ms"; delay = "20ms"; device = "$DEV"; } );
client_offload = ( { name = "TSO/GSO on"; device = "$DEV"; tso = true; gso = true; },
                   { name = "TSO/GSO off"; device = "$DEV"; tso = false; gso = false; } );
CONF
qdisc_before=$(ip netns exec "$CLI" tc qdisc show dev "$DEV")
ip netns exec "$CLI" timeout 120 "$DEBIT" --no-progress --scenario "$S" --format json -o "$T_TMP/lab.json" \
  --jsonl "$T_TMP/lab.jsonl" --plot "$T_TMP/lab.svg" 2>"$T_TMP/lab.err"
rc=$?
check_eq "lab scenario: exit 0" 0 $rc
[ $rc -eq 0 ] || t_diag "$(tail -5 "$T_TMP/lab.err")"
j=$T_TMP/lab.json
check_eq "16 runs, all ok" "16 true" "$(jq -r '"\(.runs | length) \([.runs[].ok] | all)"' "$j")"
mech=$(jq -r '[.scenario.cells[] | select(.scenario == "+20 ms") | .settings.delay.mechanism] | unique | join(",")' "$j")
lab_expected_mechanism; want=$LAB_MECH
check_eq "delay mechanism: the one this kernel calls for ($want), reported" "$want" "$mech"
base=$(jq '[.runs[] | select(.scenario == "natural") | .min_rtt_ms] | min' "$j")
d20=$(jq '[.runs[] | select(.scenario == "+20 ms") | .min_rtt_ms] | min' "$j")
t_diag "min RTT natural $base ms, +20 ms $d20 ms"
check_cmp "min RTT with +20 ms within 1 ms of 20 ms + base RTT (low)" "$d20" '>=' "$(awk -v b="$base" 'BEGIN{print 20 + b - 1}')"
check_cmp "min RTT with +20 ms within 1 ms of 20 ms + base RTT (high)" "$d20" '<=' "$(awk -v b="$base" 'BEGIN{print 20 + b + 1}')"
check_eq "offloads recorded per cell (tso gso), read back from the device" \
  "TSO/GSO on:true true,TSO/GSO off:false false" \
  "$(jq -r '[.scenario.cells[] | select(.scenario == "natural") | "\(.variant):\(.settings.offload[0].tso) \(.settings.offload[0].gso)"] | join(",")' "$j")"
check_match "stderr table names the delay mechanism per cell" "^- \\+20 ms / TSO/GSO off: .*via $mech" "$(cat "$T_TMP/lab.err")"
med() { jq --arg s "$1" '[.summary[] | select(.scenario == $s and .server == "A") | .median_mbps] | add / length' "$j"; }
check_cmp "A's median falls as the delay rises" "$(med '+20 ms')" '<' "$(med natural)"

# Everything put back.
feat() { ip netns exec "$CLI" ethtool -k "$DEV" | awk -v f="$1:" '$1==f {print $2}'; }
check_eq "client offloads restored" "on on" "$(feat tcp-segmentation-offload) $(feat generic-segmentation-offload)"
check_eq "client veth qdisc as before" "$qdisc_before" "$(ip netns exec "$CLI" tc qdisc show dev "$DEV")"
check_eq "no ingress qdisc left" "" "$(ip netns exec "$CLI" tc qdisc show dev "$DEV" ingress)"
check_eq "no IFB device left" "" "$(ip -n "$CLI" -br link show type ifb)"
check_eq "no NFQUEUE rule left" "" "$(ip netns exec "$CLI" iptables-save 2>/dev/null | grep NFQUEUE)"
check_eq "no delay-line process left" "" "$(ip netns pids "$CLI")"
check_eq "JSONL has the 16 runs" 16 "$(wc -l <"$T_TMP/lab.jsonl")"
# 2 latency panels x 2 client settings x 2 servers = 8 lines, in 4 distinct styles.
check_plot "SVG plot: valid XML, key with one line style per server x client setting, 8 lines" svg "$T_TMP/lab.svg" \
  --key "A, TSO/GSO on|B, TSO/GSO on|A, TSO/GSO off|B, TSO/GSO off" --lines 8 \
  --text "natural" --text "+20 ms" --text "Throughput over time" --text "Latency scenario"

# Ctrl-C in the middle of a delayed, offload-off cell: every setting is put back.
cat >"$T_TMP/int.conf" <<CONF
servers = ( { name = "A"; url = "http://198.18.0.1:$port/files/10Mio.dat"; } );
runs = 200;
latency = ( { name = "+20 ms"; delay = "20ms"; device = "$DEV"; } );
client_offload = ( { name = "TSO/GSO off"; device = "$DEV"; tso = false; gso = false; } );
CONF
ip netns exec "$CLI" "$DEBIT" --no-progress --scenario "$T_TMP/int.conf" --jsonl "$T_TMP/int.jsonl" \
  >"$T_TMP/int.out" 2>"$T_TMP/int.err" &
pid=$!
t_track $pid
for _ in $(seq 150); do [ "$(cat "$T_TMP/int.jsonl" 2>/dev/null | wc -l)" -ge 2 ] && break; sleep 0.1; done
check_eq "during the cell: offloads off" "off off" "$(feat tcp-segmentation-offload) $(feat generic-segmentation-offload)"
kill -INT $pid
for _ in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
wait $pid
check_eq "Ctrl-C: exit 130" 130 $?
check_match "Ctrl-C: table of the finished runs" '^\| \+20 ms \| [0-9]+ \|$' "$(cat "$T_TMP/int.out")"
check_eq "Ctrl-C: offloads restored" "on on" "$(feat tcp-segmentation-offload) $(feat generic-segmentation-offload)"
check_eq "Ctrl-C: qdisc as before" "$qdisc_before" "$(ip netns exec "$CLI" tc qdisc show dev "$DEV")"
check_eq "Ctrl-C: no NFQUEUE rule left" "" "$(ip netns exec "$CLI" iptables-save 2>/dev/null | grep NFQUEUE)"
check_eq "Ctrl-C: no process left in the client namespace" "" "$(ip netns pids "$CLI")"
t_done
