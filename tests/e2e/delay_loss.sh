#!/usr/bin/env bash
# Packet loss on the path (issue 10): 10,000 numbered UDP datagrams from one namespace to
# another through a 5 % loss must arrive with a loss within 4 standard deviations of the
# binomial's 500 (412-588), counted by the receiver AND by the dropper's own stats line, which
# must agree exactly; the same --seed drops the same packets again (a run can be
# replayed); 0 % drops none and 100 % all; the rate is per direction (a one-way flow
# through --direction both loses 5 %, not 10 %). Through debit-delayline itself, through
# debit-netctl (as debit and the lab use it) and through lab/lab.sh delay; netem `loss`
# where the kernel has sch_netem, skipped with the reason where it has not. With a loss the
# delay line sees a TCP download as MTU-sized segments (the rate is per wire packet),
# without one as whole GSO packets. And debit: --loss and a scenario's loss = "..." are
# refused with the option or FILE:LINE when out of range, and applied for real (JSON
# loss_pct per cell and in client_settings, valid against docs/schema).
. "$DEBIT_TOP/tests/lib/common.sh"
. "$DEBIT_TOP/tests/e2e/lab_lib.bash"
DL=$DEBIT_BUILD/debit-delayline
NC=$DEBIT_BUILD/debit-netctl
[ -x "$DL" ] && [ -x "$NC" ] || skip_all "build/debit-delayline and build/debit-netctl are not built"
UDP="python3 $DEBIT_TOP/tests/e2e/udp_count.py"
N=10000

# --- command line (no root needed) ----------------------------------------------------------
out=$("$DL" --dev lo --delay 1ms --loss 101% 2>&1); rc=$?
check_match "delay line: --loss 101% refused, exit 2" "^2 debit-delayline: --loss: '101%': above 100%" "$rc $out"
out=$("$DL" --dev lo --delay 1ms --loss 5 2>&1); rc=$?
check_match "delay line: --loss without % refused" "^2 .*--loss: '5': the % sign is missing" "$rc $out"
out=$("$DL" --dev lo --delay 0 2>&1); rc=$?
check_match "delay line: --delay 0 without --loss refused" "^2 .*--delay: '0'.*0 only with --loss" "$rc $out"
out=$("$DL" --dev lo --delay 1ms --seed x 2>&1); rc=$?
check_match "delay line: bad --seed refused" "^2 .*--seed: 'x'" "$rc $out"
out=$("$NC" delay --dev lo --delay 1ms --loss -1% 2>&1); rc=$?
check_match "netctl: negative --loss refused, exit 2" "^2 debit-netctl: --loss: '-1%': a loss rate cannot be negative" "$rc $out"
out=$("$NC" delay --dev lo --delay 0 2>&1); rc=$?
check_match "netctl: --delay 0 without --loss refused" "^2 .*--delay: '0'.*0 only with --loss" "$rc $out"
check_match "netctl --help documents --loss" "--loss RATE" "$("$NC" --help)"
check_match "delay line --help documents --loss and --seed" "--loss RATE.*--seed N" "$("$DL" --help | tr '\n' ' ')"

# debit: the option and the scenario key
out=$("$DEBIT" --loss 101% --delay-dev lo http://127.0.0.1:9/x 2>&1); rc=$?
check_match "debit --loss 101%: exit 2, names the option" "^2 debit: --loss: '101%': above 100%" "$rc $out"
out=$("$DEBIT" --loss 1% http://127.0.0.1:9/x 2>&1); rc=$?
check_match "debit --loss without --delay-dev: exit 2" "^2 debit: --loss: needs --delay-dev DEV" "$rc $out"
out=$("$DEBIT" -t --loss 0.5% --delay-dev lo http://127.0.0.1:9/x 2>&1); rc=$?
check_match "debit -t: loss-only path in the plan" "^0 .*delay: 0.5% loss per direction on lo" "$rc $(printf '%s' "$out" | tr '\n' ' ')"
cat >"$T_TMP/bad.conf" <<'CONF'
servers = ( { url = "http://127.0.0.1:9/x"; } );
latency = ( { name = "natural"; },
            { name = "lossy"; loss = "150%"; device = "lo"; } );
CONF
out=$("$DEBIT" -t --scenario "$T_TMP/bad.conf" 2>&1); rc=$?
check_match "scenario loss = \"150%\": exit 2, FILE:LINE: setting" "^2 debit: --scenario: $T_TMP/bad.conf:3: latency\[1\]\.loss: '150%': above 100%" "$rc $out"

need_root "network namespaces and iptables"
need_cmd iptables python3
READY=$(wire_get WIRE_DELAY_READY) || { t_fail "WIRE_DELAY_READY is defined in common/wire.h"; t_done; }
ns_new A a
ns_new B b
ns_veth "$A" va 198.18.21.1/24 "$B" vb 198.18.21.2/24
Q=$((7500 + RANDOM % 100))
PORT=9000
# Resolve the neighbours first: a datagram sent while ARP is pending may be dropped by
# the sender's neighbour queue, which would count as loss that is not ours.
ip netns exec "$A" ping -c 1 -W 2 198.18.21.2 >/dev/null 2>&1

# count_through NAME SRC_NS DST_NS DST_ADDR COUNT: send COUNT datagrams SRC -> DST (at
# 20,000/s: half a second), print the number received. Bounded: the receiver gives up
# 1 s after the last datagram, 30 s at most.
count_through() {
  local name=$1 src=$2 dst=$3 addr=$4 n=$5 i
  PORT=$((PORT + 1))
  ip netns exec "$dst" timeout 40 $UDP recv "$addr" "$PORT" 30 >"$T_TMP/$name.recv" 2>&1 &
  local rp=$!
  t_track "$rp"
  for ((i = 0; i < 100; i++)); do grep -qs ready "$T_TMP/$name.recv" && break; sleep 0.05; done
  ip netns exec "$src" timeout 30 $UDP send "$addr" "$PORT" "$n" 20000
  wait "$rp"
  sed -n '2p' "$T_TMP/$name.recv"
}

# stop_holder PID: SIGTERM, wait (the stats line is written at exit).
stop_holder() { kill -TERM "$1" 2>/dev/null; wait "$1" 2>/dev/null; }
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" "$2" | tail -1; }  # field NAME LOG

# check_rate LABEL RECEIVED: the count lost of N datagrams at 5 % within 4 standard
# deviations of the binomial's mean (N = 10,000: 412-588, 4.12-5.88 %). A fixed +-10 %
# (+-50, 2.3 sigma) failed about one run in fifty with a dropper that was right (561 lost).
LOSS_LO=$(awk -v n=$N 'BEGIN{p = 0.05; printf "%d", n * p - 4 * sqrt(n * p * (1 - p))}')
LOSS_HI=$(awk -v n=$N 'BEGIN{p = 0.05; printf "%d", n * p + 4 * sqrt(n * p * (1 - p)) + 0.999}')
check_rate() {
  local lost=$((N - $2))
  t_diag "$1: $2 of $N received, $lost lost ($(awk -v l=$lost -v n=$N 'BEGIN{printf "%.2f", 100*l/n}') %; asked 5 %)"
  check_cmp "$1: loss >= $LOSS_LO of $N (5 % - 4 sigma)" "$lost" ">=" "$LOSS_LO"
  check_cmp "$1: loss <= $LOSS_HI of $N (5 % + 4 sigma)" "$lost" "<=" "$LOSS_HI"
}

# dl_count NAME COUNT DELAYLINE-ARGS...: debit-delayline on B's vb (incoming) with ARGS,
# COUNT datagrams A -> B through it, stopped (its stats line is then in NAME.log): prints
# the number received, "x" when it did not become ready.
dl_count() {
  local name=$1 n=$2 p got=x; shift 2
  t_bg "$name" ip netns exec "$B" "$DL" --dev vb --direction in --queue-num "$Q" --no-ipv6 "$@"
  p=$T_LAST_PID
  delay_wait_ready "$T_TMP/$name.log" "$p" && got=$(count_through "$name" "$A" "$B" 198.18.21.2 "$n")
  stop_holder "$p"
  echo "${got:-x}"
}

# --- debit-delayline --loss 5%, loss only (delay 0), incoming on B --------------------------
got1=$(dl_count dl1 $N --delay 0 --loss 5% --seed 42); got1=${got1//x/0}
check_match "ready line: loss and seed" "^$READY dev=vb delay_us=0 direction=in queue=$Q loss=5% seed=42 pid=" "$(head -1 "$T_TMP/dl1.log")"
check_rate "delay line 5 %" "$got1"
t_diag "$(grep 'stats' "$T_TMP/dl1.log")"
check_eq "delay line: stats seen = datagrams sent" "$N" "$(field seen "$T_TMP/dl1.log")"
check_eq "delay line: stats dropped = datagrams lost" "$((N - $got1))" "$(field dropped "$T_TMP/dl1.log")"
check_match "delay line: stats line names loss and seed" "loss=5% seed=42" "$(grep stats "$T_TMP/dl1.log")"
check_eq "delay line: nothing dropped by the kernel queue" 0 "$(field kernel_dropped "$T_TMP/dl1.log")"

# The same seed again: the same datagrams dropped, so the same count.
got2=$(dl_count dl2 $N --delay 0 --loss 5% --seed 42)
check_eq "same --seed: same number of datagrams lost" "$((N - $got1))" "$((N - ${got2//x/0}))"

# 100 % and 0 %, with a delay.
check_eq "100 %: nothing arrives" 0 "$(dl_count dl3 500 --delay 1ms --loss 100%)"
check_match "100 %: the seed the delay line drew is printed" "seed=[0-9]+ pid=" "$(head -1 "$T_TMP/dl3.log")"
check_eq "0 %: everything arrives" 2000 "$(dl_count dl4 2000 --delay 1ms --loss 0%)"

# --- debit-netctl (what debit and the lab run): delay + loss, both directions ---------------
# A one-way flow crosses one direction: 5 % per direction means 5 % for it, not 10 %.
t_bg nc1 ip netns exec "$B" "$NC" delay --dev vb --delay 2ms --loss 5% --seed 42 --mechanism delayline \
  --delayline "$DL" --queue-num "$Q" --no-ipv6
p=$T_LAST_PID
check "netctl, delay + loss: ready" delay_wait_ready "$T_TMP/nc1.log" "$p"
check_match "netctl ready line: loss and the seed passed on" \
  "^$READY mechanism=delayline dev=vb direction=both rtt_us=2000 out_us=1000 in_us=1000 loss=5% seed=42 pid=" \
  "$(head -1 "$T_TMP/nc1.log")"
got=$(count_through nc1 "$A" "$B" 198.18.21.2 $N)
stop_holder "$p"
check_rate "netctl 5 % (both directions, one-way flow)" "${got:-0}"
check_eq "netctl, same seed as the delay line's run: same loss" "$((N - got1))" "$((N - ${got:-0}))"
check_match "netctl relays the delay line's stats (dropped=)" "stats .*dropped=$((N - ${got:-0})) " "$(cat "$T_TMP/nc1.log")"
check_eq "netctl: rules removed" 0 "$(ip netns exec "$B" iptables -w -t mangle -S | grep -c "debit-delayline:q$Q")"

# --- debit: a scenario with a loss-only and a delay + loss row, measured for real ---------
if command -v nginx >/dev/null && [ -x "$DEBIT" ]; then
  www_new
  nginx_spawn "$WWW" 8080 "$B" 198.18.21.2
  if wait_http "http://198.18.21.2:8080/files/1Mio.dat" 100 "$A"; then
    cat >"$T_TMP/loss.conf" <<CONF
servers = ( { name = "B"; url = "http://198.18.21.2:8080/files/1Mio.dat"; } );
runs = 1;
stall = 10;
latency = ( { name = "natural"; },
            { name = "2% loss"; loss = "2%"; device = "va"; },
            { name = "+10 ms, 1%"; delay = "10ms"; loss = "1%"; device = "va"; } );
CONF
    out=$(ip netns exec "$A" "$DEBIT" -t --scenario "$T_TMP/loss.conf" 2>&1)
    check_match "debit -t: each row's delay and loss" "latency 2% loss: 2% loss per direction on va.*latency \+10 ms, 1%: \+10 ms and 1% loss per direction on va" "$(printf '%s' "$out" | tr '\n' ' ')"
    ip netns exec "$A" timeout 120 "$DEBIT" --no-progress --scenario "$T_TMP/loss.conf" --format json -o "$T_TMP/loss.json" 2>"$T_TMP/loss.err"
    rc=$?
    check_eq "debit scenario with loss: exit 0" 0 "$rc"
    [ $rc -eq 0 ] || t_diag "$(tail -5 "$T_TMP/loss.err")"
    j=$T_TMP/loss.json
    check_eq "cells' loss_pct" "0 2 1" "$(jq -r '[.scenario.cells[].loss_pct] | map(tostring) | join(" ")' "$j" 2>&1)"
    check_eq "cells' settings.delay.loss_pct" "2 1" "$(jq -r '[.scenario.cells[].settings.delay.loss_pct // empty] | map(tostring) | join(" ")' "$j" 2>&1)"
    check_match "the loss-only cell says what it applied" "2% loss on va \(each direction\) via (delayline|netem)" \
      "$(jq -r '.scenario.cells[1].description' "$j" 2>&1)"
    check_eq "every run succeeded through the lossy path" 3 "$(jq '[.runs[] | select(.ok)] | length' "$j" 2>&1)"
    if python3 -c 'import jsonschema' 2>/dev/null; then
      out=$(python3 "$DEBIT_TOP/tests/e2e/schema_check.py" "$DEBIT_TOP/docs/schema" json "$j" 2>&1)
      check_eq "the JSON is valid against docs/schema" "" "$out"
    else
      t_skip "schema check" "python3-jsonschema is not installed"
    fi
    ip netns exec "$A" timeout 60 "$DEBIT" --no-progress -n 1 --loss 2% --delay-dev va --format json -o "$T_TMP/cli.json" \
      "http://198.18.21.2:8080/files/1Mio.dat" 2>"$T_TMP/cli.err"
    check_eq "debit --loss 2% --delay-dev: exit 0" 0 "$?"
    check_eq "client_settings.delay: loss_pct 2, rtt_ms 0" "2 0" "$(jq -r '.client_settings.delay | "\(.loss_pct) \(.rtt_ms)"' "$T_TMP/cli.json" 2>&1)"
    check_match "stderr says the loss applied" "client settings: delay 2% loss on va \(each direction\)" "$(cat "$T_TMP/cli.err")"
    # With a loss set, the delay line has the kernel segment GSO packets: the rate is per
    # wire packet. nginx's replies leave B's TSO-on veth as up to 64 KB GSO packets; what
    # the delay line sees of them must be MTU-sized with a loss, whole without one.
    # seg_avg NAME DELAYLINE-ARGS...: 10 MiB A <- B through it; "bytes bytes/packet".
    seg_avg() {
      local name=$1 p pk by; shift
      t_bg "$name" ip netns exec "$B" "$DL" --dev vb --delay 1ms --direction out --queue-num "$Q" --no-ipv6 "$@"
      p=$T_LAST_PID
      delay_wait_ready "$T_TMP/$name.log" "$p"
      ip netns exec "$A" curl -s -o /dev/null --max-time 30 "http://198.18.21.2:8080/files/10Mio.dat"
      stop_holder "$p"
      pk=$(field packets "$T_TMP/$name.log"); by=$(field bytes "$T_TMP/$name.log")
      echo "${by:-0} $(( ${by:-0} / (${pk:-0} > 0 ? pk : 1) ))"
    }
    read -r by avg < <(seg_avg dl5 --loss 0.0001% --seed 1)
    t_diag "10 MiB download through --loss 0.0001% --direction out: $by bytes, $avg per queued packet"
    check_cmp "with a loss, the delay line sees the download's bytes" "$by" ">=" 10485760
    check_cmp "with a loss, GSO packets are queued as MTU-sized segments (<= 1500 B each)" "$avg" "<=" 1500
    read -r by avg < <(seg_avg dl6)
    t_diag "the same without a loss: $by bytes, $avg per queued packet"
    check_cmp "without a loss, GSO packets stay whole (> 3000 B each on average)" "$avg" ">" 3000
    check_eq "debit: no rule left in A" 0 "$(ip netns exec "$A" iptables -w -t mangle -S | grep -c NFQUEUE)"
  else
    t_fail "nginx in namespace B"
  fi
else
  t_skip "debit through a lossy path" "needs nginx and build/debit"
fi

# --- netem loss ---------------------------------------------------------------------------
lab_expected_mechanism
if [ "$LAB_MECH" = netem ]; then
  t_bg nc2 ip netns exec "$B" "$NC" delay --dev vb --delay 0 --loss 5% --direction in --mechanism netem
  p=$T_LAST_PID
  check "netem, loss only: ready" delay_wait_ready "$T_TMP/nc2.log" "$p"
  check_match "netem: the IFB's qdisc says loss 5%" "netem .*loss 5%" "$(ip netns exec "$B" tc qdisc show)"
  got=$(count_through nc2 "$A" "$B" 198.18.21.2 $N)
  stop_holder "$p"
  check_rate "netem 5 %" "${got:-0}"
  check_nomatch "netem: removed" "netem" "$(ip netns exec "$B" tc qdisc show)"
else
  t_skip "netem loss" "this kernel has no sch_netem (tc qdisc add ... netem fails in a scratch netns)"
fi

# --- lab/lab.sh delay DIR 0 --loss 5% ---------------------------------------------------------
LAB=$DEBIT_TOP/lab/lab.sh
if [ -x "$DEBITD" ] && LAB_CHECK=$("$LAB" check 2>&1); then
  DIR=$T_TMP/lab
  t_on_exit "'$LAB' down '$DIR' >/dev/null 2>&1"
  if out=$("$LAB" up "$DIR" --ram 16MiB 2>&1); then
    . "$DIR/lab.env"
    ip netns exec "$LAB_NS_S1" ping -c 1 -W 2 "$LAB_C_ADDR" >/dev/null 2>&1
    out=$("$LAB" delay "$DIR" 0 --loss 5% 2>&1)
    check_match "lab.sh delay 0 --loss 5%: says so" "delay: 5% loss per direction on the client \(both\) via (delayline|netem)" "$out"
    check_match "lab.sh status shows the loss" "delay .*loss=5%" "$("$LAB" status "$DIR")"
    got=$(count_through lab "$LAB_NS_S1" "$LAB_NS_C" "$LAB_C_ADDR" $N)
    check_rate "lab.sh 5 % (server -> client)" "${got:-0}"
    out=$("$LAB" delay "$DIR" 150ms --loss 150% 2>&1); rc=$?
    check_match "lab.sh: --loss 150% refused, exit 2" "^2 .*--loss: '150%': above 100%" "$rc $out"
    out=$("$LAB" delay "$DIR" off 2>&1)
    check_eq "lab.sh delay off: nothing left" "delay: off" "$out"
  else
    t_fail "lab up" "$out"
  fi
else
  t_skip "lab.sh delay --loss" "the lab cannot run here: ${LAB_CHECK:-build/debitd is not built}"
fi
t_done
