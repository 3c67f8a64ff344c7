#!/usr/bin/env bash
# debitd's own verdict of every transfer, whatever the client (issue 32; docs/verdict.md):
# curl downloads, the ID from X-Debit-Transfer, the verdict from /transfers/ID
# (limited_by, limited_by_evidence, predicted_mbps, predicted_note); the same in the JSON
# access-log line of that transfer and counted in /metrics debitd_transfers_total{listener,
# limited_by}. Values, not presence: a reader held back by --limit-rate is receiver_window
# with the record's own rwnd-limited share; loopback's autotuned buffers predict nothing
# (null with the reason, never terabits); a transfer under way has no verdict yet, an
# aborted one has one; the counter per verdict equals the records with that verdict.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"

HDR=$(wire_get WIRE_HDR_TRANSFER)
srv_conf "$T_TMP/d.conf" 'files = ( { path = "/files/100Mio.dat"; size = "100Mio"; } );'
srv_start "$T_TMP/d.conf"
L1="127.0.0.1:$PORT"
URL=$BASE/files/100Mio.dat
KINDS='["network","receiver_window","sender_buffer","sender_cpu","congestion","receiver_cpu","unknown"]'
ids=()

# 1. A whole download as fast as loopback goes.
rec=$(srv_transfer "$URL")
ids+=("$(jq -r .id <<<"$rec")")
check_eq "a download's record: done, 100 MiB" "done 104857600" "$(jq -r '"\(.state) \(.bytes)"' <<<"$rec")"
check_eq "limited_by is one of the seven" true "$(jq --argjson k "$KINDS" '.limited_by as $v | $k | index($v) != null' <<<"$rec")"
check_match "its evidence: a sentence with the measured rate" 'measured [0-9.]+ Mb/s' "$(jq -r .limited_by_evidence <<<"$rec")"
check_eq "loopback, autotuned buffers, no bottleneck: predicted_mbps null" null "$(jq -c .predicted_mbps <<<"$rec")"
check_match "... with the reason" '^no limit known: .*autotuning.s ceilings are not limits' "$(jq -r .predicted_note <<<"$rec")"
check_nomatch "no absurd prediction in the evidence" 'predicted [0-9]{6,}' "$(jq -r .limited_by_evidence <<<"$rec")"
check_eq "the serving thread's share: at most one CPU, run-queue wait a number" true \
  "$(jq '.cpu.share <= 1 and .cpu.share >= 0 and (.cpu.runqueue_ms | type == "number" and . >= 0)' <<<"$rec")"

# 2. A reader that holds the sender back: curl at 25 MB/s of 50 MiB (2 s). Its receive
# buffer fills, the window closes: debitd's socket is rwnd-limited most of its busy time.
rec=$(srv_transfer "$URL" --limit-rate 25M -r 0-52428799)
ids+=("$(jq -r .id <<<"$rec")")
check_eq "--limit-rate 25M: limited_by receiver_window" receiver_window "$(jq -r .limited_by <<<"$rec")"
ev=$(jq -r .limited_by_evidence <<<"$rec")
check_match "its evidence: rwnd-limited N% of busy time" '^rwnd-limited [0-9]+% of busy time; measured [0-9.]+ Mb/s' "$ev"
pct=$(sed -E 's/^rwnd-limited ([0-9]+)%.*/\1/' <<<"$ev")
check_eq "... N is the record's own tcp.rwnd_limited_ratio" "$(jq '.tcp.rwnd_limited_ratio * 100 | round' <<<"$rec")" "$pct"
check_cmp "... and at least half" "$pct" ">=" 50
check_cmp "... measured about curl's 25 MiB/s (210 Mb/s; 150-320)" \
  "$(sed -E 's/.*measured ([0-9.]+) Mb\/s.*/\1/' <<<"$ev")" ">=" 150
check_cmp "... not above it" "$(sed -E 's/.*measured ([0-9.]+) Mb\/s.*/\1/' <<<"$ev")" "<=" 320

# 3. While sending there is no verdict yet; an aborted transfer gets one.
t_bg slow curl -s -D "$T_TMP/slow.h" -o /dev/null --limit-rate 2M "$URL"
SLOW=$T_LAST_PID
wait_for 50 grep -qi "^$HDR:" "$T_TMP/slow.h"
sid=$(tr -d '\r' <"$T_TMP/slow.h" | awk -v h="$HDR" 'tolower($1) == tolower(h ":") {print $2}')
sleep 0.3
rec=$(curl -s "$BASE/transfers/$sid")
check_eq "sending: limited_by, evidence, prediction null" "sending null null null" \
  "$(jq -r '"\(.state) \(.limited_by) \(.limited_by_evidence) \(.predicted_mbps)"' <<<"$rec")"
stop_pid "$SLOW" TERM
for _ in $(seq 50); do
  rec=$(curl -s "$BASE/transfers/$sid")
  [ "$(jq -r .state <<<"$rec")" = sending ] || break
  sleep 0.1
done
ids+=("$sid")
check_eq "aborted: a verdict all the same" "aborted true" \
  "$(jq -r --argjson k "$KINDS" '"\(.state) \(.limited_by as $v | $k | index($v) != null)"' <<<"$rec")"

# 4. The access log: each transfer's line carries the record's verdict, word for word.
wait_for 30 sh -c "[ \$(grep -c '\"limited_by\"' '$T_TMP/access.log') -ge 3 ]"
for id in "${ids[@]}"; do
  want=$(curl -s "$BASE/transfers/$id" | jq -c '[.limited_by, .limited_by_evidence, .predicted_mbps, .predicted_note]')
  got=$(jq -c --arg id "$id" 'select(.id == $id) | [.limited_by, .limited_by_evidence, .predicted_mbps, .predicted_note]' \
    "$T_TMP/access.log")
  check_eq "access log line of $id: the record's verdict" "$want" "$got"
done

# 5. /metrics: per listener and verdict, as many as the records say; every verdict listed.
curl -s "$BASE/metrics" >"$T_TMP/m"
check_eq "debitd_transfers_total: a sample per verdict (7)" 7 \
  "$(grep -c "^debitd_transfers_total{listener=\"$L1\",limited_by=\"" "$T_TMP/m")"
for k in network receiver_window sender_buffer sender_cpu congestion receiver_cpu unknown; do
  n=0
  for id in "${ids[@]}"; do
    [ "$(curl -s "$BASE/transfers/$id" | jq -r .limited_by)" = "$k" ] && n=$((n + 1))
  done
  check_eq "debitd_transfers_total{limited_by=\"$k\"} = the records with $k ($n)" "$n" \
    "$(awk -v s="debitd_transfers_total{listener=\"$L1\",limited_by=\"$k\"}" '$1 == s {print $2}' "$T_TMP/m")"
done
if command -v promtool >/dev/null; then
  check "promtool check metrics" promtool check metrics <"$T_TMP/m"
fi
t_done
