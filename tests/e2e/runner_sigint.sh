#!/usr/bin/env bash
# Ctrl-C on `make test` (issue 31): tests/run, pointed at tests/lib/fixtures/runner/ (a test
# that passes, a long one whose child ignores SIGTERM, one after it), gets SIGINT sent to its
# process group as a terminal sends it, while the long test runs. Within 5 s the runner has
# exited 130, the long test and its child are gone (the child needs the SIGKILL after the
# grace), the long test's exit trap ran to its end (its namespace, as root, and its
# temporary folder removed after the child), the test after it never started, and the
# runner printed what it interrupted and the partial tally.
. "$(dirname "$0")/../lib/common.sh"
need_cmd ps setsid
fx=$DEBIT_TOP/tests/lib/fixtures/runner
mkdir -p "$T_TMP/m"
# Job control: the runner gets a process group of its own (as a shell gives a foreground
# job) and SIGINT is not ignored in it, as it is in a non-interactive shell's background jobs.
set -m
TESTS_DIR=$fx RUNNER_FIXTURE_DIR=$T_TMP/m BUILD=${BUILD:-build} bash "$DEBIT_TOP/tests/run" >"$T_TMP/run.out" 2>&1 &
rpid=$!
set +m
t_track "$rpid"
t_on_exit "kill -KILL -- -$rpid; [ -s '$T_TMP/m/b.child' ] && kill -KILL \$(cat '$T_TMP/m/b.child')"
check "the runner is the leader of its process group" test "$(ps -o pgid= -p "$rpid" | tr -d ' ')" = "$rpid"
wait_for 150 test -e "$T_TMP/m/b.started"
check "the long fixture test started (with its child)" test -e "$T_TMP/m/b.started"
bpid=$(cat "$T_TMP/m/b.pid" 2>/dev/null) cpid=$(cat "$T_TMP/m/b.child" 2>/dev/null)
tgroup=$(ps -o pgid= -p "${bpid:-0}" | tr -d ' ')
check_match "the long test runs in a process group of its own ($tgroup), not the runner's" '^[0-9]+$' "${tgroup/#$rpid/same}"
# running: it exists and is not a zombie (a dead child its new parent has not reaped yet)
running() { ps -o stat= -p "$1" 2>/dev/null | grep -qv '^Z'; }

t0=$(date +%s.%N)
kill -INT -- "-$rpid"
for _ in $(seq 100); do kill -0 "$rpid" 2>/dev/null || break; sleep 0.1; done
wait "$rpid"; rc=$?
t1=$(date +%s.%N)
check_cmp "the runner exits within 5 s of the SIGINT ($(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b - a}') s)" \
  "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b - a}')" '<=' 5
check_eq "... with status 130" 130 "$rc"
alive=()
for p in $bpid $cpid; do running "$p" && alive+=("$p"); done
check_eq "the long test ($bpid) and its SIGTERM-proof child ($cpid) are gone" "" "${alive[*]}"
check_eq "no process is left in the runner's group or the test's" "" \
  "$(ps -e -o pgid=,pid=,stat= | awk -v g="$rpid" -v t="${tgroup:-0}" '($1 == g || $1 == t) && $3 !~ /^Z/ {print $2}')"
check "the long test's exit trap ran" test -e "$T_TMP/m/b.trap"
btmp=$(cat "$T_TMP/m/b.tmp" 2>/dev/null)
check "... to its end: its temporary folder is removed (after its SIGTERM-proof child)" test -n "$btmp" -a ! -e "${btmp:-/nonexistent}"
if [ -s "$T_TMP/m/b.netns" ]; then
  bns=$(cat "$T_TMP/m/b.netns")
  t_on_exit "ip netns del '$bns'"
  check_eq "... and its network namespace $bns is deleted" "" "$(ip netns list | awk -v n="$bns" '$1 == n')"
else
  t_skip "the long test's network namespace is deleted" "not root: the fixture makes none"
fi
check "the test after it did not run" test ! -e "$T_TMP/m/c.ran"
out=$(cat "$T_TMP/run.out")
check_match "the runner names the interrupted test" 'interrupted by SIGINT: b_long\.sh after [0-9]+s' "$out"
# (with its own child of the moment, a sleep; never the test's shell)
check_match "... escalated to SIGKILL for the child that ignores SIGTERM" \
  "SIGKILL after 2000ms to what ignored SIGTERM: ([0-9]+ )*${cpid:-x}( [0-9]+)*\)" "$out"
check_nomatch "... not to the test's shell" "SIGKILL after 2000ms to what ignored SIGTERM:.* ${bpid:-x}( |\))" "$out"
check_nomatch "... the test's shell ended its clean-up without the last SIGKILL" 'SIGKILL to its whole process group' "$out"
check_match "... prints the partial tally (a_pass counted)" '^1 passed, 0 failed, 0 skipped$' "$out"
check_match "... and what was not run" '^interrupted by SIGINT: 1 of 3 tests run, 2 not run$' "$out"
check_match "... lists it as failed" '^FAILED: b_long\.sh \(interrupted\)$' "$out"
t_diag "$(tail -8 "$T_TMP/run.out")"
t_done
