#!/usr/bin/env bash
# The speed-test protocols (issue 33, docs/server.md "Speed-test protocols"): LibreSpeed's
# garbage/empty/getIP (with and without .php, at / and /backend/) and Cloudflare's
# __down/__up, checked byte for byte and header by header with curl against a real debitd:
# exact body sizes, CORS, Timing-Allow-Origin, a parseable Server-Timing, ckSize's default
# and clamps, a 25 MB POST answered after its body, preflights, aliases, getIP's JSON, each
# transfer's record at /transfers/ID, the access log, /metrics counters by protocol, a
# protocol switched off (404), speedtest.max_bytes (400/413) and speedtest.per_ip (429).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"

# fetch NAME URL [CURL ARGS...]: body to $T_TMP/NAME.body, headers to $T_TMP/NAME.h; prints
# "STATUS SIZE" (size of the body received)
fetch() {
  local n=$1 url=$2; shift 2
  curl -s -o "$T_TMP/$n.body" -D "$T_TMP/$n.h" -w '%{http_code} %{size_download}' "$@" "$url"
}
# record NAME: the /transfers/ID record named by NAME's X-Debit-Transfer, once not "sending"
record() {
  local id
  id=$(hdr "$T_TMP/$1.h" "$(wire_get WIRE_HDR_TRANSFER)")
  if [ -n "$id" ]; then srv_record "$BASE" "$id"; else echo '{}'; fi
}
# metric NAME LABELS: the value of NAME{LABELS} on /metrics (0 when absent)
metric() { curl -s "$BASE/metrics" | awk -v k="$1{$2}" '$1 == k {print $2; f=1} END {if (!f) print 0}'; }

srv_conf "$T_TMP/s.conf" 'files = ( { path = "/f.dat"; size = "16MiB"; } );'
srv_start "$T_TMP/s.conf"

# --- Cloudflare __down: exact sizes ---
for n in 0 1 12345678; do
  check_eq "__down?bytes=$n: 200 and exactly $n bytes" "200 $n" "$(fetch d$n "$BASE/__down?bytes=$n&measId=1&during=idle")"
  check_eq "__down?bytes=$n: Content-Length $n" "$n" "$(hdr "$T_TMP/d$n.h" Content-Length)"
done
check_file_eq "__down's bytes are the content region's (the file's first 12345678)" "$T_TMP/d12345678.body" \
  <(curl -s -r 0-12345677 "$BASE/f.dat")
check_eq "__down without bytes: an empty 200" "200 0" "$(fetch dnone "$BASE/__down")"
h=$T_TMP/d12345678.h
check_eq "__down: Access-Control-Allow-Origin *" "*" "$(hdr "$h" Access-Control-Allow-Origin)"
check_eq "__down: Timing-Allow-Origin *" "*" "$(hdr "$h" Timing-Allow-Origin)"
check_eq "__down: Cache-Control no-store" "no-store" "$(hdr "$h" Cache-Control)"
check_eq "__down: octet-stream" "application/octet-stream" "$(hdr "$h" Content-Type)"
st=$(hdr "$h" Server-Timing)
check_match "__down: Server-Timing cfRequestDuration;dur=MS ($st)" '^cfRequestDuration;dur=[0-9]+\.[0-9]+$' "$st"
check_cmp "__down: Server-Timing dur > 0" "${st#*dur=}" ">" 0
check_cmp "__down: Server-Timing dur < 1000 ms (the server's own time, not the transfer's)" "${st#*dur=}" "<" 1000
rt=$(hdr "$h" cf-meta-request-time)
check_cmp "__down: cf-meta-request-time is epoch ms within 60 s of now ($rt)" \
  "$(( ${rt:-0} / 1000 - $(date +%s) ))" "<=" 60
check_eq "__down: Access-Control-Expose-Headers names Server-Timing, the cf-meta-* and the record" \
  'Server-Timing, cf-meta-request-time, cf-meta-colo, cf-meta-ip, cf-meta-country, cf-meta-city, cf-meta-asn, X-Debit-Transfer' \
  "$(hdr "$h" Access-Control-Expose-Headers)"
check_eq "__down: cf-meta-colo is speedtest.colo's default, cf-meta-ip the client's address" "debitd 127.0.0.1" \
  "$(hdr "$h" cf-meta-colo) $(hdr "$h" cf-meta-ip)"
check_eq "__up and a preflight carry them too" "debitd 127.0.0.1 debitd" \
  "$(hdr "$T_TMP/d0.h" cf-meta-colo) $(hdr "$T_TMP/d0.h" cf-meta-ip) $(fetch dopt "$BASE/__down" -X OPTIONS >/dev/null; hdr "$T_TMP/dopt.h" cf-meta-colo)"
check_eq "LibreSpeed's answers carry no cf-meta-*" "" \
  "$(fetch gm "$BASE/garbage.php?ckSize=1" >/dev/null; grep -i '^cf-meta' "$T_TMP/gm.h")"
check_match "__down: X-Debit-Tcp as on a file" 'cc=' "$(hdr "$h" X-Debit-Tcp)"
rec=$(record d12345678)
check_eq "__down: record at /transfers/ID: done, 12345678 bytes, path /__down, sendfile" \
  "done 12345678 12345678 /__down sendfile" "$(jq -r '"\(.state) \(.bytes) \(.length) \(.path) \(.send_path)"' <<<"$rec")"
check_eq "__down?bytes=0: a record of 0 bytes" "done 0" "$(record d0 | jq -r '"\(.state) \(.bytes)"')"
check_eq "__down?bytes over speedtest.max_bytes (1GiB): 400" "400" \
  "$(fetch dbig "$BASE/__down?bytes=1073741825" | cut -d' ' -f1)"
check_match "... saying why" 'speedtest.max_bytes' "$(cat "$T_TMP/dbig.body")"
check_eq "... with CORS, so that a page can read it" "*" "$(hdr "$T_TMP/dbig.h" Access-Control-Allow-Origin)"
check_eq "__down?bytes=1e6: 400" "400" "$(fetch dbad "$BASE/__down?bytes=1e6" | cut -d' ' -f1)"
check_eq "HEAD __down?bytes=1073741824: 200, Content-Length, no record" "200 1073741824 " \
  "$(fetch dhead "$BASE/__down?bytes=1073741824" -I | cut -d' ' -f1) $(hdr "$T_TMP/dhead.h" Content-Length) $(hdr "$T_TMP/dhead.h" X-Debit-Transfer)"

# --- Cloudflare __up: answered after the whole body ---
head -c 25000000 /dev/zero | tr '\0' 0 >"$T_TMP/up.bin"
check_eq "__up: POST of 25,000,000 '0's: 200, empty body" "200 0" \
  "$(fetch up "$BASE/__up?bytes=25000000" --data-binary @"$T_TMP/up.bin" -H 'Content-Type: text/plain')"
check_eq "__up: the record says every byte was read before the answer" "done 25000000 received" \
  "$(record up | jq -r '"\(.state) \(.bytes) \(.send_path)"')"
st=$(hdr "$T_TMP/up.h" Server-Timing)
check_match "__up: Server-Timing ($st)" '^cfRequestDuration;dur=[0-9]+\.[0-9]+$' "$st"
check_eq "__up: CORS and TAO" "* *" "$(hdr "$T_TMP/up.h" Access-Control-Allow-Origin) $(hdr "$T_TMP/up.h" Timing-Allow-Origin)"
check_eq "__up chunked: 200 after the body" "200 done 3000000" \
  "$(head -c 3000000 "$T_TMP/up.bin" | fetch upc "$BASE/__up" -H 'Transfer-Encoding: chunked' --data-binary @- |
     cut -d' ' -f1) $(record upc | jq -r '"\(.state) \(.bytes)"')"
check_eq "__up announced over speedtest.max_bytes: 413 before the body" "413" \
  "$(fetch upbig "$BASE/__up" -X POST -H 'Content-Length: 1073741825' --max-time 5 | cut -d' ' -f1)"
check_eq "GET __up: 405, Allow: POST, OPTIONS" "405 POST, OPTIONS" \
  "$(fetch upget "$BASE/__up" | cut -d' ' -f1) $(hdr "$T_TMP/upget.h" Allow)"
check_eq "OPTIONS __up (preflight with Authorization): 204" "204" \
  "$(fetch upopt "$BASE/__up" -X OPTIONS -H 'Origin: http://page.test' -H 'Access-Control-Request-Method: POST' \
      -H 'Access-Control-Request-Headers: authorization,content-type' | cut -d' ' -f1)"
check_eq "... allows any origin, POST, the asked headers" "* POST, OPTIONS authorization,content-type" \
  "$(hdr "$T_TMP/upopt.h" Access-Control-Allow-Origin) $(hdr "$T_TMP/upopt.h" Access-Control-Allow-Methods) $(hdr "$T_TMP/upopt.h" Access-Control-Allow-Headers)"

# --- LibreSpeed garbage ---
check_eq "garbage.php: default ckSize 4: 4 MiB" "200 4194304" "$(fetch g4 "$BASE/garbage.php?r=0.42")"
check_eq "garbage.php?ckSize=0: the default (PHP's empty())" "200 4194304" "$(fetch g0 "$BASE/garbage.php?ckSize=0")"
check_eq "garbage.php?ckSize=2: 2 MiB" "200 2097152" "$(fetch g2 "$BASE/garbage.php?ckSize=2&r=1")"
check_eq "HEAD garbage.php?ckSize=5000: clamped to 1024 MiB (Content-Length)" "1073741824" \
  "$(fetch gh "$BASE/garbage.php?ckSize=5000" -I >/dev/null; hdr "$T_TMP/gh.h" Content-Length)"
h=$T_TMP/g4.h
check_eq "garbage: garbage.php's headers" \
  "application/octet-stream|attachment; filename=random.dat|binary|no-cache" \
  "$(hdr "$h" Content-Type)|$(hdr "$h" Content-Disposition)|$(hdr "$h" Content-Transfer-Encoding)|$(hdr "$h" Pragma)"
check_match "garbage: never cached" '^no-store, no-cache, must-revalidate, max-age=0, s-maxage=0' "$(hdr "$h" Cache-Control)"
check_eq "garbage without cors: no CORS header" "" "$(hdr "$h" Access-Control-Allow-Origin)"
fetch gc "$BASE/garbage.php?ckSize=1&cors=true" >/dev/null
check_eq "garbage with cors: Allow-Origin *, Allow-Methods GET, POST" "* GET, POST" \
  "$(hdr "$T_TMP/gc.h" Access-Control-Allow-Origin) $(hdr "$T_TMP/gc.h" Access-Control-Allow-Methods)"
check_eq "garbage: record matches (4 MiB, done)" "done 4194304 /garbage.php" \
  "$(record g4 | jq -r '"\(.state) \(.bytes) \(.path)"')"
check_eq "garbage's bytes do not compress (gzip keeps > 99 %)" 1 \
  "$(gzip -c "$T_TMP/g4.body" | wc -c | awk '{print ($1 > 0.99 * 4194304) ? 1 : 0}')"

# --- LibreSpeed empty and getIP ---
head -c 25000000 /dev/urandom >"$T_TMP/up25.bin"
check_eq "empty.php: POST of 25 MB answered 200 with an empty body" "200 0" \
  "$(fetch e "$BASE/empty.php?cors=true&r=3" --data-binary @"$T_TMP/up25.bin")"
check_eq "empty.php: answered after the body (its record: 25000000 bytes)" "done 25000000" \
  "$(record e | jq -r '"\(.state) \(.bytes)"')"
check_eq "empty.php with cors: LibreSpeed's three CORS headers" "* GET, POST Content-Encoding, Content-Type" \
  "$(hdr "$T_TMP/e.h" Access-Control-Allow-Origin) $(hdr "$T_TMP/e.h" Access-Control-Allow-Methods) $(hdr "$T_TMP/e.h" Access-Control-Allow-Headers)"
check_eq "empty.php GET (ping): 200, empty" "200 0" "$(fetch eg "$BASE/empty.php?r=4")"
check_eq "empty.php keeps the connection: two pings, one connection" "1" \
  "$(curl -s -o /dev/null -o /dev/null -w '%{num_connects}\n' "$BASE/empty.php" "$BASE/empty.php" | paste -sd+ | bc)"
check_eq "empty.php over speedtest.max_bytes: 413" "413" \
  "$(fetch ebig "$BASE/backend/empty.php" -X POST -H 'Content-Length: 2000000000' --max-time 5 | cut -d' ' -f1)"
fetch ip "$BASE/getIP.php?isp=true" >/dev/null
check_eq "getIP.php: LibreSpeed's JSON (processedString, rawIspInfo)" \
  '{"processedString":"127.0.0.1 - localhost IPv4 access","rawIspInfo":""}' "$(cat "$T_TMP/ip.body")"
check_match "getIP.php: JSON type" '^application/json' "$(hdr "$T_TMP/ip.h" Content-Type)"
check_eq "getIP.php without isp: the bare address, as the PHP answers" \
  '{"processedString":"127.0.0.1","rawIspInfo":""}' "$(curl -s "$BASE/getIP.php")"
check_eq "OPTIONS garbage.php: 204 with CORS" "204 *" \
  "$(fetch gopt "$BASE/garbage.php?cors=true" -X OPTIONS | cut -d' ' -f1) $(hdr "$T_TMP/gopt.h" Access-Control-Allow-Origin)"

# --- aliases (speedtest-go's) ---
codes=""
for p in garbage garbage.php backend/garbage backend/garbage.php empty empty.php backend/empty backend/empty.php \
  getIP getIP.php backend/getIP backend/getIP.php; do
  codes+="$(curl -s -o /dev/null -w '%{http_code}' "$BASE/$p?ckSize=1") "
done
check_eq "every alias answers 200" "$(printf '200 %.0s' $(seq 12))" "$codes"
check_eq "no .php for Cloudflare's, no /backend/: 404" "404 404" \
  "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/__down.php") $(curl -s -o /dev/null -w '%{http_code}' "$BASE/backend/__down")"

# --- access log and metrics ---
id=$(hdr "$T_TMP/d12345678.h" X-Debit-Transfer)
check_match "access log: the __down line carries its record" "\"id\":\"$id\".*\"path\":\"/__down\"" \
  "$(grep "$id" "$T_TMP/access.log")"
before=$(metric debitd_speedtest_requests_total 'protocol="cloudflare",endpoint="down"')
bbytes=$(metric debitd_speedtest_bytes_total 'protocol="cloudflare",endpoint="down"')
curl -s -o /dev/null "$BASE/__down?bytes=1000"
check_eq "/metrics: one more cloudflare down request" "$((before + 1))" \
  "$(metric debitd_speedtest_requests_total 'protocol="cloudflare",endpoint="down"')"
check_eq "/metrics: 1000 more cloudflare down bytes" "$((bbytes + 1000))" \
  "$(metric debitd_speedtest_bytes_total 'protocol="cloudflare",endpoint="down"')"
check_eq "/metrics: librespeed empty bytes = the 25 MB POST" 25000000 \
  "$(metric debitd_speedtest_bytes_total 'protocol="librespeed",endpoint="empty"')"
check_eq "/metrics: refusals counted (2 x 400 on down)" 2 \
  "$(metric debitd_speedtest_refused_total 'protocol="cloudflare",endpoint="down"')"
srv_stop

# --- a protocol switched off, the caps ---
srv_conf "$T_TMP/o.conf" 'files = ( { path = "/f.dat"; size = "8MiB"; } );' \
  'speedtest = { cloudflare = false; max_bytes = "3MiB"; per_ip = 1; };'
srv_start "$T_TMP/o.conf"
check_eq "cloudflare = false: __down and __up are 404" "404 404" \
  "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/__down?bytes=1") $(curl -s -o /dev/null -w '%{http_code}' -d x "$BASE/__up")"
check_eq "LibreSpeed still served" "200 1048576" "$(fetch o1 "$BASE/garbage.php?ckSize=1")"
check_eq "ckSize=100 clamped to speedtest.max_bytes (3 MiB)" "200 3145728" "$(fetch o3 "$BASE/garbage.php?ckSize=100")"
# per_ip = 1: a test whose client does not read (a 4 KiB receive buffer) holds the
# address's only place until that client leaves (bounded: 20 s, or when $T_TMP/leave exists)
python3 - "$PORT" "$T_TMP/leave" <<'PY' &
import os, socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /garbage.php?ckSize=8 HTTP/1.1\r\nHost: x\r\n\r\n")
end = time.time() + 20
while time.time() < end and not os.path.exists(sys.argv[2]):
    time.sleep(0.05)
s.close()
PY
slow=$!
t_track "$slow"
# its request has arrived once a test from here is refused (bounded: 5 s)
wait_for 50 sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' '$BASE/garbage.php?ckSize=1') = 429 ]"
check_eq "speedtest.per_ip = 1: a second test while one runs: 429" "429" \
  "$(fetch busy "$BASE/garbage.php?ckSize=1&cors" | cut -d' ' -f1)"
check_eq "... with Retry-After and CORS" "1 *" "$(hdr "$T_TMP/busy.h" Retry-After) $(hdr "$T_TMP/busy.h" Access-Control-Allow-Origin)"
check_match "... saying why" 'speedtest.per_ip' "$(cat "$T_TMP/busy.body")"
check_eq "a ping is not a test: still 200" "200" "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/empty.php")"
check_eq "an upload is a test: 429" "429" "$(curl -s -o /dev/null -w '%{http_code}' -d x "$BASE/empty.php")"
touch "$T_TMP/leave"; wait "$slow"
sleep 0.3
check_eq "once it ended, the address is served again" "200 1048576" "$(fetch after "$BASE/garbage.php?ckSize=1")"
check_cmp "/metrics counts the refusals" "$(metric debitd_speedtest_refused_total 'protocol="librespeed",endpoint="garbage"')" ">=" 1
# a reload (SIGHUP) switches the protocols and the caps
sed -i 's/speedtest = .*/speedtest = { librespeed = false; cloudflare = true; per_ip = 0; colo = "FRA"; };/' "$T_TMP/o.conf"
kill -HUP "$DEBITD_PID"
wait_for 100 grep -q "reload: generation 2 " "$T_TMP/debitd.log"
check_eq "after a reload: LibreSpeed 404, Cloudflare 200 (max_bytes back to 1GiB: 5 MiB served)" "404 200 5242880" \
  "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/garbage.php") $(fetch r1 "$BASE/__down?bytes=5242880")"
check_eq "... and speedtest.colo = \"FRA\": cf-meta-colo FRA" "FRA" "$(hdr "$T_TMP/r1.h" cf-meta-colo)"
sed -i 's/colo = "FRA"/colo = ""/' "$T_TMP/o.conf"
kill -HUP "$DEBITD_PID"
wait_for 100 grep -q "reload: generation 3 " "$T_TMP/debitd.log"
fetch r2 "$BASE/__down?bytes=1" >/dev/null
check_eq "colo = \"\": no cf-meta-colo; cf-meta-ip still sent" "0 127.0.0.1" \
  "$(grep -ci '^cf-meta-colo' "$T_TMP/r2.h") $(hdr "$T_TMP/r2.h" cf-meta-ip)"
srv_stop

# --- limits.per_ip_bytes: a test is charged as a file download is ---
srv_conf "$T_TMP/q.conf" 'files = ( { path = "/f.dat"; size = "8MiB"; } );' \
  'limits = { per_ip_bytes = "3MiB"; per_ip_window = "1min"; };'
srv_start "$T_TMP/q.conf"
check_eq "quota 3 MiB: garbage 2 MiB, then 1 MiB: 200 200" "200 200" \
  "$(fetch q1 "$BASE/garbage.php?ckSize=2" | cut -d' ' -f1) $(fetch q2 "$BASE/__down?bytes=1048576" | cut -d' ' -f1)"
check_eq "quota used: the next test is 429 with Retry-After" "429 yes" \
  "$(fetch q3 "$BASE/__down?bytes=1" | cut -d' ' -f1) $([ -n "$(hdr "$T_TMP/q3.h" Retry-After)" ] && echo yes)"
check_eq "... and an upload too, before its body" "429" \
  "$(fetch q4 "$BASE/empty.php" --data-binary @"$T_TMP/up25.bin" --max-time 5 | cut -d' ' -f1)"
srv_stop

# --- speedtest.isp_map: getIP's isp=true and cf-meta-* from the operator's map, no third party ---
cat >"$T_TMP/isp.csv" <<'CSV'
# prefix,isp name,asn,country[,city]
127.0.0.0/24,Loopback Net,AS64500,FR,Paris
127.0.0.2,"Host Two, Inc.",64501,DE
127.0.0.3/32,Ünïcode/ISP,,
CSV
srv_conf "$T_TMP/m.conf" 'files = ( { path = "/f.dat"; size = "1MiB"; } );' \
  "speedtest = { isp_map = \"$T_TMP/isp.csv\"; };"
srv_start "$T_TMP/m.conf"
# ipf SRC [QUERY]: getIP.php's body for a client at SRC (curl binds its source address)
ipf() { curl -s --interface "$1" "$BASE/getIP.php${2-?isp=true}"; }
check_eq "isp map: 127.0.0.5 in 127.0.0.0/24: ISP, country and the entry" \
  '{"processedString":"127.0.0.5 - Loopback Net, FR","rawIspInfo":{"asn":"AS64500","as_name":"Loopback Net","country":"FR","city":"Paris"}}' \
  "$(ipf 127.0.0.5)"
check_eq "isp map: 127.0.0.2: the longest prefix (a quoted name with a comma)" \
  '{"processedString":"127.0.0.2 - Host Two, Inc., DE","rawIspInfo":{"asn":"AS64501","as_name":"Host Two, Inc.","country":"DE"}}' \
  "$(ipf 127.0.0.2)"
check_eq "isp map: no country, no AS; '/' and non-ASCII escaped as PHP's json_encode does" \
  '{"processedString":"127.0.0.3 - \u00dcn\u00efcode\/ISP","rawIspInfo":{"as_name":"\u00dcn\u00efcode\/ISP"}}' \
  "$(ipf 127.0.0.3)"
check_eq "isp map: an address it does not hold: LibreSpeed's note" \
  '{"processedString":"127.0.1.1 - localhost IPv4 access","rawIspInfo":""}' "$(ipf 127.0.1.1)"
check_eq "isp map: without isp the bare address" '{"processedString":"127.0.0.5","rawIspInfo":""}' "$(ipf 127.0.0.5 '')"
curl -s -o /dev/null -D "$T_TMP/cfm.h" --interface 127.0.0.5 "$BASE/__down?bytes=0"
check_eq "isp map: __down from 127.0.0.5: cf-meta-ip, -country, -city, -asn" "127.0.0.5 FR Paris 64500" \
  "$(hdr "$T_TMP/cfm.h" cf-meta-ip) $(hdr "$T_TMP/cfm.h" cf-meta-country) $(hdr "$T_TMP/cfm.h" cf-meta-city) $(hdr "$T_TMP/cfm.h" cf-meta-asn)"
curl -s -o /dev/null -D "$T_TMP/cfn.h" --interface 127.0.1.1 "$BASE/__down?bytes=0"
check_eq "isp map: from an address it does not hold: cf-meta-ip only" "127.0.1.1 0" \
  "$(hdr "$T_TMP/cfn.h" cf-meta-ip) $(grep -ciE '^cf-meta-(country|city|asn)' "$T_TMP/cfn.h")"
# a reload reads the map again; a bad line refuses the reload and keeps the old map
sed -i 's/Loopback Net,AS64500,FR,Paris/Loopback Two,AS64510,BE/' "$T_TMP/isp.csv"
kill -HUP "$DEBITD_PID"
wait_for 100 grep -q "reload: generation 2 " "$T_TMP/debitd.log"
check_eq "isp map: read again at a reload" \
  '{"processedString":"127.0.0.5 - Loopback Two, BE","rawIspInfo":{"asn":"AS64510","as_name":"Loopback Two","country":"BE"}}' \
  "$(ipf 127.0.0.5)"
printf '127.0.9.0/24,Bad,AS1,FR\n127.0.8.1/8,Bad,AS1,FR\n' >>"$T_TMP/isp.csv"
kill -HUP "$DEBITD_PID"
wait_for 100 grep -q "isp.csv:6: \"127.0.8.1/8\": bits set after the first 8" "$T_TMP/debitd.log"
check_match "isp map: a bad line refuses the reload, naming the map's FILE:LINE" \
  "m\.conf:[0-9]+: speedtest\.isp_map: .*isp\.csv:6: \"127\.0\.8\.1/8\": bits set after the first 8 \(the network is 127\.0\.0\.0\)" \
  "$(cat "$T_TMP/debitd.log")"
check_match "... and the map read before still answers" '127.0.0.5 - Loopback Two, BE' "$(ipf 127.0.0.5)"
srv_stop
out=$("$DEBITD" -t -c "$T_TMP/m.conf" 2>&1); rc=$?
check_eq "debitd -t with that map: exit 2" 2 "$rc"
check_match "... naming the map's FILE:LINE" 'isp\.csv:6: "127\.0\.8\.1/8"' "$out"
printf 'speedtest = { isp_map = "isp.csv"; };\n' >"$T_TMP/rel.conf"
check_match "a relative isp_map is refused" 'rel\.conf:1: speedtest\.isp_map: must be an absolute path' \
  "$("$DEBITD" -t -c "$T_TMP/rel.conf" 2>&1)"

# --- configuration errors name FILE:LINE and the setting ---
printf 'speedtest = {\n  per_ip = -1;\n};\n' >"$T_TMP/bad.conf"
out=$("$DEBITD" -t -c "$T_TMP/bad.conf" 2>&1); rc=$?
check_eq "speedtest.per_ip = -1: exit 2" 2 "$rc"
check_match "... FILE:LINE: setting" 'bad\.conf:2: speedtest\.per_ip' "$out"
printf 'speedtest = { librespeed = "yes"; };\n' >"$T_TMP/bad2.conf"
out=$("$DEBITD" -t -c "$T_TMP/bad2.conf" 2>&1)
check_match "speedtest.librespeed not a boolean: named" 'bad2\.conf:1: speedtest\.librespeed' "$out"
printf 'speedtest = {\n  colo = "FRA, AMS";\n};\n' >"$T_TMP/bad3.conf"
out=$("$DEBITD" -t -c "$T_TMP/bad3.conf" 2>&1); rc=$?
check_eq "speedtest.colo with a comma: exit 2" 2 "$rc"
check_match "... FILE:LINE: speedtest.colo and why" 'bad3\.conf:2: speedtest\.colo: .*without' "$out"
check_match "-t prints the group" 'speedtest = \{ librespeed = true; cloudflare = true; max_bytes = "1GiB"; per_ip = 16; colo = "debitd"; telemetry = "off"; telemetry_keep = 1000; \};' \
  "$(: >"$T_TMP/empty.conf"; "$DEBITD" -t -c "$T_TMP/empty.conf" 2>/dev/null)"
t_done
