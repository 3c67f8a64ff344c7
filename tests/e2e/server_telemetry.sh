#!/usr/bin/env bash
# LibreSpeed's telemetry (issue 33, docs/server.md "LibreSpeed telemetry"): a result POSTed
# to results/telemetry.php (multipart, as the web client's FormData sends it, and
# urlencoded, its fallback) answered "id N", read back from results/json.php?id=N in the
# PHP's exact JSON, by its sender only (privacy.public_transfers: anyone), kept in the
# access log; speedtest.telemetry off (the default: "Telemetry is disabled"), "redacted"
# (LibreSpeed's redact_ip_addresses), the 1 MiB cap (413), not a form (415), the ring's
# bound (speedtest.telemetry_keep), and /metrics.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"

# post NAME URL [CURL ARGS...]: body to $T_TMP/NAME.body, headers to NAME.h; prints the status
post() {
  local n=$1 url=$2; shift 2
  curl -s -o "$T_TMP/$n.body" -D "$T_TMP/$n.h" -w '%{http_code}' "$@" "$url"
}
ISPINFO='{"processedString":"127.0.0.1 - localhost IPv4 access","rawIspInfo":""}'
form() { # the web client's FormData fields (speedtest_worker.js sendTelemetry)
  local a=()
  a+=(-F "ispinfo=$ISPINFO" -F "dl=94.237" -F "ul=8.5" -F "ping=12.345" -F "jitter=0.91")
  a+=(--form-string "log=ping to 127.0.0.1 done; host 10.1.2.3, ::1 and fd00::7." --form-string 'extra={"server":"debitd"}')
  curl -s "${a[@]}" -H 'User-Agent: LibreSpeedTest/1' -H 'Accept-Language: fr-CH' "$@"
}

# --- off by default ---
srv_conf "$T_TMP/off.conf" 'files = ( { path = "/f.dat"; size = "1MiB"; } );'
srv_start "$T_TMP/off.conf"
check_eq "speedtest.telemetry off (default): speedtest-go's answer, nothing kept" "Telemetry is disabled" \
  "$(form "$BASE/results/telemetry.php")"
check_eq "... and json.php has nothing: {}" "{}" "$(curl -s "$BASE/results/json.php?id=1")"
srv_stop

# --- on ---
srv_conf "$T_TMP/on.conf" 'files = ( { path = "/f.dat"; size = "1MiB"; } );' \
  'speedtest = { telemetry = "on"; telemetry_keep = 3; };'
srv_start "$T_TMP/on.conf"
check_eq "multipart POST to results/telemetry.php: id 1" "id 1" "$(form "$BASE/results/telemetry.php?r=0.5")"
check_eq "results/json.php?id=1: the PHP's JSON, figures as its format() writes them" \
  '{"timestamp":"'"$(date -u +%Y-%m-%d)"'","download":"94.2","upload":"8.50","ping":"12.3","jitter":"0.91","ispinfo":"localhost IPv4 access"}' \
  "$(curl -s "$BASE/results/json.php?id=1" | sed 's/"timestamp":"\([0-9-]*\) [0-9:]*"/"timestamp":"\1"/')"
check_match "... its timestamp is UTC 'YYYY-MM-DD HH:MM:SS' (SQLite's CURRENT_TIMESTAMP)" \
  '^\{"timestamp":"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}",' "$(curl -s "$BASE/results/json.php?id=1")"
check_match "... JSON type" '^application/json' "$(curl -s -o /dev/null -D - "$BASE/results/json.php?id=1" | tr -d '\r' | grep -i '^content-type' | cut -d' ' -f2-)"
check_eq "urlencoded POST (the client's fallback) to speedtest-go's results/telemetry: id 2" "id 2" \
  "$(curl -s --data-urlencode "ispinfo=$ISPINFO" -d dl=250 -d ul=0.5 -d ping=1 -d jitter=100.4 -d extra= -d log= \
      "$BASE/results/telemetry")"
check_eq "... read back from /backend/results/json (figures: none above 100, 2 below 10)" \
  '250 0.50 1.00 100' "$(curl -s "$BASE/backend/results/json?id=2" | jq -r '"\(.download) \(.upload) \(.ping) \(.jitter)"')"
check_eq "another address reads nothing: {} (as for an unknown ID)" "{} {}" \
  "$(curl -s --interface 127.0.0.2 "$BASE/results/json.php?id=1") $(curl -s "$BASE/results/json.php?id=99")"
check_eq "id not a number: {}" "{}" "$(curl -s "$BASE/results/json.php?id=1x")"
post t3 "$BASE/results/telemetry.php?cors=true" -F dl=1 >/dev/null
check_eq "with cors (multi-server mode): Access-Control-Allow-Origin *, no-cache" "* no-cache" \
  "$(hdr "$T_TMP/t3.h" Access-Control-Allow-Origin) $(hdr "$T_TMP/t3.h" Pragma)"
check_eq "OPTIONS results/telemetry.php: 204 with LibreSpeed's CORS" "204 * GET, POST" \
  "$(post topt "$BASE/results/telemetry.php" -X OPTIONS) $(hdr "$T_TMP/topt.h" Access-Control-Allow-Origin) $(hdr "$T_TMP/topt.h" Access-Control-Allow-Methods)"
check_eq "GET results/telemetry.php: 405" "405" "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/results/telemetry.php")"
# the access log keeps the whole row (LibreSpeed's speedtest_users): ip, ua, lang, log, extra
line=$(grep '"/results/telemetry.php?r=0.5"' "$T_TMP/access.log")
check_eq "access log: the row as LibreSpeed's database keeps it" \
  '1|127.0.0.1|LibreSpeedTest/1|fr-CH|94.237|8.5|12.345|0.91|{"server":"debitd"}|ping to 127.0.0.1 done; host 10.1.2.3, ::1 and fd00::7.' \
  "$(jq -r '.telemetry | "\(.id)|\(.ip)|\(.ua)|\(.lang)|\(.dl)|\(.ul)|\(.ping)|\(.jitter)|\(.extra)|\(.log)"' <<<"$line")"
check_eq "... and its ispinfo as sent" "$ISPINFO" "$(jq -r '.telemetry.ispinfo' <<<"$line")"
# limits
head -c 1100000 /dev/zero | tr '\0' a >"$T_TMP/big.txt"
check_eq "a report announced above 1 MiB: 413 before its body" "413" \
  "$(post big "$BASE/results/telemetry.php" -F "log=<$T_TMP/big.txt")"
check_eq "not a form: 415" "415" "$(post nf "$BASE/results/telemetry.php" -H 'Content-Type: application/json' -d '{}')"
check_eq "a field that is not UTF-8: 400" "400" "$(post nu "$BASE/results/telemetry.php" --data-binary $'dl=%ff%fe')"
check_eq "the ring keeps speedtest.telemetry_keep = 3: ids 4 and 5 drop 1 and 2" "id 4 id 5 {} {} 1.00" \
  "$(form "$BASE/results/telemetry.php") $(form "$BASE/results/telemetry.php") $(curl -s "$BASE/results/json.php?id=1") $(curl -s "$BASE/results/json.php?id=2") $(curl -s "$BASE/results/json.php?id=3" | jq -r .download)"
metric() { curl -s "$BASE/metrics" | awk -v k="$1{$2}" '$1 == k {print $2; f=1} END {if (!f) print 0}'; }
check_cmp "/metrics: the reports counted (librespeed, telemetry)" \
  "$(metric debitd_speedtest_requests_total 'protocol="librespeed",endpoint="telemetry"')" ">=" 5
# privacy.public_transfers: anyone reads; redacted: addresses and host names out
sed -i 's/telemetry = "on";/telemetry = "redacted";/' "$T_TMP/on.conf"
echo 'privacy = { public_transfers = true; };' >>"$T_TMP/on.conf"
kill -HUP "$DEBITD_PID"
wait_for 100 grep -q "reload: generation 2 " "$T_TMP/debitd.log"
check_eq "public_transfers: another address reads a result" "94.2" \
  "$(curl -s --interface 127.0.0.2 "$BASE/results/json.php?id=5" | jq -r .download)"
check_eq "telemetry = \"redacted\" (after a reload): id 6" "id 6" \
  "$(form "$BASE/results/telemetry.php?r=red" --form-string 'ispinfo={"processedString":"192.0.2.7 - X","rawIspInfo":{"ip":"192.0.2.7","hostname":"h.example \"q\""}}')"
line=$(grep '"/results/telemetry.php?r=red"' "$T_TMP/access.log")
check_eq "... ip 0.0.0.0; the log's IPv4 and IPv6 addresses 0.0.0.0 (telemetry.php's)" \
  '0.0.0.0|ping to 0.0.0.0 done; host 0.0.0.0, 0.0.0.0 and 0.0.0.0.' "$(jq -r '.telemetry | "\(.ip)|\(.log)"' <<<"$line")"
check_eq "... ispinfo's address and hostname redacted" \
  '{"processedString":"0.0.0.0 - X","rawIspInfo":{"ip":"0.0.0.0","hostname":"REDACTED"}}' "$(jq -r '.telemetry.ispinfo' <<<"$line")"
srv_stop

# --- configuration ---
printf 'speedtest = {\n  telemetry = "yes";\n};\n' >"$T_TMP/bad.conf"
out=$("$DEBITD" -t -c "$T_TMP/bad.conf" 2>&1); rc=$?
check_eq "speedtest.telemetry = \"yes\": exit 2" 2 "$rc"
check_match "... FILE:LINE: setting and the choices" 'bad\.conf:2: speedtest\.telemetry: unknown mode "yes" \(expected off, on or redacted\)' "$out"
t_done
