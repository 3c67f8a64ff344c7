#!/usr/bin/env bash
# debit against debitd and nginx side by side (the demo's comparison): alternation, byte
# counts, medians from the runs, X-Debit-* headers as server_config, the server's own
# transfer record (/transfers/ID) as server_record, --max-bytes and --resolve on debitd.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/client_lib.bash"
need_cmd nginx
[ -x "$DEBITD" ] || skip_all "build/debitd not built"
www_new
nginx_up
# debitd is built: one that does not come up is a failure, not a reason to skip.
debitd_serve_10mio || { t_fail "debitd serves /files/10Mio.dat" "$(tail -5 "$T_TMP/debitd.log" 2>/dev/null)"; t_done; }
D=$DEBITD_URL
dport=${D#http://127.0.0.1:}; dport=${dport%%/*}

f=$T_TMP/d.json
"$DEBIT" -q -n 3 --format json -o "$f" debitd="$D" nginx="$NGINX/files/10Mio.dat"
check_eq "exit 0" 0 $?
check_eq "alternation debitd nginx x3" "debitd nginx debitd nginx debitd nginx" "$(jqr '[.runs[].server] | join(" ")' "$f")"
check_eq "10 MiB every run" "10485760" "$(jqr '[.runs[].bytes] | unique | map(tostring) | join(" ")' "$f")"
check_eq "medians recomputed from the runs" true "$(jq -r '
  def median: sort | if length % 2 == 1 then .[length/2|floor] else (.[length/2-1] + .[length/2]) / 2 end;
  [ .summary[] as $s | ([.runs[] | select(.server == $s.server and .ok) | .avg_mbps] | median) as $m
    | (($m - $s.median_mbps) | fabs) < 1e-6 * $m ] | all' "$f")"
check_eq "debitd runs: server_config has offload, tcp, kernel, transfer" true \
  "$(jqr '[.runs[] | select(.server=="debitd") | .server_config | has("X-Debit-Offload","X-Debit-Tcp","X-Debit-Kernel","X-Debit-Transfer")] | all' "$f")"
check_match "debitd runs: offload state as the server reports it" '^tso=(on|off) gso=(on|off)' \
  "$(jqr '[.runs[] | select(.server=="debitd")][0].server_config["X-Debit-Offload"]' "$f")"
check_eq "server_config equals the headers curl sees" \
  "$(curl -s -D - -o /dev/null "$D" | tr -d '\r' | grep -i '^x-debit-\(offload\|tcp\|kernel\):' | sed 's/^[^:]*: //' | tr '\n' '|')" \
  "$(jqr '[.runs[] | select(.server=="debitd")][0].server_config | [.["X-Debit-Offload"], .["X-Debit-Tcp"], .["X-Debit-Kernel"]] | join("|")' "$f")|"
check_eq "nginx runs: empty server_config, no server_record" "{} false" \
  "$(jq -c '[.runs[] | select(.server=="nginx")][0] | .server_config, has("server_record")' "$f" | tr '\n' ' ' | sed 's/ $//')"
check_eq "debitd runs: server_record is the record of that transfer (id, done, bytes)" true \
  "$(jqr '[.runs[] | select(.server=="debitd") | .server_record.id == .server_config["X-Debit-Transfer"] and .server_record.state == "done" and .server_record.bytes == 10485760] | all' "$f")"
check_eq "debitd runs: server_record carries sender TCP_INFO" true \
  "$(jqr '[.runs[] | select(.server=="debitd") | .server_record.tcp | type == "object"] | all' "$f")"
# One vocabulary (docs/tcp_info.md): the client's receiver TCP_INFO and the server's sender
# TCP_INFO of the same run have the same keys, and the total is total_retrans on both.
check_eq "debitd runs: .tcp and .server_record.tcp share one key set" true \
  "$(jqr '[.runs[] | select(.server=="debitd") | (.tcp | keys) == (.server_record.tcp | keys)] | all' "$f")"
check_eq "debitd runs: .tcp.total_retrans and .server_record.tcp.total_retrans are numbers" true \
  "$(jqr '[.runs[] | select(.server=="debitd") | (.tcp.total_retrans | type) == "number" and (.server_record.tcp.total_retrans | type) == "number"] | all' "$f")"
check_eq "no run or server record has the ambiguous \"retransmits\" key" false \
  "$(jqr '[.runs[] | has("retransmits") or (.tcp | has("retransmits")) or (.server_record.tcp // {} | has("retransmits"))] | any' "$f")"
check_eq "a fresh TCP connection per download: distinct client ports seen by debitd" 3 \
  "$(jqr '[.runs[] | select(.server=="debitd") | .server_record.remote] | unique | length' "$f")"
check_eq "distinct transfer IDs per run" 3 "$(jqr '[.runs[] | select(.server=="debitd") | .server_record.id] | unique | length' "$f")"

# The table and the Markdown say what each server reported of itself; nginx says nothing.
"$DEBIT" -q -n 1 debitd="$D" nginx="$NGINX/files/10Mio.dat" >"$T_TMP/t.txt"
"$DEBIT" -q -n 1 --format markdown debitd="$D" nginx="$NGINX/files/10Mio.dat" >"$T_TMP/t.md"
want_cfg="debitd: offload $(jqr '[.runs[] | select(.server=="debitd")][0].server_config["X-Debit-Offload"]' "$f"); tcp $(jqr '[.runs[] | select(.server=="debitd")][0].server_config["X-Debit-Tcp"]' "$f")"
check_eq "table: the server's reported offload and TCP state" "  $want_cfg" "$(grep -A1 '^Servers, as they reported themselves' "$T_TMP/t.txt" | tail -1)"
check_eq "markdown: the same, as a list item" "- $want_cfg" "$(grep '^- debitd: offload ' "$T_TMP/t.md")"
check_nomatch "nginx (no X-Debit-* headers) is not listed" '^(- |  )nginx:' "$(cat "$T_TMP/t.txt" "$T_TMP/t.md")"

"$DEBIT" -q -n 1 --max-bytes 3MiB --format json "$D" >"$T_TMP/mb.json"
check_eq "--max-bytes on debitd: 206 with 3 MiB" "3145728 206 true" "$(jqr '.runs[0] | "\(.bytes) \(.http_status) \(.ok)"' "$T_TMP/mb.json")"
"$DEBIT" -q -n 1 --resolve "degrouptest.test:$dport:127.0.0.1" --format json "http://degrouptest.test:$dport/files/10Mio.dat" >"$T_TMP/res.json"
check_eq "--resolve on debitd: name, address, bytes, server_record fetched through the same mapping" \
  "degrouptest.test 127.0.0.1 10485760 done" \
  "$(jqr '.runs[0] | "\(.server) \(.remote_ip) \(.bytes) \(.server_record.state)"' "$T_TMP/res.json")"
"$DEBIT" -q -n 1 --local-address 127.0.0.2 --format json "$D" >"$T_TMP/la.json"
check_eq "--local-address 127.0.0.2: debitd saw the download come from there" "true 127.0.0.2" \
  "$(jqr '.runs[0] | "\(.ok) \(.server_record.remote | sub(":[0-9]+$"; ""))"' "$T_TMP/la.json")"
"$DEBIT" -q -n 1 --format json "http://127.0.0.1:$dport/files/nope.dat" >"$T_TMP/404.json"
check_eq "debitd 404: failed run, kind http" "false http 404" "$(jqr '.runs[0] | "\(.ok) \(.error_kind) \(.http_status)"' "$T_TMP/404.json")"
t_done
