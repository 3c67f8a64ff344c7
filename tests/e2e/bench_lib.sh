#!/usr/bin/env bash
# The helpers every benchmark's figures come from (bench/lib.bash): the median and min-max
# of a column, the CPU of a client run in the foreground (children_cpu_ms, checked against
# bash's own `times`, which reads the same rusage at a finer resolution) and the machine's
# busy CPU (machine_cpu_ms, which must count at least that client's work). No timing
# goal: a fixed amount of work (a bounded loop), and each reading compared with another
# reading of the same work.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../../bench/lib.bash"
need_cmd awk

check_eq "median of an odd count" 2 "$(printf '3\n1\n2\n' | median)"
check_eq "median of an even count (mean of the middle two)" 2.5000 "$(printf '4\n1\n3\n2\n' | median)"
check_eq "median sorts numbers as numbers" 10 "$(printf '9\n10\n100\n' | median)"
check_eq "minmax" "1-30" "$(printf '3\n30\n1\n' | minmax)"
check_eq "minmax of decimals" "0.5-2.25" "$(printf '2.25\n0.5\n1\n' | minmax)"

# The columns: /proc/stat's "cpu" line is user nice system idle iowait irq softirq steal
# guest guest_nice (ticks); busy is user + nice + system + irq + softirq (guest time is
# already in user), not idle, iowait or steal (the host's).
hz=$(getconf CLK_TCK)
printf 'cpu  100 20 30 4000 50 6 7 80 0 0\ncpu0 50 10 15 2000 25 3 3 40 0 0\nintr 12345\n' >"$T_TMP/stat"
check_eq "machine_cpu_ms: user+nice+system+irq+softirq of the all-CPU line" "$((163 * 1000 / hz))" "$(machine_cpu_ms "$T_TMP/stat")"
# a /proc/PID/stat line whose command name has spaces and a ")"; utime 11 stime 12 cutime 40 cstime 2
printf '4242 (a b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 11 12 40 2 20 0 1 0 99 1000 50\n' >"$T_TMP/pstat"
check_eq "children_cpu_ms: cutime+cstime, counted after the name's last )" "$((42 * 1000 / hz))" "$(children_cpu_ms "$T_TMP/pstat")"

# times_ms VAR: children's user + system ms from bash's `times` (second line, "XmY.YYYs")
# into VAR; `times` must run in this shell (a command substitution would report its own)
times_ms() {
  times >"$T_TMP/times"
  printf -v "$1" '%s' "$(awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { v = $i; sub(/s$/, "", v); split(v, a, "m"); n += a[1] * 60000 + a[2] * 1000 } printf "%.0f\n", n }' "$T_TMP/times")"
}
c0=$(children_cpu_ms); times_ms t0; m0=$(machine_cpu_ms)
# the client stand-in: a bounded loop in a command substitution, as the benchmarks run wrk
out=$(awk 'BEGIN { for (i = 0; i < 8000000; i++) s += i % 7; print s }')
c1=$(children_cpu_ms); times_ms t1; m1=$(machine_cpu_ms)
dc=$((c1 - c0)) dt=$((t1 - t0)) dm=$((m1 - m0))
t_diag "the loop's CPU: children_cpu_ms $dc ms, times $dt ms, machine_cpu_ms $dm ms"
check_eq "the loop ran to its end" 23999997 "$out"
check_match "children_cpu_ms is a whole number of ms" '^[0-9]+$' "$c1"
check_match "machine_cpu_ms is a whole number of ms" '^[0-9]+$' "$m1"
check_cmp "children_cpu_ms counted the child's CPU (more than one tick)" "$dc" ">" 10
# /proc/PID/stat's cutime+cstime is in ticks, `times` in ms: equal but for two ticks
tick=$((1000 / $(getconf CLK_TCK)))
check_cmp "children_cpu_ms = bash's times for the same child (within 2 ticks, $tick ms each)" \
  "$(( dc > dt ? dc - dt : dt - dc ))" "<=" $((2 * tick))
check_cmp "machine_cpu_ms counted at least the child's CPU (all CPUs, ticks)" "$dm" ">=" $((dt - 2 * tick * $(nproc)))
# epoll_sizes: the entries of each epoll set of a process, with a few processes whatever its
# number of descriptors (it runs while a benchmark measures). A stand-in holds two epoll
# sets of 7 and 3 pipe ends and 600 other descriptors; the last PID the kernel handed out
# (/proc/loadavg) tells how many processes the call started (a readlink per descriptor
# would start over 600).
need_cmd python3
python3 - "$T_TMP/ep.ready" <<'PY' &
import os, select, sys, time
keep = [os.pipe() for _ in range(300)]          # 600 descriptors
a, b = select.epoll(), select.epoll()
for r, _ in keep[:7]: a.register(r, select.EPOLLIN)
for r, _ in keep[7:10]: b.register(r, select.EPOLLIN)
open(sys.argv[1], "w").close()
time.sleep(20)
PY
EP_PID=$!; t_track "$EP_PID"
wait_for 100 test -e "$T_TMP/ep.ready" || t_fail "the epoll stand-in started"
pid0=$(awk '{print $5}' /proc/loadavg)
sizes=$(epoll_sizes "$EP_PID")
pid1=$(awk '{print $5}' /proc/loadavg)
check_eq "epoll_sizes: each set's entries, in descriptor order" "7/3" "$sizes"
check_cmp "epoll_sizes started a few processes for 600 descriptors ($((pid1 - pid0)))" "$((pid1 - pid0))" "<" 50
check_eq "epoll_sizes of a process without epoll sets: empty" "" "$(epoll_sizes $$)"
kill "$EP_PID" 2>/dev/null; wait "$EP_PID" 2>/dev/null

t_done
