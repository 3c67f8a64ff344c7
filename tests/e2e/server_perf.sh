#!/usr/bin/env bash
# What debitd remembers per connection to keep a small request cheap (docs/performance.md,
# "Many clients") is still true of each response: on keep-alive connections of two
# listeners served at once (one with its own TCP profile), every response carries its own
# connection's X-Debit-Tcp and interface, a new transfer ID, and a record that ends "done"
# with the right bytes, whether the transfer record's JSON is built (a JSON access log) or
# not (access log off, or combined).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
need_cmd curl jq

cc_default=$(cat /proc/sys/net/ipv4/tcp_congestion_control)
alt=reno
[ "$cc_default" = reno ] && alt=bbr
grep -qw "$alt" /proc/sys/net/ipv4/tcp_available_congestion_control || t_skip "congestion control $alt not available here"
hdr_tr=$(wire_get WIRE_HDR_TRANSFER) hdr_tcp=$(wire_get WIRE_HDR_TCP) hdr_if=$(wire_get WIRE_HDR_INTERFACE)

# conf FILE ACCESS: two listeners, the second with congestion $alt; sets P1 P2
conf() {
  P1=$(free_port); P2=$(free_port)
  while [ "$P2" = "$P1" ]; do P2=$(free_port); done
  cat >"$1" <<CONF
listen = ( { address = "127.0.0.1"; port = $P1; }, { address = "127.0.0.1"; port = $P2; tcp = { congestion = "$alt"; }; } );
threads = 2;
files = ( { path = "/ram/4KiB.dat"; size = "4KiB"; } );
log = { level = "info"; $2 };
CONF
}

for access in 'access = "off";' "access = \"$T_TMP/json.log\"; access_format = \"json\";" \
              "access = \"$T_TMP/combined.log\"; access_format = \"combined\";"; do
  name=$(sed 's/access = "\([^"]*\)".*/\1/; s|.*/||' <<<"$access")
  conf "$T_TMP/d.conf" "$access"
  srv_start "$T_TMP/d.conf"
  u1=http://127.0.0.1:$P1/ram/4KiB.dat u2=http://127.0.0.1:$P2/ram/4KiB.dat
  # one curl, two kept-alive connections, responses alternating between them
  curl -s -D "$T_TMP/h" -w '%{num_connects}\n' -o /dev/null "$u1" -o /dev/null "$u2" -o /dev/null "$u1" \
    -o /dev/null "$u2" -o /dev/null "$u1" >"$T_TMP/nc"
  check_eq "$name: 5 responses over 2 connections" "1 1 0 0 0" "$(tr '\n' ' ' <"$T_TMP/nc" | sed 's/ $//')"
  tr -d '\r' <"$T_TMP/h" >"$T_TMP/hh"
  get() { awk -v h="$1" 'tolower($1) == tolower(h ":") {sub(/^[^:]*: /, ""); print}' "$T_TMP/hh"; }
  check_eq "$name: X-Debit-Tcp of each response is its own connection's" \
    "$cc_default $alt $cc_default $alt $cc_default" \
    "$(get "$hdr_tcp" | sed 's/^cc=\([^ ]*\).*/\1/' | tr '\n' ' ' | sed 's/ $//')"
  check_eq "$name: X-Debit-Interface on every response" "lo lo lo lo lo" "$(get "$hdr_if" | tr '\n' ' ' | sed 's/ $//')"
  ids=$(get "$hdr_tr")
  check_eq "$name: 5 distinct transfer IDs" 5 "$(sort -u <<<"$ids" | grep -c '^[0-9a-f]\{32\}$')"
  states=""
  for id in $ids; do states+="$(curl -s "http://127.0.0.1:$P1/transfers/$id" | jq -r '"\(.state):\(.bytes)"') "; done
  check_eq "$name: every record done with 4096 bytes" "done:4096 done:4096 done:4096 done:4096 done:4096" "${states% }"
  srv_stop
  case $name in
    json.log) check_eq "json access log: the transfer's record in each file line" 5 \
                "$(jq -r 'select(.path == "/ram/4KiB.dat") | .state' "$T_TMP/json.log" | grep -c '^done$')" ;;
    combined.log) check_eq "combined access log: 5 lines of 4096 bytes" 5 \
                    "$(grep -c '"GET /ram/4KiB.dat HTTP/1.1" 200 4096 ' "$T_TMP/combined.log")" ;;
  esac
done
t_done
