#!/usr/bin/env bash
# docs/schema/*.schema.json against REAL output: debit --format json and --jsonl of a
# loopback run against nginx and debitd (with its server records), a scenario run (cells,
# client offloads on a veth pair as root), a failed run (refused port), -w '%{json}'; and the schema
# is strict: a renamed or added key of ours is an error that names it.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/client_lib.bash"
need_cmd nginx python3
python3 -c 'import jsonschema' 2>/dev/null || skip_all "needs python3-jsonschema (run tools/deps as root)"
SCHEMA=$DEBIT_TOP/docs/schema
validate() { python3 "$DEBIT_TOP/tests/e2e/schema_check.py" "$SCHEMA" "$@"; }
check_valid() { # NAME KIND FILE...
  local name=$1; shift
  if validate "$@" >"$T_TMP/v.out" 2>&1; then t_ok "$name"; else t_fail "$name" "$(head -5 "$T_TMP/v.out")"; fi
}
www_new
nginx_up
debitd_serve_10mio || { t_fail "debitd started" "$(tail -3 "$T_TMP/debitd.log")"; t_done; }

# --- nginx and debitd ---------------------------------------------------------------------
"$DEBIT" -q -n 2 --format json -o "$T_TMP/a.json" --jsonl "$T_TMP/a.jsonl" \
  nginx="$NGINX/files/1Mio.dat" debitd="$DEBITD_URL" 2>"$T_TMP/a.err"
check_eq "nginx + debitd: exit 0" 0 $?
check_eq "debitd's runs carry its transfer record (so that part of the schema is exercised)" "2 2" \
  "$(jq -r '[.runs[] | select(.server == "debitd" and .server_record.state == "done")] | length' "$T_TMP/a.json") $(jq -r '[.runs[] | select(.server == "debitd" and .tcp != null)] | length' "$T_TMP/a.json")"
check_eq "and its X-Debit-* headers" true "$(jq '[.runs[] | select(.server == "debitd") | .server_config | has("X-Debit-Tcp")] | all' "$T_TMP/a.json")"
check_eq "a comparison row (ratio, CI, p) in the summary" true "$(jq '.summary[1] | has("ratio_ci95")' "$T_TMP/a.json")"
check_valid "--format json (nginx + debitd) is valid against debit.schema.json" json "$T_TMP/a.json"
check_valid "--jsonl (4 lines) is valid against debit-run.schema.json" jsonl "$T_TMP/a.jsonl"

# --- -w '%{json}': the same document, on one line ------------------------------------------
"$DEBIT" -q -n 1 -w '%{json}\n' debitd="$DEBITD_URL" >"$T_TMP/w.json" 2>/dev/null
check_eq "-w '%{json}': exit 0, one line" "0 1" "$? $(wc -l <"$T_TMP/w.json")"
check_valid "-w '%{json}' is valid against debit.schema.json" json "$T_TMP/w.json"

# --- a scenario -----------------------------------------------------------------------------
# The offload variant is on an idle veth pair of the test's own (the traffic stays on lo,
# so nothing else on the machine sees a changed interface).
vdev=dbs${T_ID}a
if [ "$(id -u)" -eq 0 ] && ip link add "$vdev" type veth peer name "dbs${T_ID}b" 2>/dev/null; then
  t_on_exit "ip link del '$vdev' 2>/dev/null"
  variants="client_offload = ( { name = \"veth tso off\"; device = \"$vdev\"; tso = false; }, { name = \"as is\"; } );"
  offl=1
else
  variants='client_offload = ( { name = "as is"; }, { name = "still as is"; } );'
  offl=0
fi
cat >"$T_TMP/s.conf" <<CONF
servers = ( { name = "nginx"; url = "$NGINX/files/1Mio.dat"; }, { name = "debitd"; url = "$DEBITD_URL"; } );
runs = 1;
latency = ( { name = "natural"; delay = 0; } );
$variants
CONF
"$DEBIT" -q --scenario "$T_TMP/s.conf" --format json -o "$T_TMP/s.json" --jsonl "$T_TMP/s.jsonl" 2>"$T_TMP/s.err"
check_eq "scenario: exit 0" 0 $?
check_eq "scenario: two cells in the JSON, four runs with their labels" "2 4" \
  "$(jq -r '.scenario.cells | length' "$T_TMP/s.json") $(jq -r '[.runs[] | select(.scenario == "natural" and .variant)] | length' "$T_TMP/s.json")"
if [ $offl = 1 ]; then
  check_eq "scenario: the veth cell's offload state read back (with 'before')" "false true" \
    "$(jq -r '.scenario.cells[0].settings.offload[0] | "\(.tso) \(.before.tso)"' "$T_TMP/s.json")"
else
  t_skip "scenario: offload cell" "a veth pair for the offload variant needs root"
fi
check_valid "scenario --format json is valid against debit.schema.json" json "$T_TMP/s.json"
check_valid "scenario --jsonl is valid against debit-run.schema.json" jsonl "$T_TMP/s.jsonl"

# --- a failed run -------------------------------------------------------------------------
refused=$(free_port)
"$DEBIT" -q -n 2 --format json -o "$T_TMP/f.json" --jsonl "$T_TMP/f.jsonl" dead="http://127.0.0.1:$refused/x" 2>/dev/null
check_eq "refused port: exit 1" 1 $?
check_eq "refused port: failed runs with error_kind connect, tcp null, summary nulls" "connect null 2 null" \
  "$(jq -r '"\(.runs[0].error_kind) \(.runs[0].tcp) \(.summary[0].runs_failed) \(.summary[0].median_mbps)"' "$T_TMP/f.json")"
check_valid "failed run --format json is valid against debit.schema.json" json "$T_TMP/f.json"
check_valid "failed run --jsonl is valid against debit-run.schema.json" jsonl "$T_TMP/f.jsonl"

# --- strict: renamed and added keys are errors that name the key ----------------------------
strict() { # NAME KIND JQ-FILTER FILE EXPECTED-IN-MESSAGE
  jq -c "$3" "$4" >"$T_TMP/mut.json"
  if validate "$2" "$T_TMP/mut.json" >"$T_TMP/v.out" 2>&1; then t_fail "$1" "the mutated document was accepted"
  else check_match "$1" "$5" "$(cat "$T_TMP/v.out")"; fi
}
strict "renamed run key (avg_mbps -> avg_mbs) rejected" json '.runs[0] |= with_entries(if .key == "avg_mbps" then .key = "avg_mbs" else . end)' "$T_TMP/a.json" "avg_mbs' was unexpected"
strict "renamed summary key (median_mbps -> median) rejected" json '.summary[0] |= (.median = .median_mbps | del(.median_mbps))' "$T_TMP/a.json" "median' was unexpected"
strict "added tcp key rejected" json '.runs[0].tcp.retransmits = 0' "$T_TMP/a.json" "retransmits' was unexpected"
strict "added server_record key rejected" json '(.runs[] | select(.server == "debitd") | .server_record.bytez) = 1' "$T_TMP/a.json" "bytez' was unexpected"
strict "a top-level key missing is rejected" json 'del(.summary)' "$T_TMP/a.json" "'summary' is a required property"
strict "an ok run with an error is rejected" jsonl '.error = "x"' <(head -1 "$T_TMP/a.jsonl") "'x' is not of type 'null'"
strict "an unknown error_kind is rejected" jsonl '.error_kind = "refused"' <(head -1 "$T_TMP/f.jsonl") "'refused' is not one of"
t_done
