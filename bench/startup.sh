#!/usr/bin/env bash
# Benchmark: debitd's start-up, from exec to the first byte of its largest file, for each
# size in SIZES (default 1 GiB and 4 GiB), over STARTS fresh starts each (sizes interleaved,
# so that a drift of the machine hits both alike). Prints per size the median and min-max of
# the time to first byte, of the generation alone (debitd's log) and the share of the region
# in 2 MiB pages, and the median per GiB against the goal (issue 12: < 0.3 s per GiB); then
# what the generation consists of (debitd's log): getting the memory (the kernel allocating and
# zeroing the pages, where a VM's host faults land) and the generator's CPU time (debitd's work).
# The first byte is polled with a one-byte range every 5 ms. debitd answers while its region
# is being generated (the generator's bytes, computed per response: tests/e2e/server_startup.sh
# checks a whole-file GET made then), so this is when any GET gets its first byte; the
# region's own generation (zero-copy from its end on) is printed beside it, from the log.
# GAP seconds between starts (default 3): on a VM with free page reporting, memory freed by
# the previous start is handed back to the host about 2 s later, and the next start pays the
# host's faults on it (cold memory); GAP=0 (back to back) lets a start reuse memory the
# previous one has just freed (warm).
# FLOOR=1 (default) also times, before each start and GAP seconds apart from it, the first
# touch of as much fresh anonymous memory by one thread (python3: an MADV_HUGEPAGE mapping,
# one byte written per 4 KiB): what merely getting that memory from the machine costs, for
# scale (debitd uses every CPU, so it can beat this one-thread figure).
# Keep GAP >= 3 with it: memory freed less than about 2 s before is still warm, and the start
# right after the touch (or the touch after a start) would get it.
# THP=advise (root) sets the shmem THP policy for the duration of the run and puts it back.
#   STARTS=5 SIZES="1GiB 4GiB" GAP=3 WARM=1 bench/startup.sh
. "$(dirname "$0")/../tests/lib/common.sh"
. "$(dirname "$0")/lib.bash"
need_cmd curl python3
STARTS=${STARTS:-5}
SIZES=${SIZES:-1GiB 4GiB}
GAP=${GAP:-3}
FLOOR=${FLOOR:-1}
WARM=${WARM:-1}
command -v "$DEBITD" >/dev/null || { echo "build debitd first (make)"; exit 1; }

bench_thp
echo "machine: $(nproc) CPUs, kernel $(uname -r), shmem THP ${THP_NOW:-unknown}${THP:+ (set for this run, was $THP_ORIG)}, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"

gib() { awk -v s="$1" 'BEGIN{n = s + 0; u = s; sub(/^[0-9.]+/, "", u);
  f = (u == "GiB") ? 1 : (u == "MiB") ? 1 / 1024 : (u == "Gio") ? 1 : -1; print n * f}'; }

# touch_s BYTES: seconds to first-touch BYTES of fresh anonymous memory
touch_s() {
  python3 - "$1" <<'PY'
import mmap, sys, time
n = int(sys.argv[1])
t = time.monotonic()
m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
if hasattr(mmap, "MADV_HUGEPAGE"):
    m.madvise(mmap.MADV_HUGEPAGE)
for i in range(0, n, 4096):
    m[i] = 1
print("%.3f" % (time.monotonic() - t))
PY
}
port=$(free_port)
: >"$T_TMP/starts"
# one_start SIZE KIND FLOOR_S: one start of debitd with one file of SIZE, timed to its first
# byte; a line of $T_TMP/starts
one_start() {
  local size=$1 kind=$2 fl=$3 g t0 pid first gen hp mem cpu
  g=$(gib "$size")
  cat >"$T_TMP/d.conf" <<CONF
listen = ( { address = "127.0.0.1"; port = $port; } );
files = ( { path = "/ram/$size.dat"; size = "$size"; } );
log = { access = "off"; level = "info"; };
CONF
  t0=$(date +%s.%N)
  t_bg debitd "$DEBITD" -c "$T_TMP/d.conf"
  pid=$T_LAST_PID
  first=""
  for _ in $(seq 6000); do # 30 s at most
    if curl -s -o /dev/null -r 0-0 --max-time 5 "http://127.0.0.1:$port/ram/$size.dat"; then first=$(date +%s.%N); break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.005
  done
  [ -n "$first" ] || { echo "debitd ($size) did not answer:"; cat "$T_TMP/debitd.log"; exit 1; }
  wait_for 600 grep -q "generated from seed" "$T_TMP/debitd.log" ||
    { echo "debitd ($size): region not generated in 60 s:"; cat "$T_TMP/debitd.log"; exit 1; }
  gen=$(grep -o "generated from seed [0-9]* in [0-9.]* s" "$T_TMP/debitd.log" | head -1 | sed "s/.* in //; s/ s//")
  hp=$(grep -o "[0-9]*% in 2 MiB pages" "$T_TMP/debitd.log" | head -1 | cut -d% -f1)
  mem=$(grep -o "getting the memory [0-9.]* s" "$T_TMP/debitd.log" | head -1 | sed "s/.* memory //; s/ s//")
  cpu=$(grep -o "the generator [0-9.]* CPU-s" "$T_TMP/debitd.log" | head -1 | sed "s/the generator //; s/ CPU-s//")
  echo "$size $g $(awk -v a="$t0" -v b="$first" 'BEGIN{printf "%.3f", b-a}') ${gen:-0} ${hp:-0} $fl ${mem:-0} ${cpu:-0} $kind" >>"$T_TMP/starts"
  stop_pid "$pid" TERM
}
for i in $(seq "$STARTS"); do
  for size in $SIZES; do
    fl=0
    if [ "$FLOOR" = 1 ]; then fl=$(touch_s "$(awk -v g="$(gib "$size")" 'BEGIN{printf "%.0f", g * 1073741824}')"); sleep "$GAP"; fi
    one_start "$size" cold "$fl"
    # a restart: the memory the start above has just freed is still the guest's
    [ "$WARM" = 1 ] && one_start "$size" warm 0
    sleep "$GAP"
  done
done

kinds="cold"
[ "$WARM" = 1 ] && kinds="cold warm"
for size in $SIZES; do
 for kind in $kinds; do
  col() { awk -v s="$size" -v k="$kind" -v c="$1" '$1==s && $9==k {print $c}' "$T_TMP/starts"; }
  g=$(gib "$size")
  m=$(col 3 | median); r=$(col 3 | minmax); gm=$(col 4 | median); gr=$(col 4 | minmax)
  per=$(awk -v m="$m" -v g="$g" 'BEGIN{printf "%.3f", m / g}')
  printf 'start-up %-5s %s to first byte: median %s s [%s] over %s starts, %s s per GiB (goal < 0.3): %s; the region complete (zero-copy from then on) %s s [%s], %s s per GiB; 2 MiB pages %%: %s\n' \
    "$size" "$kind" "$m" "$r" "$STARTS" "$per" "$(awk -v p="$per" 'BEGIN{print (p < 0.3 ? "met" : "not met")}')" "$gm" "$gr" \
    "$(awk -v m="$gm" -v g="$g" 'BEGIN{printf "%.3f", m / g}')" "$(col 5 | tr '\n' ' ')"
  printf '         of the generation: getting the memory (allocating and zeroing the pages: the first touch; the longest thread) %s s [%s];\n            the generator itself %s CPU-s per GiB [%s] (all threads: debitd'"'"'s own work, whatever the load)\n' \
    "$(col 7 | median)" "$(col 7 | minmax)" \
    "$(awk -v s="$size" -v k="$kind" -v g="$g" '$1==s && $9==k {printf "%.3f\n", $8 / g}' "$T_TMP/starts" | median)" \
    "$(awk -v s="$size" -v k="$kind" -v g="$g" '$1==s && $9==k {printf "%.3f\n", $8 / g}' "$T_TMP/starts" | minmax)"
  [ "$FLOOR" = 1 ] && [ "$kind" = cold ] && printf '         for scale: one thread touching %s of fresh memory: median %s s [%s]; debitd/that %s [per start %s]\n' \
    "$size" "$(col 6 | median)" "$(col 6 | minmax)" "$(awk -v a="$m" -v b="$(col 6 | median)" 'BEGIN{printf "%.2f", (b > 0 ? a / b : 0)}')" \
    "$(awk -v s="$size" '$1==s && $6 > 0 && $9=="cold" {printf "%.2f\n", $3 / $6}' "$T_TMP/starts" | minmax)"
 done
done
echo "starts (size GiB first_byte_s generation_s huge_pct floor_s memory_s generator_cpu_s cold|warm):"; sed 's/^/  /' "$T_TMP/starts"
