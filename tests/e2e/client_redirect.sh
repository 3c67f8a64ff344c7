#!/usr/bin/env bash
# Issue 31: a redirect to another host does not carry the user's -H lines unless
# --location-trusted says so (libcurl alone sends every custom header to any host a
# Location names). Two fake servers on two loopback addresses (127.0.0.1 and 127.0.0.2,
# both on lo): the first redirects to the second, which echoes each X-Test-* request
# header back as X-Debit-Echo-X-Test-* (kept in the run's server_config). The run records
# where it ended (effective_url).
. "$(dirname "$0")/../lib/common.sh"
. "$DEBIT_TOP/tests/e2e/client_lib.bash"
need_cmd python3
python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.2", 0))' 2>/dev/null ||
  skip_all "127.0.0.2 is not a local address here"
fake_up   # 127.0.0.1: FAKE
# up_on_free_port waits on 127.0.0.1: this one is waited for on its own address
port2=$(free_port)
t_bg fake2 python3 "$DEBIT_TOP/tests/e2e/client_fakesrv.py" "$port2" 127.0.0.2
FAKE2=http://127.0.0.2:$port2
wait_http "$FAKE2/" 50 "" "$T_LAST_PID" || { t_fail "second fake server on 127.0.0.2" "$(cat "$T_TMP"/fake2.log)"; t_done; }
final=$FAKE2/echo/1100000
hop="$FAKE/redirect?to=$final"
same="$FAKE/redirect?to=/echo/1100000"
echoed() { jq -r '.runs[0].server_config["X-Debit-Echo-X-Test-Token"] // "absent"' "$1"; }

"$DEBIT" -q -n 1 --format json -H 'X-Test-Token: secret' "$hop" >"$T_TMP/cross.json" 2>"$T_TMP/cross.err"
check_eq "redirect to another host: the run succeeds" "true" "$(jq -r '.runs[0].ok' "$T_TMP/cross.json")"
check_eq "redirect to another host: -H not sent there" "absent" "$(echoed "$T_TMP/cross.json")"
check_eq "the run records where it ended (effective_url)" "$final" "$(jq -r '.runs[0].effective_url' "$T_TMP/cross.json")"
check_eq "the run keeps the URL given" "$hop" "$(jq -r '.runs[0].url' "$T_TMP/cross.json")"

"$DEBIT" -q -n 1 --format json --location-trusted -H 'X-Test-Token: secret' "$hop" >"$T_TMP/trusted.json"
check_eq "--location-trusted: -H sent to the other host" "secret" "$(echoed "$T_TMP/trusted.json")"

"$DEBIT" -q -n 1 --format json -H 'X-Test-Token: secret' "$same" >"$T_TMP/same.json"
check_eq "redirect on the same host: -H still sent" "secret" "$(echoed "$T_TMP/same.json")"
check_eq "redirect on the same host: effective_url" "$FAKE/echo/1100000" "$(jq -r '.runs[0].effective_url' "$T_TMP/same.json")"

"$DEBIT" -q -n 1 --format json -H 'X-Test-Token: secret' "$final" >"$T_TMP/direct.json"
check_eq "no redirect: -H sent" "secret" "$(echoed "$T_TMP/direct.json")"

"$DEBIT" -q -n 1 --format json -P 2 -H 'X-Test-Token: secret' "$hop" >"$T_TMP/split.json"
check_eq "-P 2 across a redirect: ok, and -H not sent there" "true absent" \
  "$(jq -r '.runs[0].ok' "$T_TMP/split.json") $(echoed "$T_TMP/split.json")"

"$DEBIT" -q -n 1 --format json -H 'X-Test-Token: secret' "$FAKE/loop" >"$T_TMP/loop.json"
check_match "a redirect loop with -H: still said as a loop" "^redirect loop" "$(jq -r '.runs[0].error' "$T_TMP/loop.json")"
t_done
