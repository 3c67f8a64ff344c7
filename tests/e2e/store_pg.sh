#!/usr/bin/env bash
# debit's store on a real PostgreSQL (a throwaway cluster, tests/lib/pg.sh): four debit
# processes writing at once lose no run; the store stopped during a measurement: the
# runs are spooled (exit 1, the spool's path printed) and written by the next run, once;
# odd names stored as given; history --by vantage,server from PostgreSQL; bad --db.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/client_lib.bash"
. "$(dirname "$0")/../lib/pg.sh"
[ -x "$DEBITD" ] || skip_all "build/debitd not built"
pg_up
debitd_conf "$T_TMP/debitd.conf" 'files = ( { path = "/files/1Mio.dat"; size = "1Mio"; } );' &&
  debitd_up "$T_TMP/debitd.conf" || { t_fail "debitd started" "$(tail -5 "$T_TMP/debitd.log" 2>/dev/null)"; t_done; }
U=$DEBITD_BASE/files/1Mio.dat

# Four vantage points at once, 3 runs x 2 servers each.
pids=()
for v in 1 2 3 4; do
  "$DEBIT" -q -n 3 --db "$PG_URL" --vantage "v$v" a="$U" b="$U" \
    >"$T_TMP/c$v.out" 2>"$T_TMP/c$v.err" &
  pids+=($!)
done
rcs=""
for p in "${pids[@]}"; do wait "$p"; rcs="$rcs$? "; done
check_eq "four concurrent debit: exit 0 each" "0 0 0 0 " "$rcs"
check_eq "every run present (4 x 3 x 2)" 24 "$(pg_val 'SELECT count(*) FROM runs')"
check_eq "6 runs per vantage" "v1:6 v2:6 v3:6 v4:6" \
  "$(pg_val "SELECT string_agg(vantage || ':' || n, ' ' ORDER BY vantage)
             FROM (SELECT vantage, count(*) n FROM runs GROUP BY 1) x")"
check_eq "one invocation row each, 6 runs ok" "4|4" \
  "$(pg_val "SELECT count(*), count(*) FILTER (WHERE runs = 6 AND runs_ok = 6) FROM invocations")"
check_eq "the run's JSON is jsonb, the row's columns match it" 24 \
  "$(pg_val "SELECT count(*) FROM runs WHERE jsonb_typeof(run) = 'object' AND (run->>'avg_mbps')::float8 = avg_mbps
     AND run->>'server' = server AND bytes = 1048576 AND family = 4 AND protocol = 'http' AND direction = 'download'
     AND streams = 1 AND ok = 1 AND client_kernel LIKE 'Linux %'")"
check_eq "schema version" 2 "$(pg_val 'SELECT max(version) FROM debit_schema')"

# The store stopped during a measurement.
"$DEBIT" -q -n 8 --pause 0.5 --db "$PG_URL" --vantage stopped a="$U" >/dev/null 2>"$T_TMP/stop.err" &
dpid=$!
t_track "$dpid" 2>/dev/null || true
stored_ge() { [ "$(pg_val "SELECT count(*) FROM runs WHERE vantage = 'stopped'" 2>/dev/null)" -ge "$1" ]; }
wait_for 100 stored_ge 2 || t_fail "two runs stored before the stop"
pg_stop fast
wait "$dpid"
check_eq "store gone mid-run: exit 1" 1 $?
spool=$(sed -n 's/.*kept in the spool \([^;]*\);.*/\1/p' "$T_TMP/stop.err")
check_match "the spool's path printed" "$XDG_DATA_HOME/debit/spool/.*\.jsonl" "$spool"
nsp=$(wc -l <"$spool" 2>/dev/null || echo 0)
check "runs and the summary spooled" test "$nsp" -ge 2
pg_start || t_fail "postgres restarted"
before=$(pg_val "SELECT count(*) FROM runs WHERE vantage = 'stopped'")
"$DEBIT" -n 1 --db "$PG_URL" --vantage next a="$U" >/dev/null 2>"$T_TMP/next.err"
check_eq "the next run: exit 0" 0 $?
check_match "the next run wrote the spool first" "spooled records? written first" "$(cat "$T_TMP/next.err")"
stopped_runs() { pg_val "SELECT count(*) FROM runs WHERE vantage = 'stopped'"; }
check_eq "nothing lost: all 8 runs of the stopped store" 8 "$(stopped_runs)"
check_eq "nothing twice: ids distinct" "$(pg_val 'SELECT count(*) FROM runs')" \
  "$(pg_val 'SELECT count(DISTINCT run_id) FROM runs')"
check_eq "its invocation row too" "1|8" \
  "$(pg_val "SELECT count(*), max(runs) FROM invocations WHERE vantage = 'stopped'")"
check_eq "the spool emptied" 0 "$(wc -l <"$spool")"
t_diag "runs stored before the stop: $before of 8; spooled: $nsp records"
# A replay of the same spool adds nothing.
"$DEBIT" -q -n 1 --db "$PG_URL" --vantage next a="$U" >/dev/null 2>&1
check_eq "spool replay idempotent: still 8" 8 "$(stopped_runs)"

# Odd names, as given.
odd="o'brien \"lab\"; DROP TABLE runs; --"
"$DEBIT" -q -n 1 --db "$PG_URL" --vantage "$odd" "$odd=$U" >/dev/null
check_eq "odd name stored: exit 0" 0 $?
check_eq "odd vantage and server as given" "$odd|$odd" \
  "$(pg_val "SELECT vantage || '|' || server FROM runs WHERE server LIKE 'o''brien%'")"

# history from PostgreSQL.
"$DEBIT" history --db "$PG_URL" --by vantage,server --server a -f json >"$T_TMP/by.json" 2>"$T_TMP/by.err"
check_eq "history --by: exit 0" 0 $?
check_eq "servers and vantages with their effects" "a|next,stopped,v1,v2,v3,v4" \
  "$(jq -r '[(.servers | keys | join(",")), (.vantages | keys | join(","))] | join("|")' "$T_TMP/by.json")"
check_eq "effect members" "true" \
  "$(jq '.servers.a.server_effect == 1 and (.vantages.v1.vantage_effect > 0)' "$T_TMP/by.json")"
"$DEBIT" history --db "$PG_URL" --vantage v2 -f csv >"$T_TMP/sum.csv"
check_eq "summary per server from PostgreSQL" "a,3 b,3" \
  "$(tail -n +2 "$T_TMP/sum.csv" | cut -d, -f1,2 | tr '\n' ' ' | sed 's/ $//')"

# --import into PostgreSQL, twice: the same runs once.
"$DEBIT" -q -n 2 --db none --jsonl "$T_TMP/old.jsonl" old="$U" >/dev/null
"$DEBIT" history --db "$PG_URL" --import "$T_TMP/old.jsonl" --vantage-import archive 2>/dev/null
"$DEBIT" history --db "$PG_URL" --import "$T_TMP/old.jsonl" 2>"$T_TMP/imp.err"
check_match "--import again: nothing new" "2 runs read, 0 new" "$(cat "$T_TMP/imp.err")"
check_eq "imported runs in PostgreSQL, once" 2 "$(pg_val "SELECT count(*) FROM runs WHERE vantage = 'archive'")"

# Migration from the previous schema (version 1), as docs/store.md shows its SQL: a v1
# database with a run opens as version 2 with the run kept, and ends up with the same
# tables and indexes as a database debit created itself.
pg_val "CREATE DATABASE mig" >/dev/null
MIG_URL=${PG_URL%/postgres}/mig
sed -n '/^-- version 1$/,/^-- version 2/p' "$DEBIT_TOP/docs/store.md" | grep -v '^-- version 2' >"$T_TMP/v1.sql"
pg_as "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d mig -q -v ON_ERROR_STOP=1 -f - \
  <"$T_TMP/v1.sql" >/dev/null
check_eq "docs/store.md's version 1 SQL runs" 0 $?
pg_as "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d mig -q -v ON_ERROR_STOP=1 -c "
  CREATE TABLE debit_schema (version INTEGER NOT NULL); INSERT INTO debit_schema VALUES (1);
  INSERT INTO runs (run_id, started_at, vantage, server, ok, run) VALUES ('v1-run', 1790000000, 'old', 'x', 1, '{}')"
"$DEBIT" -q -n 1 --db "$MIG_URL" --vantage new a="$U" >/dev/null
check_eq "v1 database: debit runs" 0 $?
mval() { pg_as "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d "$1" -Atq -c "$2"; }
check_eq "migrated to version 2" 2 "$(mval mig 'SELECT max(version) FROM debit_schema')"
check_eq "the v1 run kept, the new one added" "new old" \
  "$(mval mig "SELECT string_agg(vantage, ' ' ORDER BY vantage) FROM runs")"
cols="SELECT string_agg(table_name || '.' || column_name || ':' || data_type, ' ' ORDER BY table_name, column_name)
      FROM information_schema.columns WHERE table_schema = 'public'"
idx="SELECT string_agg(indexdef, ' ' ORDER BY indexname) FROM pg_indexes WHERE schemaname = 'public'"
check_eq "migrated columns = debit's own" "$(mval postgres "$cols")" "$(mval mig "$cols")"
check_eq "migrated indexes = debit's own" "$(mval postgres "$idx")" "$(mval mig "$idx")"
check_match "... runs_cells among them" \
  "CREATE INDEX runs_cells ON public.runs USING btree \(vantage, server, avg_mbps\) WHERE \(ok = 1\)" \
  "$(mval mig "$idx")"

# A bad --db is a usage error naming the option.
out=$("$DEBIT" --db 'postgresql://h/db?nosuch=1' a="$U" 2>&1)
check_eq "bad --db: exit 2" 2 $?
check_match "names --db" "^debit: --db: " "$out"
t_done
