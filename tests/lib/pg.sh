# tests/lib/pg.sh — a throwaway PostgreSQL cluster for a test (sourced after common.sh).
#
# pg_up: initdb as the postgres user in a fresh mktemp dir, started with pg_ctl on a free
# loopback port (socket in the same dir, trust authentication on loopback only); sets
# PG_DIR, PG_PORT and PG_URL. Stopped and removed at exit, also when the test fails (trap).
# pg_stop / pg_start stop and start the same cluster (a store going away mid-run).
# PG_BIN: Debian's versioned directory. Skips (77) when PostgreSQL is not installed.

pg_find_bin() {
  local d
  for d in /usr/lib/postgresql/*/bin; do [ -x "$d/initdb" ] && PG_BIN=$d; done
  [ -n "${PG_BIN:-}" ]
}

pg_as() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

pg_up() {
  pg_find_bin || skip_all "PostgreSQL is not installed (tools/deps: postgresql)"
  if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then skip_all "no postgres user"; fi
  PG_DIR=$(mktemp -d /tmp/debit-pg.XXXXXX)
  [ "$(id -u)" -eq 0 ] && chown postgres "$PG_DIR"
  chmod 0755 "$PG_DIR"
  t_on_exit "rm -rf '$PG_DIR'"
  pg_as "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres -A trust --no-sync -E UTF8 >"$PG_DIR/initdb.log" 2>&1 ||
    { t_fail "initdb" "$(tail -5 "$PG_DIR/initdb.log")"; t_done; }
  PG_PORT=$(free_port)
  t_on_exit "pg_as '$PG_BIN/pg_ctl' -D '$PG_DIR/data' -m immediate -w -t 20 stop"
  pg_start || { t_fail "postgres started" "$(tail -5 "$PG_DIR/pg.log")"; t_done; }
  PG_URL="postgresql://postgres@127.0.0.1:$PG_PORT/postgres"
}

pg_start() {
  pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/pg.log" -w -t 30 \
    -o "-p $PG_PORT -k $PG_DIR -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50" start >/dev/null
}

pg_stop() { pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m "${1:-fast}" -w -t 30 stop >/dev/null; }

# psql's one value: pg_val "SELECT count(*) FROM runs"
pg_val() { pg_as "$PG_BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U postgres -d postgres -Atq -c "$1"; }
