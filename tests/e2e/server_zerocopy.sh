#!/usr/bin/env bash
# debitd says which send path each transfer used: a file (or range) within the content region
# goes out by sendfile from the memfd ("zero_copy": true in /transfers/ID, counted per
# listener in /status), a file larger than `ram` repeats the region as an iovec response (a
# copy: "zero_copy": false), and so does a body of at most 64 KiB (a buffer sent with the
# headers in one sendmsg: "buffer"). strace of the server proves the system calls behind each claim;
# debit keeps the flag in its run record (server_record).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"

srv_conf "$T_TMP/d.conf" 'ram = "16MiB";' \
  'files = ( { path = "/ram/16MiB.dat"; size = "16MiB"; }, { path = "/files/32Mio.dat"; size = "32Mio"; } );'
srv_start "$T_TMP/d.conf"
if [ "$(id -u)" = 0 ]; then # root: the region is on a private huge tmpfs, and sendfile works from it
  check_eq "/status: content backing (root)" tmpfs-huge "$(curl -s "$BASE/status" | jq -r .content.backing)"
else
  check_match "/status: content backing (not root)" '^memfd \(no private huge tmpfs: ' "$(curl -s "$BASE/status" | jq -r .content.backing)"
fi

r=$(srv_transfer "$BASE/ram/16MiB.dat")
check_eq "file within the region: sendfile, zero_copy true, all bytes" "sendfile true 16777216" \
  "$(jq -r '"\(.send_path) \(.zero_copy) \(.bytes)"' <<<"$r")"
r=$(srv_transfer "$BASE/files/32Mio.dat")
check_eq "file larger than ram: iovec, zero_copy false, all bytes" "iovec false 33554432" \
  "$(jq -r '"\(.send_path) \(.zero_copy) \(.bytes)"' <<<"$r")"
check_eq "its body is the region twice" "$(curl -s "$BASE/files/32Mio.dat.sha256" | cut -d' ' -f1)" \
  "$(sha256sum <"$T_TMP/body" | cut -d' ' -f1)"
r=$(srv_transfer "$BASE/files/32Mio.dat" -r 1000-1049575)
check_eq "a 1 MiB range of the large file inside the region: sendfile" "206 sendfile true 1048576" \
  "$(jq -r '"\(.status) \(.send_path) \(.zero_copy) \(.bytes)"' <<<"$r")"
r=$(srv_transfer "$BASE/ram/16MiB.dat" -r 1000-1999)
check_eq "a small body (<= 64 KiB): one buffer with the headers, not zero-copy" "206 buffer false 1000" \
  "$(jq -r '"\(.status) \(.send_path) \(.zero_copy) \(.bytes)"' <<<"$r")"
check_eq "... and its bytes are the region's" "$(curl -s "$BASE/ram/16MiB.dat" | head -c 2000 | tail -c 1000 | sha256sum)" \
  "$(sha256sum <"$T_TMP/body")"
r=$(srv_transfer "$BASE/files/32Mio.dat" -r 16777000-16778000)
check_eq "a range across the region's end: iovec" "206 iovec false 1001" \
  "$(jq -r '"\(.status) \(.send_path) \(.zero_copy) \(.bytes)"' <<<"$r")"
check_eq "ETag of a file repeating the 16 MiB region: seed-region-size in hex" '"1-1000000-2000000"' \
  "$(curl -s -I "$BASE/files/32Mio.dat" | tr -d '\r' | sed -n 's/^ETag: //Ip')"
check_eq "HEAD makes no transfer" "" "$(curl -s -I "$BASE/ram/16MiB.dat" | tr -d '\r' | grep -i "^$(wire_get WIRE_HDR_TRANSFER):")"
check_eq "/status per listener: 3 zero-copy transfers, 3 copies, sendfile available" "true 3 3" \
  "$(curl -s "$BASE/status" | jq -r '.listeners[0].zero_copy | "\(.sendfile_available) \(.transfers) \(.copy_transfers)"')"

# the system calls: sendfile for the region file, none for the repeated one (sendmsg/writev)
if command -v strace >/dev/null; then
  strace_of() { # URL: the server's write-side system calls during one download
    strace -f -qq -e trace=sendfile,sendmsg,writev,send,sendto -o "$T_TMP/strace.out" -p "$DEBITD_PID" &
    local sp=$!
    t_track "$sp"
    sleep 0.5 # strace attaches to every thread before the download starts
    curl -s -o /dev/null "$1"
    kill -INT "$sp"; wait "$sp" 2>/dev/null
    awk '{for (i = 1; i <= NF; i++) if ($i ~ /^(sendfile|sendmsg|writev|send|sendto)\(/) {sub(/\(.*/, "", $i); n[$i]++}}
         END{for (k in n) printf "%s=%d\n", k, n[k]}' "$T_TMP/strace.out" | sort | tr '\n' ' '
  }
  s=$(strace_of "$BASE/ram/16MiB.dat")
  check_match "strace: the zero-copy file goes out by sendfile ($s)" '(^| )sendfile=[0-9]+' "$s"
  s=$(strace_of "$BASE/files/32Mio.dat")
  check_nomatch "strace: the repeated file makes no sendfile call ($s)" 'sendfile=' "$s"
  check_match "strace: ... but sendmsg/writev copies ($s)" '(sendmsg|writev)=[0-9]+' "$s"
else
  t_skip "strace: system calls behind zero_copy" "needs strace (tools/deps)"
fi

# debit keeps the server's record, with the flag, in its run record
f=$T_TMP/c.json
"$DEBIT" -q -n 1 --format json -o "$f" small="$BASE/ram/16MiB.dat" big="$BASE/files/32Mio.dat"
check_eq "debit: server_record.zero_copy per run" "small=true big=false" \
  "$(jq -r '[.runs[] | "\(.server)=\(.server_record.zero_copy)"] | join(" ")' "$f")"
t_done
