#!/usr/bin/env bash
# The access log (issue 11, docs/server.md "Access log"): one line per request, every status,
# in both log.access_format values. Each request below (a 200, a HEAD, a 404, a 413 upload,
# a Range 206, a strict 400) gives exactly one line with the right method, path, status,
# bytes, client address and port, User-Agent, and for downloads the transfer ID and the TCP
# summary; "combined" lines are parsed with the nginx/Apache combined-format regex. Then
# SIGUSR1 still reopens the file in either format.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"

LOG=$T_TMP/access.log
FILES='files = ( { path = "/f.dat"; size = "1MiB"; } );'
UP='upload = { path = "/upload"; max_size = "1kB"; };'
NF_LEN=$(printf '404 Not Found\n' | wc -c)

lines() { grep -c '' "$LOG" 2>/dev/null || echo 0; }
# after a request: its line is written when libmicrohttpd completes it (bounded wait)
await() { wait_for 50 eval "[ \$(lines) -ge $1 ]"; }
# a curl request; prints "HTTP_CODE LOCAL_PORT"
req() { curl -s -o /dev/null -w '%{http_code} %{local_port}' "$@"; }

# the six requests; sets P_GET P_HEAD P_404 P_413 P_206 (client ports) and checks the codes
run_requests() {
  local fmt=$1 out
  # srv_start's readiness probe (GET /status) has its line too: start from an empty file
  await 1; : >"$LOG"
  out=$(req -A "ua-get/$fmt" "$BASE/f.dat"); check_eq "$fmt: GET 200" 200 "${out% *}"; P_GET=${out#* }; await 1
  out=$(req -I -A "ua-head/$fmt" "$BASE/f.dat"); check_eq "$fmt: HEAD 200" 200 "${out% *}"; P_HEAD=${out#* }; await 2
  out=$(req -A "ua-404/$fmt" "$BASE/nope?q=1"); check_eq "$fmt: GET 404" 404 "${out% *}"; P_404=${out#* }; await 3
  head -c 2000 /dev/zero >"$T_TMP/body"
  out=$(req -A "ua-413/$fmt" -H 'Expect:' --data-binary @"$T_TMP/body" "$BASE/upload")
  check_eq "$fmt: upload over max_size 413" 413 "${out% *}"; P_413=${out#* }; await 4
  out=$(req -r 100-199 -A "ua-206/$fmt" "$BASE/f.dat"); check_eq "$fmt: Range 206" 206 "${out% *}"; P_206=${out#* }; await 5
  # a strict-HTTP refusal (Content-Length repeated), sent raw
  exec 3<>"/dev/tcp/127.0.0.1/$PORT"
  printf 'GET /f.dat HTTP/1.1\r\nHost: t\r\nUser-Agent: ua-400/%s\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx' "$fmt" >&3
  local ans; ans=$(timeout 5 cat <&3 | head -1 | tr -d '\r'); exec 3<&-
  check_eq "$fmt: strict refusal" "HTTP/1.1 400 Bad Request" "$ans"
  await 6
  sleep 0.3 # nothing else may follow: a second line for any of them would show here
  check_eq "$fmt: exactly one line per request" 6 "$(lines)"
}

# --- json (the default) ---
srv_conf "$T_TMP/json.conf" "$FILES" "$UP"
check_match "-t prints the default format" '^log = \{ .*access_format = "json"; \};$' \
  "$("$DEBITD" -t -c "$T_TMP/json.conf" 2>&1 | grep '^log')"
srv_start "$T_TMP/json.conf"
run_requests json
j() { sed -n "$1p" "$LOG" | jq -r "$2"; }
row() { j "$1" '[.method, .path, .target, (.status|tostring), (.bytes|tostring), .addr, (.port|tostring), .user_agent] | join(" ")'; }
check_eq "json: the 200" "GET /f.dat /f.dat 200 1048576 127.0.0.1 $P_GET ua-get/json" "$(row 1)"
check_eq "json: the HEAD (no body bytes)" "HEAD /f.dat /f.dat 200 0 127.0.0.1 $P_HEAD ua-head/json" "$(row 2)"
check_eq "json: the 404 (path routed, target as sent)" "GET /nope /nope?q=1 404 $NF_LEN 127.0.0.1 $P_404 ua-404/json" "$(row 3)"
check_eq "json: the 413" "POST /upload /upload 413 $(printf '413 Payload Too Large\n' | wc -c) 127.0.0.1 $P_413 ua-413/json" "$(row 4)"
check_eq "json: the 206" "GET /f.dat /f.dat 206 100 127.0.0.1 $P_206 ua-206/json" "$(row 5)"
check_match "json: the strict 400" "^GET /f\\.dat /f\\.dat 400 [0-9]+ 127\\.0\\.0\\.1 [0-9]+ ua-400/json\$" "$(row 6)"
check_eq "json: downloads keep the transfer keys (id, state, first, length, remote, tcp)" \
  "true true" "$(j 1 '[has("id","state","first","length","started","remote","listener","tcp")] | all') $(j 5 '.state == "done" and .first == 100 and .length == 100')"
check_eq "json: the transfer ID is /transfers/ID's" "$(j 5 .id)" "$(curl -s "$BASE/transfers/$(j 5 .id)" | jq -r .id)"
check_match "json: a download's TCP summary (rtt, cwnd, retrans, delivery rate)" '^[0-9.]+ [0-9]+ [0-9]+ [0-9]+$' \
  "$(j 1 '[.tcp.rtt_ms, .tcp.max_snd_cwnd, .tcp.total_retrans, .tcp.delivery_rate_bps] | map(tostring) | join(" ")')"
check_eq "json: no transfer ID and no TCP summary without a download" "false false false false" \
  "$(for n in 2 3 4 6; do j $n 'has("id") or has("tcp")'; done | tr '\n' ' ' | sed 's/ $//')"
check_eq "json: every line has time, duration_s, version, listener, remote" "6" \
  "$(jq -s '[.[] | select((.time|test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z$")) and (.duration_s|type)=="number" and .version=="HTTP/1.1" and .listener=="127.0.0.1:'"$PORT"'" and (.remote|startswith("127.0.0.1:")))] | length' < <(head -6 "$LOG"))"
check_eq "json: the upload's received bytes" "null" "$(j 4 .received)" # refused on Content-Length: none read
srv_stop
mv "$LOG" "$T_TMP/json.log"

# --- combined ---
srv_conf "$T_TMP/comb.conf" "$FILES" "$UP"
sed -i 's|access = "\([^"]*\)"; };|access = "\1"; access_format = "combined"; };|' "$T_TMP/comb.conf"
check_match "-t prints the combined format" '^log = \{ .*access_format = "combined"; \};$' \
  "$("$DEBITD" -t -c "$T_TMP/comb.conf" 2>&1 | grep '^log')"
srv_start "$T_TMP/comb.conf"
run_requests combined
RE='^([0-9a-fA-F.:]+) - - \[([0-9]{2}/[A-Z][a-z]{2}/[0-9]{4}:[0-9]{2}:[0-9]{2}:[0-9]{2} \+0000)\] "([^"]*)" ([0-9]{3}) ([0-9]+) "([^"]*)" "([^"]*)"$'
parsed() { # line N as "ADDR|REQUEST|STATUS|BYTES|REFERER|UA", or "unparsed: LINE"
  local l; l=$(sed -n "$1p" "$LOG")
  if [[ $l =~ $RE ]]; then echo "${BASH_REMATCH[1]}|${BASH_REMATCH[3]}|${BASH_REMATCH[4]}|${BASH_REMATCH[5]}|${BASH_REMATCH[6]}|${BASH_REMATCH[7]}"
  else echo "unparsed: $l"; fi
}
check_eq "combined: the 200" "127.0.0.1|GET /f.dat HTTP/1.1|200|1048576|-|ua-get/combined" "$(parsed 1)"
check_eq "combined: the HEAD" "127.0.0.1|HEAD /f.dat HTTP/1.1|200|0|-|ua-head/combined" "$(parsed 2)"
check_eq "combined: the 404" "127.0.0.1|GET /nope?q=1 HTTP/1.1|404|$NF_LEN|-|ua-404/combined" "$(parsed 3)"
check_match "combined: the 413" '^127\.0\.0\.1\|POST /upload HTTP/1\.1\|413\|[0-9]+\|-\|ua-413/combined$' "$(parsed 4)"
check_eq "combined: the 206" "127.0.0.1|GET /f.dat HTTP/1.1|206|100|-|ua-206/combined" "$(parsed 5)"
check_match "combined: the strict 400" '^127\.0\.0\.1\|GET /f\.dat HTTP/1\.1\|400\|[0-9]+\|-\|ua-400/combined$' "$(parsed 6)"
check_match "combined: the time is now, in UTC" "\\[$(date -u +%d/%b/%Y):" "$(sed -n 1p "$LOG")"
# a quote, a backslash and UTF-8 from a client never break the line (control characters in
# a header are refused by http.strict; the unit test covers their escaping)
curl -s -o /dev/null -A $'evil"\\ua\xc3\xa9' -e 'http://ref/' "$BASE/f.dat?a=%22" ; await 7
check_eq "combined: quotes, backslashes and non-ASCII escaped" \
  '127.0.0.1|GET /f.dat?a=%22 HTTP/1.1|200|1048576|http://ref/|evil\x22\x5Cua\xC3\xA9' "$(parsed 7)"

# --- SIGUSR1 reopens the log in this format too ---
mv "$LOG" "$T_TMP/access.log.1"
kill -USR1 "$DEBITD_PID"
wait_for 50 grep -q 'SIGUSR1: log files reopened' "$T_TMP/debitd.log"
check_eq "after SIGUSR1: 404" 404 "$(req -A ua-after "$BASE/gone" | cut -d' ' -f1)"
await 1
check_match "after SIGUSR1: the line goes to the new file" '^127\.0\.0\.1\|GET /gone HTTP/1\.1\|404\|[0-9]+\|-\|ua-after$' "$(parsed 1)"
check_eq "... and the old file has the 7 lines before" 7 "$(grep -c '' "$T_TMP/access.log.1")"
srv_stop
check_eq "debitd exits 0" 0 "$SRV_RC"

# --- a bad value: FILE:LINE: setting: reason, exit 2 ---
printf 'log = {\n  access_format = "clf";\n};\n' >"$T_TMP/bad.conf"
out=$("$DEBITD" -t -c "$T_TMP/bad.conf" 2>&1); rc=$?
check_eq "access_format = \"clf\": exit 2" 2 "$rc"
check_match "access_format = \"clf\": FILE:LINE: setting: reason" \
  'bad\.conf:2: log\.access_format: unknown format "clf" \(expected json or combined\)' "$out"
t_done
