#!/usr/bin/env bash
# debit beyond one download (issue 12): --parallel N (whole file per stream, or --split by
# Range) against debitd and nginx; --upload to debitd's sink (bytes checked against its
# own count) and to a plain PUT server; --duration and --interval; a wrong URL is a failed
# run ("not a test file") unless --min-bytes 0; default names; figures that cannot mean
# much are null/"n/a", not numbers; a scenario file mixing directions.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/client_lib.bash"
need_cmd nginx python3
[ -x "$DEBITD" ] || skip_all "build/debitd not built"
www_new
head -c 2097152 /dev/urandom | base64 -w 76 | sed 's/^/<p>/' >"$WWW/files/page.html"   # 2.8 MB of text/html
nginx_up
debitd_conf "$T_TMP/debitd.conf" 'files = ( { path = "/files/10Mio.dat"; size = "10Mio"; } );' \
  'upload = { path = "/upload"; max_size = "1GiB"; };' || { t_fail "debitd configuration"; t_done; }
debitd_up "$T_TMP/debitd.conf" || { t_fail "debitd up" "$(tail -5 "$T_TMP/debitd.log" 2>/dev/null)"; t_done; }
D=$DEBITD_BASE/files/10Mio.dat
N=$NGINX/files/10Mio.dat
SIZE=10485760
# The series' bytes are the body's whatever the basis: sum(rate x dt), the last interval
# lasting body_s - (n - 1) x interval, within 0.5 % of bytes (jq, of one run).
SERIES_SUM='.series_interval_s as $iv | ([.series[:-1][] * $iv] | add // 0) as $full | (.bytes * 8 / 1e6) as $mb | ($full + .series[-1] * (.body_s - $iv * ((.series | length) - 1))) as $sum | (($sum - $mb) / $mb | fabs) < 0.005'

# --- --parallel 4: each stream the whole file ----------------------------------------------
for srv in debitd nginx; do
  u=$D; [ $srv = nginx ] && u=$N
  f=$T_TMP/p-$srv.json
  "$DEBIT" -q -n 2 -P 4 --format json -o "$f" "$u"
  check_eq "$srv -P 4: exit 0, runs ok" "0 true" "$? $(jqr '[.runs[].ok] | all' "$f")"
  check_eq "$srv -P 4: the series counts each stream's kernel bytes, sum(rate x dt) == bytes (0.5 %)" "tcp_bytes_received true" \
    "$(jq -r "\"\\([.runs[].series_basis] | unique | join(\",\")) \\([.runs[] | $SERIES_SUM] | all)\"" "$f")"
  check_eq "$srv -P 4: bytes = 4 x size, parallel 4, four stream records of size each" \
    "$((4 * SIZE)) 4 4 $SIZE" \
    "$(jqr '.runs[0] | "\(.bytes) \(.parallel) \(.streams | length) \([.streams[].bytes] | unique | map(tostring) | join(","))"' "$f")"
  check_eq "$srv -P 4: bytes = sum of the streams; avg = bytes*8/body_s; window covers every stream's" true \
    "$(jqr '[.runs[] | .bytes == ([.streams[].bytes] | add)
        and ((.bytes * 8 / .body_s / 1e6) - .avg_mbps | fabs) < 1e-6 * .avg_mbps
        and ([.streams[].body_s] | max) <= .body_s + 1e-9 and .body_s <= .total_s] | all' "$f")"
  check_eq "$srv -P 4: each stream has its average and receiver TCP_INFO" true \
    "$(jqr '[.runs[].streams[] | .avg_mbps > 0 and .tcp.rcv_mss > 0 and .ok] | all' "$f")"
done
check_eq "debitd -P 4: four server records, four connections, each of the whole file" "4 4 true" \
  "$(jqr '.runs[0].streams | "\([.[].server_record.id] | unique | length) \([.[].server_record.remote] | unique | length) \([.[].server_record.bytes == 10485760] | all)"' "$T_TMP/p-debitd.json")"
check_eq "nginx -P 4: no server record" false "$(jqr '[.runs[0].streams[] | has("server_record")] | any' "$T_TMP/p-nginx.json")"

# --- --parallel 4 --split: 1/4 each by Range ------------------------------------------------
for srv in debitd nginx; do
  u=$D; [ $srv = nginx ] && u=$N
  f=$T_TMP/s-$srv.json
  "$DEBIT" -q -n 1 -P 4 --split --format json -o "$f" "$u"
  check_eq "$srv --split: exit 0, bytes = size, content_length = size, ranged" "0 $SIZE $SIZE true" \
    "$? $(jqr '.runs[0] | "\(.bytes) \(.content_length) \(.ranged)"' "$f")"
  check_eq "$srv --split: four 206 parts, contiguous, covering the file" "4 206 true" \
    "$(jqr --argjson n $SIZE '.runs[0].streams | "\(length) \([.[].http_status] | unique | map(tostring) | join(","))
        \(.[0].range[0] == 0 and .[-1].range[1] == $n - 1 and ([range(1; length) as $i | .[$i].range[0] == .[$i - 1].range[1] + 1] | all)
          and ([.[] | .bytes == .range[1] - .range[0] + 1] | all))"' "$f" | tr -s ' \n' ' ' | sed 's/ $//')"
done
check_eq "debitd --split: each server record has the stream's bytes" true \
  "$(jqr '[.runs[0].streams[] | .server_record.bytes == .bytes] | all' "$T_TMP/s-debitd.json")"

# --- --upload ----------------------------------------------------------------------------
UP=$DEBITD_BASE/upload
f=$T_TMP/u.json
"$DEBIT" -q -n 2 --upload 32MiB --format json -o "$f" "$UP"
check_eq "upload POST to debitd: exit 0, direction upload, 32 MiB, HTTP 200" "0 upload 33554432 200" \
  "$? $(jqr '[.runs[] | "\(.direction) \(.bytes) \(.http_status)"] | unique | join(",")' "$f")"
check_eq "upload to debitd: its own count kept and equal to ours; its duration and Mb/s kept" true \
  "$(jqr '[.runs[] | .server_upload.bytes == .bytes and .server_upload.bytes_match and .server_upload.seconds > 0 and .server_upload.mbps > 0 and .avg_mbps > 0] | all' "$f")"
# debitd records each upload (X-Debit-Transfer) with its verdict as the receiver: debit
# fetches that record and reports debitd's verdict, said to be the server's side
check_eq "upload to debitd: its record fetched (direction upload), its verdict debit's, side server" true \
  "$(jqr '[.runs[] | .server_record.direction == "upload" and (.server_record.limited_by | type) == "string"
      and .limited_by == .server_record.limited_by and .limited_by_side == "server"
      and (.limited_by_evidence | startswith("debitd'"'"'s verdict, as the upload'"'"'s receiver"))] | all' "$f")"
before=$(curl -s "$DEBITD_BASE/status" | jq '.counters.upload_bytes')
"$DEBIT" -q -n 1 --upload 8MiB --upload-method PUT -P 2 --format json -o "$T_TMP/u2.json" "$UP"
after=$(curl -s "$DEBITD_BASE/status" | jq '.counters.upload_bytes')
check_eq "upload PUT -P 2 to debitd: 16 MiB in two streams, each counted by debitd" "0 16777216 2 true" \
  "$? $(jqr '.runs[0] | "\(.bytes) \(.streams | length) \([.streams[].server_upload.bytes == 8388608] | all)"' "$T_TMP/u2.json")"
check_eq "debitd's /status upload_bytes grew by the 16 MiB" 16777216 "$((after - before))"
# An upload's series follows what the server acknowledged (client/measure/sock_bytes.c),
# rescaled to the bytes sent, one stream or two.
check_eq "upload series: basis tcp_bytes_acked, sum(rate x dt) == bytes (0.5 %)" "tcp_bytes_acked true" \
  "$(jq -rs "[.[].runs[]] | \"\\([.[].series_basis] | unique | join(\",\")) \\([.[] | $SERIES_SUM] | all)\"" "$f" "$T_TMP/u2.json")"
"$DEBIT" -q -n 1 --upload 8MiB -P 2 --split --format json -o "$T_TMP/u4.json" "$UP"
check_match "an upload's method line says how an upload is timed, not wget's download rule" \
  "^upload avg = body bytes / \\(the server's response - the first body byte sent\\); median" "$(jqr .method "$T_TMP/u4.json")"
check_eq "upload -P 2 --split to debitd: exit 0, ok, 8 MiB in all, 4 MiB per stream, each counted by debitd" "0 true 8388608 4194304,4194304 true" \
  "$? $(jqr '.runs[0] | "\(.ok) \(.bytes) \([.streams[].bytes] | map(tostring) | join(",")) \([.streams[].server_upload.bytes_match] | all)"' "$T_TMP/u4.json")"

_put_spawn() { t_bg "putsrv-$1" python3 "$DEBIT_TOP/tests/e2e/client_putsrv.py" "$1"; }
if up_on_free_port _put_spawn "" 50; then
  PUT=http://127.0.0.1:$UP_PORT
  "$DEBIT" -q -n 1 --upload 4MiB --upload-method PUT --format json -o "$T_TMP/u3.json" "$PUT/x.bin"
  check_eq "upload PUT to a plain server: exit 0, ok, 201, 4 MiB, no server_upload" "0 true 201 4194304 false" \
    "$? $(jqr '.runs[0] | "\(.ok) \(.http_status) \(.bytes) \(has("server_upload"))"' "$T_TMP/u3.json")"
  sleep 0.2
  check_eq "the plain server read the 4 MiB" "PUT /x.bin 4194304" "$(grep '^PUT' "$T_TMP/putsrv-$UP_PORT.log")"
else
  t_fail "PUT test server started" "$(cat "$T_TMP"/putsrv-*.log 2>/dev/null)"
fi

# --- --duration and --interval: a paced 10 s file, stopped after 1 s ------------------------
fake_up
"$DEBIT" -q -n 1 -P 2 --split --max-bytes 4MiB --format json "$FAKE/norange/4194304" >"$T_TMP/nr.json" 2>/dev/null
check_eq "--split against a server that ignores Range: a failed run that says so" \
  "1 false --split: the server ignores Range (HTTP 200, not 206)" "$? $(jqr '.runs[0] | "\(.ok) \(.error)"' "$T_TMP/nr.json")"
"$DEBIT" -q -n 1 -P 2 --split --format json "$FAKE/norange/4194304" >"$T_TMP/nh.json" 2>/dev/null
check_eq "--split without --max-bytes on a server without HEAD: failed, the HEAD named" \
  "1 false --split: HEAD $FAKE/norange/4194304: HTTP 501" "$? $(jqr '.runs[0] | "\(.ok) \(.error)"' "$T_TMP/nh.json")"
t0=$(date +%s%N)
"$DEBIT" -n 1 --no-progress --duration 1s --interval 250ms --format json -o "$T_TMP/d.json" "$FAKE/slow/50000000?rate=5000000" 2>"$T_TMP/d.err"
rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "# --duration 1s on a 10 s file: debit took $ms ms"
check_eq "--duration 1s: exit 0, ok, duration_reached" "0 true true" "$rc $(jqr '.runs[0] | "\(.ok) \(.duration_reached)"' "$T_TMP/d.json")"
check_cmp "--duration 1s: the run ended within 3 s (took $ms ms)" "$ms" '<' 3000
check_eq "--duration: a valid figure over what arrived (bytes < file, avg = bytes*8/body_s)" true \
  "$(jqr '.runs[0] | .bytes > 0 and .bytes < 50000000 and ((.bytes * 8 / .body_s / 1e6) - .avg_mbps | fabs) < 1e-6 * .avg_mbps' "$T_TMP/d.json")"
check_eq "--interval 250ms: the JSON series at that resolution" 0.25 "$(jqr '.runs[0].series_interval_s' "$T_TMP/d.json")"
check_cmp "--interval 250ms: at least 3 lines on stderr" "$(grep -c '^debit: .* run 1: .* s .* Mb/s$' "$T_TMP/d.err")" '>=' 3
check_match "--interval lines: from-to seconds and Mb/s" '^debit: 127\.0\.0\.1 run 1: +0\.00-0\.25 s [0-9.]+ Mb/s$' "$(cat "$T_TMP/d.err")"
# An error page is no measurement for being cut short: the status is checked before --duration's stop
"$DEBIT" -q -n 1 --duration 1s --format json -o "$T_TMP/d5.json" "$FAKE/slowcode/50000000?code=500&rate=5000000" 2>/dev/null
check_eq "--duration 1s on a paced HTTP 500 body: exit 1, failed, http, not duration_reached" "1 false http false HTTP 500 Internal Server Error" \
  "$? $(jqr '.runs[0] | "\(.ok) \(.error_kind) \(.duration_reached) \(.error)"' "$T_TMP/d5.json")"
"$DEBIT" -q -n 1 -P 2 --duration 1s --format json -o "$T_TMP/d6.json" "$FAKE/slowcode/50000000?code=404&rate=5000000" 2>/dev/null
check_eq "--duration 1s -P 2 on a paced HTTP 404 body: exit 1, failed, http, both streams failed" "1 false http 2 0" \
  "$? $(jqr '.runs[0] | "\(.ok) \(.error_kind) \(.streams | length) \([.streams[] | select(.ok)] | length)"' "$T_TMP/d6.json")"

# --- a wrong URL is not a result --------------------------------------------------------------
"$DEBIT" -q -n 1 --format json -o "$T_TMP/w.json" "$DEBITD_BASE/files" 2>"$T_TMP/w.err"
check_eq "debitd /files (redirect to the HTML index): exit 1, not_test_file" "1 false not_test_file" \
  "$? $(jqr '.runs[0] | "\(.ok) \(.error_kind)"' "$T_TMP/w.json")"
check_match "... says \"not a test file\" and text/html" '^not a test file: a text/html body' "$(jqr '.runs[0].error' "$T_TMP/w.json")"
check_match "-q still prints why the run failed" 'run 1: FAILED: not a test file' "$(cat "$T_TMP/w.err")"
"$DEBIT" -q -n 1 --format json "$NGINX/files/page.html" >"$T_TMP/w2.json"
check_eq "a 2.8 MB text/html page from nginx: not a test file" "1 not_test_file" "$? $(jqr '.runs[0].error_kind' "$T_TMP/w2.json")"
"$DEBIT" -q -n 1 --format json "$NGINX/files/1Mio.dat" >"$T_TMP/w3.json"
check_eq "1 MiB file: accepted by the default --min-bytes 1MiB" "0 true" "$? $(jqr '.runs[0].ok' "$T_TMP/w3.json")"
"$DEBIT" -q -n 1 --min-bytes 2MiB --format json "$NGINX/files/1Mio.dat" >"$T_TMP/w4.json"
check_eq "1 MiB file under --min-bytes 2MiB: not a test file, size said" "1 not_test_file" "$? $(jqr '.runs[0].error_kind' "$T_TMP/w4.json")"
check_match "... the size in the reason" '1048576 bytes, under --min-bytes 2097152' "$(jqr '.runs[0].error' "$T_TMP/w4.json")"
"$DEBIT" -q -n 1 -P 4 --min-bytes 2MiB --format json "$NGINX/files/1Mio.dat" >"$T_TMP/w6.json"
check_eq "-P 4 of a 1 MiB file (4 MiB in all) under --min-bytes 2MiB: still not a test file" "1 not_test_file" \
  "$? $(jqr '.runs[0].error_kind' "$T_TMP/w6.json")"
"$DEBIT" -q -n 1 --min-bytes 0 --format json "$DEBITD_BASE/files" >"$T_TMP/w5.json"
check_eq "--min-bytes 0 accepts the HTML index" "0 true text/html" "$? $(jqr '.runs[0] | "\(.ok) \(.content_type | split(";")[0])"' "$T_TMP/w5.json")"

# --- names, and figures that cannot mean much -------------------------------------------------
check_eq "default names: two ports of one host are host:port, both" \
  "server 127.0.0.1:$DEBITD_PORT: $D|server 127.0.0.1:$NGINX_PORT: $N" \
  "$("$DEBIT" -t "$D" "$N" | grep '^server ' | tr '\n' '|' | sed 's/|$//')"
"$DEBIT" -q -n 1 --format json -o "$T_TMP/n1.json" A="$D" B="$N"
check_eq "n = 1: ratio kept, CI null with the reason" "null n/a" \
  "$(jqr '.summary[1] | "\(.ratio_ci95) \(.ratio_ci95_note | split(":")[0])"' "$T_TMP/n1.json")"
check_eq "a 10 MiB run has under 10 intervals: peak and slow start null, with a note" true \
  "$(jqr '[.runs[] | (.series | length) < 10 and .peak_mbps == null and .slow_start_s == null and (.figures_note | length) > 0] | all' "$T_TMP/n1.json")"
"$DEBIT" -q -n 1 A="$D" B="$N" >"$T_TMP/n1.txt"
check_match "table: the CI is n/a, not a number" '^B .* [0-9.]+ \[n/a\]' "$(cat "$T_TMP/n1.txt")"
check_match "table: the footnote says why" '^n/a: no confidence interval from a single run' "$(cat "$T_TMP/n1.txt")"
check_match "table: the slow start '-' is explained" "^slow start -: no successful run had 10 series intervals" "$(cat "$T_TMP/n1.txt")"

# --- a scenario file mixing directions (per-server upload) ------------------------------------
cat >"$T_TMP/mix.conf" <<CONF
servers = ( { name = "down"; url = "$D"; },
            { name = "up"; url = "$UP"; upload = "8MiB"; } );
runs = 1;
CONF
"$DEBIT" -q --scenario "$T_TMP/mix.conf" --format json -o "$T_TMP/mix.json"
check_eq "scenario: one server downloads, the other uploads" "0 down:download:10485760 up:upload:8388608" \
  "$? $(jqr '[.runs[] | "\(.server):\(.direction):\(.bytes)"] | join(" ")' "$T_TMP/mix.json")"
check_eq "scenario -t: the upload server says so" "server up: $UP (upload 8388608 bytes)" \
  "$("$DEBIT" -t --scenario "$T_TMP/mix.conf" | grep '^server up:')"
printf '%s\n' "servers = ( { url = \"$UP\"; upload = \"8 parsecs\"; } );" >"$T_TMP/bad.conf"
"$DEBIT" -t --scenario "$T_TMP/bad.conf" >/dev/null 2>"$T_TMP/bad.err"
check_eq "scenario: a bad per-server upload size: exit 2, FILE:LINE: setting" "2" "$?"
check_match "... the message" "bad.conf:1: servers\[0\]\.upload: '8 parsecs'" "$(cat "$T_TMP/bad.err")"

# --- the new keys are in docs/schema (streams, server_upload, n/a CI, not_test_file) ----------
if python3 -c 'import jsonschema' 2>/dev/null; then
  for j in p-debitd s-nginx u u2 u3 d w n1 mix; do
    if python3 "$DEBIT_TOP/tests/e2e/schema_check.py" "$DEBIT_TOP/docs/schema" json "$T_TMP/$j.json" >"$T_TMP/v.out" 2>&1; then
      t_ok "$j.json is valid against debit.schema.json"
    else
      t_fail "$j.json is valid against debit.schema.json" "$(head -5 "$T_TMP/v.out")"
    fi
  done
else
  t_skip "schema of the new keys" "needs python3-jsonschema (run tools/deps as root)"
fi

# --- usage errors -----------------------------------------------------------------------------
"$DEBIT" --split "$D" >/dev/null 2>"$T_TMP/e1"
check_eq "--split without --parallel: exit 2" "2 debit: --split: needs --parallel N with N >= 2" "$? $(cat "$T_TMP/e1")"
"$DEBIT" -P 0 "$D" >/dev/null 2>"$T_TMP/e2"
check_eq "-P 0: exit 2" "2" "$?"
check_match "-P 0: the range" "^debit: -P: '0': expected an integer from 1 to 128" "$(cat "$T_TMP/e2")"
"$DEBIT" --upload 1MiB --upload-method GET "$UP" >/dev/null 2>"$T_TMP/e3"
check_match "--upload-method GET: exit 2, POST or PUT" "^2 debit: --upload-method: 'GET': expected POST or PUT" "$? $(cat "$T_TMP/e3")"
t_done
