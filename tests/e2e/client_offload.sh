#!/usr/bin/env bash
# debit --offload DEV:tso=off,gso=off: the client interface's offloads are off for the
# measurement (checked with ethtool during a download and in the JSON), and put back at
# the end, after Ctrl-C and after SIGTERM. In a client namespace joined by a veth pair to
# a server namespace (198.18.0.0/15).
. "$(dirname "$0")/../lib/common.sh"
need_root "network namespaces and ethtool -K"
need_cmd ethtool python3 jq
ns_new SRV s
ns_new CLI c
ns_veth "$SRV" "vs$T_ID" 198.18.0.1/24 "$CLI" "vc$T_ID" 198.18.0.2/24
DEV=vc$T_ID
port=8080
t_bg fake ip netns exec "$SRV" python3 "$DEBIT_TOP/tests/e2e/client_fakesrv.py" $port 198.18.0.1
wait_http "http://198.18.0.1:$port/" 100 "$CLI" || { t_fail "fake server in the server namespace"; t_done; }
U=http://198.18.0.1:$port

feat() { ip netns exec "$CLI" ethtool -k "$DEV" | awk -v f="$1:" '$1==f {print $2}'; }
# "tso" is every tx-tcp*-segmentation feature (kernel 6.18 adds tx-tcp-accecn-segmentation,
# which the legacy ETHTOOL_STSO leaves on): their distinct states, e.g. "off".
tcpseg() { ip netns exec "$CLI" ethtool -k "$DEV" | awk '$1 ~ /^tx-tcp.*segmentation:$/ {print $2}' | sort -u | tr '\n' ' ' | sed 's/ $//'; }
# Client state files of this veth (per network namespace: offload-DEV@netINODE.state).
statefiles() { local f; for f in /run/debit/offload-"$DEV".state /run/debit/offload-"$DEV"@net*.state; do [ -e "$f" ] && echo "${f##*/}"; done; }
before="$(feat tcp-segmentation-offload) $(feat generic-segmentation-offload)"
check_eq "veth starts with tso on, gso on" "on on" "$before"

ip netns exec "$CLI" "$DEBIT" -n 2 --no-progress --offload "$DEV:tso=off,gso=off" --format json \
  "$U/debit/2000000" >"$T_TMP/o.json" 2>"$T_TMP/o.err"
check_eq "download with --offload: exit 0" 0 $?
check_eq "JSON records the client offloads applied" "false false $DEV" \
  "$(jq -r '.client_settings.offload[0] | "\(.tso) \(.gso) \(.interface)"' "$T_TMP/o.json")"
check_eq "JSON records the state before" "true true" \
  "$(jq -r '.client_settings.offload[0].before | "\(.tso) \(.gso)"' "$T_TMP/o.json")"
check_match "stderr says what was applied and restored" "offloads $DEV: tso=off gso=off.*restored" "$(tr '\n' ' ' <"$T_TMP/o.err")"
check_eq "restored after a normal exit" "on on" "$(feat tcp-segmentation-offload) $(feat generic-segmentation-offload)"
check_eq "no state file left" "" "$(statefiles)"

# SIGHUP (a closed terminal or SSH session) takes the same orderly path as Ctrl-C: every
# setting put back (a --delay qdisc too) and the finished runs reported.
for sig in INT TERM HUP; do
  ip netns exec "$CLI" "$DEBIT" -n 3 --no-progress --offload "$DEV:tso=off,gso=off" --format json \
    "$U/slow/50000000?rate=5000000" >"$T_TMP/s.json" 2>"$T_TMP/s.err" &
  pid=$!
  t_track $pid
  for _ in $(seq 50); do [ "$(feat tcp-segmentation-offload)" = off ] && break; sleep 0.1; done
  sleep 0.5
  check_eq "SIG$sig: offloads off during the download (ethtool)" "off off" \
    "$(feat tcp-segmentation-offload) $(feat generic-segmentation-offload)"
  check_eq "SIG$sig: every tx-tcp*-segmentation feature off (accecn too)" "off" "$(tcpseg)"
  check_match "SIG$sig: crash-safety state file, named after the namespace" "^offload-$DEV@net[0-9]+\.state$" "$(statefiles)"
  kill -$sig $pid
  for _ in $(seq 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  wait $pid
  rc=$?
  case $sig in INT) want=130 ;; TERM) want=143 ;; HUP) want=129 ;; esac
  check_eq "SIG$sig: exit $want" $want $rc
  check_eq "SIG$sig: results of the finished runs written, marked interrupted" true \
    "$(jq -r '.interrupted' "$T_TMP/s.json" 2>&1)"
  check_eq "SIG$sig: offloads restored" "on on" "$(feat tcp-segmentation-offload) $(feat generic-segmentation-offload)"
  check_eq "SIG$sig: every tx-tcp*-segmentation feature back on" "on" "$(tcpseg)"
  check_eq "SIG$sig: state file removed" "" "$(statefiles)"
done

# SIGKILL leaves the offloads off and the state file behind; the next run puts them back
# first and says so (the note netctl hands to debit's main, which prints it).
ip netns exec "$CLI" "$DEBIT" -n 3 --no-progress --offload "$DEV:tso=off,gso=off" \
  "$U/slow/50000000?rate=5000000" >/dev/null 2>&1 &
pid=$!
t_track $pid
for _ in $(seq 50); do [ -n "$(statefiles)" ] && [ "$(feat tcp-segmentation-offload)" = off ] && break; sleep 0.1; done
kill -KILL $pid
wait $pid 2>/dev/null
check_eq "SIGKILL: offloads left off, state file left" "off off 1" \
  "$(feat tcp-segmentation-offload) $(feat generic-segmentation-offload) $(statefiles | wc -l)"
ip netns exec "$CLI" "$DEBIT" --min-bytes 0 -n 1 --no-progress --offload "$DEV:tso=off" "$U/debit/1000" >/dev/null 2>"$T_TMP/k.err"
check_eq "after SIGKILL: next run, exit 0" 0 $?
check_match "after SIGKILL: the next run restores the leftover first and says so" \
  "^debit: restored $DEV offloads left by pid $pid " "$(cat "$T_TMP/k.err")"
check_eq "after SIGKILL: everything back on, no state file" "on on " \
  "$(feat tcp-segmentation-offload) $(feat generic-segmentation-offload) $(statefiles)"

# --delay on the same veth: the measured min RTT grows by the delay; removed afterwards.
qd=$(ip netns exec "$CLI" tc qdisc show dev "$DEV")
ip netns exec "$CLI" "$DEBIT" --min-bytes 0 -q -n 2 --delay 10ms --delay-dev "$DEV" --format json "$U/debit/1000000" >"$T_TMP/d.json"
check_eq "--delay: exit 0" 0 $?
check_match "--delay: mechanism recorded" '^(netem|delayline) 10$' "$(jq -r '.client_settings.delay | "\(.mechanism) \(.rtt_ms)"' "$T_TMP/d.json")"
ip netns exec "$CLI" "$DEBIT" --min-bytes 0 -q -n 1 --delay 10ms --delay-dev "$DEV" --format markdown "$U/debit/1000" >"$T_TMP/d.md"
check_match "--delay: the Markdown says which mechanism ran" "^- every run: delay \\+10 ms .*on $DEV .*via (netem|delayline)" "$(cat "$T_TMP/d.md")"
check_eq "--delay: min RTT between 10 and 11 ms" true "$(jq -r '[.runs[].min_rtt_ms] | min | . >= 10 and . < 11' "$T_TMP/d.json")"
check_eq "--delay: qdisc as before, no NFQUEUE rule, no process left" "$qd||" \
  "$(ip netns exec "$CLI" tc qdisc show dev "$DEV")|$(ip netns exec "$CLI" iptables-save 2>/dev/null | grep NFQUEUE)|$(ip netns pids "$CLI")"

ip netns exec "$CLI" "$DEBIT" --min-bytes 0 -n 1 --offload "nosuch$T_ID:tso=off" "$U/debit/1000" >/dev/null 2>"$T_TMP/e.err"
check_eq "unknown device: exit 2" 2 $?
check_match "unknown device: message" "^debit: --offload: nosuch$T_ID: no such network interface" "$(cat "$T_TMP/e.err")"
# Not root (nobody, no capabilities): the missing capability is named first, not the
# state file's folder that a non-root user cannot write (issue 31).
if command -v setpriv >/dev/null; then
  ip netns exec "$CLI" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
    "$DEBIT" --db none --min-bytes 0 -n 1 --offload "$DEV:tso=off" "$U/debit/1000" >/dev/null 2>"$T_TMP/np.err"
  check_eq "--offload as non-root: exit 2" 2 $?
  check_eq "--offload as non-root: the capability named, not the state file" \
    "debit: --offload: changing $DEV's offloads needs CAP_NET_ADMIN (run as root)" "$(cat "$T_TMP/np.err")"
  check_eq "--offload as non-root: offloads untouched" "$before" "$(feat tcp-segmentation-offload) $(feat generic-segmentation-offload)"
else
  t_skip "--offload as non-root" "no setpriv"
fi
t_done
