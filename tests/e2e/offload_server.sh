#!/usr/bin/env bash
# debitd owns its interface's offloads and per-listener TCP profiles (issue 4, server side),
# in two network namespaces joined by a veth pair (198.18.0.0/15):
# - tso = false; gso = false -> ethtool -k shows both off, X-Debit-Offload says so, and the
#   server veth sends MTU-sized packets (tens of KB per packet with them on);
# - SIGTERM puts the original state back; after SIGKILL, `debitd --restore-offload` and the
#   next start do;
# - two listeners with different congestion control: the accepted sockets use them (ss -ti)
#   and X-Debit-Tcp reports them.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
need_root "network namespaces and ethtool -K"
need_cmd ethtool ip ss
# header names from common/wire.h (renaming one there without the server fails here)
H_OFFLOAD=$(wire_get WIRE_HDR_OFFLOAD) H_INTERFACE=$(wire_get WIRE_HDR_INTERFACE)
H_TCP=$(wire_get WIRE_HDR_TCP) H_TRANSFER=$(wire_get WIRE_HDR_TRANSFER)

ns_new S srv || skip_all "cannot create a network namespace"
ns_new C cli
VS=vs$T_ID VC=vc$T_ID
ns_veth "$S" "$VS" 198.18.0.1/24 "$C" "$VC" 198.18.0.2/24 || skip_all "cannot create a veth pair"
ip netns exec "$S" sh -c "echo 1 > /proc/sys/net/ipv4/tcp_no_metrics_save" 2>/dev/null

feat() { ip netns exec "$S" ethtool -k "$VS" | awk -v f="$1:" '$1 == f {print $2}'; }
# "tso" is every tx-tcp*-segmentation feature (kernel 6.18 has tx-tcp-accecn-segmentation,
# which the legacy ETHTOOL_STSO leaves on): their distinct states, e.g. "off".
tcpseg() { ip netns exec "$S" ethtool -k "$VS" | awk '$1 ~ /^tx-tcp.*segmentation:$/ {print $2}' | sort -u | tr '\n' ' ' | sed 's/ $//'; }
check_eq "veth starts with tso and gso on" "on on" "$(feat tcp-segmentation-offload) $(feat generic-segmentation-offload)"

PA=$(free_port); PB=$(free_port); while [ "$PB" = "$PA" ]; do PB=$(free_port); done
STATE=$T_TMP/run/offload.state
mkconf() { # tso gso
  cat >"$T_TMP/o.conf" <<CONF
listen = ( { address = "198.18.0.1"; port = $PA; tcp = { congestion = "cubic"; sndbuf = "4MiB"; }; },
           { address = "198.18.0.1"; port = $PB; tcp = { congestion = "reno"; pacing_rate = "2Gbit"; }; } );
files = ( { path = "/files/32Mio.dat"; size = "32Mio"; } );
log = { access = "off"; };
offload = { interface = "$VS"; tso = $1; gso = $2; gro = true; state_file = "$STATE"; };
CONF
}
up() {
  debitd_spawn "$T_TMP/o.conf" "$S"
  wait_http "http://198.18.0.1:$PA/status" 150 "$C" || { t_fail "debitd up" "$(tail -5 "$T_TMP/debitd-$S.log")"; t_done; }
  # the segment sizes are those of sendfile from the complete region, not of generated bodies
  debitd_content_ready "http://198.18.0.1:$PA" "$C" || { t_fail "debitd's region complete" "$(tail -5 "$T_TMP/debitd-$S.log")"; t_done; }
}
stop_srv() { kill -"$1" "$DEBITD_PID"; wait "$DEBITD_PID" 2>/dev/null; SRV_RC=$?; }
txstat() { ip netns exec "$S" cat "/sys/class/net/$VS/statistics/tx_bytes" "/sys/class/net/$VS/statistics/tx_packets" | tr '\n' ' '; }
# average bytes per packet sent by the server veth during one 32 MiB download, and the
# bytes sent (the download must have gone out of that veth)
avg_pkt() {
  local b0 p0 b1 p1
  read -r b0 p0 <<<"$(txstat)"
  ip netns exec "$C" curl -s -o /dev/null "http://198.18.0.1:$PA/files/32Mio.dat"
  read -r b1 p1 <<<"$(txstat)"
  echo "$(((b1 - b0) / (p1 - p0 > 0 ? p1 - p0 : 1))) $((b1 - b0))"
}

# offloads on (as configured): the baseline packet size
mkconf true true; up
read -r on_avg on_bytes <<<"$(avg_pkt)"
check_cmp "tso/gso on: the 32 MiB went out of the server veth" "$on_bytes" ">=" 33554432
# testbed notes: 49-65 KB per packet with TSO/GSO on; > 16 KB leaves room for a busy CI.
check_cmp "tso/gso on: the veth sends large packets ($on_avg B/packet)" "$on_avg" ">" 16000
stop_srv TERM

# offloads off
mkconf false false; up
check_eq "debitd turned tso and gso off (ethtool -k)" "off off" "$(feat tcp-segmentation-offload) $(feat generic-segmentation-offload)"
check_eq "every tx-tcp*-segmentation feature off (accecn too)" "off" "$(tcpseg)"
check_eq "gro left on" on "$(feat generic-receive-offload)"
check_match "state file saved" "$VS" "$(cat "$STATE" 2>/dev/null)"
h=$(ip netns exec "$C" curl -s -D - -o /dev/null "http://198.18.0.1:$PA/files/32Mio.dat" | tr -d '\r')
check_eq "$H_OFFLOAD reports the live state" "tso=off gso=off gro=on" "$(sed -n "s/^$H_OFFLOAD: //Ip" <<<"$h")"
check_eq "$H_INTERFACE" "$VS" "$(sed -n "s/^$H_INTERFACE: //Ip" <<<"$h")"
read -r off_avg off_bytes <<<"$(avg_pkt)"
check_cmp "tso/gso off: the 32 MiB went out of the server veth" "$off_bytes" ">=" 33554432
check_cmp "tso/gso off: MTU-sized packets ($off_avg B/packet, >= 1400)" "$off_avg" ">=" 1400
check_cmp "tso/gso off: MTU-sized packets ($off_avg B/packet, <= 1514)" "$off_avg" "<=" 1514
st=$(ip netns exec "$C" curl -s "http://198.18.0.1:$PA/status")
check_eq "/status shows the offload state per listener" "tso=off gso=off gro=on|tso=off gso=off gro=on" \
  "$(jq -r '[.listeners[].x_debit_offload] | join("|")' <<<"$st")"
check_eq "/status shows the TCP profile per listener" "cubic|reno" "$(jq -r '[.listeners[].tcp.congestion] | join("|")' <<<"$st")"

# two listeners, two congestion controls, really in force on the accepted sockets
ip netns exec "$C" curl -s -o /dev/null --limit-rate 4M "http://198.18.0.1:$PA/files/32Mio.dat" & ca=$!; t_track $ca
ip netns exec "$C" curl -s -o /dev/null --limit-rate 4M -D "$T_TMP/hb" "http://198.18.0.1:$PB/files/32Mio.dat" & cb=$!; t_track $cb
sleep 1
ssa=$(ip netns exec "$S" ss -tin "sport = :$PA" | tr '\n' ' ')
ssb=$(ip netns exec "$S" ss -tin "sport = :$PB" | tr '\n' ' ')
check_match "listener A's socket uses cubic (ss -ti)" ' cubic ' "$ssa"
check_match "listener B's socket uses reno (ss -ti)" ' reno ' "$ssb"
check_match "listener B's socket is paced at most 2 Gbit/s (ss -ti)" 'pacing_rate [0-9.]+[kMG]?bps/2000000000bps' "$ssb"
kill $ca $cb 2>/dev/null; wait $ca $cb 2>/dev/null
ha=$(ip netns exec "$C" curl -s -D - -o /dev/null "http://198.18.0.1:$PA/files/32Mio.dat" | tr -d '\r')
check_eq "$H_TCP on listener A" "cc=cubic pacing=unlimited sndbuf=4194304" "$(sed -n "s/^$H_TCP: //Ip" <<<"$ha")"
check_eq "$H_TCP on listener B" "cc=reno pacing=2Gbit sndbuf=auto" "$(sed -n "s/^$H_TCP: //Ip" "$T_TMP/hb" | tr -d '\r')"
# the header reads the socket (tcp_profile_read), /status the configuration: one format, the same words
check_eq "/status x_debit_tcp of each listener = its $H_TCP" \
  "cc=cubic pacing=unlimited sndbuf=4194304|cc=reno pacing=2Gbit sndbuf=auto" \
  "$(jq -r '[.listeners[].x_debit_tcp] | join("|")' <<<"$st")"
id=$(sed -n "s/^$H_TRANSFER: //Ip" <<<"$ha")
sleep 0.2
tr=$(ip netns exec "$C" curl -s "http://198.18.0.1:$PA/transfers/$id")
check_eq "/transfers/ID: done, 32 MiB, sender TCP_INFO" "done 33554432 true" \
  "$(jq -r '"\(.state) \(.bytes) \((.tcp.snd_mss > 0) and (.tcp.bytes_acked > 0))"' <<<"$tr")"

# SIGTERM: the original state is back, the state file gone
stop_srv TERM
check_eq "SIGTERM: exit 0" 0 "$SRV_RC"
check_eq "SIGTERM: tso and gso restored" "on on" "$(feat tcp-segmentation-offload) $(feat generic-segmentation-offload)"
check_eq "SIGTERM: every tx-tcp*-segmentation feature back on" "on" "$(tcpseg)"
check_eq "SIGTERM: state file removed" no "$([ -e "$STATE" ] && echo yes || echo no)"

# SIGKILL: the state stays changed and saved; --restore-offload puts it back
up
stop_srv KILL
check_eq "SIGKILL: tso/gso still off" "off off" "$(feat tcp-segmentation-offload) $(feat generic-segmentation-offload)"
check_eq "SIGKILL: state file kept" yes "$([ -e "$STATE" ] && echo yes || echo no)"
out=$(ip netns exec "$S" "$DEBITD" --restore-offload -c "$T_TMP/o.conf" 2>&1); rc=$?
check_eq "--restore-offload: exit 0" 0 "$rc"
check_match "--restore-offload: says what it restored" "$VS restored to tso=on gso=on" "$out"
check_eq "--restore-offload: tso/gso on again" "on on" "$(feat tcp-segmentation-offload) $(feat generic-segmentation-offload)"
out=$(ip netns exec "$S" "$DEBITD" --restore-offload -c "$T_TMP/o.conf" 2>&1); rc=$?
check_match "--restore-offload again: nothing to do" "no saved state: nothing to restore" "$out"

# SIGKILL then a new start: it restores the leftover state first, then applies its own
up
stop_srv KILL
up
check_match "the next start restored the state the killed one left" 'restored .*left by' "$(cat "$T_TMP/debitd-$S.log")"
check_eq "and applied its own configuration" "off off" "$(feat tcp-segmentation-offload) $(feat generic-segmentation-offload)"
stop_srv TERM
check_eq "and restored the original at exit" "on on" "$(feat tcp-segmentation-offload) $(feat generic-segmentation-offload)"

# a restore that cannot be done is a runtime failure (exit 1), not a config error (2)
mkdir -p "$(dirname "$STATE")"; echo "not a state file" >"$STATE"
out=$(ip netns exec "$S" "$DEBITD" --restore-offload -c "$T_TMP/o.conf" 2>&1); rc=$?
check_eq "--restore-offload with a corrupt state file: exit 1" 1 "$rc"
check_match "--restore-offload with a corrupt state file: names the file" "$STATE" "$out"
rm -f "$STATE"

# not root -> required offload fails clearly (exit 2); required = false -> a warning
if command -v setpriv >/dev/null; then
  chmod o+x "$T_TMP"; mkdir -p "$T_TMP/pub"; chmod 777 "$T_TMP/pub"
  sed "s|state_file = \"[^\"]*\"|state_file = \"$T_TMP/pub/state\"|" "$T_TMP/o.conf" >"$T_TMP/pub/o.conf"
  chmod 644 "$T_TMP/pub/o.conf"
  out=$(ip netns exec "$S" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
    "$DEBITD" -c "$T_TMP/pub/o.conf" 2>&1); rc=$?
  check_eq "without CAP_NET_ADMIN: exit 2" 2 "$rc"
  check_match "without CAP_NET_ADMIN: clear error" "[0-9]: offload\.interface: $VS: .*(CAP_NET_ADMIN|root|permitted)" "$out"
  # required = false: a warning, and it serves, reporting the state it really has
  cat >"$T_TMP/pub/w.conf" <<CONF
listen = ( { address = "198.18.0.1"; port = $PA; } );
files = ( { path = "/files/1Mio.dat"; size = "1Mio"; } );
log = { access = "off"; };
offload = { interface = "$VS"; tso = false; gso = false; gro = true; required = false; state_file = "$T_TMP/pub/state2"; };
CONF
  chmod 644 "$T_TMP/pub/w.conf"
  t_bg nobody ip netns exec "$S" setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
    "$DEBITD" -c "$T_TMP/pub/w.conf"
  npid=$T_LAST_PID
  if wait_http "http://198.18.0.1:$PA/status" 150 "$C"; then
    check_match "required = false: a warning naming the interface and the privilege" \
      "warn: .*$VS.*(CAP_NET_ADMIN|root|permitted)" "$(cat "$T_TMP/nobody.log")"
    check_eq "required = false: X-Debit-Offload reports the live state, not the wish" "tso=on gso=on" \
      "$(ip netns exec "$C" curl -s -D - -o /dev/null "http://198.18.0.1:$PA/files/1Mio.dat" | tr -d '\r' | sed -n 's/^X-Debit-Offload: \(tso=[a-z]* gso=[a-z]*\).*/\1/p')"
    check_eq "required = false: the interface untouched" "on on" "$(feat tcp-segmentation-offload) $(feat generic-segmentation-offload)"
  else
    t_fail "required = false: debitd serves without CAP_NET_ADMIN" "$(tail -5 "$T_TMP/nobody.log")"
  fi
  stop_pid "$npid"
fi
t_done
