#!/usr/bin/env bash
# Per-address quotas (issue 9): limits.per_ip_bytes over limits.per_ip_window. Once an
# address has used its budget of file bytes it gets 429 with Retry-After and a short body,
# while another address is still served; only body bytes count (a Range counts its length,
# HEAD and /status nothing); after Retry-After seconds it is served again; a bad value is a
# FILE:LINE configuration error. A full address table still meters new addresses (issue 31).
# Uploads (the upload sink, ndt7) are charged to the same budget (issue 33).
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
check_match "-t prints the quota" 'per_ip_bytes = "1MiB"; per_ip_window = "3s"; per_ip_table = 100000; drain_timeout = "10s";' \
  "$("$DEBITD" -t -c "$T_TMP/w.conf" 2>/dev/null)"
srv_stop

# A full table still meters (issue 31): limits.per_ip_table = 4, 3 MiB per address. Once
# four addresses fill it, a new one takes over the least-used entry with its 1 MiB, so it
# is refused after 2 MiB more, not served forever; once every entry is over the budget, a
# new address is refused at once. The table never grows past 4.
srv_conf "$T_TMP/t.conf" 'files = ( { path = "/f.dat"; size = "1MiB"; } );' \
  'limits = { per_ip_bytes = "3MiB"; per_ip_window = "1min"; per_ip_table = 4; };'
srv_start "$T_TMP/t.conf"
check_eq "four addresses fill a 4-entry table: 200 each" "200 200 200 200" \
  "$(get 127.0.0.2) $(get 127.0.0.3) $(get 127.0.0.4) $(get 127.0.0.5)"
codes=; for i in 1 2 3 4 5 6; do c=$(get 127.0.0.6); codes="$codes $c"; [ "$c" = 429 ] && break; done
check_eq "a fifth address past the table is metered (it took over 1 MiB of use): 200 200 429" " 200 200 429" "$codes"
ra=$(hdr "$T_TMP/h" Retry-After)
check_cmp "its 429 has Retry-After ($ra) within the 60 s window" "$ra" "<=" 60
metric() { curl -s "$BASE/metrics" | awk -v n="$1" '$1 == n { print $2 }'; }
check_eq "/metrics: debitd_quota_entries 4, debitd_quota_table_size 4, debitd_quota_overflow_total 1" "4 4 1" \
  "$(metric debitd_quota_entries) $(metric debitd_quota_table_size) $(metric debitd_quota_overflow_total)"
for a in 2 3 4 5; do for i in 1 2 3; do get 127.0.0.$a >/dev/null; done; done
check_eq "every entry over its budget: a new address (127.0.0.7) is refused at once" 429 "$(get 127.0.0.7)"
check_match "... with Retry-After" '^[0-9]+$' "$(hdr "$T_TMP/h" Retry-After)"
check_eq "... and the table still holds 4" 4 "$(metric debitd_quota_entries)"
check_eq "the 429s are counted in debitd_quota_refused_total as in /status" \
  "$(curl -s "$BASE/status" | jq .counters.quota_refused)" "$(metric debitd_quota_refused_total)"
check_match "-t prints per_ip_table" 'per_ip_table = 4;' "$("$DEBITD" -t -c "$T_TMP/t.conf" 2>/dev/null)"
srv_stop
printf 'limits = {\n  per_ip_table = 0;\n};\n' >"$T_TMP/bad3.conf"
out=$("$DEBITD" -t -c "$T_TMP/bad3.conf" 2>&1); rc=$?
check_eq "per_ip_table 0: exit 2" 2 "$rc"
check_match "per_ip_table 0: FILE:LINE message" 'bad3\.conf:2: limits\.per_ip_table: 0 is out of range \[1, 10000000\]' "$out"

# configuration errors name FILE:LINE and the setting
printf 'limits = {\n  per_ip_bytes = "1GiB";\n  per_ip_window = "100ms";\n};\n' >"$T_TMP/bad.conf"
out=$("$DEBITD" -t -c "$T_TMP/bad.conf" 2>&1); rc=$?
check_eq "per_ip_window below 1 s: exit 2" 2 "$rc"
check_match "per_ip_window below 1 s: FILE:LINE message" "bad\.conf:3: limits\.per_ip_window: must be from 1s to 366d" "$out"
printf 'limits = { per_ip_bytes = "many"; };\n' >"$T_TMP/bad2.conf"
out=$("$DEBITD" -t -c "$T_TMP/bad2.conf" 2>&1); rc=$?
check_eq "per_ip_bytes not a size: exit 2" 2 "$rc"
check_match "per_ip_bytes not a size: FILE:LINE message" 'bad2\.conf:1: limits\.per_ip_bytes: "many": not a number' "$out"
# Uploads are charged too (issue 33): the upload sink (its announced Content-Length, a
# chunked body max_size, refunded to what arrived at its end) and ndt7 uploads (as their
# frames arrive) share one budget with the downloads; over it, the same 429 with Retry-After.
srv_conf "$T_TMP/u.conf" 'files = ( { path = "/f.dat"; size = "1MiB"; } );' \
  'upload = { path = "/up"; max_size = "16MiB"; };' \
  'limits = { per_ip_bytes = "3MiB"; per_ip_window = "1min"; };'
srv_start "$T_TMP/u.conf"
head -c 2097152 /dev/zero >"$T_TMP/2M"
up() { local from=$1; shift; curl -s --interface "$from" -o "$T_TMP/body" -D "$T_TMP/h" -w '%{http_code}' "$@" "$BASE/up"; }
# as for downloads, the body that crosses the budget is served in full; the next is refused
check_eq "upload sink: 2 MiB, then 2 MiB more (crossing the 3 MiB budget): 200 200" "200 200" \
  "$(up 127.0.0.2 --data-binary @"$T_TMP/2M") $(up 127.0.0.2 --data-binary @"$T_TMP/2M")"
check_eq "upload sink: over the budget: 429 before the body" 429 "$(up 127.0.0.2 --data-binary @"$T_TMP/2M")"
ra=$(hdr "$T_TMP/h" Retry-After)
check_match "... with Retry-After in whole seconds ($ra), as a download's 429" '^[0-9]+$' "$ra"
check_eq "... and the same short body" "429 Too Many Requests" "$(cat "$T_TMP/body")"
check_eq "... and a download from that address: 429 too (one budget)" 429 "$(get 127.0.0.2)"
# a chunked body is charged max_size (16 MiB) up front and refunded to what arrived: 2 MiB
# used after it, so a 1 MiB download still goes (crossing), and the next is refused
check_eq "chunked 2 MiB upload: 200, then a 1 MiB download 200, then 429" "200 200 429" \
  "$(up 127.0.0.3 -H 'Transfer-Encoding: chunked' --data-binary @"$T_TMP/2M") $(get 127.0.0.3) $(get 127.0.0.3)"
check_eq "/status counts the refusals" 3 "$(curl -s "$BASE/status" | jq .counters.quota_refused)"
srv_stop

# ndt7 upload: charged as its frames arrive; at the budget debitd closes the test early (its
# close, 1000, as a download's), and the next test and download are refused with 429.
srv_conf "$T_TMP/n.conf" 'files = ( { path = "/f.dat"; size = "1MiB"; } );' \
  'limits = { per_ip_bytes = "8MiB"; per_ip_window = "1min"; };'
srv_start "$T_TMP/n.conf"
PEER_PY="$(dirname "$0")/ndt7_peer.py"
j=$(timeout 30 python3 "$PEER_PY" ws 127.0.0.1 "$PORT" upload | tail -n 1)
t_diag "ndt7 upload over an 8 MiB budget: $(jq -c '{status, bytes, close_code, seconds}' <<<"$j")"
check_eq "ndt7 upload: upgraded, closed by debitd with 1000" "101 1000" "$(jq -r '"\(.status) \(.close_code)"' <<<"$j")"
check_cmp "... well before its 10 s (the budget ran out)" "$(jq .seconds <<<"$j")" "<" 8
id=$(jq -r '.headers | to_entries[] | select(.key | ascii_downcase == "x-debit-transfer") | .value' <<<"$j")
got=$(srv_record "$BASE" "$id" | jq .bytes)
check_cmp "... debitd received at least the 8 MiB budget" "$got" ">=" 8388608
check_cmp "... and not much more (what was in flight: < 12 MiB)" "$got" "<" 12582912
j=$(timeout 10 python3 "$PEER_PY" ws 127.0.0.1 "$PORT" upload | tail -n 1)
check_eq "the next ndt7 upload from that address: 429" 429 "$(jq -r .status <<<"$j")"
check_eq "... with Retry-After" true "$(jq '.headers | to_entries | any(.key | ascii_downcase == "retry-after")' <<<"$j")"
check_eq "... and a download too: 429" 429 "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/f.dat")"
srv_stop
t_done
