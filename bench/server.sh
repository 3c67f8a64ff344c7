#!/usr/bin/env bash
# Benchmark: debitd vs nginx (the mirror stand-in) serving the same 1 GiB from RAM over
# loopback, downloaded by curl to /dev/null, runs interleaved (A B A B ...), N each.
# Prints per server: median wall time, median throughput, median server CPU seconds per
# download (utime+stime from /proc/PID/stat, every process of the server), and the ratios
# debitd/nginx. Then debitd's memory while serving 1 GiB + 100 MiB + 10 MiB files, and its
# start-up time to the first byte of /ram/1GiB.dat.
# Goals (issue 2): wall <= 0.95 x nginx, CPU <= nginx, RSS <= 1 GiB + 64 MiB, start < 1 s.
#   RUNS=5 SIZE=1GiB bench/server.sh
. "$(dirname "$0")/../tests/lib/common.sh"
need_cmd curl nginx
RUNS=${RUNS:-5}
TCK=$(getconf CLK_TCK)
command -v "$DEBITD" >/dev/null || { echo "build debitd first (make)"; exit 1; }

# tmpfs for nginx's copy: /dev/shm is tmpfs on Debian
root=$(mktemp -d /dev/shm/debit-bench.XXXXXX)
t_on_exit "rm -rf '$root'"
mkdir -p "$root/ram"
chmod 755 "$root" "$root/ram" # nginx workers run as nobody

port_d=$(free_port); port_n=$(free_port)
while [ "$port_n" = "$port_d" ]; do port_n=$(free_port); done
cat >"$T_TMP/d.conf" <<CONF
listen = ( { address = "127.0.0.1"; port = $port_d; } );
files = ( { path = "/ram/1GiB.dat"; size = "1GiB"; }, { path = "/files/100Mio.dat"; size = "100Mio"; },
          { path = "/files/10Mio.dat"; size = "10Mio"; } );
log = { access = "off"; level = "info"; };
CONF

# start-up to first byte, measured on a fresh process
t0=$(date +%s.%N)
start_debitd "$T_TMP/d.conf"
first=""
for _ in $(seq 1000); do
  if curl -s -o /dev/null -r 0-0 --max-time 5 "http://127.0.0.1:$port_d/ram/1GiB.dat"; then first=$(date +%s.%N); break; fi
  sleep 0.005
done
[ -n "$first" ] || { echo "debitd did not answer"; exit 1; }
startup=$(awk -v a="$t0" -v b="$first" 'BEGIN{printf "%.3f", b-a}')

curl -s -o "$root/ram/1GiB.dat" "http://127.0.0.1:$port_d/ram/1GiB.dat"
start_nginx "$root" "$port_n"
wait_http "http://127.0.0.1:$port_n/ram/1GiB.dat" 100 || { echo "nginx did not start"; exit 1; }
h_n=$(curl -s "http://127.0.0.1:$port_n/ram/1GiB.dat" | sha256sum); h_d=$(curl -s "http://127.0.0.1:$port_d/ram/1GiB.dat" | sha256sum)
[ "$h_n" = "$h_d" ] || { echo "servers differ: nginx $h_n, debitd $h_d"; exit 1; }

# CPU ticks of a process and its children threads/processes
cpu_ticks() { local t=0 p; for p in "$@"; do t=$((t + $(awk '{print $14 + $15}' /proc/$p/stat 2>/dev/null || echo 0))); done; echo $t; }
nginx_pids() { echo "$NGINX_PID $(pgrep -P "$NGINX_PID" | tr '\n' ' ')"; }

run_one() { # name url pids...
  local name=$1 url=$2; shift 2
  local c0 c1 w
  c0=$(cpu_ticks "$@")
  w=$(curl -s -o /dev/null -w '%{time_total}' "$url")
  c1=$(cpu_ticks "$@")
  echo "$name $w $(awk -v a="$c0" -v b="$c1" -v t="$TCK" 'BEGIN{printf "%.3f", (b-a)/t}')" >>"$T_TMP/runs"
}
: >"$T_TMP/runs"
for i in $(seq "$RUNS"); do
  run_one debitd "http://127.0.0.1:$port_d/ram/1GiB.dat" "$DEBITD_PID"
  run_one nginx "http://127.0.0.1:$port_n/ram/1GiB.dat" $(nginx_pids)
done
median() { sort -g | awk '{a[NR]=$1} END{ if (NR%2) print a[(NR+1)/2]; else printf "%.4f\n", (a[NR/2]+a[NR/2+1])/2 }'; }
for s in debitd nginx; do
  w=$(awk -v s=$s '$1==s{print $2}' "$T_TMP/runs" | median)
  c=$(awk -v s=$s '$1==s{print $3}' "$T_TMP/runs" | median)
  eval "W_$s=$w C_$s=$c"
  printf '%-7s median wall %.3f s  (%.0f Mb/s)  median server CPU %.3f s  runs: %s\n' "$s" "$w" \
    "$(awk -v w="$w" 'BEGIN{print 8*1073741824/w/1e6}')" "$c" \
    "$(awk -v s=$s '$1==s{printf "%s ", $2}' "$T_TMP/runs")"
done
printf 'ratio debitd/nginx: wall %.3f (goal <= 0.95)  CPU %.3f (goal <= 1)\n' \
  "$(awk -v a="$W_debitd" -v b="$W_nginx" 'BEGIN{print a/b}')" \
  "$(awk -v a="$C_debitd" -v b="$C_nginx" 'BEGIN{print (b > 0 ? a/b : 0)}')"

# memory after serving each of the three files once
for f in ram/1GiB.dat files/100Mio.dat files/10Mio.dat; do curl -s -o /dev/null "http://127.0.0.1:$port_d/$f"; done
rss=$(awk '/^VmRSS/{print $2}' /proc/$DEBITD_PID/status)
shm=$(awk '/^RssShmem/{print $2}' /proc/$DEBITD_PID/status)
region=$(curl -s "http://127.0.0.1:$port_d/status" | sed -n 's/.*"region_bytes": \([0-9]*\).*/\1/p')
total=$(( rss * 1024 - shm * 1024 + region ))
printf 'debitd memory serving 1 GiB + 100 MiB + 10 MiB: RSS %.1f MiB (of which mapped content %.1f MiB) + content memfd %.1f MiB => %.1f MiB in all (goal <= 1088 MiB)\n' \
  "$(awk -v k="$rss" 'BEGIN{print k/1024}')" "$(awk -v k="$shm" 'BEGIN{print k/1024}')" \
  "$(awk -v b="$region" 'BEGIN{print b/1048576}')" "$(awk -v b="$total" 'BEGIN{print b/1048576}')"
printf 'debitd start-up to first byte with 1 GiB of content: %s s (goal < 1 s); generation alone: %s\n' "$startup" \
  "$(grep -o "generated from seed [0-9]* in [0-9.]* s" "$T_TMP/debitd.log" | head -1 | sed "s/.* in //")"
