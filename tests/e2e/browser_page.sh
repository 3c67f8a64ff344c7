#!/usr/bin/env bash
# debitd's front page in a real browser (issue 33): Debian's headless Chromium, driven by
# playwright-core (tests/browser/run.mjs; npm ci of tests/browser/package-lock.json into a
# cache dir, no browser download), loads / from a local debitd with privacy.details = false,
# runs the page's speed test and the figures it shows are checked against debitd's own
# records: each download's /transfers/ID (fetched here with curl) and each upload's line in
# the access log. Then the real third-party clients against the same debitd:
# @cloudflare/speedtest on /__down and /__up, @m-lab/ndt7 (ndt7-js) on /ndt/v7/*, each
# checked when this debitd has the endpoint (skipped, with the reason, when it has not).
# Nothing leaves loopback: every host name resolves to nothing in the browser, and any
# request to another address fails the test.
#   DEBIT_NPM_CACHE    where node_modules is kept between runs (default ~/.cache/debit/browser-tests)
#   DEBIT_CHROMIUM     the browser (default /usr/bin/chromium)
#   DEBIT_SCREENSHOTS  a folder to keep the page's screenshot in (page.png)
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
need_cmd node npm flock
CHROMIUM=${DEBIT_CHROMIUM:-/usr/bin/chromium}
[ -x "$CHROMIUM" ] || skip_all "no browser at $CHROMIUM (Debian's package chromium: run tools/deps as root)"
"$CHROMIUM" --headless --no-sandbox --disable-gpu --version >/dev/null 2>&1 || skip_all "$CHROMIUM does not run here"
export DEBIT_CHROMIUM=$CHROMIUM
H_TRANSFER=$(wire_get WIRE_HDR_TRANSFER) TRANSFERS=$(wire_get WIRE_TRANSFERS_PATH)
SECONDS_PER_PHASE=4

# --- node_modules: npm ci once per package-lock.json, kept in a cache dir ---------------------
src=$DEBIT_TOP/tests/browser
key=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -c1-16)
cache=${DEBIT_NPM_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/debit/browser-tests}/$key
mkdir -p "$cache"
(
  flock -w 300 9 || exit 1
  [ -f "$cache/.done" ] && exit 0
  cp "$src/package.json" "$src/package-lock.json" "$cache/"
  # --ignore-scripts: none of these packages needs an install script (playwright-core's
  # browser download is not one either: it is a separate command, never run)
  (cd "$cache" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error) >"$T_TMP/npm.log" 2>&1 || exit 1
  touch "$cache/.done"
) 9>"$cache.lock" || skip_all "npm ci of tests/browser failed (no npm registry?): $(tail -3 "$T_TMP/npm.log" 2>/dev/null | tr '\n' ' ')"
mkdir -p "$T_TMP/browser"
cp "$src/run.mjs" "$T_TMP/browser/"
ln -s "$cache/node_modules" "$T_TMP/browser/node_modules"
t_diag "node_modules: $cache (playwright-core $(jq -r .version "$cache/node_modules/playwright-core/package.json"))"
# browse MODE: run.mjs's JSON for MODE on stdout
browse() { timeout -k 5 240 node "$T_TMP/browser/run.mjs" "$1" "$BASE" "$T_TMP" "$SECONDS_PER_PHASE" 2>"$T_TMP/$1.err"; }

# rel A B: |A - B| / B (1 when B is not positive)
rel() { awk -v a="$1" -v b="$2" 'BEGIN{if (b <= 0) {print 1; exit} d=(a-b)/b; print d<0?-d:d}'; }

# record ID: debitd's /transfers/ID as one JSON line, once the acknowledgement of its last
# byte is no longer awaited (acked_note "watching"; bounded, 2 s)
record() {
  local i j
  for ((i = 0; i < 20; i++)); do
    j=$(curl -s "$BASE$TRANSFERS$1" | jq -c .)
    [ "$(jq -r .acked_note <<<"$j")" != watching ] && break
    sleep 0.1
  done
  printf '%s\n' "$j"
}

# span_mbps FILE START BYTES: Mbit/s of the JSON lines of FILE: the sum of their BYTES key
# over the span from the earliest START (a UTC time with milliseconds) to the latest
# START + acked_s (the client's acknowledgement of the last byte) where a line has it, else
# START + duration_s (as the page counts, speed.js recSeconds)
span_mbps() {
  python3 - "$@" <<'PY'
import json, sys, datetime
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
start, size = sys.argv[2], sys.argv[3]
t = lambda s: datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()
secs = lambda r: r["acked_s"] if r.get("acked_s") is not None else r["duration_s"]
t0 = min(t(r[start]) for r in rows); t1 = max(t(r[start]) + secs(r) for r in rows)
print(sum(r[size] for r in rows) * 8 / (t1 - t0) / 1e6)
PY
}

# --- debitd as a public host would run it ---------------------------------------------------
srv_conf "$T_TMP/d.conf" 'ram = "128MiB";' \
  'files = ( { path = "/ram/4KiB.dat"; size = "4KiB"; }, { path = "/ram/128MiB.dat"; size = "128MiB"; } );' \
  'upload = { path = "/upload"; max_size = "1GiB"; };' \
  'privacy = { details = false; };'
srv_start "$T_TMP/d.conf"

# --- the page and its files, as served --------------------------------------------------------
code=$(curl -s -D "$T_TMP/h" -o "$T_TMP/front.html" -w '%{http_code} %{content_type}' "$BASE/")
check_eq "/ is the front page: 200 text/html" "200 text/html; charset=utf-8" "$code"
check_match "... with a Content-Security-Policy of this origin only" "^default-src 'self'" \
  "$(hdr "$T_TMP/h" Content-Security-Policy)"
front=$(cat "$T_TMP/front.html")
check_match "... the speed test's button and script" '<button id="start".*' "$front"
check_match "... its script from this server" '<script src="/speedtest/speed.js"></script>' "$front"
check_match "... and the root's listing" '<a href="ram/">ram/</a>' "$front"
sed -n 's#.*<script type="application/json" id="debit-config">\(.*\)</script>.*#\1#p' "$T_TMP/front.html" >"$T_TMP/cfg.json"
check_eq "... its settings: the upload sink, the two files" "/upload /ram/4KiB.dat,/ram/128MiB.dat" \
  "$(jq -r '"\(.upload) \(.files | map(.path) | join(","))"' "$T_TMP/cfg.json" 2>&1)"
check_nomatch "... no address of another origin in the page or its files" 'https?://|//[a-z]' \
  "$(cat "$T_TMP/front.html"; curl -s "$BASE/speedtest/speed.js" "$BASE/speedtest/speed.css")"
check_eq "/speedtest/speed.js: 200 text/javascript, the file in the source tree" \
  "200 text/javascript; charset=utf-8 $(sha256sum <"$DEBIT_TOP/server/http/www/speed.js")" \
  "$(curl -s -o "$T_TMP/js" -w '%{http_code} %{content_type}' "$BASE/speedtest/speed.js") $(sha256sum <"$T_TMP/js")"
check_eq "/speedtest/speed.css: text/css" "200 text/css; charset=utf-8" \
  "$(curl -s -o /dev/null -w '%{http_code} %{content_type}' "$BASE/speedtest/speed.css")"
check_eq "/speedtest/nope and the unfilled template: 404" "404 404" \
  "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/speedtest/nope") $(curl -s -o /dev/null -w '%{http_code}' "$BASE/speedtest/index.html")"

# --- the page's test in Chromium ---------------------------------------------------------------
up0=$(curl -s "$BASE/status" | jq '.counters.upload_bytes')
browse page >"$T_TMP/page.json"
[ -n "${DEBIT_SCREENSHOTS:-}" ] && mkdir -p "$DEBIT_SCREENSHOTS" && cp "$T_TMP/page.png" "$DEBIT_SCREENSHOTS/" 2>/dev/null
P=$T_TMP/page.json
check_eq "the browser ran the page's test to its end" "null true Done." \
  "$(jq -r '"\(.harness_error) \(.result.done) \(.shown.state)"' "$P" 2>&1 | head -c 2000)"
check_eq "no request left 127.0.0.1" "[]" "$(jq -c '.wire.outside' "$P")"
check_eq "no script error, no answer >= 400" "[] []" \
  "$(jq -c '[.wire.failed[] | select(test("console:|pageerror:"))]' "$P") $(jq -c .wire.http_errors "$P")"
check_cmp "a screenshot of the page" "$(stat -c %s "$T_TMP/page.png" 2>/dev/null || echo 0)" ">" 20000
t_diag "shown: $(jq -c '.shown | del(.rows)' "$P")"

# the downloads: every GET of the page's download path in the access log (/__down where
# debitd has it, else the largest file) is one of the page's transfers; a latency probe is
# a HEAD (no record), or a GET of /__down?bytes=0 (0 bytes)
down_path=$(jq -r .result.download.path "$P")
up_path=$(jq -r .result.upload.path "$P")
t_diag "the page downloaded from $down_path, uploaded to $up_path"
jq -r --arg p "$down_path" 'select(.method == "GET" and .path == $p and .bytes > 0) | .id' "$T_TMP/access.log" \
  | sort >"$T_TMP/log_ids"
jq -r '.result.download.ids[]' "$P" | sort >"$T_TMP/page_ids"
check_eq "the page kept the X-Debit-Transfer of each of its downloads (the access log's)" \
  "$(wc -l <"$T_TMP/log_ids") $(md5sum <"$T_TMP/log_ids")" "$(wc -l <"$T_TMP/page_ids") $(md5sum <"$T_TMP/page_ids")"
check_cmp "... at least 4 (one a stream)" "$(wc -l <"$T_TMP/page_ids")" ">=" 4
: >"$T_TMP/records"
while read -r id; do record "$id" >>"$T_TMP/records"; done <"$T_TMP/log_ids"
R=$T_TMP/records
check_eq "debitd's records of them: all done" "$(wc -l <"$T_TMP/log_ids") done" \
  "$(jq -s 'length' "$R") $(jq -rs 'map(.state) | unique | join(",")' "$R")"
check_eq "... privacy.details = false: no cgroup path in them" "null" "$(jq -rs 'map(.cgroup.path) | unique | join(",") | if . == "" then "null" else . end' "$R")"
# debitd's rate: every byte over the span from the first start to the last end
srv_mbps=$(span_mbps "$R" started bytes)
shown_down=$(jq -r '.shown.down' "$P")
t_diag "download: page $shown_down Mbit/s, debitd's records $srv_mbps Mbit/s"
check_cmp "the page's download figure is within 10 % of debitd's records" \
  "$(rel "$shown_down" "$srv_mbps")" "<=" 0.10
check_eq "... and its bytes are the records' bytes" "$(jq -s 'map(.bytes) | add' "$R")" "$(jq '.result.download.bytes' "$P")"
# the table: one row a record, its RTT and retransmissions as recorded
jq -c '{id, rtt: "\(.tcp.rtt_ms) ms", retrans: "\(.tcp.total_retrans)",
  limit: (if .limited_by == null then "not judged" else "judged" end)}' "$R" | sort >"$T_TMP/want_rows"
jq -c '.shown.rows[] | {id, rtt, retrans, limit: (if .limit == "not judged" then "not judged" else "judged" end)}' "$P" \
  | sort >"$T_TMP/got_rows"
check_file_eq "the page's table: each transfer's RTT, retransmissions, and whether debitd judged its limit" \
  "$T_TMP/want_rows" "$T_TMP/got_rows"
if jq -se 'map(select(.limited_by != null)) | length > 0' "$R" >/dev/null; then
  check_nomatch "debitd judged its transfers: the summary says what limited them" "not judged" "$(jq -r .shown.limit_summary "$P")"
else
  check_match "debitd does not judge its transfers (no limited_by): the summary says \"not judged\"" \
    "not judged" "$(jq -r .shown.limit_summary "$P")"
fi
check_match "the summary names the median RTT of the records" \
  "the round trip to you took $(jq -s '[.[].tcp.rtt_ms] | sort | if length % 2 == 1 then .[length/2|floor] else (.[length/2-1] + .[length/2]) / 2 end' "$R" \
    | awk '{v=$1; if (v >= 100) printf "%.0f", v; else if (v >= 10) printf "%.1f", v; else printf "%.2f", v}') ms" \
  "$(jq -r .shown.server_summary "$P")"

# the uploads: debitd counts every byte and logs each with its own time
jq -c --arg p "$up_path" 'select(.method == "POST" and .path == $p)' "$T_TMP/access.log" >"$T_TMP/uploads"
if [ "$up_path" = /upload ]; then
  up1=$(curl -s "$BASE/status" | jq '.counters.upload_bytes')
  check_eq "debitd received every byte the page uploaded (/status upload_bytes)" "$(jq '.result.upload.bytes' "$P")" "$((up1 - up0))"
else
  : >"$T_TMP/up_records"
  for id in $(jq -r '.result.upload.ids[]' "$P"); do record "$id" >>"$T_TMP/up_records"; done
  check_eq "debitd recorded every byte the page uploaded ($up_path: a record each)" \
    "$(jq '.result.upload.bytes' "$P") $(wc -l <"$T_TMP/uploads")" \
    "$(jq -s 'map(.bytes) | add' "$T_TMP/up_records") $(jq -s length "$T_TMP/up_records")"
  check_cmp "the page's summary of the uploads is debitd's records' rate" \
    "$(rel "$(jq -r '.result.server_upload.mbps' "$P")" "$(span_mbps "$T_TMP/up_records" started bytes)")" "<=" 0.001
fi
# debitd's rate, as for the downloads: every byte over the span from the first request's
# headers to the last answer (the access log's time and duration_s)
srv_up=$(span_mbps "$T_TMP/uploads" time received)
shown_up=$(jq -r '.shown.up' "$P")
t_diag "upload: page $shown_up Mbit/s, debitd's access log $srv_up Mbit/s"
check_cmp "the page's upload figure is within 10 % of debitd's access log" \
  "$(rel "$shown_up" "$srv_up")" "<=" 0.10
check_eq "latency figures shown: idle, downloading, uploading" "3" \
  "$(jq '[.shown.lat_idle, .shown.lat_down, .shown.lat_up] | map(select(test("^[0-9.]+$") and tonumber > 0)) | length' "$P")"

# --- @cloudflare/speedtest -------------------------------------------------------------------
if [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/__down?bytes=0")" != 200 ]; then
  t_skip "@cloudflare/speedtest against debitd" "this debitd has no /__down (the Cloudflare-style endpoints are not in it)"
else
  browse cloudflare >"$T_TMP/cf.json"
  C=$T_TMP/cf.json
  check_eq "@cloudflare/speedtest completes against /__down and /__up" "null null" \
    "$(jq -r '"\(.harness_error) \(.error)"' "$C" | head -c 2000)"
  check_eq "... no request left 127.0.0.1" "[]" "$(jq -c '.wire.outside' "$C")"
  # Its figure is the 90th percentile (interpolated) of its per-request rates. debitd's
  # record of a body has two ends: duration_s when the last byte was handed to the kernel,
  # while the send and receive buffers and the browser's own (some MB) still hold the end of
  # the body (0.1-0.25 s at this client's few hundred Mbit/s: 5-14 % faster than the client),
  # and acked_s when the browser's kernel acknowledged the last byte (issue 33). Both sides
  # over its largest bodies (250 MB, 3 of them): the client's points, debitd's acknowledged
  # figures of the same requests (the X-Debit-Transfer of each /__down response), the same
  # percentile; the handed-over figure is printed beside them.
  : >"$T_TMP/cf_records"
  for id in $(jq -r '.downs[] | select(.id != null) | .id' "$C"); do
    record "$id" >>"$T_TMP/cf_records"
  done
  big=$(jq '[.result.down_points[].bytes] | max // 0' "$C")
  p90='sort | if length == 0 then null else ((length - 1) * 0.9) as $i | .[$i | floor] as $a | .[$i | ceil] as $b
    | $a + ($b - $a) * ($i - ($i | floor)) end'
  cf_down=$(jq --argjson s "$big" "[.result.down_points[] | select(.bytes == \$s and .duration >= 10) | .bps / 1e6] | $p90" "$C")
  cf_srv=$(jq -s --argjson s "$big" "map(select(.bytes == \$s and .acked_mbps != null) | .acked_mbps) | $p90" \
    "$T_TMP/cf_records")
  cf_handed=$(jq -s --argjson s "$big" "map(select(.bytes == \$s and .duration_s > 0) | .bytes * 8 / .duration_s / 1e6) | $p90" \
    "$T_TMP/cf_records")
  t_diag "cloudflare: its download figure $(jq '.result.down_bps / 1e6' "$C") Mbit/s; over its bodies of $big B: $cf_down Mbit/s, debitd's acknowledged $cf_srv Mbit/s (handed over: $cf_handed; acked_note $(jq -sc --argjson s "$big" 'map(select(.bytes == $s) | .acked_note)' "$T_TMP/cf_records"))"
  if [ "$cf_srv" = null ] || [ "$cf_down" = null ]; then
    t_fail "@cloudflare/speedtest: debitd's records of its downloads" "no acknowledged X-Debit-Transfer record of its largest bodies ($big B)"
  else
    check_cmp "@cloudflare/speedtest's download figure is within 10 % of debitd's acknowledged figure (acked_mbps)" \
      "$(rel "$cf_down" "$cf_srv")" "<=" 0.10
  fi
fi

# --- @m-lab/ndt7 (ndt7-js) ---------------------------------------------------------------------
if [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/ndt/v7/download")" = 404 ]; then
  t_skip "@m-lab/ndt7 against debitd" "this debitd has no /ndt/v7/download (the ndt7 endpoints are not in it)"
else
  browse ndt7 >"$T_TMP/ndt7.json"
  N=$T_TMP/ndt7.json
  check_eq "ndt7-js completes a download and an upload against /ndt/v7/*" "null null 0 true true" \
    "$(jq -r '"\(.harness_error) \(.error) \(.code) \(.download != null) \(.upload != null)"' "$N" | head -c 2000)"
  check_eq "... no request left 127.0.0.1" "[]" "$(jq -c '.wire.outside' "$N")"
  # debitd's record of the test: the transfer whose ID is the measurements' UUID (bytes over
  # the test's time, to the close handshake, as the client counts its own). Its last TCPInfo
  # message (BytesAcked over ElapsedTime) comes at 9.75 s, before the client's end: shown only.
  ndt_id=$(jq -r '.download.LastServerMeasurement.ConnectionInfo.UUID' "$N")
  curl -s "$BASE$TRANSFERS$ndt_id" | jq -c . >"$T_TMP/ndt_record"
  ndt_client=$(jq '.download.LastClientMeasurement.MeanClientMbps' "$N")
  ndt_srv=$(jq 'if .duration_s > 0 then .bytes * 8 / .duration_s / 1e6 else 0 end' "$T_TMP/ndt_record")
  t_diag "ndt7: download $ndt_client Mbit/s, debitd's record $ndt_srv Mbit/s ($(jq -c '{state, bytes, duration_s}' "$T_TMP/ndt_record")), its last TCPInfo $(jq '.download.LastServerMeasurement.TCPInfo | .BytesAcked * 8 / .ElapsedTime' "$N") Mbit/s"
  check_cmp "ndt7-js's download figure is within 10 % of debitd's record of the test (/transfers/UUID)" \
    "$(rel "$ndt_client" "$ndt_srv")" "<=" 0.10
fi

srv_stop
check_eq "debitd stops cleanly" 0 "$SRV_RC"

# --- without the Cloudflare-style endpoints: the largest file (Range) and the upload sink ---
srv_conf "$T_TMP/d2.conf" 'ram = "128MiB";' \
  'files = ( { path = "/ram/4KiB.dat"; size = "4KiB"; }, { path = "/ram/128MiB.dat"; size = "128MiB"; } );' \
  'upload = { path = "/upload"; max_size = "1GiB"; };' \
  'privacy = { details = false; };' 'speedtest = { cloudflare = false; };'
: >"$T_TMP/access.log"
srv_start "$T_TMP/d2.conf"
up0=$(curl -s "$BASE/status" | jq '.counters.upload_bytes')
browse page >"$T_TMP/page2.json"
P=$T_TMP/page2.json
check_eq "speedtest.cloudflare = false: the page ran on the largest file and the upload sink" \
  "null true /ram/128MiB.dat /upload [] []" \
  "$(jq -r '"\(.harness_error) \(.result.done) \(.result.download.path) \(.result.upload.path) \(.wire.outside) \(.wire.http_errors)"' "$P" | head -c 2000)"
jq -c 'select(.method == "GET" and .path == "/ram/128MiB.dat")' "$T_TMP/access.log" | jq -r .id | sort >"$T_TMP/log_ids"
check_eq "... its IDs, those of the access log's GETs" "$(md5sum <"$T_TMP/log_ids")" "$(jq -r '.result.download.ids[]' "$P" | sort | md5sum)"
: >"$T_TMP/records"
while read -r id; do record "$id" >>"$T_TMP/records"; done <"$T_TMP/log_ids"
srv_mbps=$(span_mbps "$T_TMP/records" started bytes)
t_diag "file and sink: page $(jq -r .shown.down "$P") Mbit/s down, debitd's records $srv_mbps"
check_cmp "... its download figure within 10 % of debitd's records (Range requests)" \
  "$(rel "$(jq -r .shown.down "$P")" "$srv_mbps")" "<=" 0.10
check_eq "... every uploaded byte counted by /status" "$(jq '.result.upload.bytes' "$P")" \
  "$(( $(curl -s "$BASE/status" | jq '.counters.upload_bytes') - up0 ))"
jq -c 'select(.method == "POST" and .path == "/upload")' "$T_TMP/access.log" >"$T_TMP/uploads"
srv_up=$(span_mbps "$T_TMP/uploads" time received)
check_cmp "... its upload figure within 10 % of debitd's access log" \
  "$(rel "$(jq -r .shown.up "$P")" "$srv_up")" "<=" 0.10
# the upload sink's answers carry X-Debit-Transfer (each upload is a transfer, with its
# verdict): the page summarises debitd's records of them, one per upload
check_match "... the uploads' summary from debitd's records of the sink's uploads" \
  "in $(jq '.result.upload.ids | length' "$P") uploads at [0-9.]+ Mbit/s by its own clock" "$(jq -r .shown.upload_summary "$P")"
srv_stop
t_done
