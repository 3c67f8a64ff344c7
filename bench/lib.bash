# Shared by bench/*.sh (sourced after tests/lib/common.sh; not a benchmark itself: bench/run
# runs *.sh only).

# median / minmax: of the numbers on stdin, one per line ("LO-HI" for minmax).
median() { sort -g | awk '{a[NR]=$1} END{ if (NR%2) print a[(NR+1)/2]; else printf "%.4f\n", (a[NR/2]+a[NR/2+1])/2 }'; }
minmax() { sort -g | awk 'NR==1{lo=$1} {hi=$1} END{printf "%s-%s", lo, hi}'; }

# bench_thp: with THP=VALUE (root), set the machine's shmem THP policy to VALUE for the
# benchmark (bench_thp_restore, or the exit, puts the old one back; debitd itself never
# changes it). Sets THP_FILE, THP_ORIG (the policy before) and THP_NOW (in force now).
bench_thp() {
  THP_FILE=/sys/kernel/mm/transparent_hugepage/shmem_enabled
  THP_ORIG=$(grep -o '\[[a-z_]*\]' "$THP_FILE" 2>/dev/null | tr -d '[]')
  if [ -n "${THP:-}" ]; then
    [ "$(id -u)" = 0 ] && [ -w "$THP_FILE" ] || { echo "THP=$THP needs root and $THP_FILE"; exit 1; }
    t_on_exit "echo '$THP_ORIG' >'$THP_FILE'"
    echo "$THP" >"$THP_FILE"
  fi
  THP_NOW=$(grep -o '\[[a-z_]*\]' "$THP_FILE" 2>/dev/null | tr -d '[]')
}
bench_thp_restore() { [ -z "${THP:-}" ] || echo "$THP_ORIG" >"$THP_FILE"; }

# cpu_of PID...: CPU of processes (every thread) as "TICKS RUNTIME_MS": utime+stime of
# /proc/PID/stat (tick-sampled) and se.sum_exec_runtime of /proc/PID/task/*/sched (exact;
# 0 where the kernel has no sched file).
cpu_of() {
  local t=0 r=0 p x
  for p in "$@"; do
    t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
    for x in /proc/"$p"/task/*/sched; do
      r=$(awk -v r="$r" '/^se.sum_exec_runtime/{r += $3} END{printf "%.3f", r}' "$x" 2>/dev/null || echo "$r")
    done
  done
  echo "$t $r"
}

# machine_cpu_ms: the busy time of all CPUs since boot in ms (/proc/stat: user, nice,
# system, irq, softirq; not idle, iowait or steal). Over a loopback run it is server,
# client and the kernel's threads together: on loopback the kernel does part of one side's
# TCP work in the other's context (an ACK the client sends transmits the server's queued
# data, in the client's system call), so a server's own CPU alone can favour the server
# that leaves more of its sending to the client (docs/performance.md, "Where the CPU of a
# 1 MiB request is charged"). Includes every other job of the machine: read it on a quiet one.
# (FILE: another file in /proc/stat's format, for the test.)
machine_cpu_ms() { awk -v hz="$(getconf CLK_TCK)" '/^cpu / {printf "%.0f\n", ($2 + $3 + $4 + $7 + $8) * 1000 / hz}' "${1:-/proc/stat}"; }

# children_cpu_ms: user + system CPU in ms of the benchmark shell's reaped children so far
# (cutime + cstime of /proc/$$/stat, tick-sampled): the CPU of a client run between two
# readings (a command substitution's subshell passes its own children's on when it is reaped).
# The fields are counted after the command name's last ")": a name may hold spaces and
# parentheses. (FILE: another file in /proc/PID/stat's format, for the test.)
children_cpu_ms() { sed 's/.*) //' "${1:-/proc/$$/stat}" | awk -v hz="$(getconf CLK_TCK)" '{printf "%.0f\n", ($14 + $15) * 1000 / hz}'; }

# bench_nginx ROOT PORT PATH: nginx as a public mirror would run it (sendfile, tcp_nopush,
# access log off), WORKERS worker processes, serving ROOT on 127.0.0.1:PORT, started and
# waited for (bounded) until PATH answers; sets NGINX_PID. Exits the benchmark if it does
# not start.
bench_nginx() {
  mkdir -p "$T_TMP/ngx/logs" "$T_TMP/ngx/tmp"
  cat >"$T_TMP/ngx/nginx.conf" <<NGX
worker_processes $WORKERS;
worker_rlimit_nofile 65536;
pid $T_TMP/ngx/nginx.pid;
error_log $T_TMP/ngx/logs/error.log warn;
events { worker_connections 8192; }
http {
  access_log off;
  sendfile on; tcp_nopush on;
  default_type application/octet-stream;
  client_body_temp_path $T_TMP/ngx/tmp; proxy_temp_path $T_TMP/ngx/tmp; fastcgi_temp_path $T_TMP/ngx/tmp;
  uwsgi_temp_path $T_TMP/ngx/tmp; scgi_temp_path $T_TMP/ngx/tmp;
  server { listen 127.0.0.1:$2 backlog=4096; root $1; }
}
NGX
  t_bg nginx nginx -p "$T_TMP/ngx" -c "$T_TMP/ngx/nginx.conf" -g 'daemon off;'
  NGINX_PID=$T_LAST_PID
  wait_http "http://127.0.0.1:$2$3" 100 "" "$NGINX_PID" || { echo "nginx did not start:"; cat "$T_TMP/nginx.log"; exit 1; }
}

# epoll_sizes PID: how many descriptors each epoll set of process PID watches, "A/B/..." in
# descriptor order (/proc/PID/fdinfo: one tfd line each). The benchmarks call it while they
# measure, so it costs a few processes whatever PID's number of descriptors: a readlink per
# descriptor (over 1,000 forks mid-run) once took CPU from one server's rounds only
# (docs/performance.md, "The benchmark's own load").
# An epoll set that another set of the process watches is left out: with
# MHD_ALLOW_UPGRADE (debitd's ndt7) each libmicrohttpd worker nests a second, empty set for
# upgraded connections inside its own.
epoll_sizes() {
  local fd out=() IFS sets nested
  sets=$(ls -l "/proc/$1/fd" 2>/dev/null | awk '/anon_inode:\[eventpoll\]/ {print $9}' | sort -n)
  nested=" $(for fd in $sets; do awk '/^tfd:/ {print $2}' "/proc/$1/fdinfo/$fd" 2>/dev/null; done | tr '\n' ' ') "
  for fd in $sets; do
    [[ "$nested" == *" $fd "* ]] && continue
    out+=("$(grep -c '^tfd:' "/proc/$1/fdinfo/$fd" 2>/dev/null)")
  done
  IFS=/
  echo "${out[*]}"
}

# bench_peer: reads PEER (nginx, the default, or debitd) and PEER_BUILD (a build folder whose
# debitd is the peer); sets PEER_LABEL (the peer's name in every printed line) and
# PEER_DEBITD (empty: this build's debitd). Exits 2 on a wrong combination.
bench_peer() {
  PEER=${PEER:-nginx}
  PEER_DEBITD=${PEER_BUILD:+$PEER_BUILD/debitd}
  case $PEER in nginx) PEER_LABEL=nginx; need_cmd nginx ;; debitd) PEER_LABEL=debitd#2 ;;
    *) echo "PEER must be nginx or debitd, not \"$PEER\""; exit 2 ;; esac
  if [ -n "$PEER_DEBITD" ]; then
    [ "$PEER" = debitd ] || { echo "PEER_BUILD needs PEER=debitd"; exit 2; }
    [ -x "$PEER_DEBITD" ] || { echo "PEER_BUILD: no $PEER_DEBITD"; exit 2; }
    PEER_LABEL=debitd@$PEER_BUILD
  fi
}
