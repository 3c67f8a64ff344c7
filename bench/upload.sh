#!/usr/bin/env bash
# Benchmark: what listen[].connection_memory costs an upload. One debitd with a listener per
# pool size in POOLS (default 8KiB 32KiB 256KiB; 32KiB is the default) and nginx (dav PUT
# into a tmpfs directory: the "PUT-accepting nginx" of tests/e2e/client_streams.sh, which
# stores the body where debitd's sink only counts it, so it does more per byte) each take
# SIZE (default 1 GiB) by `curl -T` from tmpfs, REPS rounds (default 4), the servers in a
# rotated order. libmicrohttpd reads an upload into half of the pool (the read buffer), one
# recv and one epoll_wait per buffer: per server the median upload rate with min-max, the
# server's CPU per GiB (all its threads, se.sum_exec_runtime) and the machine's (all CPUs:
# server, curl and the kernel's loopback work), and ratios against debitd at 32KiB (and
# nginx's, for scale). No goal: it says what a smaller pool, which makes small downloads
# cheaper (bench/many.sh CONN_MEMORY=), costs the other direction (docs/performance.md,
# "Connection memory").
#   POOLS="8KiB 32KiB 256KiB" SIZE=1GiB REPS=4 bench/upload.sh
. "$(dirname "$0")/../tests/lib/common.sh"
. "$(dirname "$0")/lib.bash"
need_cmd curl nginx
POOLS=${POOLS:-8KiB 32KiB 256KiB}
SIZE=${SIZE:-1GiB}
REPS=${REPS:-4}
command -v "$DEBITD" >/dev/null || { echo "build debitd first (make)"; exit 1; }
bytes=$(python3 -c "
import re, sys
m = re.fullmatch(r'(\d+)(KiB|MiB|GiB)', sys.argv[1]) or sys.exit('SIZE: a whole number of KiB, MiB or GiB')
print(int(m[1]) << {'KiB': 10, 'MiB': 20, 'GiB': 30}[m[2]])" "$SIZE") || exit 2
echo "machine: $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ); $(nginx -v 2>&1); $SIZE per upload, $REPS rounds; pools $POOLS"

body=$(mktemp /dev/shm/debit-upload.XXXXXX)
t_on_exit "rm -f '$body'"
head -c "$bytes" /dev/urandom >"$body"

# one debitd, a listener per pool (libmicrohttpd's pool is per daemon, so per listener)
lines=() names=() ports=()
for p in $POOLS; do
  port=$(free_port)
  while [[ " ${ports[*]} " == *" $port "* ]]; do port=$(free_port); done
  ports+=("$port") names+=("debitd@$p")
  lines+=("{ address = \"127.0.0.1\"; port = $port; connection_memory = \"$p\"; }")
done
{
  echo "listen = ( $(IFS=,; echo "${lines[*]}") );"
  echo 'threads = 2;'
  echo 'files = ( { path = "/ram/4KiB.dat"; size = "4KiB"; } );'
  echo "upload = { path = \"/up\"; max_size = \"$((bytes * 2))\"; };"
  echo 'limits = { per_ip = 0; };'
  echo 'log = { access = "off"; level = "warn"; };'
} >"$T_TMP/d.conf"
t_bg debitd "$DEBITD" -c "$T_TMP/d.conf"
DEBITD_PID=$T_LAST_PID
wait_http "http://127.0.0.1:${ports[0]}/ram/4KiB.dat" 300 "" "$DEBITD_PID" || { echo "debitd did not start:"; cat "$T_TMP/debitd.log"; exit 1; }

# nginx, WORKERS=2 worker processes, PUT into a tmpfs directory (each upload replaces the last)
WORKERS=2
root=$(mktemp -d /dev/shm/debit-upload-www.XXXXXX)
t_on_exit "rm -rf '$root'"
chmod 777 "$root"
port_n=$(free_port)
mkdir -p "$T_TMP/ngx/logs" "$root/tmp"
chmod 777 "$root/tmp"
cat >"$T_TMP/ngx/nginx.conf" <<NGX
worker_processes $WORKERS;
pid $T_TMP/ngx/nginx.pid;
error_log $T_TMP/ngx/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $root/tmp;
  server { listen 127.0.0.1:$port_n; root $root;
    location /up { dav_methods PUT; create_full_put_path on; client_max_body_size 0; } }
}
NGX
t_bg nginx nginx -p "$T_TMP/ngx" -c "$T_TMP/ngx/nginx.conf" -g 'daemon off;'
NGINX_PID=$T_LAST_PID
wait_port "$port_n" 100 || { echo "nginx did not start:"; cat "$T_TMP/nginx.log"; exit 1; }
names+=(nginx) ports+=("$port_n")

# up_one I: one upload to server I; "NAME MB/s server_cpu_s_per_GiB machine_cpu_s_per_GiB"
up_one() {
  local i=$1 pids c0 c1 m0 m1 out code sent path=/up
  if [ "${names[$i]}" = nginx ]; then pids="$NGINX_PID $(pgrep -P "$NGINX_PID" | tr '\n' ' ')" path=/up/body.dat; else pids=$DEBITD_PID; fi
  c0=$(cpu_of $pids) m0=$(machine_cpu_ms)
  out=$(curl -s -o /dev/null -H 'Expect:' --max-time 120 -w '%{http_code} %{size_upload} %{speed_upload}' -T "$body" \
    "http://127.0.0.1:${ports[$i]}$path")
  m1=$(machine_cpu_ms) c1=$(cpu_of $pids)
  read -r code sent speed <<<"$out"
  if [ "$sent" != "$bytes" ] || [ "${code:0:1}" != 2 ]; then
    echo "${names[$i]}: upload failed (HTTP $code, $sent of $bytes bytes)" >&2
    return 1
  fi
  read -r _ a <<<"$c0"; read -r _ b <<<"$c1"
  awk -v n="${names[$i]}" -v s="$speed" -v a="$a" -v b="$b" -v m=$((m1 - m0)) -v g="$bytes" \
    'BEGIN { gib = g / 1073741824; printf "%s %.1f %.3f %.3f\n", n, s / 1e6, (b - a) / 1000 / gib, m / 1000 / gib }'
}
: >"$T_TMP/up"
k=${#names[@]}
for r in $(seq "$REPS"); do
  for j in $(seq 0 $((k - 1))); do
    up_one $(((j + r) % k)) >>"$T_TMP/up" || exit 1
  done
done

printf '%-16s %24s %28s %28s\n' server "MB/s median [min-max]" "server CPU s/GiB [min-max]" "machine CPU s/GiB [min-max]"
for n in "${names[@]}"; do
  row=$n
  for col in 2 3 4; do
    v=$(awk -v n="$n" -v c="$col" '$1 == n {print $c}' "$T_TMP/up")
    row="$row $(median <<<"$v") $(minmax <<<"$v" | tr '-' ' ')"
  done
  awk '{printf "%-16s %8.1f [%.1f-%.1f] %12.3f [%.3f-%.3f] %12.3f [%.3f-%.3f]\n", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10}' <<<"$row"
done
ref=debitd@32KiB
grep -q "^$ref " "$T_TMP/up" || ref=${names[0]}
for n in "${names[@]}"; do
  [ "$n" = "$ref" ] && continue
  awk -v n="$n" -v ref="$ref" '
    $1 == n { a[++i] = $2; c[i] = $3 } $1 == ref { b[++j] = $2; d[j] = $3 }
    function med(x, k,   t, m, p, q) { m = 0; for (p in x) t[++m] = x[p]
      for (p = 1; p <= m; p++) for (q = p + 1; q <= m; q++) if (t[q] < t[p]) { v = t[p]; t[p] = t[q]; t[q] = v }
      return (m % 2) ? t[(m + 1) / 2] : (t[m / 2] + t[m / 2 + 1]) / 2 }
    END { printf "%-16s against %s: upload rate %.3f x, server CPU per GiB %.3f x\n", n, ref, med(a) / med(b), med(c) / med(d) }' "$T_TMP/up"
done
