#!/usr/bin/env bash
# What left debitd's interface over a transfer (issue 32; docs/server.md, "iface"): debitd
# in one network namespace, curl in another, a veth pair (198.18.0.0/15) between them.
# A 32 MiB download with TSO/GSO on the server's veth, then one with both off (ethtool -K
# by the test): /transfers/ID's iface names the veth (found by the route to the client),
# its bytes_per_packet is the veth's tx_bytes / tx_packets over the transfer (from the first
# byte to the last handed to the kernel): tens of KB
# with the offloads, at most one 1514-byte frame without; the JSON access-log line carries
# the same figures; two downloads at once are marked shared; a loopback download is "lo".
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
need_root "network namespaces and ethtool -K"
need_cmd ethtool ip

HDR=$(wire_get WIRE_HDR_TRANSFER)
ns_new S srv || skip_all "cannot create a network namespace"
ns_new C cli
VS=vs$T_ID VC=vc$T_ID
ns_veth "$S" "$VS" 198.18.0.1/24 "$C" "$VC" 198.18.0.2/24 || skip_all "cannot create a veth pair"
P=$(free_port)
cat >"$T_TMP/i.conf" <<CONF
listen = ( { address = "198.18.0.1"; port = $P; }, { address = "127.0.0.1"; port = $P; } );
files = ( { path = "/files/32Mio.dat"; size = "32Mio"; } );
log = { level = "info"; access = "$T_TMP/access.log"; access_format = "json"; };
CONF
B=http://198.18.0.1:$P
debitd_spawn "$T_TMP/i.conf" "$S"
wait_http "$B/status" 150 "$C" "$DEBITD_PID" || { t_fail "debitd up" "$(tail -5 "$T_TMP/debitd-$S.log")"; t_done; }
debitd_content_ready "$B" "$C" || { t_fail "debitd's region complete" "$(tail -5 "$T_TMP/debitd-$S.log")"; t_done; }

# one download from the client namespace: its record once done
get() {
  local id
  id=$(ip netns exec "$C" curl -s -D - -o /dev/null "$B/files/32Mio.dat" | tr -d '\r' |
    awk -v h="$HDR" 'tolower($1) == tolower(h ":") {print $2}')
  for _ in $(seq 50); do
    rec=$(ip netns exec "$C" curl -s "$B/transfers/$id")
    [ "$(jq -r .state <<<"$rec")" = sending ] || break
    sleep 0.1
  done
  echo "$rec"
}

ip netns exec "$S" ethtool -K "$VS" tso on gso on >/dev/null 2>&1
on=$(get)
t_diag "TSO/GSO on: $(jq -c .iface <<<"$on")"
check_eq "TSO/GSO on: iface is the veth the route to the client leaves by, interface-wide, alone" \
  "$VS interface-wide false" "$(jq -r '.iface | "\(.name) \(.scope) \(.shared)"' <<<"$on")"
# read when the last byte is handed to the kernel: what the socket buffer still holds then is not in them
check_cmp "... it sent the 32 MiB but for at most the socket's send buffer" \
  "$(jq '.iface.tx_bytes + .sndbuf.so_sndbuf' <<<"$on")" ">=" 33554432
check_eq "... bytes_per_packet is tx_bytes / tx_packets" true \
  "$(jq '.iface | (.bytes_per_packet - .tx_bytes / .tx_packets) | fabs < 0.01' <<<"$on")"
check_cmp "... at least 10 KB per packet (GSO super-packets)" "$(jq .iface.bytes_per_packet <<<"$on")" ">=" 10000

ip netns exec "$S" ethtool -K "$VS" tso off gso off >/dev/null 2>&1 ||
  { t_fail "ethtool -K tso off gso off"; t_done; }
off=$(get)
t_diag "TSO/GSO off: $(jq -c .iface <<<"$off")"
check_eq "TSO/GSO off: the same veth, alone" "$VS false" "$(jq -r '.iface | "\(.name) \(.shared)"' <<<"$off")"
check_cmp "... at most one 1514-byte frame per packet" "$(jq .iface.bytes_per_packet <<<"$off")" "<=" 1514
check_cmp "... and about one (above 1400)" "$(jq .iface.bytes_per_packet <<<"$off")" ">" 1400
check_cmp "... it sent the 32 MiB but for at most the socket's send buffer" \
  "$(jq '.iface.tx_bytes + .sndbuf.so_sndbuf' <<<"$off")" ">=" 33554432
# the access log's line of each transfer carries the same figures
for r in "$on" "$off"; do
  id=$(jq -r .id <<<"$r")
  check_eq "access log line of $id: the record's iface" "$(jq -c .iface <<<"$r")" \
    "$(jq -c --arg id "$id" 'select(.transfer.id? == $id or .id? == $id) | (.transfer.iface? // .iface)' "$T_TMP/access.log" | head -1)"
done

# two downloads at once: each one's figure includes the other's packets, and says so. A
# slow one (curl --limit-rate, 1 s or more), and a fast one once the slow one has begun.
ip netns exec "$S" ethtool -K "$VS" tso on gso on >/dev/null 2>&1
t_bg slow ip netns exec "$C" curl -s -D "$T_TMP/slow.h" -o /dev/null --limit-rate 24M "$B/files/32Mio.dat"
SLOW=$T_LAST_PID
wait_for 50 grep -qi "^$HDR:" "$T_TMP/slow.h"
fast=$(get)
wait "$SLOW"
sid=$(tr -d '\r' <"$T_TMP/slow.h" | awk -v h="$HDR" 'tolower($1) == tolower(h ":") {print $2}')
slow=$(ip netns exec "$C" curl -s "$B/transfers/$sid")
check_eq "two downloads at once: both done, both marked shared" "done true done true" \
  "$(jq -r '"\(.state) \(.iface.shared)"' <<<"$slow") $(jq -r '"\(.state) \(.iface.shared)"' <<<"$fast")"

# loopback: the route to 127.0.0.1 leaves by lo
id=$(ip netns exec "$S" curl -s -D - -o /dev/null "http://127.0.0.1:$P/files/32Mio.dat" | tr -d '\r' |
  awk -v h="$HDR" 'tolower($1) == tolower(h ":") {print $2}')
wait_for 50 sh -c "ip netns exec $S curl -s http://127.0.0.1:$P/transfers/$id | jq -e '.state != \"sending\"'"
check_eq "a loopback download: iface lo" lo \
  "$(ip netns exec "$S" curl -s "http://127.0.0.1:$P/transfers/$id" | jq -r .iface.name)"
stop_pid "$DEBITD_PID" TERM
t_done
