#!/usr/bin/env bash
# Benchmark: where debitd's CPU goes with many clients (the profile behind
# docs/performance.md's per-request tables). debitd as bench/many.sh runs it (WORKERS
# threads, no per-address cap, access log off) serves FILE (default 4KiB) to wrk -c CONNS
# (default 1000) while `perf record --call-graph dwarf` samples it for SECS (default 3)
# seconds; prints wrk's requests/s and debitd's CPU per request over wrk's run, the shares
# of debitd's samples by object (kernel, libc, libmicrohttpd, debitd), the top TOP self
# symbols, and the share (children included) of each function named in FUNCS. A profile
# has no goal: it says which part of a request costs what, the ratios are bench/many.sh's.
# With PEER=nginx (the default when nginx is installed; PEER= for none) nginx, with as many
# workers and the same bytes from tmpfs, is then sampled the same way (all its workers): its
# split by object and top symbols, so that the kernel's and user space's shares of the two
# servers come from one run.
#   WORKERS=2 FILE=4KiB CONNS=1000 SECS=3 TOP=15 FUNCS="http_file ..." PEER=nginx bench/profile.sh
. "$(dirname "$0")/../tests/lib/common.sh"
. "$(dirname "$0")/lib.bash"
need_cmd curl wrk perf
WORKERS=${WORKERS:-$(nproc)}
FILE=${FILE:-4KiB}
CONNS=${CONNS:-1000}
SECS=${SECS:-3}
TOP=${TOP:-15}
FUNCS=${FUNCS:-http_access http_file http_file_head http_file_head_add http_conn_reuse_get MHD_del_response_header \
MHD_destroy_response http_completed transfers_begin transfers_finish tcp_info_read __memset_avx2_unaligned_erms \
__libc_sendmsg __libc_recv epoll_wait}
command -v "$DEBITD" >/dev/null || { echo "build debitd first (make)"; exit 1; }
perf record -o /dev/null -- true >/dev/null 2>&1 || { echo "profile skipped: perf cannot record here ($(perf record -o /dev/null -- true 2>&1 | head -1))"; exit 0; }
ulimit -n "$(ulimit -Hn)" 2>/dev/null
[ "$(ulimit -n)" -gt $((CONNS + 100)) ] || { echo "ulimit -n $(ulimit -n) is too low for $CONNS connections"; exit 1; }
port=$(free_port)
cat >"$T_TMP/d.conf" <<CONF
listen = ( { address = "127.0.0.1"; port = $port; } );
threads = $WORKERS;
files = ( { path = "/ram/$FILE.dat"; size = "$FILE"; } );
limits = { per_ip = 0; header_timeout = "60s"; };
log = { access = "off"; level = "warn"; };
CONF
t_bg debitd "$DEBITD" -c "$T_TMP/d.conf"
pid=$T_LAST_PID
url=http://127.0.0.1:$port/ram/$FILE.dat
wait_http "$url" 300 "" "$pid" || { echo "debitd did not start:"; cat "$T_TMP/debitd.log"; exit 1; }
PEER=${PEER-$(command -v nginx >/dev/null && echo nginx)}
if [ "$PEER" = nginx ]; then # the peer's copy of the bytes, taken now
  root=$(mktemp -d /dev/shm/debit-profile.XXXXXX)
  t_on_exit "rm -rf '$root'"
  mkdir -p "$root/ram"
  chmod 755 "$root" "$root/ram"
  curl -s -o "$root/ram/$FILE.dat" "$url"
  chmod 644 "$root/ram/$FILE.dat"
fi
echo "machine: $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ); debitd $WORKERS workers, $FILE, wrk -c$CONNS -t$(nproc), perf for ${SECS}s; tcp_congestion_control $(cat /proc/sys/net/ipv4/tcp_congestion_control)"
# wrk_cpu PIDS...: after wrk (started by the caller, in $T_TMP/$WRK.log) ends, "N requests
# (R/s), CPU C us/request" of wrk's whole run; CPU of every thread of PIDS from C0
wrk_cpu() {
  local c1 n rps
  c1=$(cpu_of "$@")
  n=$(awk '/ requests in / {print $1}' "$T_TMP/$WRK.log") rps=$(awk '/Requests\/sec/ {print $2}' "$T_TMP/$WRK.log")
  read -r _ a <<<"$C0"; read -r _ b <<<"$c1"
  awk -v n="$n" -v r="$rps" -v a="$a" -v b="$b" 'BEGIN { printf "%d requests (%s/s, perf running for part of them), server CPU %.1f us/request", n, r, (n > 0 ? (b - a) * 1000 / n : 0) }'
  echo "; $(grep -E 'Socket errors|Non-2xx' "$T_TMP/$WRK.log" | tr -s ' ' | tr '\n' ';' | sed 's/;$//' | grep . || echo "no socket errors, no non-2xx")"
}
# wrk runs 1 s before and after the sampled window, so that it covers only steady load
C0=$(cpu_of "$pid") WRK=wrk
t_bg wrk wrk -t"$(nproc)" -c"$CONNS" -d"$((SECS + 2))s" --timeout 10s "$url"
wrk_pid=$T_LAST_PID
sleep 1
perf record -q -F 999 --call-graph dwarf,16384 -p "$pid" -o "$T_TMP/perf.data" -- sleep "$SECS" >/dev/null 2>&1
wait "$wrk_pid" 2>/dev/null
echo "debitd ($WORKERS workers) under wrk: $(wrk_cpu "$pid")"
rep() { perf report -i "$T_TMP/perf.data" --stdio -g none "$@" 2>/dev/null | grep -E '^ +[0-9.]+%'; }
# split_and_top NAME: the shares by object and the top symbols of $T_TMP/perf.data
split_and_top() {
  echo "$1 by object (self):"
  rep --no-children --sort dso | awk '{printf "  %7s  %s\n", $1, $2}'
  echo "$1 top $TOP symbols (self):"
  rep --no-children --sort dso,sym | head -n "$TOP" | awk '{o = $1; $1 = ""; printf "  %7s %s\n", o, $0}'
}
split_and_top debitd
echo "debitd named functions (children included, self):"
rep --children --sort sym >"$T_TMP/children"
for f in $FUNCS; do
  awk -v f="$f" '$NF == f { printf "  %7s %7s  %s\n", $1, $2, f; found = 1; exit } END { if (!found) printf "  %7s %7s  %s\n", "-", "-", f }' "$T_TMP/children"
done
stop_pid "$pid" TERM
[ "$PEER" = nginx ] || exit 0
port_n=$(free_port)
bench_nginx "$root" "$port_n" "/ram/$FILE.dat"
npid=$NGINX_PID
nurl=http://127.0.0.1:$port_n/ram/$FILE.dat
workers=$(pgrep -P "$npid" | tr '\n' ',' | sed 's/,$//')
C0=$(cpu_of ${workers//,/ }) WRK=wrk2
t_bg wrk2 wrk -t"$(nproc)" -c"$CONNS" -d"$((SECS + 2))s" --timeout 10s "$nurl"
wrk_pid=$T_LAST_PID
sleep 1
perf record -q -F 999 --call-graph dwarf,16384 -p "$workers" -o "$T_TMP/perf.data" -- sleep "$SECS" >/dev/null 2>&1
wait "$wrk_pid" 2>/dev/null
echo "nginx ($WORKERS workers, sendfile on, tcp_nopush on) under wrk: $(wrk_cpu ${workers//,/ })"
split_and_top nginx
