#!/usr/bin/env bash
# A transfer record's "acked_s"/"acked_mbps" (issue 33): the moment the client acknowledged
# the body's last byte (server/observe/ack_watch.c), not the moment it was handed to the
# kernel (duration_s). On a path limited to 200 Mbit/s (tbf on the veth toward the client,
# two network namespaces, 198.18.0.0/15) with debitd's send buffer large (32 MiB), a curl
# download's own rate (-w %{speed_download}) must be within 5 % of acked_mbps, while the
# handed-over rate (bytes / duration_s) is measurably faster (the buffer's worth is still
# in flight when libmicrohttpd completes). Also: two bodies on one kept-alive connection
# get one acknowledgement each; a body below 1 MiB is "not_watched"; the access log's line
# carries no acked fields (it is written before the acknowledgement).
. "$(dirname "$0")/../lib/common.sh"
need_root "network namespaces and tc"
need_cmd ip tc curl jq
H_TRANSFER=$(wire_get WIRE_HDR_TRANSFER)

ns_new S srv || skip_all "cannot create a network namespace"
ns_new C cli
VS=vs$T_ID VC=vc$T_ID
ns_veth "$S" "$VS" 198.18.30.1/24 "$C" "$VC" 198.18.30.2/24 || skip_all "cannot create a veth pair"
# the bottleneck: downloads leave debitd's namespace through VS; a 1 MB queue (~40 ms)
ip netns exec "$S" tc qdisc add dev "$VS" root tbf rate 200mbit burst 256kb limit 1mb ||
  skip_all "tbf unavailable"
# a receive window as large as the buffers, so that the sender's buffer really fills
ip netns exec "$C" sysctl -qw net.ipv4.tcp_rmem="4096 131072 67108864"
ip netns exec "$S" sysctl -qw net.ipv4.tcp_wmem="4096 16384 67108864"

PORT=$(free_port)
BASE=http://198.18.30.1:$PORT
cat >"$T_TMP/a.conf" <<CONF
listen = ( { address = "198.18.30.1"; port = $PORT; tcp = { sndbuf = "32MiB"; }; } );
files = ( { path = "/files/64Mio.dat"; size = "64Mio"; }, { path = "/files/512Kio.dat"; size = "512Kio"; } );
log = { level = "info"; access = "$T_TMP/access.log"; access_format = "json"; };
privacy = { public_transfers = true; };
CONF
debitd_spawn "$T_TMP/a.conf" "$S"
wait_http "$BASE/status" 150 "$C" "$DEBITD_PID" || { t_fail "debitd up" "$(tail -5 "$T_TMP/debitd-$S.log")"; t_done; }
debitd_content_ready "$BASE" "$C" || { t_fail "debitd's region complete"; t_done; }

# get PATH NAME: a download from the client's namespace; NAME.speed (curl's bytes/s),
# NAME.json (the record, once its acked_note is no longer "watching")
get() {
  local id
  ip netns exec "$C" curl -s -o /dev/null -D "$T_TMP/$2.hdr" -w '%{speed_download} %{size_download}\n' \
    --max-time 30 "$BASE$1" >"$T_TMP/$2.speed"
  id=$(tr -d '\r' <"$T_TMP/$2.hdr" | awk -v h="$H_TRANSFER:" 'tolower($1) == tolower(h) {print $2}')
  wait_for 50 sh -c "ip netns exec '$C' curl -s '$BASE/transfers/$id' >'$T_TMP/$2.json' &&
    jq -e '.acked_note != \"watching\"' '$T_TMP/$2.json'"
}

ratios=()
for i in 1 2 3; do
  get /files/64Mio.dat big$i
  read -r speed size <"$T_TMP/big$i.speed"
  j=$T_TMP/big$i.json
  check_eq "run $i: curl got the whole body" 67108864 "$size"
  check_eq "run $i: the record is done" done "$(jq -r .state "$j")"
  check_eq "run $i: acked_note null (acknowledged)" null "$(jq -r .acked_note "$j")"
  curl_mbps=$(awk -v s="$speed" 'BEGIN {printf "%.1f", s * 8 / 1e6}')
  acked=$(jq -r .acked_mbps "$j")
  handed=$(jq -r '.bytes * 8 / .duration_s / 1e6' "$j")
  t_diag "run $i: curl $curl_mbps Mbit/s, acked $acked, handed over $handed (duration_s $(jq -r .duration_s "$j"), acked_s $(jq -r .acked_s "$j"))"
  check_cmp "run $i: acked_mbps within 5 % of curl's rate" \
    "$(awk -v a="$acked" -v c="$curl_mbps" 'BEGIN {d = a / c - 1; print d < 0 ? -d : d}')" "<=" 0.05
  check_cmp "run $i: acked_s later than duration_s (the buffer drained after the handover)" \
    "$(jq -r '.acked_s - .duration_s' "$j")" ">" 0.2
  check_cmp "run $i: acked_mbps = bytes * 8 / acked_s" \
    "$(jq -r '(.acked_mbps - .bytes * 8 / .acked_s / 1e6) | fabs' "$j")" "<" 0.01
  ratios+=("$(awk -v h="$handed" -v c="$curl_mbps" 'BEGIN {print h / c}')")
done
# the handed-over figure is what the records used to show: measurably faster than curl
for i in 0 1 2; do
  check_cmp "run $((i + 1)): the handed-over rate is >= 5 % faster than curl's" "${ratios[$i]}" ">=" 1.05
done

# a body below 1 MiB is not watched
get /files/512Kio.dat small
check_eq "512 KiB: acked_note not_watched" not_watched "$(jq -r .acked_note "$T_TMP/small.json")"
check_eq "512 KiB: acked_s null" null "$(jq -r .acked_s "$T_TMP/small.json")"
check_eq "512 KiB: acked_mbps null" null "$(jq -r .acked_mbps "$T_TMP/small.json")"

# one kept-alive connection, two bodies: the second's bytes pass the first's end offset,
# each record gets its own acknowledgement
ip netns exec "$C" curl -s -D "$T_TMP/ka.hdr" -w '%{speed_download} %{num_connects}\n' --max-time 60 \
  -o /dev/null "$BASE/files/64Mio.dat" -o /dev/null "$BASE/files/64Mio.dat" >"$T_TMP/ka.speed"
mapfile -t ids < <(tr -d '\r' <"$T_TMP/ka.hdr" | awk -v h="$H_TRANSFER:" 'tolower($1) == tolower(h) {print $2}')
check_eq "keep-alive: two records" 2 "${#ids[@]}"
check_eq "keep-alive: one connection" "1 0" "$(awk '{print $2}' "$T_TMP/ka.speed" | tr '\n' ' ' | sed 's/ $//')"
for k in 0 1; do
  wait_for 50 sh -c "ip netns exec '$C' curl -s '$BASE/transfers/${ids[$k]:-none}' >'$T_TMP/ka$k.json' &&
    jq -e '.acked_note != \"watching\"' '$T_TMP/ka$k.json'"
  c=$(sed -n "$((k + 1))p" "$T_TMP/ka.speed" | awk '{printf "%.1f", $1 * 8 / 1e6}')
  a=$(jq -r .acked_mbps "$T_TMP/ka$k.json")
  t_diag "keep-alive body $((k + 1)): curl $c Mbit/s, acked $a"
  check_eq "keep-alive body $((k + 1)): acknowledged" null "$(jq -r .acked_note "$T_TMP/ka$k.json")"
  check_cmp "keep-alive body $((k + 1)): acked_mbps within 5 % of curl's rate" \
    "$(awk -v a="$a" -v c="$c" 'BEGIN {d = a / c - 1; print d < 0 ? -d : d}')" "<=" 0.05
done
id=${ids[1]:-none}

# the access log's line is written at the handover: no acked fields in it
line=$(grep -F "\"$id\"" "$T_TMP/access.log" | head -1)
check_match "the access log has the transfer's line" "\"duration_s\"" "$line"
check_nomatch "the access log's line has no acked fields" "acked_" "$line"

# transfers_acked = false (by a reload): a large body is no longer watched
echo 'transfers_acked = false;' >>"$T_TMP/a.conf"
kill -HUP "$DEBITD_PID"
check "reload with transfers_acked = false applied" wait_for 50 sh -c \
  "[ \"\$(ip netns exec '$C' curl -s '$BASE/status' | jq -r .config.reloads_ok)\" = 1 ]"
get /files/64Mio.dat off
check_eq "transfers_acked = false: a 64 MiB body's acked_note not_watched" "not_watched null" \
  "$(jq -r '"\(.acked_note) \(.acked_mbps)"' "$T_TMP/off.json")"

stop_pid "$DEBITD_PID"
check_eq "debitd exits 0 on SIGTERM" 0 "$STOP_RC"
t_done
