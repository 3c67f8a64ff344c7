#!/usr/bin/env bash
# Conditional requests for files (server/content/conditional.c, docs/server.md "Conditional
# requests"), on the protocol bytes: If-None-Match (the tag, W/, "*", a list) and
# If-Modified-Since (the three HTTP-date formats) get 304 with the validators, Cache-Control
# and the X-Debit-* headers but no body, no Content-Type and no transfer ID, and the next
# request on the same connection is answered (raw socket, and curl with two URLs); a
# failed If-Match or If-Unmodified-Since gets 412 with a short text body; HEAD alike; a
# Range with a matching If-None-Match gets 304; the precedence of the headers; a cached
# small response is never sent for a conditional request nor a 304 kept; /status and
# /metrics counters, the access log, and the per-address quota untouched by 304/412.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
need_cmd curl jq python3
export LC_ALL=C

srv_conf "$T_TMP/d.conf" 'files = ( { path = "/f.dat"; size = "1MiB"; }, { path = "/s.dat"; size = "4KiB"; } );' \
  'limits = { per_ip_bytes = "2MiB"; per_ip_window = "1h"; };'
srv_start "$T_TMP/d.conf"
H_TRANSFER=$(wire_get WIRE_HDR_TRANSFER) H_TCP=$(wire_get WIRE_HDR_TCP) H_CPU=$(wire_get WIRE_HDR_CPU)
H_TLS=$(wire_get WIRE_HDR_TLS) METRICS=$(wire_get WIRE_METRICS_PATH)
F=$BASE/f.dat S=$BASE/s.dat
curl -s -I -o /dev/null -D "$T_TMP/h200" "$F"
etag=$(hdr "$T_TMP/h200" ETag) lm=$(hdr "$T_TMP/h200" Last-Modified)
check_eq "the file's ETag (the reference)" '"1-0-100000"' "$etag"
s_etag='"1-0-1000"'  # /s.dat's: seed 1, within the region, 4096 bytes
lm_s=$(date -u -d "$lm" +%s)
lm_850=$(date -u -d "@$lm_s" '+%A, %d-%b-%y %H:%M:%S GMT')
lm_asc=$(date -u -d "@$lm_s" '+%a %b %e %H:%M:%S %Y')
earlier=$(date -u -d "@$((lm_s - 1))" '+%a, %d %b %Y %H:%M:%S GMT')
earlier_asc=$(date -u -d "@$((lm_s - 1))" '+%a %b %e %H:%M:%S %Y')
later=$(date -u -d "@$((lm_s + 86400))" '+%a, %d %b %Y %H:%M:%S GMT')

# code [CURL ARGS...]: the status (headers in $T_TMP/hh, body in $T_TMP/body)
code() { curl -s -o "$T_TMP/body" -D "$T_TMP/hh" -w '%{http_code}' "$@"; }

# --- 304: the bytes of one, by curl -si
curl -si -H "If-None-Match: $etag" "$F" >"$T_TMP/r304"
check_eq "If-None-Match with the ETag: status line" "HTTP/1.1 304 Not Modified" "$(head -1 "$T_TMP/r304" | tr -d '\r')"
check_eq "304: nothing after the blank line (no body byte)" 0 \
  "$(python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); print(len(d.split(b"\r\n\r\n",1)[1]))' "$T_TMP/r304")"
tr -d '\r' <"$T_TMP/r304" >"$T_TMP/h304"
check_eq "304: ETag, Last-Modified and Cache-Control as the 200's" "$etag|$lm|no-store, no-transform" \
  "$(hdr "$T_TMP/h304" ETag)|$(hdr "$T_TMP/h304" Last-Modified)|$(hdr "$T_TMP/h304" Cache-Control)"
check_eq "304: $H_TCP, $H_CPU, $H_TLS as the 200's" \
  "$(hdr "$T_TMP/h200" "$H_TCP")|$(hdr "$T_TMP/h200" "$H_CPU")|$(hdr "$T_TMP/h200" "$H_TLS")" \
  "$(hdr "$T_TMP/h304" "$H_TCP")|$(hdr "$T_TMP/h304" "$H_CPU")|$(hdr "$T_TMP/h304" "$H_TLS")"
check_eq "304: no $H_TRANSFER, Content-Type, Accept-Ranges" "" \
  "$(grep -iE "^($H_TRANSFER|Content-Type|Accept-Ranges):" "$T_TMP/h304")"
# libmicrohttpd 0.9.75 always writes one; RFC 9110 8.6 allows only the 200's value
check_eq "304: Content-Length, if any, is the 200's (never 0)" 1048576 "$(hdr "$T_TMP/h304" Content-Length)"

# --- keep-alive after a 304: curl, two URLs, one connection
out=$(curl -s -v -H "If-None-Match: $etag" -o /dev/null -o /dev/null -w '%{http_code} ' "$F" "$F" 2>"$T_TMP/v")
check_eq "curl, two URLs with If-None-Match: 304 304" "304 304 " "$out"
check_eq "... the second on the same connection" 1 "$(grep -c 'Re-using existing connection' "$T_TMP/v")"
out=$(curl -s -v -H "If-None-Match: $etag" -o /dev/null -o "$T_TMP/s2" -w '%{http_code} %{size_download} ' "$F" "$S" 2>"$T_TMP/v")
check_eq "304 then a 200 on the same connection (the 4 KiB body whole)" "304 0 200 4096 " "$out"
check_eq "... the same connection" 1 "$(grep -c 'Re-using existing connection' "$T_TMP/v")"

# --- one raw connection: each response's status, its header names, its body length. A
# byte sent after a 304 or a HEAD would be read as the next status line and fail here.
raw() {
  python3 - "$PORT" "$@" <<'PY'
import json, socket, sys
port, reqs = int(sys.argv[1]), sys.argv[2:]
s = socket.create_connection(("127.0.0.1", port), timeout=5)
f = s.makefile("rb")
for i, r in enumerate(reqs):
    method, path, *hdrs = r.split("|")
    last = i == len(reqs) - 1
    head = "%s %s HTTP/1.1\r\nHost: t\r\n%s%s\r\n" % (method, path, "".join(h + "\r\n" for h in hdrs),
                                                     "Connection: close\r\n" if last else "")
    s.sendall(head.encode())
    status = f.readline().decode("latin1").rstrip("\r\n")
    h = {}
    while True:
        line = f.readline().decode("latin1").rstrip("\r\n")
        if not line:
            break
        k, v = line.split(":", 1)
        h[k.strip().lower()] = v.strip()
    code = int(status.split()[1])
    n = 0 if method == "HEAD" or code == 304 else int(h.get("content-length", 0))
    body = f.read(n)
    print(json.dumps({"req": r, "status": status, "h": h, "body": body.decode("latin1")}))
print(json.dumps({"rest": len(f.read())}))  # after the last response, the server closes
PY
}
raw "GET|/s.dat" "GET|/s.dat|If-None-Match: $s_etag" "GET|/s.dat" "HEAD|/s.dat|If-None-Match: W/$s_etag" \
  "GET|/s.dat|If-Match: \"nope\"" "HEAD|/f.dat|If-Match: \"nope\"" "GET|/s.dat|Range: bytes=0-9|If-None-Match: $s_etag" \
  "GET|/s.dat|If-Modified-Since: $lm" "GET|/f.dat|If-Unmodified-Since: $earlier" "GET|/s.dat|Range: bytes=0-9" \
  >"$T_TMP/raw.json"
codes=$(jq -r 'select(.status) | .status | split(" ")[1]' "$T_TMP/raw.json" | tr '\n' ' ')
check_eq "one connection: 200, 304 (the kept 200 is not sent), 200 (nor was the 304 kept), HEAD 304, 412, HEAD 412, Range+If-None-Match 304, If-Modified-Since 304, If-Unmodified-Since 412, 206" \
  "200 304 200 304 412 412 304 304 412 206 " "$codes"
check_eq "one connection: nothing after the last response" 0 "$(jq -r 'select(.rest != null) | .rest' "$T_TMP/raw.json")"
check_eq "one connection: body lengths (200s whole, 304s and HEADs none, 412s their text)" "4096 0 4096 0 24 0 0 0 24 10" \
  "$(jq -r 'select(.status) | .body | length' "$T_TMP/raw.json" | paste -sd' ')"
check_eq "one connection: the 200 after the 304 has the first 200's bytes" true \
  "$(jq -s '.[0].body == .[2].body' "$T_TMP/raw.json")"
check_eq "412: a short text body, not cached" "412 Precondition Failed|text/plain; charset=utf-8|no-store" \
  "$(jq -r 'select(.req == "GET|/s.dat|If-Match: \"nope\"") | "\(.body | rtrimstr("\n"))|\(.h["content-type"])|\(.h["cache-control"])"' "$T_TMP/raw.json")"
check_eq "no $H_TRANSFER on any 304 or 412, one on each 200/206 GET" "200 true|304 false|200 true|304 false|412 false|412 false|304 false|304 false|412 false|206 true" \
  "$(jq -r --arg t "$(tr '[:upper:]' '[:lower:]' <<<"$H_TRANSFER")" 'select(.status) | "\(.status | split(" ")[1]) \(.h | has($t))"' "$T_TMP/raw.json" | paste -sd'|')"
check_eq "a 304 for a Range: no Content-Range" "false" \
  "$(jq -r 'select(.req | startswith("GET|/s.dat|Range: bytes=0-9|If")) | .h | has("content-range")' "$T_TMP/raw.json")"

# --- the evaluation, header by header (curl)
check_eq "If-None-Match W/ (weak comparison): 304" 304 "$(code -H "If-None-Match: W/$etag" "$F")"
check_eq "If-None-Match *: 304" 304 "$(code -H 'If-None-Match: *' "$F")"
check_eq "If-None-Match, a list with the tag: 304" 304 "$(code -H "If-None-Match: \"a\", $etag, \"b\"" "$F")"
check_eq "If-None-Match, another tag: 200, the whole file" "200 1048576" "$(code -H 'If-None-Match: "a"' "$F") $(stat -c %s "$T_TMP/body")"
check_eq "If-Match with the ETag: 200" 200 "$(code -H "If-Match: $s_etag" "$S")"
check_eq "If-Match *: 200" 200 "$(code -H 'If-Match: *' "$S")"
check_eq "If-Match W/ (strong comparison): 412" 412 "$(code -H "If-Match: W/$etag" "$F")"
check_eq "If-Match, a list with the tag: 200" 200 "$(code -H "If-Match: \"a\", $s_etag" "$S")"
check_eq "If-Modified-Since = Last-Modified, IMF-fixdate: 304" 304 "$(code -H "If-Modified-Since: $lm" "$F")"
check_eq "... RFC 850 ($lm_850): 304" 304 "$(code -H "If-Modified-Since: $lm_850" "$F")"
check_eq "... asctime ($lm_asc): 304" 304 "$(code -H "If-Modified-Since: $lm_asc" "$F")"
check_eq "If-Modified-Since later: 304" 304 "$(code -H "If-Modified-Since: $later" "$F")"
check_eq "If-Modified-Since a second earlier: 200" 200 "$(code -H "If-Modified-Since: $earlier" "$S")"
check_eq "If-Modified-Since not a date: ignored, 200" 200 "$(code -H 'If-Modified-Since: yesterday' "$S")"
check_eq "If-Unmodified-Since = Last-Modified: 200" 200 "$(code -H "If-Unmodified-Since: $lm" "$S")"
check_eq "If-Unmodified-Since earlier, asctime: 412" 412 \
  "$(code -H "If-Unmodified-Since: $earlier_asc" "$F")"
check_eq "If-Unmodified-Since not a date: ignored, 200" 200 "$(code -H 'If-Unmodified-Since: 1 Jan' "$S")"
check_eq "If-None-Match (another tag) over If-Modified-Since (= Last-Modified): 200" 200 \
  "$(code -H 'If-None-Match: "a"' -H "If-Modified-Since: $lm" "$S")"
check_eq "If-Match (the tag) over If-Unmodified-Since (earlier): 200" 200 \
  "$(code -H "If-Match: $s_etag" -H "If-Unmodified-Since: $earlier" "$S")"
check_eq "If-Match fails before If-None-Match matches: 412" 412 \
  "$(code -H 'If-Match: "a"' -H "If-None-Match: $etag" "$F")"
check_eq "a 304 beats an unsatisfiable Range (no 416)" 304 "$(code -r 5000000-6000000 -H "If-None-Match: $etag" "$F")"
check_eq "If-Range still decides a Range without preconditions: 206" 206 "$(code -r 0-9 -H "If-Range: $lm_asc" "$S")"

# --- counters: 304 and 412 are no transfers and no bytes; 412 is a 4xx
st0=$(curl -s "$BASE/status"); m0=$(curl -s "$BASE$METRICS")
for _ in 1 2 3; do code -H "If-None-Match: $etag" "$F" >/dev/null; done
code -I -H "If-Modified-Since: $lm" "$F" >/dev/null
code -H 'If-Match: "a"' "$F" >/dev/null; code -H "If-Unmodified-Since: $earlier" "$F" >/dev/null
st1=$(curl -s "$BASE/status"); m1=$(curl -s "$BASE$METRICS")
delta() { echo $(( $(jq "$1" <<<"$st1") - $(jq "$1" <<<"$st0") )); }
check_eq "/status after 4 x 304 and 2 x 412: transfers +0, bytes_sent +0, 4xx +2, 2xx +2 (the first /status and /metrics), requests +8" \
  "0 0 2 2 8" \
  "$(delta .counters.transfers) $(delta .counters.bytes_sent) $(delta .counters.responses_4xx) $(delta .counters.responses_2xx) $(delta .counters.requests)"
check_eq "/status: a 304 builds no kept response" 0 "$(delta .listeners[0].response_reuse.built)"
m3() { awk '$1 == "debitd_responses_total{code=\"3xx\"}" {print $2}' <<<"$1"; }
check_eq "/metrics: 3xx +4" 4 "$(( $(m3 "$m1") - $(m3 "$m0") ))"

# --- the access log: 304 and 412 lines with no body bytes counted and no transfer record
wait_for 20 grep -q '"status":412' "$T_TMP/access.log"
check_eq "access log: every 304 line has bytes 0 and no transfer id" "true" \
  "$(jq -s '[.[] | select(.status == 304)] | length > 0 and all(.bytes == 0 and (has("id") | not))' "$T_TMP/access.log")"
check_eq "access log: no 412 line has a transfer id" "true" \
  "$(jq -s '[.[] | select(.status == 412)] | length > 0 and all(has("id") | not)' "$T_TMP/access.log")"

# --- the per-address quota (2 MiB): five 304/412 answers for the 1 MiB file from one
# address charge nothing, so two whole downloads still fit and only the third is refused
curl -s -o /dev/null --interface 127.0.0.5 --max-time 2 http://127.0.0.1:1/ 2>/dev/null
if [ $? = 45 ]; then
  t_skip "quota untouched by 304/412" "cannot send from 127.0.0.5 (curl --interface)"
else
  q=(--interface 127.0.0.5)
  codes="$(code "${q[@]}" -H "If-None-Match: $etag" "$F") $(code "${q[@]}" -H "If-Modified-Since: $lm" "$F")"
  codes+=" $(code "${q[@]}" -H "If-None-Match: *" "$F") $(code "${q[@]}" -H 'If-Match: "a"' "$F")"
  codes+=" $(code "${q[@]}" -H "If-Unmodified-Since: $earlier" "$F")"
  codes+=" $(code "${q[@]}" "$F") $(code "${q[@]}" "$F") $(code "${q[@]}" "$F")"
  check_eq "quota 2 MiB: 304 304 304 412 412, then 1 MiB 200 200, then 429" "304 304 304 412 412 200 200 429" "$codes"
  check_eq "quota: a 304 over budget is still a 304" 304 "$(code "${q[@]}" -H "If-None-Match: $etag" "$F")"
fi
srv_stop
check_eq "debitd stopped cleanly" 0 "$SRV_RC"
t_done
