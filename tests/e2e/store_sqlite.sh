#!/usr/bin/env bash
# debit's SQLite store from real runs against a local debitd: the default location
# ($XDG_DATA_HOME/debit/results.db, or ~/.local/share/debit with XDG_DATA_HOME unset),
# --db none keeps nothing, DEBIT_DB, --import of a --jsonl file (twice: nothing added),
# and debit history's tables, filters, windows, formats and plot. Migrations from the
# previous schema: tests/unit/client/store/test_store.c.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/client_lib.bash"
[ -x "$DEBITD" ] || skip_all "build/debitd not built"
debitd_conf "$T_TMP/debitd.conf" 'files = ( { path = "/files/1Mio.dat"; size = "1Mio"; } );' &&
  debitd_up "$T_TMP/debitd.conf" || { t_fail "debitd started" "$(tail -5 "$T_TMP/debitd.log" 2>/dev/null)"; t_done; }
U=$DEBITD_BASE/files/1Mio.dat
H() { "$DEBIT" history "$@"; }

# The default location under XDG_DATA_HOME (common.sh points it into the test's dir).
"$DEBIT" -q -n 2 --format json -o "$T_TMP/r.json" --jsonl "$T_TMP/r.jsonl" a="$U" b="$U"
check_eq "measurement: exit 0" 0 $?
db=$XDG_DATA_HOME/debit/results.db
check "kept by default in \$XDG_DATA_HOME/debit/results.db" test -s "$db"
H --runs -f json >"$T_TMP/runs.json"
check_eq "history --runs: the 4 runs" 4 "$(jq length "$T_TMP/runs.json")"
check_eq "the runs' rates as the report's" \
  "$(jq -c '[.runs[].avg_mbps * 1000 | round] | sort' "$T_TMP/r.json")" \
  "$(jq -c '[.[].avg_mbps * 1000 | round] | sort' "$T_TMP/runs.json")"
check_eq "vantage defaults to the host name" "$(hostname)" "$(jq -r '.[0].vantage' "$T_TMP/runs.json")"

# XDG_DATA_HOME unset: HOME/.local/share/debit.
HOME=$T_TMP/home XDG_DATA_HOME= "$DEBIT" -q -n 1 a="$U" >/dev/null
check "HOME/.local/share/debit/results.db without XDG_DATA_HOME" test -s "$T_TMP/home/.local/share/debit/results.db"

# --db none and DEBIT_DB=none: nothing kept.
XDG_DATA_HOME=$T_TMP/none "$DEBIT" -q -n 1 --db none a="$U" >/dev/null
check_eq "--db none: exit 0" 0 $?
check "--db none: no store created" test ! -e "$T_TMP/none/debit/results.db"
XDG_DATA_HOME=$T_TMP/none DEBIT_DB=none "$DEBIT" -q -n 1 a="$U" >/dev/null
check "DEBIT_DB=none: no store created" test ! -e "$T_TMP/none/debit"
DEBIT_DB=sqlite:$T_TMP/env.db "$DEBIT" -q -n 1 --vantage "o'brien \"x\"" a="$U" >/dev/null
check_eq "DEBIT_DB=sqlite:PATH, odd vantage as given" "o'brien \"x\"" \
  "$(H --db "$T_TMP/env.db" --runs -f json | jq -r '.[0].vantage')"
out=$("$DEBIT" --db /nonexistent-dir/x.db a="$U" 2>&1)
check_eq "--db in a missing directory: exit 2" 2 $?
check_match "names the option" "^debit: --db: '/nonexistent-dir/x.db': /nonexistent-dir: No such file" "$out"

# --import: the --jsonl file of the runs above, into a new store, twice.
H --db "$T_TMP/imp.db" --import "$T_TMP/r.jsonl" --vantage-import old 2>"$T_TMP/imp1.err"
check_eq "--import: exit 0" 0 $?
check_match "--import: 4 new" "4 runs read, 4 new" "$(cat "$T_TMP/imp1.err")"
H --db "$T_TMP/imp.db" --import "$T_TMP/r.jsonl" 2>"$T_TMP/imp2.err"
check_match "--import again: nothing new" "4 runs read, 0 new" "$(cat "$T_TMP/imp2.err")"
check_eq "imported runs' vantage" "old" \
  "$(H --db "$T_TMP/imp.db" --runs -f json | jq -r '[.[].vantage] | unique | join(",")')"
printf '{"server": "x"}\nnot json\n' >"$T_TMP/bad.jsonl"
out=$(H --db "$T_TMP/imp.db" --import "$T_TMP/bad.jsonl" 2>&1)
check_eq "--import of a bad line: exit 1" 1 $?
check_match "names file and line" "bad.jsonl:1: a run without a valid \"started_at\"" "$out"

# Summaries: n, median, p10, p90 per server, as the report's medians.
H -f json >"$T_TMP/sum.json"
check_eq "summary: one row per server, n 2" "a:2 b:2" \
  "$(jq -r '[.[] | "\(.server):\(.n)"] | join(" ")' "$T_TMP/sum.json")"
check_eq "summary medians equal the report's" \
  "$(jq -c '[.summary[] | .median_mbps * 1000 | round]' "$T_TMP/r.json")" \
  "$(jq -c '[.[] | .median_mbps * 1000 | round]' "$T_TMP/sum.json")"
check_eq "csv header" "server,n,median_mbps,p10_mbps,p90_mbps" "$(H -f csv | head -1)"
check_match "markdown table" '^\| server +\| n \| median_mbps' "$(H -f markdown | head -1)"
check_eq "--server filter" "b" "$(H --server b -f json | jq -r '[.[].server] | join(",")')"
check_eq "--since tomorrow: nothing" 0 "$(H --since "$(date -u -d tomorrow +%F)" -f json | jq length)"
check_eq "--until 1d ago: nothing" 0 "$(H --until 1d -f json | jq length)"
check_eq "--every 1d: today's window" "$(date -u +%F)T00:00:00Z" \
  "$(H --every 1d -f json | jq -r '.[0].window')"
out=$(H --since yesterday-ish 2>&1)
check_eq "bad --since: exit 2" 2 $?
check_match "names --since" "^debit: history: --since: 'yesterday-ish'" "$out"
check_match "--by: two servers, one vantage: the note" "not separable" "$(H --by vantage,server 2>&1 >/dev/null)"
if command -v gnuplot >/dev/null; then
  H --plot "$T_TMP/h.svg" >/dev/null 2>&1
  check "--plot writes an SVG with both servers" grep -q '>b<' "$T_TMP/h.svg"
  # a device is written, never replaced (as debit's own --plot, issue 31)
  if [ "$(id -u)" = 0 ] && mknod "$T_TMP/null" c 1 3 2>/dev/null; then
    H --plot "$T_TMP/null" >/dev/null 2>&1
    check_eq "--plot to a character device: exit 0, still a character device" "0 character special file" \
      "$? $(stat -c %F "$T_TMP/null")"
  fi
fi
t_done
