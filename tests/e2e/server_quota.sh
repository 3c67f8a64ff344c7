#!/usr/bin/env bash
# Per-address quotas (issue 9): limits.per_ip_bytes over limits.per_ip_window. Once an
# address has used its budget of file bytes it gets 429 with Retry-After and a short body,
# while another address is still served; only body bytes count (a Range counts its length,
# HEAD and /status nothing); after Retry-After seconds it is served again; a bad value is a
# FILE:LINE configuration error.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
curl -s -o /dev/null --interface 127.0.0.2 --max-time 2 http://127.0.0.1:1/ 2>/dev/null
[ $? = 45 ] && skip_all "cannot send from 127.0.0.2 (curl --interface)"

# get FROM [CURL ARGS...]: the status of GET /f.dat from address FROM (headers in $T_TMP/h)
get() { local from=$1; shift; curl -s --interface "$from" -o "$T_TMP/body" -D "$T_TMP/h" -w '%{http_code}' "$@" "$BASE/f.dat"; }

srv_conf "$T_TMP/q.conf" 'files = ( { path = "/f.dat"; size = "1MiB"; } );' \
  'limits = { per_ip_bytes = "3MiB"; per_ip_window = "1min"; };'
srv_start "$T_TMP/q.conf"
check_eq "three 1 MiB downloads within a 3 MiB budget: 200 each" "200 200 200" \
  "$(get 127.0.0.2) $(get 127.0.0.2) $(get 127.0.0.2)"
check_eq "the fourth, over budget: 429" 429 "$(get 127.0.0.2)"
ra=$(hdr "$T_TMP/h" Retry-After)
check_match "429 has Retry-After in whole seconds ($ra)" '^[0-9]+$' "$ra"
check_cmp "Retry-After is at least 1 s" "$ra" ">=" 1
check_cmp "Retry-After is at most the 60 s window" "$ra" "<=" 60
check_eq "429 has a short text body" "429 Too Many Requests" "$(cat "$T_TMP/body")"
check_eq "429 is not cached" "no-store" "$(hdr "$T_TMP/h" Cache-Control)"
check_eq "another address (127.0.0.3) is still served, in full" "200 1048576" \
  "$(get 127.0.0.3) $(stat -c %s "$T_TMP/body")"
check_eq "over budget: HEAD costs nothing and is still answered" 200 \
  "$(curl -s --interface 127.0.0.2 -I -o /dev/null -w '%{http_code}' "$BASE/f.dat")"
check_eq "over budget: /status is still answered" 200 \
  "$(curl -s --interface 127.0.0.2 -o "$T_TMP/status.json" -w '%{http_code}' "$BASE/status")"
check_eq "/status counts the refusal and shows the limits" "1 3145728 60" \
  "$(jq -r '"\(.counters.quota_refused) \(.limits.per_ip_bytes) \(.limits.per_ip_window_s)"' "$T_TMP/status.json")"
# a Range response counts its length only: ten 300 KiB ranges (3000 KiB) fit in 3 MiB (3072 KiB)
codes=$(for i in $(seq 10); do get 127.0.0.4 -r 0-307199; echo; done | sort | uniq -c | awk '{print $1 "x" $2}')
check_eq "ten 300 KiB ranges from 127.0.0.4: 206 each" "10x206" "$codes"
check_eq "then a full download still fits (2.93 MiB used < 3 MiB): 200" 200 "$(get 127.0.0.4)"
check_eq "and the next is over: 429" 429 "$(get 127.0.0.4)"
srv_stop

# after Retry-After seconds the address is served again (a 3 s window: 1 MiB budget)
srv_conf "$T_TMP/w.conf" 'files = ( { path = "/f.dat"; size = "1MiB"; } );' \
  'limits = { per_ip_bytes = "1MiB"; per_ip_window = "3s"; };'
srv_start "$T_TMP/w.conf"
check_eq "3 s window: first download 200" 200 "$(get 127.0.0.2)"
check_eq "3 s window: the next at once: 429" 429 "$(get 127.0.0.2)"
ra=$(hdr "$T_TMP/h" Retry-After)
check_cmp "3 s window: Retry-After $ra <= 3" "$ra" "<=" 3
sleep "$ra"; sleep 0.2
check_eq "after Retry-After ($ra s): served again" 200 "$(get 127.0.0.2)"
check_match "-t prints the quota" 'per_ip_bytes = "1MiB"; per_ip_window = "3s"; drain_timeout = "10s";' \
  "$("$DEBITD" -t -c "$T_TMP/w.conf" 2>/dev/null)"
srv_stop

# configuration errors name FILE:LINE and the setting
printf 'limits = {\n  per_ip_bytes = "1GiB";\n  per_ip_window = "100ms";\n};\n' >"$T_TMP/bad.conf"
out=$("$DEBITD" -t -c "$T_TMP/bad.conf" 2>&1); rc=$?
check_eq "per_ip_window below 1 s: exit 2" 2 "$rc"
check_match "per_ip_window below 1 s: FILE:LINE message" "bad\.conf:3: limits\.per_ip_window: must be from 1s to 366d" "$out"
printf 'limits = { per_ip_bytes = "many"; };\n' >"$T_TMP/bad2.conf"
out=$("$DEBITD" -t -c "$T_TMP/bad2.conf" 2>&1); rc=$?
check_eq "per_ip_bytes not a size: exit 2" 2 "$rc"
check_match "per_ip_bytes not a size: FILE:LINE message" 'bad2\.conf:1: limits\.per_ip_bytes: "many": not a number' "$out"
t_done
