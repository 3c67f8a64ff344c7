#!/usr/bin/env bash
# Benchmark (issue 3): is debit ever the bottleneck?
#  1. 1 GiB from nginx (tmpfs, sendfile) over loopback: debit vs curl vs wget, interleaved
#     (debit curl wget, debit curl wget, ...), RUNS each: median wall time, median client
#     CPU seconds (user+sys of the client process), ratios debit/curl and debit/wget.
#     Goal: debit wall <= 0.9 x curl and CPU <= curl.
#  2. debitd -> debit vs iperf3 -R -Z (the machine's loopback limit), 1 GiB each,
#     interleaved: median throughput and the ratio. Goal: >= 0.9 x iperf3.
#   RUNS=5 bench/client.sh
. "$(dirname "$0")/../tests/lib/common.sh"
need_cmd curl wget nginx jq
RUNS=${RUNS:-5}
SIZE_BYTES=1073741824
[ -x "$DEBIT" ] || { echo "build debit first (make)"; exit 1; }

root=$(mktemp -d /dev/shm/debit-bench.XXXXXX)
t_on_exit "rm -rf '$root'"
mkdir -p "$root/files"
head -c $SIZE_BYTES /dev/urandom >"$root/files/1Gio.dat"
chmod -R a+rX "$root"
port_n=$(free_port)
nginx_spawn "$root" "$port_n"
url=http://127.0.0.1:$port_n/files/1Gio.dat
wait_http "$url" 100 || { echo "nginx did not start"; exit 1; }

# timed NAME CMD... : one line "NAME wall user+sys" into $T_TMP/runs (bash's time keyword
# measures the child's real, user and system time).
timed() {
  local name=$1; shift
  local TIMEFORMAT='%R %U %S' t
  t=$( { time "$@" >/dev/null 2>&1; } 2>&1 )
  echo "$name $(awk '{printf "%.3f %.3f", $1, $2 + $3}' <<<"$t")" >>"$T_TMP/runs"
}
median() { sort -g | awk '{a[NR]=$1} END{if (NR%2) print a[(NR+1)/2]; else printf "%.4f\n", (a[NR/2]+a[NR/2+1])/2}'; }
col() { awk -v n="$1" -v c="$2" '$1==n {print $c}' "$T_TMP/runs" | median; }

: >"$T_TMP/runs"
curl -s -o /dev/null "$url"   # warm the page cache and the socket paths once
for i in $(seq "$RUNS"); do
  timed debit "$DEBIT" -q -n 1 --no-progress "$url"
  timed curl curl -s -o /dev/null "$url"
  timed wget wget -q -O /dev/null "$url"
done
echo "1 GiB from nginx over loopback, $RUNS interleaved runs each (median):"
printf '  %-6s %10s %14s %12s\n' client "wall (s)" "rate (Gb/s)" "CPU (s)"
for c in debit curl wget; do
  w=$(col $c 2) cpu=$(col $c 3)
  printf '  %-6s %10.3f %14.2f %12.3f\n' $c "$w" "$(awk -v w="$w" -v b=$SIZE_BYTES 'BEGIN{print b*8/w/1e9}')" "$cpu"
done
dw=$(col debit 2) cw=$(col curl 2) ww=$(col wget 2) dc=$(col debit 3) cc=$(col curl 3) wc=$(col wget 3)
r() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b > 0) printf "%.3f", a/b; else print "n/a" }'; }
echo "  ratios: wall debit/curl $(r "$dw" "$cw") (goal <= 0.9), debit/wget $(r "$dw" "$ww");" \
     "CPU debit/curl $(r "$dc" "$cc") (goal <= 1), debit/wget $(r "$dc" "$wc")"

# --- 2. debitd -> debit vs iperf3 -R -Z ------------------------------------------------------
if [ ! -x "$DEBITD" ] || ! command -v iperf3 >/dev/null; then
  echo "part 2 skipped: needs build/debitd and iperf3"
  exit 0
fi
port_d=$(free_port); port_i=$(free_port)
cat >"$T_TMP/d.conf" <<CONF
listen = ( { address = "127.0.0.1"; port = $port_d; } );
files = ( { path = "/ram/1GiB.dat"; size = "1GiB"; } );
log = { level = "warn"; };
CONF
debitd_spawn "$T_TMP/d.conf"
durl=http://127.0.0.1:$port_d/ram/1GiB.dat
wait_http "$durl" 100 || { echo "debitd did not start"; exit 1; }
debitd_content_ready "http://127.0.0.1:$port_d" || { echo "debitd: content not ready in 30 s"; exit 1; }
t_bg iperf3 iperf3 -s -p "$port_i"
wait_port "$port_i" 100 || { echo "iperf3 -s did not start"; exit 1; }
: >"$T_TMP/rates"
for i in $(seq "$RUNS"); do
  "$DEBIT" -q -n 1 --format json "$durl" | jq -r '"debit \(.runs[0].avg_mbps) \(.runs[0].total_mbps)"' >>"$T_TMP/rates"
  iperf3 -c 127.0.0.1 -p "$port_i" -R -Z -n 1G -J 2>/dev/null |
    jq -r '"iperf3 \(.end.sum_received.bits_per_second / 1e6)"' >>"$T_TMP/rates"
  sleep 0.2 # iperf3 -s needs a moment between tests
done
dm=$(awk '$1=="debit"{print $2}' "$T_TMP/rates" | median)
dt=$(awk '$1=="debit"{print $3}' "$T_TMP/rates" | median)
im=$(awk '$1=="iperf3"{print $2}' "$T_TMP/rates" | median)
echo "1 GiB debitd -> debit vs iperf3 -R -Z -n 1G on loopback, $RUNS interleaved runs each (median):"
printf '  debit  %10.0f Mb/s (wget-style average), %10.0f Mb/s (curl-style)\n' "$dm" "$dt"
printf '  iperf3 %10.0f Mb/s (receiver)\n' "$im"
echo "  ratio debit/iperf3: $(r "$dm" "$im") (goal >= 0.9); curl-style $(r "$dt" "$im")"
