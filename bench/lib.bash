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
