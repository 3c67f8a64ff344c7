#!/usr/bin/env bash
# Issue 31: what a run must say rather than measure silently. A --duration longer than the
# file (the run ends with the file: said on stderr, duration_short in the run, the ratio
# marked "(short)" and counted in the summary); a Content-Encoding other than identity
# (recorded: the bytes counted are the encoded ones); https:// to a plain-HTTP port and
# -4 with an IPv6 literal (a message with the likely cause). Loopback only.
. "$(dirname "$0")/../lib/common.sh"
. "$DEBIT_TOP/tests/e2e/client_lib.bash"
need_cmd python3
fake_up
small=$FAKE/norange/1100000

# --- --duration longer than the file ----------------------------------------------------
"$DEBIT" -n 1 --no-progress --duration 30 --format json -o "$T_TMP/dur.json" A="$small" B="$small" 2>"$T_TMP/dur.err"
check_eq "--duration 30 on a 1.1 MB file: both runs ok, not reached, marked short" \
  "true false true|true false true" \
  "$(jq -r '[.runs[] | "\(.ok) \(.duration_reached) \(.duration_short)"] | join("|")' "$T_TMP/dur.json")"
check_match "stderr says the file ended before --duration" "A run 1: .*the file ended before --duration" "$(cat "$T_TMP/dur.err")"
check_eq "summary counts the short runs" "1 1" "$(jq -r '[.summary[].duration_short_runs] | join(" ")' "$T_TMP/dur.json")"
check_match "the table marks the ratio (short)" "^B .*\] \(short\)" "$(cat "$T_TMP/dur.err")"
check_match "and explains the mark" "^\(short\): the file ended before --duration" "$(cat "$T_TMP/dur.err")"
"$DEBIT" -q -n 1 --duration 0.2 --format json "$FAKE/slow/5000000?rate=1000000" >"$T_TMP/dur2.json" 2>/dev/null
check_eq "--duration reached: no short mark" "true true null" \
  "$(jq -r '.runs[0] | "\(.ok) \(.duration_reached) \(.duration_short)"' "$T_TMP/dur2.json")"

# --- Content-Encoding ---------------------------------------------------------------------
"$DEBIT" -n 1 --no-progress --format json "$FAKE/gzip/1100000" >"$T_TMP/gz.json" 2>"$T_TMP/gz.err"
check_eq "Content-Encoding gzip: recorded in the run" "gzip" "$(jq -r '.runs[0].content_encoding' "$T_TMP/gz.json")"
check_match "Content-Encoding gzip: flagged on stderr" "Content-Encoding gzip: the encoded bytes are counted" "$(cat "$T_TMP/gz.err")"
"$DEBIT" -q -n 1 --format json "$small" >"$T_TMP/id.json"
check_eq "no Content-Encoding: nothing recorded" "null" "$(jq -r '.runs[0].content_encoding' "$T_TMP/id.json")"

# --- the likely cause of a failed connection ------------------------------------------------
"$DEBIT" -q -n 1 --format json "https://127.0.0.1:$FAKE_PORT/norange/1100000" >"$T_TMP/tls.json" 2>/dev/null
check_match "https:// to a plain-HTTP port: says so" "is this port plain HTTP\? try http://" \
  "$(jq -r '.runs[0].error' "$T_TMP/tls.json")"
"$DEBIT" -q -n 1 -4 --format json "http://[::1]:$FAKE_PORT/norange/1100000" >"$T_TMP/v6.json" 2>/dev/null
check_match "-4 with an IPv6 literal: says so" "-4 asks for IPv4, but the URL's host is an IPv6 address" \
  "$(jq -r '.runs[0].error' "$T_TMP/v6.json")"
"$DEBIT" -q -n 1 -6 --format json "$small" >"$T_TMP/v4.json" 2>/dev/null
check_match "-6 with an IPv4 literal: says so" "-6 asks for IPv6, but the URL's host is an IPv4 address" \
  "$(jq -r '.runs[0].error' "$T_TMP/v4.json")"
t_done
