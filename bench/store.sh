#!/usr/bin/env bash
# Benchmark (issue 34): what the results store costs (docs/store.md "Costs").
#  1. Storing a run: one real run's JSON (debit against a local debitd) stored N times
#     the way debit stores each run (store-bench insert: record, offloads, one
#     transaction, fsync on SQLite), SQLite and PostgreSQL on loopback. Goal: <= 5 ms.
#  2. `debit history --by vantage,server` over ROWS generated runs (store-bench generate:
#     V vantages x S servers, the schema's indexes), REPEAT times each engine, median
#     wall time. Goal: <= 2 s for 1,000,000 runs.
#   N=200 ROWS=1000000 V=20 S=50 REPEAT=3 bench/store.sh
. "$(dirname "$0")/../tests/lib/common.sh"
. "$(dirname "$0")/../tests/lib/servers.sh" 2>/dev/null || true
. "$(dirname "$0")/../tests/lib/pg.sh"
need_cmd jq
N=${N:-200} ROWS=${ROWS:-1000000} V=${V:-20} S=${S:-50} REPEAT=${REPEAT:-3}
[ -x "$DEBIT" ] && [ -x "$DEBITD" ] || { echo "build debit and debitd first (make)"; exit 1; }
make -s -C "$DEBIT_TOP" BUILD="$DEBIT_BUILD" "$DEBIT_BUILD/store-bench" >/dev/null || exit 1
SB=$DEBIT_BUILD/store-bench

debitd_conf "$T_TMP/debitd.conf" 'files = ( { path = "/files/1Mio.dat"; size = "1Mio"; } );' &&
  debitd_up "$T_TMP/debitd.conf" || { echo "debitd did not start"; exit 1; }
"$DEBIT" -q -n 1 --db none --jsonl "$T_TMP/run.jsonl" bench="$DEBITD_BASE/files/1Mio.dat" >/dev/null
head -1 "$T_TMP/run.jsonl" >"$T_TMP/run.json"
pg_up
# The SQLite file on the machine's disk (not tmpfs): fsync is part of the cost.
sq_dir=$(mktemp -d "${STORE_BENCH_DIR:-/var/tmp}/debit-store-bench.XXXXXX")
t_on_exit "rm -rf '$sq_dir'"

echo "# storing a run (N=$N)"
echo "sqlite:     $("$SB" insert "sqlite:$sq_dir/insert.db" "$T_TMP/run.json" "$N")"
echo "postgresql: $("$SB" insert "$PG_URL" "$T_TMP/run.json" "$N")"

median() { sort -g | awk '{a[NR]=$1} END{if (NR%2) print a[(NR+1)/2]; else printf "%.3f\n", (a[NR/2]+a[NR/2+1])/2}'; }
by_time() {
  local db=$1 i TIMEFORMAT='%R' t
  for i in $(seq "$REPEAT"); do
    t=$( { time "$DEBIT" history --db "$db" --by vantage,server -f json >"$T_TMP/by.json" 2>/dev/null; } 2>&1 )
    echo "$t"
  done | median
}
echo "# debit history --by vantage,server over $ROWS runs ($V vantages x $S servers), median of $REPEAT"
pg_val "CREATE DATABASE history" >/dev/null
# Expected with the defaults (V=20, S=50): s2 1.5 / 1.25 = 1.2, v2 2 / 1.5 = 1.333 (bench/store_bench.c).
for db in "sqlite:$sq_dir/history.db" "${PG_URL%/postgres}/history"; do
  kind=${db%%:*}
  gen=$("$SB" generate "$db" "$ROWS" "$V" "$S") || { echo "$kind: generate failed"; continue; }
  t=$(by_time "$db")
  echo "$kind: $gen; history --by: $t s; s2 effect $(jq '.servers.s2.server_effect' "$T_TMP/by.json")," \
    "v2 effect $(jq '.vantages.v2.vantage_effect' "$T_TMP/by.json"), $(jq '.cells' "$T_TMP/by.json") cells"
done
