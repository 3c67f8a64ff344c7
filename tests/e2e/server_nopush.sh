#!/usr/bin/env bash
# listen[].tcp_nopush (server/http/nopush.h, docs/server.md "tcp_nopush"): on a listener with it
# (the default), a sendfile (or iovec) response's headers leave in the same TCP segment as
# the first body bytes, as nginx's `tcp_nopush on`; on one with `tcp_nopush = false`
# libmicrohttpd pushes the headers alone. Checked on the wire (the segments leaving lo, captured with
# AF_PACKET by first_segment.py), in the system calls (strace: cork, headers, sendfile,
# uncork, none of libmicrohttpd's own toggles), in the bytes (sha256), and in what debitd
# reports (/status, the transfer record, -t, a reload).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"

srv_conf "$T_TMP/d.conf" 'threads = 2;' 'ram = "1MiB";' \
  'files = ( { path = "/ram/1MiB.dat"; size = "1MiB"; }, { path = "/ram/4KiB.dat"; size = "4KiB"; },' \
  '          { path = "/files/2Mio.dat"; size = "2Mio"; }, { path = "/files/64Mio.dat"; size = "64Mio"; } );'
PORT2=$(free_port)
while [ "$PORT2" = "$PORT" ]; do PORT2=$(free_port); done
# two listeners: the first with the default, the second without
listen_line() { echo "listen = ( { address = \"127.0.0.1\"; port = $PORT;$1 }, { address = \"127.0.0.1\"; port = $PORT2; tcp_nopush = false; } );"; }
sed -i "1s/.*/$(listen_line "" | sed 's/[&/\]/\\&/g')/" "$T_TMP/d.conf"

eff=$("$DEBITD" -t -c "$T_TMP/d.conf" 2>/dev/null)
check_match "-t prints tcp_nopush = true by default" "port = $PORT; tcp_nopush = true;" "$eff"
check_match "-t prints tcp_nopush = false when set" "port = $PORT2; tcp_nopush = false;" "$eff"
sed 's/tcp_nopush = false/tcp_nopush = "no"/' "$T_TMP/d.conf" >"$T_TMP/bad.conf"
out=$("$DEBITD" -t -c "$T_TMP/bad.conf" 2>&1); rc=$?
check_eq "a non-boolean tcp_nopush: exit 2" 2 "$rc"
check_match "... naming file, line and setting" "bad.conf:1: listen\\[1\\]\\.tcp_nopush: " "$out"

P1=$PORT
srv_start "$T_TMP/d.conf"
PORT=$P1 BASE=http://127.0.0.1:$P1 # srv_start took the line's last port
B2=http://127.0.0.1:$PORT2
st=$(curl -s "$BASE/status")
check_eq "/status: tcp_nopush per listener (enabled, interposed, responses)" \
  '{"enabled":true,"interposed":true,"responses":0} {"enabled":false,"interposed":true,"responses":0}' \
  "$(jq -c '.listeners[].tcp_nopush' <<<"$st" | tr '\n' ' ' | sed 's/ $//')"

SHA1M=$(sha_of "$BASE/ram/1MiB.dat")
r=$(srv_transfer "$BASE/ram/1MiB.dat")
check_eq "tcp_nopush listener: sendfile, tcp_nopush true, all bytes" "sendfile true 1048576" \
  "$(jq -r '"\(.send_path) \(.tcp_nopush) \(.bytes)"' <<<"$r")"
check_eq "... and the bytes are the file's" "$SHA1M" "$(sha256sum <"$T_TMP/body" | cut -d' ' -f1)"
r=$(srv_transfer "$BASE/ram/1MiB.dat" -r 1000-300999)
check_eq "a 300,000-byte range under tcp_nopush: 206, all bytes" "206 sendfile true 300000" \
  "$(jq -r '"\(.status) \(.send_path) \(.tcp_nopush) \(.bytes)"' <<<"$r")"
check_eq "... the range's bytes" "$(curl -s "$BASE/ram/1MiB.dat" | head -c 301000 | tail -c 300000 | sha256sum)" \
  "$(sha256sum <"$T_TMP/body")"
r=$(srv_transfer "$BASE/files/2Mio.dat")
check_eq "a file repeating the region (iovec, sendmsg) under tcp_nopush too, all bytes" "iovec true 2097152" \
  "$(jq -r '"\(.send_path) \(.tcp_nopush) \(.bytes)"' <<<"$r")"
check_eq "... its bytes" "$(sha_of "$BASE/files/2Mio.dat")" "$(sha256sum <"$T_TMP/body" | cut -d' ' -f1)"
r=$(srv_transfer "$BASE/ram/4KiB.dat")
check_eq "a 4 KiB body (a buffer with the headers, one sendmsg): no tcp_nopush" "buffer false" \
  "$(jq -r '"\(.send_path) \(.tcp_nopush)"' <<<"$r")"
r=$(srv_transfer "$B2/ram/1MiB.dat")
check_eq "listener with tcp_nopush = false: sendfile, tcp_nopush false, all bytes" "sendfile false 1048576" \
  "$(jq -r '"\(.send_path) \(.tcp_nopush) \(.bytes)"' <<<"$r")"
check_eq "... the bytes" "$SHA1M" "$(sha256sum <"$T_TMP/body" | cut -d' ' -f1)"
curl -s -I -o /dev/null "$BASE/ram/1MiB.dat"
check_eq "/status: 4 responses under tcp_nopush (3 records, the range check's download; not HEAD, not the buffer), 0 on the other" "4 0" \
  "$(curl -s "$BASE/status" | jq -r '[.listeners[].tcp_nopush.responses] | join(" ")')"

# A download cut short (64 Mio: more than the socket buffers hold): the request completes
# as aborted and its socket is released; the next download (likely on the same descriptor
# number) is held again and whole.
hdr=$(wire_get WIRE_HDR_TRANSFER)
id=$(timeout 5 curl -s -D - --limit-rate 100k --max-time 1 -o /dev/null "$BASE/files/64Mio.dat" | tr -d '\r' |
  awk -v h="$hdr" 'tolower($1) == tolower(h ":") {print $2}')
st=""
for _ in $(seq 50); do
  st=$(curl -s "$BASE/transfers/$id" | jq -r '"\(.state) \(.tcp_nopush)"')
  [ "$st" != "sending true" ] && break
  sleep 0.1
done
check_eq "a download cut short under tcp_nopush: aborted" "aborted true" "$st"
r=$(srv_transfer "$BASE/ram/1MiB.dat")
check_eq "... the next one is held again and whole" "sendfile true 1048576 $SHA1M" \
  "$(jq -r '"\(.send_path) \(.tcp_nopush) \(.bytes)"' <<<"$r") $(sha256sum <"$T_TMP/body" | cut -d' ' -f1)"

# On the wire: the segment that carries each response's headers (kept-alive: 3 responses on
# one connection, then a new one). AF_PACKET needs CAP_NET_RAW.
# segs BASEURL PORT: "hdr=H seg=S" per response (4 lines)
segs() {
  local fifo=$T_TMP/seg.fifo out=$T_TMP/seg.$2 sp
  rm -f "$fifo"; mkfifo "$fifo"
  python3 "$(dirname "$0")/first_segment.py" "$2" 4 10 >"$fifo" 2>"$T_TMP/seg.err" &
  sp=$!; t_track "$sp"
  exec 7<"$fifo"
  read -r -t 5 ready <&7
  [ "$ready" = ready ] || { cat "$T_TMP/seg.err" >&2; exec 7<&-; return 1; }
  curl -s -o /dev/null -o /dev/null -o /dev/null "$1/ram/1MiB.dat" "$1/ram/1MiB.dat?x" "$1/ram/1MiB.dat?y"
  curl -s -o /dev/null "$1/ram/1MiB.dat"
  timeout 12 cat <&7 >"$out"
  exec 7<&-
  wait "$sp" 2>/dev/null
  cat "$out"
}
if [ "$(id -u)" = 0 ] && python3 -c 'import socket; socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, 0)' 2>/dev/null; then
  on=$(segs "$BASE" "$PORT")
  off=$(segs "$B2" "$PORT2")
  check_eq "wire: 4 responses seen on each listener" "4 4" "$(grep -c '^hdr=' <<<"$on") $(grep -c '^hdr=' <<<"$off")"
  check_eq "wire, tcp_nopush: every header segment carries body bytes too (seg > hdr)" 4 \
    "$(awk -F'[= ]' '$2 > 400 && $4 > $2' <<<"$on" | wc -l)"
  check_eq "wire, tcp_nopush = false: libmicrohttpd pushes the headers alone (seg = hdr)" 4 \
    "$(awk -F'[= ]' '$2 > 400 && $4 == $2' <<<"$off" | wc -l)"
  t_diag "tcp_nopush: $(tr '\n' ' ' <<<"$on")| off: $(tr '\n' ' ' <<<"$off")"
else
  t_skip "wire: the headers' segment with and without tcp_nopush" "needs root (CAP_NET_RAW for AF_PACKET on lo)"
  t_skip "wire, tcp_nopush: headers with body bytes" "needs root (CAP_NET_RAW)"
  t_skip "wire, tcp_nopush = false: headers alone" "needs root (CAP_NET_RAW)"
fi

# The system calls of two kept-alive responses: debitd's cork, the headers, the body's
# sendfile steps, debitd's uncork; libmicrohttpd's TCP_NODELAY/TCP_CORK calls never reach
# the kernel (without tcp_nopush they do: uncork after the headers, nodelay at the end).
# calls BASEURL: the sequence, runs of sendfile as one ("NODELAY=1 CORK=1 sendto sendfile CORK=0 ...")
calls() {
  strace -f -qq -e trace=setsockopt,sendto,sendfile,sendmsg -o "$T_TMP/strace.out" -p "$DEBITD_PID" &
  local sp=$!
  t_track "$sp"
  sleep 0.5 # attached to every thread before the download starts
  curl -s -o /dev/null -o /dev/null "$1/ram/1MiB.dat" "$1/ram/1MiB.dat?b"
  sleep 0.2
  kill -INT "$sp"; wait "$sp" 2>/dev/null
  grep -v 'resumed>' "$T_TMP/strace.out" | awk '
    /setsockopt\(.*SOL_TCP, TCP_(CORK|NODELAY)/ { match($0, /TCP_[A-Z]+, \[[0-9]+\]/); s = substr($0, RSTART + 4, RLENGTH - 4)
                                                   gsub(/[][ ]/, "", s); sub(/,/, "=", s); print s }
    /sendfile\(/ { print "sendfile" }
    /sendto\(.*HTTP\/1\.1 200/ { print "sendto" }' | uniq | tr '\n' ' ' | sed 's/ $//'
}
if command -v strace >/dev/null; then
  s=$(calls "$BASE")
  check_match "strace, tcp_nopush: cork, headers, sendfile, uncork per response ($s)" \
    '^(NODELAY=1 )?CORK=1 sendto sendfile CORK=0 CORK=1 sendto sendfile CORK=0$' "$s"
  s=$(calls "$B2")
  check_match "strace, tcp_nopush = false: libmicrohttpd's own toggles ($s)" 'sendto (CORK=0|NODELAY=1) .*sendfile NODELAY=1' "$s"
else
  t_skip "strace: tcp_nopush system calls" "needs strace (tools/deps)"
  t_skip "strace: libmicrohttpd's order" "needs strace (tools/deps)"
fi

# A reload turns it off on the first listener: /status and the next record say so.
sed -i "1s/.*/$(listen_line " tcp_nopush = false;" | sed 's/[&/\]/\\&/g')/" "$T_TMP/d.conf"
kill -HUP "$DEBITD_PID"
wait_for 50 grep -q 'reload: generation 2' "$T_TMP/debitd.log"
check_match "reload: the change is logged as the listener's TCP settings" "reload: generation 2 .*tcp profile of 127.0.0.1:$PORT changed" "$(cat "$T_TMP/debitd.log")"
check_eq "/status after the reload: tcp_nopush off on the first listener" false \
  "$(curl -s "$BASE/status" | jq -r '.listeners[0].tcp_nopush.enabled')"
r=$(srv_transfer "$BASE/ram/1MiB.dat")
check_eq "... and its next transfer is sent without it" "sendfile false 1048576" \
  "$(jq -r '"\(.send_path) \(.tcp_nopush) \(.bytes)"' <<<"$r")"
check_nomatch "no tcp_nopush warning in the log" 'tcp_nopush' "$(grep -v 'reload' "$T_TMP/debitd.log")"
srv_stop
check_eq "debitd stops cleanly" 0 "$SRV_RC"

# A build whose setsockopt() libmicrohttpd's calls do not reach (the Makefile's
# debitd-nointerpose: the symbol kept local): tcp_nopush is refused, said at start, and
# every response keeps libmicrohttpd's order, whole.
NOI=$DEBIT_BUILD/tests/debitd-nointerpose
if [ -x "$NOI" ]; then
  sed -i "1s/.*/$(listen_line "" | sed 's/[&/\]/\\&/g')/" "$T_TMP/d.conf"
  DEBITD=$NOI srv_start "$T_TMP/d.conf"
  PORT=$P1 BASE=http://127.0.0.1:$P1
  check_match "not interposed: said at start, naming the listener" \
    "warn: listen 127.0.0.1:$PORT: tcp_nopush: setsockopt\(\) is not interposed in this build" "$(cat "$T_TMP/debitd.log")"
  r=$(srv_transfer "$BASE/ram/1MiB.dat")
  check_eq "not interposed: the transfer goes without tcp_nopush, all bytes" "sendfile false 1048576 $SHA1M" \
    "$(jq -r '"\(.send_path) \(.tcp_nopush) \(.bytes)"' <<<"$r") $(sha256sum <"$T_TMP/body" | cut -d' ' -f1)"
  check_eq "not interposed: /status says so (enabled, not interposed, 0 responses)" \
    '{"enabled":true,"interposed":false,"responses":0}' "$(curl -s "$BASE/status" | jq -c '.listeners[0].tcp_nopush')"
  check_eq "not interposed: said once only" 1 "$(grep -c 'tcp_nopush' "$T_TMP/debitd.log")"
  srv_stop
else
  t_fail "the no-interposition build exists" "$NOI is missing (make unit-bins builds it)"
fi
t_done
