#!/usr/bin/env bash
# Benchmark (issue 33): what debitd's speed-test endpoints cost against a plain file of the
# same size from the same debitd, and against LibreSpeed's own PHP backend on nginx +
# php-fpm. SIZE_MIB (default 100) MiB each: debitd's /ram/file.dat, its
# garbage.php?ckSize=SIZE_MIB and __down?bytes=SIZE_MIB MiB; then garbage.php under nginx
# (fastcgi) + php-fpm (pm static, 2 children) in a temp dir on a loopback port. curl
# downloads each to /dev/null, REPS rounds (default 7) with the order rotated every round.
# Per target: median throughput (min-max) and the server's CPU per GiB (every thread of
# its processes: se.sum_exec_runtime of /proc/PID/task/*/sched; for PHP nginx's master
# and workers plus php-fpm's master and children), and the ratios: garbage and __down
# against the file (goal <= 1.05x CPU per GiB), and debitd's garbage against PHP's in
# bytes per CPU second (goal >= 2x).
# The garbage.php run under php-fpm is written by this script from LibreSpeed's documented
# behaviour (backend/garbage.php of librespeed/speedtest, LGPL: not vendored): the same
# headers, compression and output buffering off, one 1 MiB block of
# openssl_random_pseudo_bytes echoed ckSize times with flush() after each.
#   SIZE_MIB=100 REPS=7 bench/speedtest.sh
. "$(dirname "$0")/../tests/lib/common.sh"
. "$(dirname "$0")/lib.bash"
need_cmd curl nginx
SIZE_MIB=${SIZE_MIB:-100}
REPS=${REPS:-7}
command -v "$DEBITD" >/dev/null || { echo "build debitd first (make)"; exit 1; }
FPM=$(ls /usr/sbin/php-fpm* 2>/dev/null | head -1)
bytes=$((SIZE_MIB << 20))
echo "machine: $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ); $(nginx -v 2>&1)${FPM:+, $($FPM -v | head -1 | cut -d' ' -f1-2)}; $SIZE_MIB MiB per download, $REPS rounds"
echo "note: a shared machine (other jobs run beside this one): figures as measured"

port_d=$(free_port)
cat >"$T_TMP/d.conf" <<CONF
listen = ( { address = "127.0.0.1"; port = $port_d; } );
threads = 2;
files = ( { path = "/ram/file.dat"; size = "${SIZE_MIB}MiB"; } );
log = { access = "off"; level = "warn"; };
limits = { per_ip = 0; };
CONF
t_bg debitd "$DEBITD" -c "$T_TMP/d.conf"
DEBITD_PID=$T_LAST_PID
wait_http "http://127.0.0.1:$port_d/ram/file.dat" 300 "" "$DEBITD_PID" || { echo "debitd did not start"; exit 1; }
debitd_content_ready "http://127.0.0.1:$port_d"

names=(file garbage down) urls=("http://127.0.0.1:$port_d/ram/file.dat"
  "http://127.0.0.1:$port_d/garbage.php?ckSize=$SIZE_MIB" "http://127.0.0.1:$port_d/__down?bytes=$bytes")
pids_file=$T_TMP/pids
declare -A PIDS=([file]=$DEBITD_PID [garbage]=$DEBITD_PID [down]=$DEBITD_PID)

# LibreSpeed's PHP backend: nginx -> php-fpm over a unix socket, in $T_TMP/ls
if [ -n "$FPM" ]; then
  ls=$T_TMP/ls
  mkdir -p "$ls/www/backend" "$ls/logs" "$ls/tmp"
  chmod 755 "$T_TMP" "$ls" "$ls/www" "$ls/www/backend"
  cat >"$ls/www/backend/garbage.php" <<'PHP'
<?php
// LibreSpeed's garbage.php, rewritten from its documented behaviour (see bench/speedtest.sh)
@ini_set('zlib.output_compression', 'Off');
@ini_set('output_buffering', 'Off');
@ini_set('output_handler', '');
header('HTTP/1.1 200 OK');
if (isset($_GET['cors'])) {
    header('Access-Control-Allow-Origin: *');
    header('Access-Control-Allow-Methods: GET, POST');
}
header('Content-Description: File Transfer');
header('Content-Type: application/octet-stream');
header('Content-Disposition: attachment; filename=random.dat');
header('Content-Transfer-Encoding: binary');
header('Cache-Control: no-store, no-cache, must-revalidate, max-age=0, s-maxage=0');
header('Cache-Control: post-check=0, pre-check=0', false);
header('Pragma: no-cache');
$block = openssl_random_pseudo_bytes(1048576);
$n = isset($_GET['ckSize']) ? intval($_GET['ckSize']) : 4;
if (empty($n)) { $n = 4; }
if ($n > 1024) { $n = 1024; }
for ($i = 0; $i < $n; $i++) { echo $block; flush(); }
PHP
  chmod 644 "$ls/www/backend/garbage.php"
  cat >"$ls/fpm.conf" <<FPMCONF
[global]
pid = $ls/fpm.pid
error_log = $ls/logs/fpm.log
daemonize = no
[ls]
listen = $ls/fpm.sock
listen.mode = 0666
pm = static
pm.max_children = 2
$( [ "$(id -u)" = 0 ] && printf 'user = nobody\ngroup = nogroup\n' )
FPMCONF
  t_bg fpm "$FPM" -n -y "$ls/fpm.conf" -F
  FPM_PID=$T_LAST_PID
  wait_for 50 test -S "$ls/fpm.sock" || { echo "php-fpm did not start:"; cat "$T_TMP/fpm.log"; exit 1; }
  port_p=$(free_port)
  cat >"$ls/nginx.conf" <<NGX
worker_processes 2;
pid $ls/nginx.pid;
error_log $ls/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $ls/tmp; proxy_temp_path $ls/tmp; fastcgi_temp_path $ls/tmp;
  uwsgi_temp_path $ls/tmp; scgi_temp_path $ls/tmp;
  server {
    listen 127.0.0.1:$port_p;
    root $ls/www;
    location ~ \.php\$ {
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME \$document_root\$fastcgi_script_name;
      fastcgi_buffering off;   # stream as the PHP flushes (no temp files)
      fastcgi_pass unix:$ls/fpm.sock;
    }
  }
}
NGX
  t_bg nginx_ls nginx -p "$ls" -c "$ls/nginx.conf" -g 'daemon off;'
  NGX_PID=$T_LAST_PID
  wait_http "http://127.0.0.1:$port_p/backend/garbage.php?ckSize=1" 100 "" "$NGX_PID" ||
    { echo "nginx + php-fpm did not answer:"; cat "$ls/logs/error.log" "$ls/logs/fpm.log"; exit 1; }
  names+=(php) urls+=("http://127.0.0.1:$port_p/backend/garbage.php?ckSize=$SIZE_MIB")
  PIDS[php]="$NGX_PID $FPM_PID"
else
  echo "# php-fpm not installed (tools/deps installs it): no PHP comparison"
fi
rm -f "$pids_file"

# every process of a server: its main PIDs and their children (nginx workers, fpm children)
server_pids() { local p; for p in $1; do echo "$p"; ps --ppid "$p" -o pid= 2>/dev/null; done; }
# one download of target I: "MBPS CPU_MS BYTES"
one() {
  local i=$1 pids c0 c1 out
  pids=$(server_pids "${PIDS[${names[$i]}]}")
  c0=$(cpu_of $pids | cut -d' ' -f2)
  out=$(curl -s -o /dev/null -w '%{size_download} %{time_total}' "${urls[$i]}")
  c1=$(cpu_of $pids | cut -d' ' -f2)
  awk -v o="$out" -v a="$c0" -v b="$c1" 'BEGIN{split(o, x, " "); printf "%.1f %.3f %d\n", x[1] * 8 / x[2] / 1e6, b - a, x[1]}'
}
n=${#names[@]}
for i in $(seq 0 $((n - 1))); do one "$i" >/dev/null; done # warm-up
for r in $(seq 1 "$REPS"); do
  for k in $(seq 0 $((n - 1))); do
    i=$(((k + r) % n))
    echo "${names[$i]} $(one "$i")" >>"$T_TMP/rows"
  done
done

printf '%-8s %12s %20s %14s %16s\n' target bytes "Mb/s median (min-max)" "CPU ms/GiB" "MiB per CPU-s"
declare -A CPG MPS
for nm in "${names[@]}"; do
  rows=$(awk -v n="$nm" '$1 == n' "$T_TMP/rows")
  b=$(awk 'NR==1{print $4}' <<<"$rows")
  [ "$b" = "$bytes" ] || echo "# $nm: $b bytes, expected $bytes"
  mb=$(awk '{print $2}' <<<"$rows" | median)
  mm=$(awk '{print $2}' <<<"$rows" | minmax)
  CPG[$nm]=$(awk '{print $3 * 1073741824 / $4}' <<<"$rows" | median)
  MPS[$nm]=$(awk -v c="${CPG[$nm]}" 'BEGIN{printf("%.0f", (c > 0 ? 1024 * 1000 / c : 0))}')
  printf '%-8s %12s %20s %14.1f %16s\n' "$nm" "$b" "$mb ($mm)" "${CPG[$nm]}" "${MPS[$nm]}"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf("%.2f", (b > 0 ? a / b : 0))}'; }
verdict() { awk -v x="$1" -v g="$2" -v op="$3" 'BEGIN{ok = (op == "<=") ? (x <= g) : (x >= g); print (ok ? "goal met" : "goal missed")}'; }
gf=$(ratio "${CPG[garbage]}" "${CPG[file]}"); df=$(ratio "${CPG[down]}" "${CPG[file]}")
echo "CPU per GiB, garbage.php / file: ${gf}x ($(verdict "$gf" 1.05 "<="): <= 1.05x)"
echo "CPU per GiB, __down / file:      ${df}x ($(verdict "$df" 1.05 "<="): <= 1.05x)"
if [ -n "${CPG[php]:-}" ]; then
  pr=$(ratio "${CPG[php]}" "${CPG[garbage]}")
  echo "throughput per CPU, debitd garbage.php / LibreSpeed PHP on nginx + php-fpm: ${pr}x ($(verdict "$pr" 2 ">="): >= 2x)"
fi
