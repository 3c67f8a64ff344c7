#!/usr/bin/env bash
# debitd answers as soon as it listens, while its region is still being generated: bodies
# are then computed per response by the generator (send_path "generated", a copy, counted
# as such), the same bytes as the region's; once the region is complete (/status
# content.state "ready", its log line) files go out zero-copy again. A stop during the
# generation stops it (its completion line never comes) and exits cleanly. 4 GiB, so that the generation outlasts the first
# requests on this machine (0.12-0.7 s per GiB, docs/performance.md).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"

srv_conf "$T_TMP/d.conf" 'files = ( { path = "/ram/4GiB.dat"; size = "4GiB"; } );'
debitd_spawn "$T_TMP/d.conf"
wait_http "$BASE/status" 150 "" "$DEBITD_PID" || { t_fail "debitd started" "$(tail -5 "$T_TMP/debitd.log")"; t_done; }

state() { curl -s "$BASE/status" | jq -r .content.state; }
st=$(curl -s "$BASE/status")
s1=$(jq -r .content.state <<<"$st")
check_match "/status answers during the generation: content.state" '^(generating|ready)$' "$s1"
declare -A want_path=() sha=()
if [ "$s1" = generating ]; then
  check_eq "... generated_in_s null, the file's and the listener's send path generated, fewer bytes than the region" \
    "null generated generated true" \
    "$(jq -r '"\(.content.generated_in_s) \(.files[0].send_path) \(.listeners[0].send_path) \(.content.generated_bytes < .content.region_bytes)"' <<<"$st")"
  # each range: its transfer record says how it went out; checked against the state
  # around it (generating after it: it began before the end, so generated)
  for r in 0-99999 3221225472-3288334335 4294901760-4294967295; do
    rec=$(srv_transfer "$BASE/ram/4GiB.dat" -r "$r")
    s2=$(state)
    sha[$r]=$(sha256sum <"$T_TMP/body" | cut -d' ' -f1)
    got=$(jq -r '"\(.status) \(.send_path) \(.zero_copy) \(.bytes)"' <<<"$rec")
    len=$(( ${r#*-} - ${r%-*} + 1 ))
    if [ "$s2" = generating ]; then
      check_eq "range $r during the generation: 206, generated, not zero-copy, all bytes" "206 generated false $len" "$got"
    else
      t_skip "range $r during the generation" "the region was complete before this range was answered ($got)"
    fi
  done
  if [ "$(state)" = generating ]; then
    body=$(curl -s -D - -o /dev/null "$BASE/ram/4GiB.dat" -r 0-0 | tr -d '\r')
    check_match "headers during the generation: 206 with the file's Content-Range" '^HTTP/1.1 206' "$body"
    check_match "... Content-Range" 'Content-Range: bytes 0-0/4294967296' "$body"
  fi
  cnt=$(curl -s "$BASE/status" | jq -r '.listeners[0].zero_copy | "\(.transfers) \(.copy_transfers)"')
  check_match "/status counts them as copies" '^0 [1-9]' "$cnt"
else
  t_skip "requests during the generation" "the 4 GiB region was complete before the first request (a fast machine)"
fi

debitd_content_ready || t_fail "the region complete within 30 s" "$(tail -3 "$T_TMP/debitd.log")"
check_eq "once complete: state ready, the file's and the listener's send path sendfile, a generation time" \
  "ready sendfile sendfile true" \
  "$(curl -s "$BASE/status" | jq -r '"\(.content.state) \(.files[0].send_path) \(.listeners[0].send_path) \(.content.generated_in_s > 0)"')"
check_match "its log line says when zero-copy begins" 'content: 4 GiB generated from seed 1 in [0-9.]+ s .*zero-copy from now on' \
  "$(cat "$T_TMP/debitd.log")"
for r in 0-99999 3221225472-3288334335 4294901760-4294967295; do
  rec=$(srv_transfer "$BASE/ram/4GiB.dat" -r "$r")
  len=$(( ${r#*-} - ${r%-*} + 1 ))
  path=sendfile; [ "$len" -le 65536 ] && path=buffer
  check_eq "range $r after: 206 $path, all bytes" "206 $path $len" "$(jq -r '"\(.status) \(.send_path) \(.bytes)"' <<<"$rec")"
  [ -n "${sha[$r]:-}" ] && check_eq "... the same bytes as the generator's during the generation" "${sha[$r]}" \
    "$(sha256sum <"$T_TMP/body" | cut -d' ' -f1)"
done
srv_stop
check_eq "stopped cleanly" 0 "$SRV_RC"

# A stop during the generation: the generating threads stop at their next step, the
# process ends within the stop's bound and says nothing about a failed generation.
debitd_spawn "$T_TMP/d.conf"
wait_http "$BASE/status" 150 "" "$DEBITD_PID" || t_fail "debitd started again"
s=$(state)
srv_stop
check_eq "SIGTERM during the generation ($s): exit 0" 0 "$SRV_RC"
check_nomatch "... no generation failure logged" 'serving every file from the generator| error: ' "$(cat "$T_TMP/debitd.log")"
if [ "$s" = generating ]; then # cancelled, not waited for: the region's line never came
  check_nomatch "... the generation was stopped, not finished" 'zero-copy from now on' "$(cat "$T_TMP/debitd.log")"
else
  t_skip "the generation stopped by SIGTERM" "the region was complete before the stop"
fi
t_done
