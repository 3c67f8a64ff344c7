#!/usr/bin/env bash
# Benchmark: debitd vs nginx with many clients, the same number of workers (WORKERS, default
# one per CPU: debitd `threads`, nginx `worker_processes`), both serving the same bytes from
# RAM over loopback (nginx from tmpfs with sendfile; bytes checked equal first).
# 1. wrk with CONNS connections (default 1000) for DURATION (default 10s) on a 4 KiB and on a
#    1 MiB file, REPS rounds (default 3) interleaved ABBA (debitd nginx, nginx debitd, ...):
#    per server the median requests/s and p99 latency with min-max (and median p50, p90),
#    socket errors and non-2xx/3xx responses (goal: 0); ratios debitd/nginx (goals:
#    requests/s >= 1, p99 <= 1), each with how many rounds were on the goal's side; the
#    server's CPU per request (all its threads), which a loaded machine moves less, and its
#    threads' sleeps (voluntary context switches) per 1,000 requests; wrk's CPU per request
#    and the machine's (all CPUs busy: server, wrk and the kernel's threads), because on
#    loopback part of a server's sending is done in the client's system calls, more so for
#    one server than the other (bench/lib.bash machine_cpu_ms): the machine's figure is the
#    one that compares the work of a request. And, per round, how the connections were split
#    between the workers halfway through (worker_split): debitd spreads them evenly
#    (server/run/acceptor.h), nginx's workers take what arrives while each waits, so a round's
#    p99 is to be read against the share of its most loaded worker.
# 2. PAR parallel downloads (default 100) of a 64 MiB file by one curl --parallel, REPS rounds
#    interleaved: every download 200 with 64 MiB; aggregate throughput (all bytes / wall
#    time), ratio debitd/nginx (goal >= 1), and the machine's CPU per GiB moved. Then,
#    untimed, the same PAR downloads once more per server, each piped into sha256sum: every
#    digest must equal the file's.
# TCP_CC=NAME (root) sets net.ipv4.tcp_congestion_control for the run (both servers' sockets
# take the default) and puts it back; the congestion control in force is printed either
# way, with debitd's X-Debit-Tcp: the 1 MiB figures depend on it (docs/performance.md).
# TCP_NOPUSH=false runs debitd with libmicrohttpd's own send order (server/http/nopush.h).
# CONN_MEMORY=SIZE sets debitd's listen[].connection_memory (libmicrohttpd's pool per
# connection, zeroed after every request: smaller is cheaper for small requests, dearer for
# uploads, bench/upload.sh); unset, debitd's default (32KiB). With PEER=debitd,
# PEER_CONN_MEMORY=SIZE gives the second debitd another pool: the same build, two pool
# sizes, under the same load.
# PEER=debitd puts a second debitd (the same build and configuration, another port) in
# nginx's place: a run of identical servers, whose ratios show this machine's noise (how far
# from 1 a ratio of equals lands, per round and in the medians) to read the nginx ratios by;
# with PEER_BUILD=DIR the second debitd is DIR/debitd (another build: a before/after of a
# change under the same load, the same ratios). On 1 MiB the first slot ran 0.89-0.94 x the
# second in five of six such runs on 2026-12-05, whichever build or pool it held: swap the
# two to tell a change from the slot (docs/performance.md, "Close to the limit").
#   WORKERS=2 CONNS=1000 DURATION=10s REPS=3 PAR=100 TCP_CC= TCP_NOPUSH=true CONN_MEMORY= PEER=nginx bench/many.sh
. "$(dirname "$0")/../tests/lib/common.sh"
. "$(dirname "$0")/lib.bash"
bench_peer
[ -z "${PEER_CONN_MEMORY:-}" ] || [ "$PEER" = debitd ] || { echo "PEER_CONN_MEMORY needs PEER=debitd"; exit 2; }
need_cmd curl wrk sha256sum jq
WORKERS=${WORKERS:-$(nproc)}
CONNS=${CONNS:-1000}
DURATION=${DURATION:-10s}
REPS=${REPS:-3}
PAR=${PAR:-100}
TCP_NOPUSH=${TCP_NOPUSH:-true} # debitd's listen[].tcp_nopush (nginx runs with tcp_nopush on)
command -v "$DEBITD" >/dev/null || { echo "build debitd first (make)"; exit 1; }
CC_FILE=/proc/sys/net/ipv4/tcp_congestion_control
CC_ALLOWED=/proc/sys/net/ipv4/tcp_allowed_congestion_control
CC_ORIG=$(cat "$CC_FILE")
if [ -n "${TCP_CC:-}" ] && [ "$TCP_CC" != "$CC_ORIG" ]; then
  grep -qw "$TCP_CC" /proc/sys/net/ipv4/tcp_available_congestion_control || modprobe "tcp_$TCP_CC" 2>/dev/null
  # the kernel adds a new default to the allowed list and leaves it there: put both back
  t_on_exit "echo '$(cat "$CC_ALLOWED")' >'$CC_ALLOWED'"
  echo "$TCP_CC" >"$CC_FILE" || { echo "cannot set tcp_congestion_control to $TCP_CC (root? tcp_$TCP_CC available?)"; exit 1; }
  t_on_exit "echo '$CC_ORIG' >'$CC_FILE'"
  CC_SET=" (set for this run, was $CC_ORIG)"
fi
ulimit -n "$(ulimit -Hn)" 2>/dev/null # wrk holds CONNS sockets
[ "$(ulimit -n)" -gt $((CONNS + 100)) ] || { echo "ulimit -n $(ulimit -n) is too low for $CONNS connections"; exit 1; }
echo "machine: $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ); workers $WORKERS, wrk -c$CONNS -d$DURATION -t$(nproc), $PAR x 64 MiB, $REPS rounds; $(nginx -v 2>&1); tcp_congestion_control $(cat "$CC_FILE")${CC_SET:-}; debitd tcp_nopush $TCP_NOPUSH, connection_memory ${CONN_MEMORY:-32KiB (default)}; peer $PEER_LABEL${PEER_CONN_MEMORY:+ with connection_memory $PEER_CONN_MEMORY}"

port_d=$(free_port); port_n=$(free_port)
while [ "$port_n" = "$port_d" ]; do port_n=$(free_port); done
cat >"$T_TMP/d.conf" <<CONF
listen = ( { address = "127.0.0.1"; port = $port_d; tcp_nopush = $TCP_NOPUSH;${CONN_MEMORY:+ connection_memory = \"$CONN_MEMORY\";} } );
threads = $WORKERS;
files = ( { path = "/ram/4KiB.dat"; size = "4KiB"; }, { path = "/ram/1MiB.dat"; size = "1MiB"; },
          { path = "/ram/64MiB.dat"; size = "64MiB"; } );
# One client address makes every connection: no per-address cap (nginx has none). The header
# deadline as nginx's client_header_timeout (60 s; debitd's default 5 s closes a kept-alive
# connection whose next request a starved client sends more than 5 s after the response).
limits = { per_ip = 0; header_timeout = "60s"; };
log = { access = "off"; level = "warn"; };
CONF
t_bg debitd "$DEBITD" -c "$T_TMP/d.conf"
DEBITD_PID=$T_LAST_PID
wait_http "http://127.0.0.1:$port_d/ram/4KiB.dat" 300 "" "$DEBITD_PID" || { echo "debitd did not start:"; cat "$T_TMP/debitd.log"; exit 1; }
debitd_content_ready "http://127.0.0.1:$port_d" || { echo "debitd: content not ready in 30 s"; exit 1; }
echo "debitd's $(curl -s -D - -o /dev/null "http://127.0.0.1:$port_d/ram/4KiB.dat" | tr -d '\r' | grep -i "^$(wire_get WIRE_HDR_TCP):")"

root=$(mktemp -d /dev/shm/debit-many.XXXXXX)
t_on_exit "rm -rf '$root'"
mkdir -p "$root/ram"
chmod 755 "$root" "$root/ram"
for f in 4KiB 1MiB 64MiB; do curl -s -o "$root/ram/$f.dat" "http://127.0.0.1:$port_d/ram/$f.dat"; done
chmod 644 "$root"/ram/*
if [ "$PEER" = nginx ]; then
  # nginx as a public mirror would run it, with as many workers as debitd has threads
  bench_nginx "$root" "$port_n" /ram/4KiB.dat
else
  sed "s/port = $port_d;/port = $port_n;/" "$T_TMP/d.conf" >"$T_TMP/d2.conf"
  if [ -n "${PEER_CONN_MEMORY:-}" ]; then # the second debitd's pool: replace or add the setting
    sed -i -E "1s/ connection_memory = \"[^\"]*\";//; 1s/tcp_nopush = ([a-z]+);/tcp_nopush = \1; connection_memory = \"$PEER_CONN_MEMORY\";/" "$T_TMP/d2.conf"
  fi
  t_bg debitd2 "${PEER_DEBITD:-$DEBITD}" -c "$T_TMP/d2.conf"
  NGINX_PID=$T_LAST_PID # the peer's slot ("nginx" in this script's records)
  wait_http "http://127.0.0.1:$port_n/ram/4KiB.dat" 300 "" "$NGINX_PID" || { echo "the second debitd did not start:"; cat "$T_TMP/debitd2.log"; exit 1; }
  debitd_content_ready "http://127.0.0.1:$port_n" || { echo "the second debitd: content not ready in 30 s"; exit 1; }
fi
# the pools in force, as each debitd reports them (not as asked)
pools="debitd $(curl -s "http://127.0.0.1:$port_d/status" | jq -r '.listeners[0].connection_memory') bytes"
[ "$PEER" = debitd ] && pools="$pools, $PEER_LABEL $(curl -s "http://127.0.0.1:$port_n/status" | jq -r '.listeners[0].connection_memory // "?"') bytes"
echo "connection_memory: $pools"
for f in 4KiB 1MiB 64MiB; do
  a=$(curl -s "http://127.0.0.1:$port_d/ram/$f.dat" | sha256sum); b=$(curl -s "http://127.0.0.1:$port_n/ram/$f.dat" | sha256sum)
  [ "$a" = "$b" ] || { echo "servers differ on $f: debitd $a, $PEER_LABEL $b"; exit 1; }
done
SHA64=$(curl -s "http://127.0.0.1:$port_d/ram/64MiB.dat" | sha256sum | cut -d' ' -f1)

# ratio WHAT NAME OP DEBITD_VALUES NGINX_VALUES (one per round, in round order): the ratio of
# the medians, the min-max of the per-round ratios (round i: debitd_i / nginx_i), and how
# many rounds were on the goal's side: a median on one side with rounds on both is within
# this machine's noise, said as such (as bench/server.sh says when ranges overlap)
ratio() {
  local md mx rr per
  md=$(median <<<"$4"); mx=$(median <<<"$5")
  per=$(paste <(echo "$4") <(echo "$5") | awk '$2 > 0 {printf "%.3f\n", $1 / $2}')
  rr=$(minmax <<<"$per")
  awk -v w="$1" -v pl="$PEER_LABEL" -v n="$2" -v op="$3" -v md="$md" -v mx="$mx" -v rr="$rr" -v per="$(echo $per)" 'BEGIN{ r = mx > 0 ? md / mx : 0
    met = (op == ">=") ? r >= 1 : r <= 1
    k = split(per, p, " "); good = 0
    for (i = 1; i <= k; i++) good += (op == ">=") ? p[i] >= 1 : p[i] <= 1
    side = (good == k) ? "every round on the goal side" : (good == 0) ? "no round on the goal side" : "rounds on both sides: within noise"
    printf "%-9s ratio debitd/%s %-10s %.3f [per round %s] (goal %s 1): %s (%d of %d rounds: %s)\n", w, pl, n, r, rr, op, met ? "met" : "not met", good, k, side }'
}
url() { [ "$1" = debitd ] && echo "http://127.0.0.1:$port_d/ram/$2.dat" || echo "http://127.0.0.1:$port_n/ram/$2.dat"; }

server_pids() { [ "$1" = debitd ] && echo "$DEBITD_PID" || echo "$NGINX_PID $(pgrep -P "$NGINX_PID" | tr '\n' ' ')"; }
# label SERVER: the name printed for a record's server ("nginx" is the peer's slot)
label() { [ "$1" = nginx ] && echo "$PEER_LABEL" || echo "$1"; }
# sleeps_of PID...: voluntary context switches of every thread of the processes: a server
# thread that blocks (a lock another thread holds, an empty event queue) leaves all its
# connections waiting until it is woken.
sleeps_of() {
  local p n=0
  for p in "$@"; do n=$((n + $(cat /proc/"$p"/task/*/status 2>/dev/null | awk '/^voluntary_ctxt_switches/{v += $2} END{print v + 0}'))); done
  echo "$n"
}
# worker_split SERVER: how the open connections are split between the server's workers now,
# "A/B/...": for debitd the descriptors in each libmicrohttpd worker's epoll set
# (/proc/PID/fdinfo: one tfd line each), for nginx the sockets of each worker process; a few
# of each are the worker's own (listening socket, channel). debitd's acceptor spreads them
# by descriptor (even; before 2026-12-03 each worker accepted what arrived while it waited,
# as nginx's do): a worker holding more connections serves each less often, so a round's
# p99 is to be read against its split.
# It runs while wrk does: a few processes (bench/lib.bash epoll_sizes for debitd).
worker_split() {
  local out=() p pid=$DEBITD_PID
  [ "$1" = nginx ] && [ "$PEER" = debitd ] && pid=$NGINX_PID
  if [ "$1" = debitd ] || [ "$PEER" = debitd ]; then
    epoll_sizes "$pid"
    return
  else
    for p in $(pgrep -P "$NGINX_PID"); do out+=("$(ls -l "/proc/$p/fd" 2>/dev/null | grep -c socket)"); done
  fi
  local IFS=/
  echo "${out[*]:-?}"
}
# wrk_one SERVER FILE: one line "SERVER FILE req_s p99_ms sock_errors non2xx
# cpu_us_per_request connect/read/write/timeout sleeps_per_1000_requests p50_ms p90_ms
# wrk_cpu_us_per_request machine_cpu_us_per_request worker_split" in
# $T_TMP/wrk. The server's CPU per request (every thread of its processes,
# se.sum_exec_runtime) depends far less on the other jobs of a shared machine than
# requests/s does.
wrk_one() {
  local out c0 c1 s0 s1 w0 w1 m0 m1 pids u
  pids=$(server_pids "$1") u=$(url "$1" "$2")
  c0=$(cpu_of $pids); s0=$(sleeps_of $pids); w0=$(children_cpu_ms); m0=$(machine_cpu_ms)
  wrk -t"$(nproc)" -c"$CONNS" -d"$DURATION" --timeout 10s --latency "$u" >"$T_TMP/wrk.out" 2>&1 &
  local wp=$! split
  # the split once every connection is open: halfway through the run
  sleep "$(awk -v d="$DURATION" 'BEGIN{v = d + 0; if (d ~ /ms$/) v /= 1000; else if (d ~ /m$/) v *= 60; print v / 2}')"
  split=$(worker_split "$1")
  wait "$wp"
  out=$(cat "$T_TMP/wrk.out")
  m1=$(machine_cpu_ms); w1=$(children_cpu_ms); c1=$(cpu_of $pids); s1=$(sleeps_of $pids)
  echo "$out" >>"$T_TMP/wrk.raw"
  awk -v s="$1" -v f="$2" -v a="$c0" -v b="$c1" -v sl=$((s1 - s0)) -v wc=$((w1 - w0)) -v mc=$((m1 - m0)) -v sp="$split" '
    function ms(v) { if (v ~ /us$/) return v * 0.001; if (v ~ /ms$/) return v + 0; if (v ~ /m$/) return v * 60000; if (v ~ /s$/) return v * 1000; return v }
    /^ *99%/ { p99 = ms($2) }
    /^ *50%/ { p50 = ms($2) }
    /^ *90%/ { p90 = ms($2) }
    /Requests\/sec:/ { rps = $2 }
    / requests in / { n = $1 }
    /Socket errors:/ { gsub(/,/, ""); se = $4 + $6 + $8 + $10; sd = $4 "/" $6 "/" $8 "/" $10 }
    /Non-2xx or 3xx responses:/ { n2 = $5 }
    END { split(a, x, " "); split(b, y, " ")
          printf "%s %s %s %s %d %d %.1f %s %.2f %s %s %.1f %.1f %s\n", s, f, rps, p99, se, n2, (n > 0 ? (y[2] - x[2]) * 1000 / n : 0), (sd ? sd : "0/0/0/0"), (n > 0 ? sl * 1000 / n : 0), p50, p90,
            (n > 0 ? wc * 1000 / n : 0), (n > 0 ? mc * 1000 / n : 0), sp }' <<<"$out" >>"$T_TMP/wrk"
}
# par_one SERVER: PAR downloads of 64 MiB at once; "SERVER wall_s ok_count Gb/s
# machine_cpu_s_per_GiB" in $T_TMP/par
par_one() {
  local u t0 t1 ok m0 m1 args=()
  u=$(url "$1" 64MiB)
  for i in $(seq "$PAR"); do args+=(-o /dev/null "$u?$i"); done
  t0=$(date +%s.%N) m0=$(machine_cpu_ms)
  curl -s --parallel --parallel-immediate --parallel-max "$PAR" --max-time 300 -w '%{http_code} %{size_download}\n' "${args[@]}" >"$T_TMP/par.out" 2>>"$T_TMP/par.err"
  t1=$(date +%s.%N) m1=$(machine_cpu_ms)
  ok=$(awk '$1 == 200 && $2 == 67108864' "$T_TMP/par.out" | wc -l)
  awk -v s="$1" -v a="$t0" -v b="$t1" -v ok="$ok" -v n="$PAR" -v m=$((m1 - m0)) 'BEGIN{w = b - a
    printf "%s %.3f %d %.3f %.3f\n", s, w, ok, n * 67108864 * 8 / w / 1e9, m / 1000 / (n / 16) }' >>"$T_TMP/par"
}
: >"$T_TMP/wrk"; : >"$T_TMP/par"; : >"$T_TMP/wrk.raw"
for i in $(seq "$REPS"); do
  if [ $((i % 2)) = 1 ]; then order="debitd nginx"; else order="nginx debitd"; fi
  for f in 4KiB 1MiB; do for s in $order; do wrk_one "$s" "$f"; sleep 1; done; done
  for s in $order; do par_one "$s"; sleep 1; done
done

for f in 4KiB 1MiB; do
  for s in debitd nginx; do
    col() { awk -v s="$s" -v f="$f" -v c="$1" '$1==s && $2==f {print $c}' "$T_TMP/wrk"; }
    eval "RPS_$s=$(col 3 | median) RPSR_$s=$(col 3 | minmax) P99_$s=$(col 4 | median) P99R_$s=$(col 4 | minmax)"
    printf '%-6s %-8s requests/s %s [%s]  p50 %s ms  p90 %s ms  p99 %s ms [%s]  server CPU %s us/request [%s]  wrk CPU %s [%s]  machine CPU %s [%s]  sleeps %s per 1000 requests [%s]  socket errors %s (connect/read/write/timeout: %s)  non-2xx %s\n' "$f" "$(label "$s")" \
      "$(col 3 | median)" "$(col 3 | minmax)" "$(col 10 | median)" "$(col 11 | median)" "$(col 4 | median)" "$(col 4 | minmax)" "$(col 7 | median)" "$(col 7 | minmax)" \
      "$(col 12 | median)" "$(col 12 | minmax)" "$(col 13 | median)" "$(col 13 | minmax)" "$(col 9 | median)" "$(col 9 | minmax)" \
      "$(col 5 | awk '{t += $1} END{print t + 0}')" "$(col 8 | tr '\n' ' ')" "$(col 6 | awk '{t += $1} END{print t + 0}')"
  done
  ratio "$f" requests/s ">=" "$(awk -v f="$f" '$1=="debitd" && $2==f {print $3}' "$T_TMP/wrk")" "$(awk -v f="$f" '$1=="nginx" && $2==f {print $3}' "$T_TMP/wrk")"
  ratio "$f" p99 "<=" "$(awk -v f="$f" '$1=="debitd" && $2==f {print $4}' "$T_TMP/wrk")" "$(awk -v f="$f" '$1=="nginx" && $2==f {print $4}' "$T_TMP/wrk")"
  ratio "$f" CPU/request "<=" "$(awk -v f="$f" '$1=="debitd" && $2==f {print $7}' "$T_TMP/wrk")" "$(awk -v f="$f" '$1=="nginx" && $2==f {print $7}' "$T_TMP/wrk")"
  ratio "$f" machine-CPU "<=" "$(awk -v f="$f" '$1=="debitd" && $2==f {print $13}' "$T_TMP/wrk")" "$(awk -v f="$f" '$1=="nginx" && $2==f {print $13}' "$T_TMP/wrk")"
done
errs=$(awk '{t += $5 + $6} END{print t + 0}' "$T_TMP/wrk")
for f in 4KiB 1MiB; do
  for s in debitd nginx; do
    printf '%-6s %-8s largest worker'"'"'s share of the connections mid-run, per round: %s\n' "$f" "$(label "$s")" \
      "$(awk -v s="$s" -v f="$f" '$1 == s && $2 == f { n = split($14, a, "/"); t = 0; m = 0
          for (i = 1; i <= n; i++) { t += a[i]; if (a[i] + 0 > m) m = a[i] + 0 }
          printf "%s ", (t > 0 ? sprintf("%.0f%%", 100 * m / t) : "?") }' "$T_TMP/wrk")(p99 $(awk -v s="$s" -v f="$f" '$1 == s && $2 == f {printf "%s ", $4}' "$T_TMP/wrk")ms)"
  done
done
echo "wrk socket errors + non-2xx, all runs: $errs (goal 0): $([ "$errs" = 0 ] && echo met || echo 'not met')"

for s in debitd nginx; do
  printf '%s x 64 MiB %-8s aggregate %s Gb/s [%s], machine CPU %s s/GiB [%s], wall %s s, complete with 200 and 64 MiB: %s\n' "$PAR" "$(label "$s")" \
    "$(awk -v s="$s" '$1==s{print $4}' "$T_TMP/par" | median)" "$(awk -v s="$s" '$1==s{print $4}' "$T_TMP/par" | minmax)" \
    "$(awk -v s="$s" '$1==s{print $5}' "$T_TMP/par" | median)" "$(awk -v s="$s" '$1==s{print $5}' "$T_TMP/par" | minmax)" \
    "$(awk -v s="$s" '$1==s{print $2}' "$T_TMP/par" | median)" "$(awk -v s="$s" '$1==s{printf "%s/%s ", $3, '"$PAR"'}' "$T_TMP/par")"
done
ratio "$PAR x 64MiB" aggregate ">=" "$(awk '$1=="debitd"{print $4}' "$T_TMP/par")" "$(awk '$1=="nginx"{print $4}' "$T_TMP/par")"
ratio "$PAR x 64MiB" machine-CPU "<=" "$(awk '$1=="debitd"{print $5}' "$T_TMP/par")" "$(awk '$1=="nginx"{print $5}' "$T_TMP/par")"

# the bytes: PAR downloads at once again, each through sha256sum (untimed)
for s in debitd nginx; do
  u=$(url "$s" 64MiB)
  pids=()
  for i in $(seq "$PAR"); do (curl -s --max-time 300 "$u?sha$i" | sha256sum | cut -d' ' -f1 >"$T_TMP/sha.$s.$i") & pids+=($!); done
  wait "${pids[@]}"
  good=$(cat "$T_TMP"/sha."$s".* | grep -c "^$SHA64\$")
  echo "$PAR x 64 MiB $(label "$s") at once, each sha256 = the file's: $good/$PAR"
done
echo "debitd's refusals and closes (/status counters.refusals): $(curl -s "http://127.0.0.1:$port_d/status" | jq -c '.counters.refusals // {}')"
echo "wrk runs (server file req_s p99_ms socket_errors non2xx cpu_us_per_request connect/read/write/timeout sleeps_per_1000_requests p50_ms p90_ms wrk_cpu_us_per_request machine_cpu_us_per_request worker_split):"; sed "s|^nginx |$PEER_LABEL |; s|^|  |" "$T_TMP/wrk"
echo "parallel runs (server wall_s complete Gb/s machine_cpu_s_per_GiB):"; sed "s|^nginx |$PEER_LABEL |; s|^|  |" "$T_TMP/par"
