# Shared by tests/e2e/lab_*.sh, scenario_lab.sh, netctl.sh and delayline.sh (sourced
# after tests/lib/common.sh; not a test itself): what the lab and delay tests need to
# check independently of the code under test.

# The prologue of every lab test: root, a built debitd, and lab.sh's own check of this
# machine (namespaces, veth, ifb, a delay mechanism); skips, with the reason, otherwise.
# Sets LAB (the script) and LAB_CHECK (what its check said, e.g. the delay mechanism).
lab_require() {
  need_root "network namespaces, tc and iptables"
  LAB=$DEBIT_TOP/lab/lab.sh
  [ -x "$DEBITD" ] || skip_all "build/debitd is not built"
  LAB_CHECK=$("$LAB" check 2>&1) || skip_all "$LAB_CHECK"
}

# The delay mechanism this kernel calls for, found the way the testbed notes say and
# independently of lab.sh and debit (which must agree with it): netem when a netem qdisc
# can be added in a scratch namespace, else the delay line. Sets LAB_MECH to "netem" or
# "delayline". Call it in the test's shell (not in $(...)), so that the scratch namespace
# is registered for removal at exit even if the test is killed right then.
# shellcheck disable=SC2034  # LAB_MECH is read by the scripts that source this file
lab_expected_mechanism() {
  local probe_ns
  LAB_MECH=delayline
  ns_new probe_ns np >/dev/null 2>&1 || return 0
  ip netns exec "$probe_ns" tc qdisc add dev lo root netem delay 1ms 2>/dev/null && LAB_MECH=netem
  ip netns del "$probe_ns" 2>/dev/null
  return 0
}

# delay_wait_ready LOG PID: bounded (8 s) wait for a delay program's ready line
# (WIRE_DELAY_READY, common/wire.h: debit-delayline, debit-netctl) in LOG while PID lives.
delay_wait_ready() {
  local ready i
  ready=$(wire_get WIRE_DELAY_READY) || return 1
  for ((i = 0; i < 160; i++)); do
    grep -qF "$ready" "$1" && return 0
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

# Average bytes per packet a namespace's interface sent while CMD ran, and the bytes
# (from /sys/class/net/DEV/statistics, read inside the namespace): "AVG BYTES".
lab_tx_avg() { # NS DEV CMD...
  local ns=$1 dev=$2 b0 p0 b1 p1; shift 2
  read -r b0 p0 < <(ip netns exec "$ns" cat "/sys/class/net/$dev/statistics/tx_bytes" "/sys/class/net/$dev/statistics/tx_packets" | tr '\n' ' ')
  "$@" >/dev/null 2>&1
  read -r b1 p1 < <(ip netns exec "$ns" cat "/sys/class/net/$dev/statistics/tx_bytes" "/sys/class/net/$dev/statistics/tx_packets" | tr '\n' ' ')
  echo "$(((b1 - b0) / (p1 - p0 > 0 ? p1 - p0 : 1))) $((b1 - b0))"
}

# Validate a plot file (tests/e2e/lab_plotcheck.py: PNG chunks and data, SVG as XML with
# a key whose entries each have a line style of their own). check_plot NAME KIND FILE ARGS...
check_plot() {
  local name=$1 kind=$2 file=$3 out; shift 3
  if out=$(python3 "$DEBIT_TOP/tests/e2e/lab_plotcheck.py" "$kind" "$file" "$@" 2>&1); then
    t_ok "$name"; t_diag "$(printf '%s' "$out" | tr '\n' ' ')"
  else
    t_fail "$name" "$out"
  fi
}

# Record, every 0.2 s until stopped, the PID and name of every process inside the
# namespaces of the lab whose env file is ENV (lab.sh writes it first; its LAB_ID names
# the namespaces dbl<ID>*), into FILE ("PID COMM" lines): what a lab run started
# (servers, delay lines, debit, ...), so that the test can check that none of it outlives
# the run. Sets LAB_SAMPLER_PID (tracked: stopped at exit).
lab_sample_pids() { # ENV FILE
  local env=$1 file=$2
  : >"$file"
  (
    id=
    while :; do
      [ -n "$id" ] || id=$(sed -n 's/^LAB_ID=//p' "$env" 2>/dev/null)
      if [ -n "$id" ]; then
        for n in $(ip netns list 2>/dev/null | awk -v p="dbl$id" 'index($1, p) == 1 {print $1}'); do
          for p in $(ip netns pids "$n" 2>/dev/null); do
            echo "$p $(cat "/proc/$p/comm" 2>/dev/null)"
          done
        done >>"$file.new"
        sort -u "$file" "$file.new" -o "$file"; : >"$file.new"
      fi
      sleep 0.2
    done
  ) &
  LAB_SAMPLER_PID=$!
  t_track "$LAB_SAMPLER_PID"
}

# The sampled processes of the project's programs (debitd, debit, debit-netctl,
# debit-delayline) that are still alive, same PID and same name, as "PID COMM" words
# (empty: none). Only these: short-lived helpers (ip, tc, curl...) free their PIDs, which
# pid_max 32768 and other test runs soon reuse for programs of the same name.
lab_sampled_alive() { # FILE
  local pid comm out=""
  while read -r pid comm; do
    case $comm in debitd|debit|debit-netctl|debit-delayline) ;; *) continue ;; esac
    [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$comm" ] && out="$out${out:+ }$pid $comm"
  done <"$1"
  echo "$out"
}

# The root namespace's qdiscs, iptables rules (filter and mangle) and links: a lab test
# must leave them as it found them. Lines about `lo` are left out: other test runs may
# add and remove delay-line rules on the root namespace's loopback at the same time, and
# the lab never touches it. (Network namespaces are checked by lab ID, for the same
# reason.)
lab_snap_root() {
  { tc qdisc show; iptables -w -S; iptables -w -t mangle -S; ip6tables -w -t mangle -S; ip -o link show | awk '{print $2}'; } 2>/dev/null |
    grep -Ev -- '(-i|-o|dev) lo( |$)|^lo:$'
}

# ss_min_rtt_us NETNS PORT: the kernel's minimum RTT (us, tcpi_min_rtt: the least of every
# sample) of NETNS's connections to PORT, read now (a flow must be running); empty if none.
# iperf3's "min_rtt" of a 1 s run is one srtt sample, a mean that this VM's jitter moves.
ss_min_rtt_us() {
  ip netns exec "$1" ss -tinH "dport = :$2" 2>/dev/null | grep -o 'minrtt:[0-9.]*' | cut -d: -f2 | sort -g | head -1 |
    awk '{printf "%d\n", $1 * 1000}'
}

# lab_up_set SCENARIO RATE_MBIT: the labelled set's lab (lab_verdict_set.sh, lab_reader_stall.sh):
# SCENARIO's servers behind a RATE_MBIT Mbit/s tbf with 10 ms of base RTT and 64 MiB of
# buffers, taken down at exit. Sets D (its directory) and sources its lab.env; a failed
# `lab up` ends the test. Call it in the test's shell (not in $(...)).
lab_up_set() {
  D=$T_TMP/lab
  t_on_exit "[ -f '$D/lab.env' ] && '$LAB' down '$D'"
  "$LAB" up "$D" --scenario "$1" --ram 64MiB --rate "$2"mbit --base-delay 10ms 2>"$T_TMP/up.err" ||
    { t_fail "lab up" "$(tail -3 "$T_TMP/up.err")"; t_done; }
  # shellcheck disable=SC1091
  . "$D/lab.env"
}
