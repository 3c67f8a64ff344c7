# tests/lib/common.sh — shared by every end-to-end test and benchmark script.
#
#   . "$DEBIT_TOP/tests/lib/common.sh"
#
# Gives: TAP assertions (check, check_eq, check_match, check_file_eq, skip_all, t_done);
# a per-run temp dir $T_TMP; background processes tracked and killed by PID on exit
# (t_bg / t_track, stop_pid); free ports; bounded waits (wait_http, wait_port, wait_for);
# network namespaces with a per-run unique prefix, removed on exit even when the test fails
# (trap); and, from tests/lib/servers.sh, debitd and nginx started on free ports.
# Nothing here ever contacts an outside address.

set -u
: "${DEBIT_TOP:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${DEBIT_BUILD:=$DEBIT_TOP/build}"
export DEBIT_TOP DEBIT_BUILD
DEBITD=$DEBIT_BUILD/debitd
DEBIT=$DEBIT_BUILD/debit

T_N=0
T_FAILED=0
T_PIDS=()
T_NETNS=()
T_CLEANUP=()
T_TMP=$(mktemp -d /tmp/debit-t.XXXXXX)
# debit keeps every run in its store (docs/store.md): a test's runs go to its own temp
# dir, never into the home of the user (root on CI) running the suite.
export XDG_DATA_HOME=$T_TMP/xdg-data
unset DEBIT_DB
# Unique per run: PID and random, short enough for interface names (<= 15 chars).
T_ID=$(printf '%x%x' $$ $RANDOM | tail -c 6)

t_cleanup() {
  local rc=$?
  local i
  # A second SIGTERM (tests/run signals the test's whole process group, and timeout forwards
  # it once more) would run `exit 143` inside this trap and end the clean-up half done.
  # Caught, not ignored: what the clean-up starts gets the default action back at exec.
  trap : INT TERM
  for ((i = ${#T_CLEANUP[@]} - 1; i >= 0; i--)); do eval "${T_CLEANUP[$i]}" >/dev/null 2>&1 || true; done
  for p in "${T_PIDS[@]+"${T_PIDS[@]}"}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${T_PIDS[@]+"${T_PIDS[@]}"}"; do
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
  done
  for n in "${T_NETNS[@]+"${T_NETNS[@]}"}"; do
    # Processes inside a netns keep it alive: kill them by PID first.
    for p in $(ip netns pids "$n" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
    ip netns del "$n" 2>/dev/null || true
  done
  [ -n "${T_KEEP_TMP:-}" ] || rm -rf "$T_TMP"
  exit $rc
}
trap t_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Register a shell command to run at exit (in reverse order of registration).
t_on_exit() { T_CLEANUP+=("$*"); }

t_ok()   { T_N=$((T_N + 1)); echo "ok $T_N - $1"; }
t_fail() { T_N=$((T_N + 1)); T_FAILED=$((T_FAILED + 1)); echo "not ok $T_N - $1"; shift; [ $# -gt 0 ] && printf '#   %s\n' "$@"; return 0; }
t_skip() { T_N=$((T_N + 1)); echo "ok $T_N - $1 # SKIP ${2:-}"; }
t_diag() { printf '# %s\n' "$*"; }

# check NAME CMD... : ok when CMD exits 0.
check() { local name=$1; shift; if "$@" >"$T_TMP/check.out" 2>&1; then t_ok "$name"; else t_fail "$name" "command failed: $*" "$(tail -5 "$T_TMP/check.out")"; fi; }
# check_eq NAME EXPECTED ACTUAL
check_eq() { if [ "$2" = "$3" ]; then t_ok "$1"; else t_fail "$1" "expected: $2" "actual:   $3"; fi; }
# check_match NAME ERE ACTUAL
check_match() { if printf '%s' "$3" | grep -Eq -- "$2"; then t_ok "$1"; else t_fail "$1" "expected to match: $2" "actual: $(printf '%s' "$3" | head -c 600)"; fi; }
check_nomatch() { if printf '%s' "$3" | grep -Eq -- "$2"; then t_fail "$1" "must not match: $2" "actual: $(printf '%s' "$3" | head -c 600)"; else t_ok "$1"; fi; }
# check_file_eq NAME FILE1 FILE2 : byte-identical
check_file_eq() { if cmp -s "$2" "$3"; then t_ok "$1"; else t_fail "$1" "files differ: $2 $3"; fi; }
# check_cmp NAME A OP B : numeric comparison with awk (OP: < <= > >= ==)
check_cmp() { if awk -v a="$2" -v b="$4" "BEGIN{exit !(a $3 b)}"; then t_ok "$1"; else t_fail "$1" "expected $2 $3 $4"; fi; }

# Skip the whole script with a reason; the runner counts and prints it.
# (through the exit trap, as any end: what the test started before it knew it must skip, a
# debitd, a namespace, is removed too; a skip used to drop the trap and leave them running)
skip_all() { echo "# SKIP $*"; T_N=0; exit 77; }
need_root() { [ "$(id -u)" -eq 0 ] || skip_all "needs root (CAP_NET_ADMIN) for $*"; }
need_cmd() { local c; for c in "$@"; do command -v "$c" >/dev/null 2>&1 || skip_all "needs '$c' (run tools/deps as root)"; done; }

# End of script: plan line and exit status.
t_done() { echo "1..$T_N"; [ $T_FAILED -eq 0 ]; exit $?; }

# Start a command in the background, track its PID, log to $T_TMP/NAME.log.
# t_bg NAME CMD... ; sets T_LAST_PID
t_bg() { local name=$1; shift; "$@" >"$T_TMP/$name.log" 2>&1 & T_LAST_PID=$!; T_PIDS+=("$T_LAST_PID"); }
t_track() { T_PIDS+=("$1"); }

# A TCP port nobody listens on (in the current netns), from a random start.
free_port() {
  local p tries=0
  while [ $tries -lt 200 ]; do
    p=$((20000 + (RANDOM * 32768 + RANDOM) % 12000))  # below the ephemeral range (32768+)
    if ! ss -Htln "sport = :$p" 2>/dev/null | grep -q .; then echo "$p"; return 0; fi
    tries=$((tries + 1))
  done
  return 1
}

# wait_http URL [TRIES] [NETNS] [PID]: bounded wait (TRIES x 0.1 s) until URL answers any HTTP
# status; with PID, gives up as soon as that process has exited (a server that failed to start).
wait_http() {
  local url=$1 tries=${2:-100} ns=${3:-} pid=${4:-} i
  for ((i = 0; i < tries; i++)); do
    if [ -n "$ns" ]; then ip netns exec "$ns" curl -s -o /dev/null --max-time 1 "$url" && return 0
    else curl -s -o /dev/null --max-time 1 "$url" && return 0; fi
    [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null && return 1
    sleep 0.1
  done
  return 1
}

# wait_for TRIES CMD...: bounded retry (TRIES x 0.1 s) until CMD succeeds. For a state that a
# peer reaches asynchronously (a record completed, a connection counted as closed): never a
# bare sleep.
wait_for() {
  local tries=$1 i; shift
  for ((i = 0; i < tries; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  return 1
}

# stop_pid PID [SIGNAL]: send SIGNAL (TERM) and wait for the process, bounded (5 s, then
# SIGKILL). Sets STOP_RC to its exit status (for children of this shell).
stop_pid() {
  local pid=$1 sig=${2:-TERM}
  kill -"$sig" "$pid" 2>/dev/null
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  kill -KILL "$pid" 2>/dev/null
  wait "$pid"
  STOP_RC=$?
} 2>/dev/null   # also bash's "Killed"/"Terminated" job notices

# wait_port PORT [TRIES]: bounded wait until something listens on PORT.
wait_port() {
  local port=$1 tries=${2:-100} i
  for ((i = 0; i < tries; i++)); do
    ss -Htln "sport = :$port" | grep -q . && return 0
    sleep 0.1
  done
  return 1
}

# --- network namespaces -------------------------------------------------------------------
# ns_new VAR SUFFIX: creates netns "dbt<ID><SUFFIX>" with lo up, stores its name in VAR,
# removes it at exit. (Not "$(ns_new …)": a subshell would lose the cleanup record.)
ns_new() {
  local n="dbt${T_ID}$2"
  ip netns add "$n" || return 1
  T_NETNS+=("$n")
  ip -n "$n" link set lo up
  printf -v "$1" '%s' "$n"
}
# ns_veth NS_A IF_A ADDR_A NS_B IF_B ADDR_B : veth pair between two namespaces, addresses
# with prefix (198.18.0.0/15 only), both ends up.
ns_veth() {
  local na=$1 ia=$2 aa=$3 nb=$4 ib=$5 ab=$6
  ip link add "$ia" netns "$na" type veth peer name "$ib" netns "$nb" || return 1
  ip -n "$na" addr add "$aa" dev "$ia"
  ip -n "$nb" addr add "$ab" dev "$ib"
  ip -n "$na" link set "$ia" up
  ip -n "$nb" link set "$ib" up
}

# Servers the tests start (debitd, the nginx mirror stand-in) and HTTP helpers.
. "$DEBIT_TOP/tests/lib/servers.sh"

# wire_get NAME: the string value of `#define NAME "value"` in common/wire.h, the one
# definition of the client/server contract (header names, paths, the delay ready line).
wire_get() {
  local v
  v=$(sed -n "s/^#define $1 \"\(.*\)\"\$/\1/p" "$DEBIT_TOP/common/wire.h")
  [ -n "$v" ] || { echo "wire_get: $1 is not defined in common/wire.h" >&2; return 1; }
  printf '%s\n' "$v"
}
