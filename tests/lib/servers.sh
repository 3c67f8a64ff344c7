# tests/lib/servers.sh — sourced by tests/lib/common.sh (not on its own): the servers the
# end-to-end tests and benchmarks start on loopback, and small HTTP helpers.
#
# One verb per step: X_spawn starts X in the background and returns at once (the caller
# waits); X_up starts X and waits, bounded, until it answers.
#
# Gives: debitd_spawn, nginx_spawn (start only; the caller waits); up_on_free_port (start on a
# free port with a bounded wait, retried on another port if that one was taken meanwhile);
# debitd_conf + debitd_up (a test debitd, ready); www_new + nginx_up (a tmpfs web root and
# nginx serving it: the public-mirror stand-in); hdr (a header from a curl -D dump).

# debitd_spawn CONF [NETNS]: runs debitd in the background; sets DEBITD_PID. Caller waits.
debitd_spawn() {
  local conf=$1 ns=${2:-}
  if [ -n "$ns" ]; then t_bg "debitd-$ns" ip netns exec "$ns" "$DEBITD" -c "$conf"
  else t_bg "debitd" "$DEBITD" -c "$conf"; fi
  DEBITD_PID=$T_LAST_PID
}

# nginx_spawn ROOT PORT [NETNS] [LISTEN_ADDR]: nginx serving ROOT with sendfile, foreground,
# tracked. Sets NGINX_PID. The stand-in for a public mirror. NGINX_LISTEN_OPTS ("ssl") is
# added to its listen directive, NGINX_SERVER_EXTRA (directives) to its server block.
nginx_spawn() {
  local root=$1 port=$2 ns=${3:-} addr=${4:-127.0.0.1} d
  need_cmd nginx
  d=$(mktemp -d "$T_TMP/nginx.XXXX")
  mkdir -p "$d/logs"
  cat >"$d/nginx.conf" <<NGX
worker_processes 1;
pid $d/nginx.pid;
error_log $d/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on; tcp_nopush on;
  default_type application/octet-stream;
  client_body_temp_path $d/tmp; proxy_temp_path $d/tmp; fastcgi_temp_path $d/tmp;
  uwsgi_temp_path $d/tmp; scgi_temp_path $d/tmp;
  server { listen $addr:$port${NGINX_LISTEN_OPTS:+ $NGINX_LISTEN_OPTS}; root $root; autoindex on; ${NGINX_SERVER_EXTRA:-} }
}
NGX
  mkdir -p "$d/tmp"
  if [ -n "$ns" ]; then t_bg "nginx-$port" ip netns exec "$ns" nginx -p "$d" -c "$d/nginx.conf" -g 'daemon off;'
  else t_bg "nginx-$port" nginx -p "$d" -c "$d/nginx.conf" -g 'daemon off;'; fi
  NGINX_PID=$T_LAST_PID
}

# up_on_free_port START_FN [PATH] [TRIES]: START_FN PORT starts a tracked server (t_bg, so
# T_LAST_PID) on 127.0.0.1:PORT; then a bounded wait (TRIES x 0.1 s, default 100) until
# http://127.0.0.1:PORT/PATH answers, given up early if the server exits. A free port can be
# taken between free_port and bind (other tests' ephemeral ports): up to 3 ports are tried.
# Sets UP_PORT and UP_PID; returns 1 when no attempt came up.
up_on_free_port() {
  local fn=$1 path=${2:-} tries=${3:-100} try
  for try in 1 2 3; do
    UP_PORT=$(free_port) || return 1
    "$fn" "$UP_PORT"
    UP_PID=$T_LAST_PID
    wait_http "http://127.0.0.1:$UP_PORT/$path" "$tries" "" "$UP_PID" && return 0
    stop_pid "$UP_PID"
  done
  return 1
}

# debitd_conf FILE [LINES...]: a debitd test configuration listening on 127.0.0.1 at a free
# port (DEBITD_PORT, DEBITD_BASE=http://127.0.0.1:PORT), log level info, access log to
# $T_TMP/access.log, then LINES (config settings, one a line).
debitd_conf() {
  local f=$1; shift
  DEBITD_PORT=$(free_port) || return 1
  DEBITD_BASE=http://127.0.0.1:$DEBITD_PORT
  {
    echo "listen = ( { address = \"127.0.0.1\"; port = $DEBITD_PORT; } );"
    echo "log = { level = \"info\"; access = \"$T_TMP/access.log\"; };"
    printf '%s\n' "$@"
  } >"$f"
}

# debitd_up FILE: start debitd with FILE (made by debitd_conf; DEBITD_PORT and DEBITD_BASE
# are set from its first line) and wait, bounded, until /status answers. If it exits first
# because the port was taken meanwhile, FILE gets another free port and it starts again
# (3 tries). Sets DEBITD_PID; returns 1 (the reason in $T_TMP/debitd.log) if it did not come up.
debitd_up() {
  local f=$1 try
  DEBITD_PORT=$(sed -n '1s/.*port = \([0-9]*\);.*/\1/p' "$f")
  DEBITD_BASE=http://127.0.0.1:$DEBITD_PORT
  for try in 1 2 3; do
    debitd_spawn "$f"
    wait_http "$DEBITD_BASE/status" 150 "" "$DEBITD_PID" && { debitd_content_ready; return; }
    kill -0 "$DEBITD_PID" 2>/dev/null && return 1   # alive but silent: no point in retrying
    grep -q 'cannot bind: Address already in use' "$T_TMP/debitd.log" || return 1
    DEBITD_PORT=$(free_port) || return 1
    DEBITD_BASE=http://127.0.0.1:$DEBITD_PORT
    sed -i "1s/port = [0-9]*;/port = $DEBITD_PORT;/" "$f"
  done
  return 1
}

# debitd_content_ready [BASE] [NETNS]: bounded (30 s) wait until the debitd at BASE
# ($DEBITD_BASE; reached from network namespace NETNS if given) has its region complete
# (/status content.state "ready"), so that what a test checks is the zero-copy path and no
# generator thread competes with it for the CPUs; debitd answers before that, with
# generated bodies (tests/e2e/server_startup.sh tests those). A debitd from before
# 2026-12-02 (no content.state: ready once it listens) counts as ready, so that benchmarks
# can still compare against such a build (DEBIT_BUILD=).
debitd_content_ready() {
  local pre=()
  [ -n "${2:-}" ] && pre=(ip netns exec "$2")
  wait_for 300 "${pre[@]}" sh -c "curl -s -g --max-time 2 '${1:-$DEBITD_BASE}/status' |
    jq -e '(.content // {}) | ((has(\"state\") | not) or .state == \"ready\")'"
}

# www_new: a tmpfs web root (/dev/shm, removed at exit) with incompressible files
# files/10Mio.dat (10 MiB) and files/1Mio.dat (1 MiB); sets WWW.
www_new() {
  WWW=$(mktemp -d /dev/shm/debit-www.XXXXXX) || return 1
  t_on_exit "rm -rf '$WWW'"
  mkdir -p "$WWW/files"
  head -c 10485760 /dev/urandom >"$WWW/files/10Mio.dat"
  head -c 1048576 /dev/urandom >"$WWW/files/1Mio.dat"
  chmod -R a+rX "$WWW"   # nginx workers run unprivileged
}

# nginx_up: nginx on a free loopback port serving $WWW (made by www_new if unset), ready;
# sets NGINX_PORT, NGINX_PID and NGINX (its base URL). Fails the test if it cannot start.
_nginx_spawn() { nginx_spawn "$WWW" "$1"; }
nginx_up() {
  need_cmd nginx
  [ -n "${WWW:-}" ] || www_new
  if ! up_on_free_port _nginx_spawn "" 50; then
    t_fail "nginx started" "$(cat "$T_TMP"/nginx-*.log 2>/dev/null)"
    t_done
  fi
  NGINX_PORT=$UP_PORT NGINX_PID=$UP_PID NGINX=http://127.0.0.1:$UP_PORT
}

# hdr FILE NAME: value of header NAME in a curl -D dump (case-insensitive, CR stripped).
hdr() { grep -i "^$2:" "$1" | head -1 | sed 's/^[^:]*: *//' | tr -d '\r'; }
