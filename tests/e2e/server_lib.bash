# Shared by tests/e2e/server_*.sh (sourced after tests/lib/common.sh; not a test itself):
# start debitd on a free loopback port with a small test configuration.

need_cmd curl jq sha256sum

# srv_conf FILE [EXTRA CONFIG LINES...]: a config listening on 127.0.0.1:$PORT (a fresh free
# port, exported as PORT and BASE) with small files, log level warn, access log to a file.
srv_conf() {
  local f=$1; shift
  PORT=$(free_port)
  BASE=http://127.0.0.1:$PORT
  {
    echo "listen = ( { address = \"127.0.0.1\"; port = $PORT; } );"
    echo "log = { level = \"info\"; access = \"$T_TMP/access.log\"; };"
    printf '%s\n' "$@"
  } >"$f"
}

# srv_start CONF: start debitd and wait (bounded) until it answers /status. Sets DEBITD_PID.
srv_start() {
  start_debitd "$1"
  if ! wait_http "$BASE/status" 150; then
    t_fail "debitd started" "$(tail -5 "$T_TMP/debitd.log")"
    t_done
  fi
}

# srv_stop: SIGTERM and wait (bounded); sets SRV_RC to the exit status.
srv_stop() {
  kill -TERM "$DEBITD_PID" 2>/dev/null
  SRV_RC=
  for _ in $(seq 100); do kill -0 "$DEBITD_PID" 2>/dev/null || break; sleep 0.05; done
  wait "$DEBITD_PID" 2>/dev/null
  SRV_RC=$?
}

# hdr FILE NAME: value of header NAME in a curl -D dump (case-insensitive, CR stripped).
hdr() { grep -i "^$2:" "$1" | head -1 | sed 's/^[^:]*: *//' | tr -d '\r'; }
# sha_of URL: the hex digest debitd announces at URL.sha256.
sha_of() { curl -s "$1.sha256" | cut -d' ' -f1; }
