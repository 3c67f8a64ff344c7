#!/usr/bin/env bash
# Benchmark (issue 12, "close to the limit"): debitd -> debit against iperf3 -R -Z (the
# machine's loopback ceiling: sendfile on one side, 128 KiB reads on the other, no HTTP),
# SIZE (1 GiB) per transfer, RUNS rounds (5), and which side holds debitd -> debit back,
# found by swapping one side at a time in the same rounds:
#   debitd -> debit   the pair under test
#   iperf3 -R -Z      the ceiling
#   debitd -> curl    the same server, another client (curl -o /dev/null)
#   nginx  -> debit   the same client, another server (nginx-light, sendfile, tmpfs)
#   nginx  -> curl    neither of ours
# Each round runs the five in a rotated order, so that a drift of the shared machine hits
# them alike. Per pair: the median throughput with min-max, the ratio to iperf3 of the same
# round (min-max over rounds), and the CPU seconds per GiB of the receiver (the client's
# user+sys) and of the sender (server threads' se.sum_exec_runtime; iperf3: its own -J
# figures). Throughput is the receiver's: debit's avg_mbps (bytes / (last byte - response
# headers)), curl's size_download / (time_total - time_starttransfer), iperf3's
# sum_received. On loopback both ends share the 2 CPUs, so CPU per GiB is the steadier
# diagnosis (the side that needs more of a core per byte is the one that limits).
#   RUNS=5 SIZE=1GiB bench/limit.sh
. "$(dirname "$0")/../tests/lib/common.sh"
. "$(dirname "$0")/lib.bash"
need_cmd curl nginx iperf3 jq
RUNS=${RUNS:-5}
SIZE=${SIZE:-1GiB}
command -v "$DEBITD" >/dev/null && [ -x "$DEBIT" ] || { echo "build debitd and debit first (make)"; exit 1; }
bytes=$(awk -v s="$SIZE" 'BEGIN{n = s + 0; u = s; sub(/^[0-9.]+/, "", u); print n * (u == "GiB" ? 1073741824 : u == "MiB" ? 1048576 : 1)}')
gib=$(awk -v b="$bytes" 'BEGIN{print b / 1073741824}')
echo "machine: $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ); $SIZE per transfer, $RUNS rounds; $(nginx -v 2>&1); $(iperf3 --version | head -1)"

port_d=$(free_port); port_n=$(free_port); port_i=$(free_port)
cat >"$T_TMP/d.conf" <<CONF
listen = ( { address = "127.0.0.1"; port = $port_d; } );
files = ( { path = "/ram/$SIZE.dat"; size = "$SIZE"; } );
log = { access = "off"; level = "warn"; };
CONF
debitd_spawn "$T_TMP/d.conf"
durl=http://127.0.0.1:$port_d/ram/$SIZE.dat
for _ in $(seq 300); do curl -s -o /dev/null -r 0-0 --max-time 1 "$durl" && break; sleep 0.1; done
curl -s -o /dev/null -r 0-0 --max-time 1 "$durl" || { echo "debitd did not start:"; cat "$T_TMP/debitd.log"; exit 1; }
debitd_content_ready "http://127.0.0.1:$port_d" || { echo "debitd: content not ready in 30 s"; exit 1; }
root=$(mktemp -d /dev/shm/debit-limit.XXXXXX)
t_on_exit "rm -rf '$root'"
mkdir -p "$root/ram"
curl -s -o "$root/ram/$SIZE.dat" "$durl"
chmod -R a+rX "$root"
nginx_spawn "$root" "$port_n"
nurl=http://127.0.0.1:$port_n/ram/$SIZE.dat
for _ in $(seq 100); do curl -s -o /dev/null -r 0-0 --max-time 1 "$nurl" && break; sleep 0.1; done
[ "$(curl -s "$nurl" | sha256sum)" = "$(curl -s "$durl" | sha256sum)" ] || { echo "nginx and debitd serve different bytes"; exit 1; }
t_bg iperf3 iperf3 -s -p "$port_i"
wait_port "$port_i" 100 || { echo "iperf3 -s did not start"; exit 1; }
nginx_pids() { echo "$NGINX_PID $(pgrep -P "$NGINX_PID" | tr '\n' ' ')"; }

# one PAIR: a line "PAIR round Mb/s client_cpu_s server_cpu_s" in $T_TMP/runs
run_pair() {
  local pair=$1 round=$2 url pids c0 c1 t mbps TIMEFORMAT='%U %S'
  case $pair in
    iperf3)
      iperf3 -c 127.0.0.1 -p "$port_i" -R -Z -n "$bytes" -J >"$T_TMP/iperf.json" 2>/dev/null
      jq -r --arg p "$pair" --arg r "$round" '.end as $e | $e.sum_received.seconds as $s |
        "\($p) \($r) \($e.sum_received.bits_per_second / 1e6) \($e.cpu_utilization_percent.host_total * $s / 100) \($e.cpu_utilization_percent.remote_total * $s / 100)"' \
        "$T_TMP/iperf.json" >>"$T_TMP/runs"
      sleep 0.2 # iperf3 -s needs a moment between tests
      return ;;
    debitd-*) url=$durl; pids=$DEBITD_PID ;;
    nginx-*) url=$nurl; pids=$(nginx_pids) ;;
  esac
  c0=$(cpu_of $pids)
  case $pair in
    *-debit) t=$( { time "$DEBIT" -q -n 1 --format json "$url" >"$T_TMP/out" 2>/dev/null; } 2>&1 )
             mbps=$(jq -r '.runs[0].avg_mbps' "$T_TMP/out") ;;
    *-curl)  t=$( { time curl -s -o /dev/null -w '%{size_download} %{time_starttransfer} %{time_total}' "$url" >"$T_TMP/out"; } 2>&1 )
             mbps=$(awk '{print $1 * 8 / ($3 - $2) / 1e6}' "$T_TMP/out") ;;
  esac
  c1=$(cpu_of $pids)
  awk -v p="$pair" -v r="$round" -v m="$mbps" -v t="$t" -v a="$c0" -v b="$c1" 'BEGIN{split(t, u, " "); split(a, x, " "); split(b, y, " ");
    printf "%s %s %s %.3f %.3f\n", p, r, m, u[1] + u[2], (y[2] - x[2]) / 1000}' >>"$T_TMP/runs"
}

pairs=(debitd-debit iperf3 debitd-curl nginx-debit nginx-curl)
: >"$T_TMP/runs"
curl -s -o /dev/null "$durl"; curl -s -o /dev/null "$nurl" # one warm-up each
for i in $(seq "$RUNS"); do
  for k in 0 1 2 3 4; do run_pair "${pairs[$(( (k + i) % 5 ))]}" "$i"; done
done

col() { awk -v p="$1" -v c="$2" '$1==p {print $c}' "$T_TMP/runs"; }
# per_round A B [total]: per-round ratio of pair A to pair B, "median [min-max]": of the
# throughput, or with "total" of the CPU of both ends (receiver + sender) per byte
per_round() {
  local r f='{print $2, $3}'
  [ "${3:-}" = total ] && f='{print $2, $4 + $5}'
  r=$(join <(awk -v p="$1" '$1==p '"$f" "$T_TMP/runs" | sort) <(awk -v p="$2" '$1==p '"$f" "$T_TMP/runs" | sort) |
      awk '$3 > 0 {printf "%.3f\n", $2 / $3}')
  echo "$(median <<<"$r") [$(minmax <<<"$r")]"
}
echo "$SIZE on loopback, $RUNS rounds (median [min-max]); CPU seconds per GiB of the receiver, the sender, both; ratios per round:"
printf '  %-13s %-20s %-9s %-9s %-9s %-24s %s\n' pair "Mb/s" receiver sender both "Mb/s / iperf3's" "CPU (both) / iperf3's"
cpu() { awk -v p="$1" -v g="$gib" '$1==p {printf "%.3f\n", ('"$2"') / g}' "$T_TMP/runs" | median; }
for p in "${pairs[@]}"; do
  printf '  %-13s %-20s %-9s %-9s %-9s %-24s %s\n' "$p" "$(col "$p" 3 | awk '{printf "%.0f\n", $1}' | median) [$(col "$p" 3 | awk '{printf "%.0f\n", $1}' | minmax)]" \
    "$(cpu "$p" '$4')" "$(cpu "$p" '$5')" "$(cpu "$p" '$4 + $5')" \
    "$([ "$p" = iperf3 ] && echo - || per_round "$p" iperf3)" "$([ "$p" = iperf3 ] && echo - || per_round "$p" iperf3 total)"
done
dd=$(per_round debitd-debit iperf3)
echo "debitd -> debit / iperf3 -R -Z: $dd (goal >= 0.95): $(awk -v r="${dd%% *}" 'BEGIN{print (r >= 0.95 ? "met" : "not met")}');" \
     "CPU of both ends per GiB, debitd -> debit / iperf3: $(per_round debitd-debit iperf3 total)"
echo "which side: the client swapped (nginx -> debit / nginx -> curl): $(per_round nginx-debit nginx-curl);" \
     "the server swapped (debitd -> curl / nginx -> curl): $(per_round debitd-curl nginx-curl)"
echo "runs (pair round Mb/s receiver_cpu_s sender_cpu_s):"; sed 's/^/  /' "$T_TMP/runs"
