#!/usr/bin/env bash
# Benchmark (issue 5): does debit measure what the path carries? In the lab (lab/lab.sh:
# 1 Gbit/s tbf bottleneck, client-side latency via netem or the delay line), for 256 MiB
# downloads at +0/+10/+30 ms: debit's median average throughput vs iperf3 -R -n 256M's
# (server sends, as a download) through the same path, interleaved (debit, iperf3,
# debit, ...), RUNS rounds per scenario. Prints both medians and the ratio debit/iperf3.
# Goal: within 2% (0.98 .. 1.02) in every scenario.
#   RUNS=5 SIZE=256M bench/fidelity.sh      (as root)
# Both measure from the first byte after the request to the last: debit the wget way
# (body bytes / time from end of headers to last byte), iperf3 its received bytes over the
# test's duration; same server host (s1, TSO/GSO on), same congestion control (the
# servers' default), fresh connection each run, tcp_no_metrics_save=1 in every netns.
. "$(dirname "$0")/../tests/lib/common.sh"
need_root "the lab (network namespaces)"
need_cmd iperf3 ip tc
RUNS=${RUNS:-5}
SIZE=${SIZE:-256M}
LAB=$DEBIT_TOP/lab/lab.sh
[ -x "$DEBIT" ] || { echo "build debit first (make)"; exit 1; }
[ -x "$DEBITD" ] || { echo "build debitd first (make)"; exit 1; }
bytes=$(numfmt --from=iec "$SIZE") || { echo "SIZE=$SIZE: not a size"; exit 2; }
case $SIZE in 256M) path=/files/256Mio.dat ;; 100M) path=/files/100Mio.dat ;; 32M) path=/files/32Mio.dat ;;
  *) echo "SIZE must be 256M, 100M or 32M (files the lab serves)"; exit 2 ;; esac

DIR=$T_TMP/lab
t_on_exit "'$LAB' down '$DIR'"
LAB_QUIET=1 "$LAB" up "$DIR" --ram 256MiB || exit 1
. "$DIR/lab.env"
url=$LAB_S1_URL$path
C() { ip netns exec "$LAB_NS_C" "$@"; }

ip netns exec "$LAB_NS_S1" iperf3 -s -p 5201 >"$T_TMP/iperf3-server.log" 2>&1 &
t_track $!
for ((i = 0; i < 50; i++)); do ip netns exec "$LAB_NS_S1" ss -Htln 'sport = :5201' | grep -q . && break; sleep 0.1; done

median() { sort -g | awk '{a[NR]=$1} END {if (!NR) print 0; else if (NR%2) print a[(NR+1)/2]; else printf "%.4f\n", (a[NR/2]+a[NR/2+1])/2}'; }
flush() { for n in "$LAB_NS_C" "$LAB_NS_S1"; do ip -n "$n" tcp_metrics flush all 2>/dev/null; done; }

echo "lab: $("$LAB" check | sed 's/^lab: //'); bottleneck $LAB_RATE; $SIZE per download; $RUNS rounds"
printf '%-9s %14s %14s %8s %s\n' scenario "debit Mb/s" "iperf3 Mb/s" ratio "goal 0.98..1.02"
worst=0
for d in 0 10 30; do
  mech=""
  if [ "$d" -gt 0 ]; then mech=$("$LAB" delay "$DIR" "${d}ms" | sed -n 's/.* via //p'); fi
  : >"$T_TMP/debit.$d"; : >"$T_TMP/iperf.$d"
  for ((r = 1; r <= RUNS; r++)); do
    flush
    C "$DEBIT" -q -n 1 --format json "$url" 2>/dev/null |
      awk -F': ' '/"avg_mbps"/ {gsub(/,/, "", $2); print $2; exit}' >>"$T_TMP/debit.$d"
    flush
    C iperf3 -c "$LAB_S1_ADDR" -p 5201 -R -n "$bytes" -J 2>/dev/null |
      awk '/"sum_received"/ {s = 1} s && /"bits_per_second"/ {gsub(/[^0-9.e+]/, "", $2); printf "%.3f\n", $2 / 1e6; exit}' >>"$T_TMP/iperf.$d"
  done
  md=$(median <"$T_TMP/debit.$d"); mi=$(median <"$T_TMP/iperf.$d")
  ratio=$(awk -v a="$md" -v b="$mi" 'BEGIN {printf "%.3f", (b > 0) ? a / b : 0}')
  verdict=$(awk -v r="$ratio" 'BEGIN {if (r >= 0.98 && r <= 1.02) print "ok"; else print "MISSED"}')
  worst=$(awk -v w="$worst" -v r="$ratio" 'BEGIN {x = r - 1; if (x < 0) x = -x; if (x > w) print x; else print w}')
  printf '%-9s %14.1f %14.1f %8s %s%s\n' "+$d ms" "$md" "$mi" "$ratio" "$verdict" "${mech:+ (delay via $mech)}"
  printf '#   runs: debit %s | iperf3 %s\n' "$(tr '\n' ' ' <"$T_TMP/debit.$d")" "$(tr '\n' ' ' <"$T_TMP/iperf.$d")"
done
"$LAB" delay "$DIR" off >/dev/null
echo "worst deviation: $(awk -v w="$worst" 'BEGIN {printf "%.1f%%", w * 100}') (goal <= 2%)"
