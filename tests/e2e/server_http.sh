#!/usr/bin/env bash
# debitd's HTTP semantics, asserted on status codes, headers and bytes: HEAD, 404, 405 +
# Allow, 416 + Content-Range, multi-range, If-Range (ETag and date), keep-alive, the folder
# index, /status and /transfers/ID.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"

srv_conf "$T_TMP/d.conf" \
  'files = ( { path = "/ram/1MiB.dat"; size = "1MiB"; }, { path = "/files/2Mio.dat"; size = "2Mio"; },' \
  '          { path = "/files/sub/a&b.bin"; size = 10; }, { path = "/big/64Mio.dat"; size = "64Mio"; } );'
srv_start "$T_TMP/d.conf"
U=$BASE/ram/1MiB.dat
# The names come from common/wire.h, the one definition the server and the client share:
# renaming one there without the server fails here.
H_KERNEL=$(wire_get WIRE_HDR_KERNEL) H_TCP=$(wire_get WIRE_HDR_TCP) H_OFFLOAD=$(wire_get WIRE_HDR_OFFLOAD) H_INTERFACE=$(wire_get WIRE_HDR_INTERFACE)
H_TRANSFER=$(wire_get WIRE_HDR_TRANSFER) STATUS=$(wire_get WIRE_STATUS_PATH) TRANSFERS=$(wire_get WIRE_TRANSFERS_PATH)

# HEAD: the headers of GET, no body
curl -s -I -o /dev/null -D "$T_TMP/h" "$U"
check_match "HEAD: 200" '^HTTP/1.1 200' "$(head -1 "$T_TMP/h")"
check_eq "Content-Length" 1048576 "$(hdr "$T_TMP/h" Content-Length)"
check_eq "Content-Type" "application/octet-stream" "$(hdr "$T_TMP/h" Content-Type)"
check_eq "Cache-Control" "no-store, no-transform" "$(hdr "$T_TMP/h" Cache-Control)"
check_eq "Accept-Ranges" "bytes" "$(hdr "$T_TMP/h" Accept-Ranges)"
check_eq "Server" "debitd/$("$DEBITD" --version | awk '{print $2}')" "$(hdr "$T_TMP/h" Server)"
etag=$(hdr "$T_TMP/h" ETag); lm=$(hdr "$T_TMP/h" Last-Modified)
check_match "strong ETag" '^"[0-9a-f]+-[0-9a-f]+-[0-9a-f]+"$' "$etag"
# seed 1 (the default), 0 for a file within the region, the size: all in lowercase hex
check_eq "ETag: seed-0-size in hex for a file within the region" '"1-0-100000"' "$etag"
check_match "Last-Modified is an HTTP-date" '^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9:]{8} GMT$' "$lm"
check_eq "$H_KERNEL is uname -r" "$(uname -r)" "$(hdr "$T_TMP/h" "$H_KERNEL")"
check_match "$H_TCP" '^cc=[a-z0-9_]+ pacing=[^ ]+ sndbuf=[^ ]+$' "$(hdr "$T_TMP/h" "$H_TCP")"
check_match "$H_OFFLOAD (lo, read back)" '^tso=(on|off|n/a) gso=(on|off|n/a) gro=(on|off|n/a)' "$(hdr "$T_TMP/h" "$H_OFFLOAD")"
check_eq "$H_INTERFACE: the one holding the listener's address" lo "$(hdr "$T_TMP/h" "$H_INTERFACE")"
# HEAD's protocol bytes: headers only. A HEAD then a GET on one connection: the GET's status
# line must follow the HEAD's blank line at once (a body after HEAD would come first).
exec 3<>"/dev/tcp/127.0.0.1/$PORT"
printf 'HEAD /ram/1MiB.dat HTTP/1.1\r\nHost: t\r\n\r\nGET /files/sub/a%%26b.bin HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n' >&3
timeout 5 cat <&3 >"$T_TMP/raw"; exec 3<&-
check_eq "HEAD then GET on one connection: two status lines, HEAD's without a body" "HTTP/1.1 200 OK|HTTP/1.1 200 OK|10" \
  "$(tr -d '\r' <"$T_TMP/raw" | grep '^HTTP/' | tr '\n' '|')$(awk 'BEGIN{RS="\r\n\r\n"} NR==3{printf "%d", length($0)}' "$T_TMP/raw")"
check_eq "HEAD's Content-Length is the file's" 1048576 "$(tr -d '\r' <"$T_TMP/raw" | awk -F': ' 'tolower($1)=="content-length"{print $2; exit}')"
curl -s -o /dev/null -D "$T_TMP/g" "$U"
check_match "GET carries $H_TRANSFER" '^[0-9a-f]{32}$' "$(hdr "$T_TMP/g" "$H_TRANSFER")"

code() { curl -s -o "$T_TMP/body" -D "$T_TMP/hh" -w '%{http_code}' "$@"; }
check_eq "unknown path: 404" 404 "$(code "$BASE/nope.dat")"
check_eq "unknown .sha256: 404" 404 "$(code "$BASE/nope.dat.sha256")"
check_eq "POST on a file: 405" 405 "$(code -X POST -d x "$U")"
check_eq "405 has Allow: GET, HEAD" "GET, HEAD" "$(hdr "$T_TMP/hh" Allow)"
check_eq "DELETE on /status: 405" 405 "$(code -X DELETE "$BASE/status")"

# ranges
check_eq "Range a-b: 206" 206 "$(code -r 10-19 "$U")"
check_eq "206 Content-Range" "bytes 10-19/1048576" "$(hdr "$T_TMP/hh" Content-Range)"
check_eq "206 Content-Length" 10 "$(hdr "$T_TMP/hh" Content-Length)"
check_eq "Range past the end is clamped" "bytes 1048000-1048575/1048576" \
  "$(code -r 1048000-2000000 "$U" >/dev/null; hdr "$T_TMP/hh" Content-Range)"
check_eq "unsatisfiable range: 416" 416 "$(code -r 1048576-1048600 "$U")"
check_eq "416 Content-Range: bytes */N" "bytes */1048576" "$(hdr "$T_TMP/hh" Content-Range)"
check_eq "suffix -0: 416" 416 "$(code -H 'Range: bytes=-0' "$U")"
check_eq "multiple ranges: 200 with the whole file" "200 1048576" \
  "$(curl -s -o /dev/null -w '%{http_code} %{size_download}' -r 0-9,20-29 "$U")"
check_eq "malformed Range is ignored: 200" 200 "$(code -H 'Range: bytes=9-1' "$U")"
check_eq "other unit is ignored: 200" 200 "$(code -H 'Range: items=0-1' "$U")"
check_eq "If-Range with the ETag: 206" 206 "$(code -r 0-9 -H "If-Range: $etag" "$U")"
check_eq "If-Range with another ETag: 200 whole" "200 1048576" \
  "$(curl -s -o /dev/null -w '%{http_code} %{size_download}' -r 0-9 -H 'If-Range: "other"' "$U")"
check_eq "If-Range with a weak ETag: 200" 200 "$(code -r 0-9 -H "If-Range: W/$etag" "$U")"
check_eq "If-Range with Last-Modified: 206" 206 "$(code -r 0-9 -H "If-Range: $lm" "$U")"
check_eq "If-Range with an older date: 200" 200 "$(code -r 0-9 -H 'If-Range: Thu, 01 Jan 1970 00:00:00 GMT' "$U")"
etag2=$(curl -s -I "$BASE/files/2Mio.dat" | hdr /dev/stdin ETag)
check_nomatch "files of other sizes have other ETags" "^$etag\$" "$etag2"
check_eq "... 2 Mio: \"1-0-200000\"" '"1-0-200000"' "$etag2"

# keep-alive: two requests, one connection
nc=$(curl -s -v -o /dev/null -o /dev/null "$U" "$BASE/files/2Mio.dat" 2>&1 | grep -c 'Re-using existing connection')
check_eq "keep-alive: the second request re-uses the connection" 1 "$nc"

# index pages
check_eq "/ is an index: 200 text/html" "200 text/html; charset=utf-8" \
  "$(curl -s -o "$T_TMP/root.html" -w '%{http_code} %{content_type}' "$BASE/")"
root=$(cat "$T_TMP/root.html")
check_match "/ links the folders" '<a href="files/">files/</a>' "$root"
check_match "/ links ram/" '<a href="ram/">ram/</a>' "$root"
files=$(curl -s "$BASE/files/")
check_match "/files/ lists 2Mio.dat with its size" '<a href="2Mio.dat">2Mio.dat</a> +2097152 +2 MiB' "$files"
check_match "/files/ links the checksum" '<a href="2Mio.dat.sha256">sha256</a>' "$files"
check_match "/files/ links the subfolder and parent" '<a href="../">../</a>.*' "$files"
check_match "/files/ lists sub/" '<a href="sub/">sub/</a>' "$files"
check_match "names are HTML-escaped" 'a&amp;b.bin' "$(curl -s "$BASE/files/sub/")"
check_eq "/files (no slash): 301 to /files/" "301 /files/" "$(code "$BASE/files") $(hdr "$T_TMP/hh" Location)"
check_eq "/files?a=1&b=%41 (no slash): 301 to /files/ with the query as sent, as nginx" "301 /files/?a=1&b=%41" \
  "$(code "$BASE/files?a=1&b=%41") $(hdr "$T_TMP/hh" Location)"
check_eq "Range beyond 64 bits of digits: 416 (a position past any file), as nginx" "416 bytes */2097152" \
  "$(code -H 'Range: bytes=99999999999999999999999-' "$BASE/files/2Mio.dat") $(hdr "$T_TMP/hh" Content-Range)"
check_eq "unknown folder: 404" 404 "$(code "$BASE/nothing/")"
# the path as nginx maps it (curl --path-as-is sends dot segments as they are)
check_eq "dot segments and repeated slashes resolved, as nginx: 200, the same bytes" "200 200 200 200" \
  "$(code --path-as-is "$BASE/files/./2Mio.dat") $(code --path-as-is "$BASE/files/sub/../2Mio.dat") $(code --path-as-is "$BASE//files//2Mio.dat") $(code --path-as-is "$BASE/files/%2e%2e/files/2Mio.dat")"
check_eq "... the file's bytes" "$(curl -s "$BASE/files/2Mio.dat" | sha256sum)" "$(curl -s --path-as-is "$BASE/files/sub/../2Mio.dat" | sha256sum)"
check_eq "\"..\" above the root: 400, as nginx" "400 400" "$(code --path-as-is "$BASE/../files/2Mio.dat") $(code --path-as-is "$BASE/files/../../x")"
check_eq "an absolute-form target (RFC 9112 3.2.2: a server MUST accept it): 200" "200 2097152" \
  "$(code --request-target "http://example.invalid:1/files/2Mio.dat" "$BASE/") $(stat -c %s "$T_TMP/body")"
check_eq "a raw fragment in the target is cut, as nginx: 200" 200 "$(code --request-target "/files/2Mio.dat#part" "$BASE/")"
check_eq "a file path with a slash: 404" 404 "$(code "$BASE/ram/1MiB.dat/")"

# /status
curl -s "$BASE$STATUS" >"$T_TMP/status.json"
check_eq "/status is JSON with the version" "$("$DEBITD" --version | awk '{print $2}')" "$(jq -r .version "$T_TMP/status.json")"
check_eq "/status kernel" "$(uname -r)" "$(jq -r .kernel "$T_TMP/status.json")"
check_eq "/status listeners" "127.0.0.1:$PORT" "$(jq -r '.listeners[0].name' "$T_TMP/status.json")"
check_eq "/status files and sizes" "/ram/1MiB.dat=1048576 /files/2Mio.dat=2097152 /files/sub/a&b.bin=10 /big/64Mio.dat=67108864" \
  "$(jq -r '[.files[] | "\(.path)=\(.size)"] | join(" ")' "$T_TMP/status.json")"
check_eq "/status: the listener's interface and its live offloads" "lo $(hdr "$T_TMP/h" "$H_OFFLOAD")" \
  "$(jq -r '.listeners[0] | "\(.interface) \(.x_debit_offload)"' "$T_TMP/status.json")"
check_eq "/status: the listener's TCP profile (defaults: the netns's algorithm)" \
  "cc=$(cat /proc/sys/net/ipv4/tcp_congestion_control) pacing=unlimited sndbuf=auto" \
  "$(jq -r '.listeners[0].x_debit_tcp' "$T_TMP/status.json")"
check_eq "/status: the listener's TCP profile is what $H_TCP says" "$(hdr "$T_TMP/h" "$H_TCP")" \
  "$(jq -r '.listeners[0].x_debit_tcp' "$T_TMP/status.json")"
check_cmp "/status counts requests" "$(jq .counters.requests "$T_TMP/status.json")" ">=" 30
check_cmp "/status counts bytes sent" "$(jq .counters.bytes_sent "$T_TMP/status.json")" ">=" $((3 * 1048576))
# Closed connections are counted down when debitd notices the close: wait for it, bounded.
one_active() { [ "$(curl -s "$BASE/status" | jq .counters.active_connections)" = 1 ]; }
wait_for 50 one_active
check_eq "/status: one active connection (this one)" 1 "$(curl -s "$BASE/status" | jq .counters.active_connections)"
check_eq "/status: pid is the daemon's" "$DEBITD_PID" "$(jq .pid "$T_TMP/status.json")"
check_eq "/status: counters and sections present" true \
  "$(jq '[(.counters | has("requests","bytes_sent","active_connections","connections","transfers")), (.content | has("seed","region_bytes")), has("uptime_s","started","upload","limits")] | all' "$T_TMP/status.json")"
check_eq "/status: threads = 0 means one per online CPU" "$(nproc)" "$(jq .threads_per_listener "$T_TMP/status.json")"
check_match "/status uptime" '^[0-9.]+' "$(jq .uptime_s "$T_TMP/status.json")"
check_eq "/status: sha256 is cached once asked" "$(sha_of "$U")" "$(curl -s "$BASE/status" | jq -r '.files[0].sha256')"

# /transfers/ID: the contract with the client
id=$(curl -s -o /dev/null -D - "$U" | hdr /dev/stdin "$H_TRANSFER")
# "done" is recorded when libmicrohttpd reports the request finished, a moment after the
# client has its last byte: wait for it, bounded.
tr_state() { curl -s "$BASE$TRANSFERS$1" | jq -r .state; }
not_sending() { [ "$(tr_state "$1")" != sending ]; }
wait_for 50 not_sending "$id"
curl -s -o "$T_TMP/tr.json" -w '%{http_code}' "$BASE$TRANSFERS$id" >"$T_TMP/code"
check_eq "/transfers/ID: 200" 200 "$(cat "$T_TMP/code")"
check_eq "/transfers/ID: id, state, path, bytes" "$id done /ram/1MiB.dat 1048576" \
  "$(jq -r '"\(.id) \(.state) \(.path) \(.bytes)"' "$T_TMP/tr.json")"
check_eq "/transfers/ID: duration_s and a tcp object with rtt and cwnd" "true" \
  "$(jq '(.duration_s | type) == "number" and (.tcp.rtt_ms | type) == "number" and (.tcp.snd_cwnd > 0)' "$T_TMP/tr.json")"
check_match "/transfers/ID: started is an ISO 8601 UTC time" '^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{3}Z$' "$(jq -r .started "$T_TMP/tr.json")"
check_eq "/transfers/ID: remote and listener" "127.0.0.1 127.0.0.1:$PORT" "$(jq -r '"\(.remote | sub(":[0-9]+$"; "")) \(.listener)"' "$T_TMP/tr.json")"
# While a transfer runs it is "sending", with the bytes planned. Deterministic: the client
# reads at 1 MB/s, so 64 MiB cannot be finished (nor fit in socket buffers) for a minute;
# the client is stopped only after the check.
curl -s -o /dev/null -D "$T_TMP/slow.h" --limit-rate 1M --max-time 60 "$BASE/big/64Mio.dat" & slow=$!; t_track $slow
wait_for 100 grep -qi '^x-debit-transfer' "$T_TMP/slow.h"
sid=$(hdr "$T_TMP/slow.h" "$H_TRANSFER")
check_match "slow download has a transfer ID" '^[0-9a-f]{32}$' "$sid"
check_eq "/transfers/ID during the download: sending, 64 MiB planned" "sending 67108864" \
  "$(curl -s "$BASE$TRANSFERS$sid" | jq -r '"\(.state) \(.length)"')"
# debitd samples the sender's TCP_INFO while it sends (every 100 ms): a sending record
# already has a live cwnd, which only a running sampler can have put there.
sampled() { curl -s "$BASE$TRANSFERS$1" | jq -e '.state == "sending" and (.tcp.snd_cwnd | type) == "number"' >/dev/null; }
wait_for 50 sampled "$sid"
check_eq "/transfers/ID during the download: the sender's TCP_INFO is sampled live" true \
  "$(curl -s "$BASE$TRANSFERS$sid" | jq '.state == "sending" and .tcp.snd_cwnd > 0 and .tcp.max_snd_cwnd >= .tcp.snd_cwnd')"
stop_pid $slow
wait_for 100 not_sending "$sid"
curl -s "$BASE$TRANSFERS$sid" >"$T_TMP/ab.json"
check_eq "/transfers/ID after the client went away: aborted" aborted "$(jq -r .state "$T_TMP/ab.json")"
check_eq "aborted transfer: bytes acknowledged, more than 0 and less than the 64 MiB planned" true \
  "$(jq '.bytes > 0 and .bytes < 67108864' "$T_TMP/ab.json")"
check_eq "/transfers/unknown: 404" 404 "$(code "$BASE${TRANSFERS}0123456789abcdef0123456789abcdef")"
check_eq "/transfers/garbage: 404" 404 "$(code "$BASE${TRANSFERS}zz")"
# A full-speed 64 MiB loopback download: the record's max_snd_cwnd is the largest cwnd the
# samples saw, at least the last one and above the initial window (10 segments).
fid=$(curl -s -o /dev/null -D - "$BASE/big/64Mio.dat" | hdr /dev/stdin "$H_TRANSFER")
wait_for 50 not_sending "$fid"
check_eq "64 MiB download: max_snd_cwnd >= snd_cwnd and > the initial 10" true \
  "$(curl -s "$BASE$TRANSFERS$fid" | jq '.state == "done" and .tcp.max_snd_cwnd >= .tcp.snd_cwnd and .tcp.max_snd_cwnd > 10')"
check_eq "access log: one JSON line for that transfer" "done" \
  "$(jq -r --arg id "$id" 'select(.id == $id) | .state' "$T_TMP/access.log")"

# An offload interface that cannot be read (required = false: a warning, debitd serves):
# /status says why there is no offload state, with offload_strerror's words.
srv_stop
srv_conf "$T_TMP/o.conf" 'files = ( { path = "/f.dat"; size = 10; } );' \
  'offload = { interface = "nosuch0"; required = false; };'
srv_start "$T_TMP/o.conf"
check_eq "/status: unreadable offload interface: null state and the kind of error" "null no such network interface" \
  "$(curl -s "$BASE$STATUS" | jq -r '.listeners[0] | "\(.offload) \(.offload_error)"')"
check_eq "no offload headers for an interface that cannot be read" "" "$(curl -s -o /dev/null -D - "$BASE/f.dat" | hdr /dev/stdin "$H_OFFLOAD")"
t_done
