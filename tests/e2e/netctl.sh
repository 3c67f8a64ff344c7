#!/usr/bin/env bash
# debit-netctl, the network-control library as a program (what lab/lab.sh calls): usage
# errors name the option (exit 2); `probe` agrees with an independent netem check; in two
# namespaces joined by a veth, `delay` adds the RTT it says (TCP handshake time), its
# ready line (common/wire.h) carries mechanism, direction and halves, the delay line's
# rules exist while it holds and are gone after SIGTERM / SIGINT, the delay line's stats
# come through, and a delay line that dies under it is reported (exit 1) and cleaned up.
# The netem mechanism runs where the kernel has sch_netem, and is skipped (with the
# reason) where it has not.
. "$DEBIT_TOP/tests/lib/common.sh"
. "$DEBIT_TOP/tests/e2e/lab_lib.bash"
NC=$DEBIT_BUILD/debit-netctl
[ -x "$NC" ] || skip_all "build/debit-netctl is not built"
READY=$(wire_get WIRE_DELAY_READY) || { t_fail "WIRE_DELAY_READY is defined in common/wire.h"; t_done; }

# --- command line -------------------------------------------------------------------------
# usage NAME REGEX ARGS...: exit 2 and stderr matching REGEX
usage() {
  local name=$1 re=$2 out rc; shift 2
  out=$("$NC" "$@" 2>&1 >/dev/null); rc=$?
  check_match "$name: exit 2, names it" "^2 debit-netctl: $re" "$rc $out"
}
usage "no command" "a command is required"
usage "unknown command" "unknown command 'frob'" frob
usage "no --dev" "delay: --dev is required" delay --delay 10ms
usage "no --delay" "delay: --delay is required" delay --dev lo
usage "bad --delay" "--delay: '10parsecs'" delay --dev lo --delay 10parsecs
usage "zero --delay" "--delay: .*between 1 us and 10 s" delay --dev lo --delay 0
usage "bad --dev" "--dev: .*not a valid interface name" delay --dev a/b --delay 1ms
usage "bad --direction" "--direction: 'sideways': not both, out or in" delay --dev lo --delay 1ms --direction sideways
usage "bad --mechanism" "--mechanism: 'tc': not auto, netem or delayline" delay --dev lo --delay 1ms --mechanism tc
usage "bad --queue-num" "--queue-num: '65536'.*0\.\.65535" delay --dev lo --delay 1ms --queue-num 65536
usage "bad --rate-hint" "--rate-hint: 'fast'" delay --dev lo --delay 1ms --rate-hint fast
usage "too small --rate-hint" "--rate-hint: .*at least 1 kbit/s" delay --dev lo --delay 1ms --rate-hint 10
usage "empty --delayline" "--delayline: .*empty" delay --dev lo --delay 1ms --delayline ''
usage "unknown option" "delay: unknown option '--frobnicate'" delay --dev lo --delay 1ms --frobnicate
usage "option without its value" "delay: --queue-num needs a value" delay --dev lo --delay 1ms --queue-num
usage "stray argument" "delay: unexpected argument 'extra'" delay --dev lo --delay 1ms extra
usage "probe with an argument" "probe: unexpected argument 'x'" probe x
out=$("$NC" --help); rc=$?
check_match "--help: exit 0, both commands" "^0 Usage: debit-netctl delay --dev DEV --delay DURATION.*debit-netctl probe" "$rc $(printf '%s' "$out" | tr '\n' ' ')"
check_match "--version" "^debit-netctl [0-9]+\.[0-9]+" "$("$NC" --version)"

need_root "network namespaces, tc and iptables"
need_cmd iptables ip6tables tc curl python3

# --- probe, against the testbed notes' own check --------------------------------------------
ns_new P p
ip netns exec "$P" tc qdisc add dev lo root netem delay 1ms 2>/dev/null && want=netem || want=delayline
ip netns del "$P"
probe=$("$NC" probe); rc=$?; out=$probe
t_diag "probe: $out (exit $rc); the kernel calls for: $want"
if [ "$want" = netem ]; then
  check_eq "probe: 'netem: yes', exit 0" "0 netem: yes" "$rc ${out%% (*}"
else
  check_eq "probe: 'netem: no', exit 1" "1 netem: no" "$rc ${out%% (*}"
fi

if command -v setpriv >/dev/null 2>&1; then
  out=$(setpriv --reuid 65534 --regid 65534 --clear-groups --inh-caps=-all "$NC" probe 2>&1); rc=$?
  check_match "probe without privileges: exit 2, cannot tell" "^2 debit-netctl: netem probe: cannot create a scratch network namespace" "$rc $out"
else
  t_skip "probe without privileges: exit 2" "needs setpriv (util-linux)"
fi

# --- two namespaces, a TCP listener in B ----------------------------------------------------
ns_new A a
ns_new B b
ns_veth "$A" va 198.18.21.1/24 "$B" vb 198.18.21.2/24
ip netns exec "$B" ethtool -K vb gro on >/dev/null 2>&1
t_bg http ip netns exec "$B" python3 -m http.server 8021 --bind 198.18.21.2
wait_for 50 ip netns exec "$A" curl -s -o /dev/null --max-time 1 http://198.18.21.2:8021/ ||
  { t_fail "listener in B answers" "$(cat "$T_TMP/http.log")"; t_done; }
Q=$((7500 + RANDOM % 100))

# rtt_us: the smallest of 9 TCP handshakes A -> B (one SYN/SYN-ACK round trip each); a
# delay never shortens a round trip, so the smallest is the truest on a busy machine. On a
# loaded machine (a check-asan run beside seven builds) even the smallest base reached 1.8 ms,
# so a delay is checked by its absolute floor (it never shortens a round trip) and by what it
# added at most, and the base and the removal by bounds that a 4 or 10 ms delay cannot meet.
rtt_us() {
  local i
  for i in 1 2 3 4 5 6 7 8 9; do
    ip netns exec "$A" curl -s -o /dev/null --max-time 5 -w '%{time_connect}\n' http://198.18.21.2:8021/
  done | sort -g | head -1 | awk '{printf "%d\n", $1 * 1e6}'
}
rules() { ip netns exec "$B" "${2:-iptables}" -w -t mangle -S 2>/dev/null | grep -c "debit-delayline:q$1"; }

base=$(rtt_us)
t_diag "base: TCP handshake ${base} us"
check_cmp "base RTT measured (< 2 ms)" "$base" "<" 2000

# --- auto: the mechanism the kernel calls for, +10 ms split both ways -------------------------
t_bg d1 ip netns exec "$B" "$NC" delay --dev vb --delay 10ms --queue-num "$Q"
P1=$T_LAST_PID
check "auto: ready line printed" delay_wait_ready "$T_TMP/d1.log" "$P1"
check_match "auto: ready line: mechanism, dev, direction, halves, pid" \
  "^$READY mechanism=$want dev=vb direction=both rtt_us=10000 out_us=5000 in_us=5000 loss=0% seed=([0-9]+|-) pid=$P1\$" "$(grep -F "$READY" "$T_TMP/d1.log")"
if [ "$want" = delayline ]; then
  check_eq "auto: delay line rules in B (PREROUTING -i + POSTROUTING -o)" 2 "$(rules "$Q")"
  check_eq "auto: IPv6 delayed too by default" 2 "$(rules "$Q" ip6tables)"
  check_eq "auto: debit-delayline runs under debit-netctl" "debit-delayline" "$(ps -o comm= --ppid "$P1")"
fi
r=$(rtt_us)
t_diag "+10 ms: TCP handshake ${r} us"
check_cmp "+10 ms: RTT >= 9.5 ms" "$r" ">=" 9500
check_cmp "+10 ms: added RTT <= 11 ms" "$((r - base))" "<=" 11000
stop_pid "$P1" TERM
check_eq "SIGTERM: exit 0" 0 "$STOP_RC"
check_eq "SIGTERM: no delay line rule left" "0 0" "$(rules "$Q") $(rules "$Q" ip6tables)"
check_eq "SIGTERM: no netem, ingress or IFB left" "" \
  "$(ip netns exec "$B" tc qdisc show dev vb | grep -E 'netem|ingress'; ip -n "$B" -br link show type ifb)"
check_match "SIGTERM: says it removed the delay" "debit-netctl: delay on vb removed \(signal 15\)" "$(cat "$T_TMP/d1.log")"
if [ "$want" = delayline ]; then
  check_match "the delay line's stats come through" "debit-delayline: stats packets=[1-9][0-9]* .*kernel_dropped=0" "$(cat "$T_TMP/d1.log")"
fi
r=$(rtt_us)
check_cmp "after SIGTERM: RTT back (< 2 ms)" "$r" "<" 2000

# --- the delay line, forced: incoming only, IPv4 only, stopped by SIGINT ---------------------
t_bg d2 ip netns exec "$B" "$NC" delay --dev vb --delay 4ms --direction in --mechanism delayline \
  --queue-num "$Q" --no-ipv6 --delayline "$DEBIT_BUILD/debit-delayline"
P2=$T_LAST_PID
check "delayline, in: ready" delay_wait_ready "$T_TMP/d2.log" "$P2"
check_match "delayline, in: all of it on the way in" \
  "^$READY mechanism=delayline dev=vb direction=in rtt_us=4000 out_us=0 in_us=4000 " "$(grep -F "$READY" "$T_TMP/d2.log")"
rl=$(ip netns exec "$B" iptables -w -t mangle -S)
check_match "delayline, in: PREROUTING rule on vb" "-A PREROUTING -i vb .*debit-delayline:q$Q.* --queue-num $Q --queue-bypass" "$rl"
check_nomatch "delayline, in: no POSTROUTING rule" "POSTROUTING.*debit-delayline:q$Q" "$rl"
check_eq "--no-ipv6: no ip6tables rule" 0 "$(rules "$Q" ip6tables)"
r=$(rtt_us)
t_diag "+4 ms in: TCP handshake ${r} us"
check_cmp "+4 ms in: RTT >= 3.5 ms" "$r" ">=" 3500
check_cmp "+4 ms in: added RTT <= 5 ms" "$((r - base))" "<=" 5000
# t_bg's job starts with SIGINT ignored (a script's background job): debit-netctl takes it back.
stop_pid "$P2" INT
check_eq "SIGINT: exit 0" 0 "$STOP_RC"
check_eq "SIGINT: rules gone" 0 "$(rules "$Q")"

# --- the delay line dies under it: reported, exit 1, its rules removed ------------------------
t_bg d3 ip netns exec "$B" "$NC" delay --dev vb --delay 2ms --mechanism delayline --queue-num "$Q" --no-ipv6
P3=$T_LAST_PID
check "killed delay line: ready first" delay_wait_ready "$T_TMP/d3.log" "$P3"
kill -KILL "$(ps -o pid= --ppid "$P3")"
for ((i = 0; i < 100; i++)); do kill -0 "$P3" 2>/dev/null || break; sleep 0.05; done
wait "$P3" 2>/dev/null; rc=$?
check_eq "killed delay line: debit-netctl exits 1" 1 "$rc"
check_match "killed delay line: says the delay is no longer in force" "delay line on vb ended by itself" "$(cat "$T_TMP/d3.log")"
check_eq "killed delay line: its orphaned rules removed" 0 "$(rules "$Q")"

# --- failures to apply: exit 1, nothing left -------------------------------------------------
out=$(ip netns exec "$B" "$NC" delay --dev nosuch0 --delay 1ms 2>&1); rc=$?
check_match "no such device: exit 1, says so" "^1 debit-netctl: nosuch0: no such network interface" "$rc $out"
out=$(ip netns exec "$B" "$NC" delay --dev vb --delay 1ms --mechanism delayline --delayline /nonexistent/dl 2>&1); rc=$?
check_match "--delayline not executable: exit 1, says so" "^1 debit-netctl: delay line program /nonexistent/dl is not executable" "$rc $out"

# --- netem, where the kernel has it ----------------------------------------------------------
if [ "$want" = netem ]; then
  t_bg d4 ip netns exec "$B" "$NC" delay --dev vb --delay 30ms --mechanism netem --rate-hint 100gbit
  P4=$T_LAST_PID
  check "netem: ready" delay_wait_ready "$T_TMP/d4.log" "$P4"
  q=$(ip netns exec "$B" tc qdisc show dev vb)
  # 100 Gbit/s x 15 ms in 1500-byte packets, doubled: 250000 (the C code's one limit).
  check_match "netem: on vb's root, half the delay, limit from --rate-hint" "netem deb1: root .*limit 250000 delay 15(\.0)?ms" "$q"
  check_match "netem: ingress redirected to an IFB" "ingress ffff:" "$q"
  r=$(rtt_us)
  check_cmp "netem +30 ms: RTT >= 29.5 ms" "$r" ">=" 29500
  check_cmp "netem +30 ms: added RTT <= 31 ms" "$((r - base))" "<=" 31000
  stop_pid "$P4" TERM
check_eq "netem: SIGTERM, exit 0" 0 "$STOP_RC"
  check_eq "netem: no netem, ingress or IFB left" "" \
    "$(ip netns exec "$B" tc qdisc show dev vb | grep -E 'netem|ingress'; ip -n "$B" -br link show type ifb)"
else
  out=$(ip netns exec "$B" "$NC" delay --dev vb --delay 10ms --mechanism netem 2>&1); rc=$?
  check_match "netem forced without sch_netem: exit 1, says why" "^1 debit-netctl: netem on .*no sch_netem" "$rc $out"
  check_eq "netem forced without sch_netem: no netem, ingress or IFB left" "" \
    "$(ip netns exec "$B" tc qdisc show dev vb | grep -E 'netem|ingress'; ip -n "$B" -br link show type ifb)"
  t_skip "netem: delay applied, limit from --rate-hint, RTT, removal" "this kernel has no sch_netem (debit-netctl probe: $probe)"
fi
t_done
