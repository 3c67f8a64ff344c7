# Shared by tests/e2e/client_*.sh (sourced after tests/lib/common.sh; not a test itself).
# A tmpfs web root with incompressible files, nginx serving it (the public-mirror
# stand-in), and the misbehaving fake server for failure cases.

need_cmd jq curl

# www_new: tmpfs dir (/dev/shm) with files/10Mio.dat (10 MiB) and files/1Mio.dat; sets WWW.
www_new() {
  WWW=$(mktemp -d /dev/shm/debit-www.XXXXXX) || return 1
  t_on_exit "rm -rf '$WWW'"
  mkdir -p "$WWW/files"
  head -c 10485760 /dev/urandom >"$WWW/files/10Mio.dat"
  head -c 1048576 /dev/urandom >"$WWW/files/1Mio.dat"
  chmod -R a+rX "$WWW"   # nginx workers run unprivileged
}

# nginx_up: nginx on a free port serving $WWW; sets NGINX_PORT and NGINX.
nginx_up() {
  # A free port can be taken between free_port and bind (ephemeral ports of other
  # connections): try a few ports before giving up.
  local try
  for try in 1 2 3; do
    NGINX_PORT=$(free_port)
    start_nginx "$WWW" "$NGINX_PORT"
    NGINX=http://127.0.0.1:$NGINX_PORT
    wait_http "$NGINX/" 50 && return 0
    kill "$NGINX_PID" 2>/dev/null
  done
  t_fail "nginx started" "$(cat "$T_TMP"/nginx-*.log 2>/dev/null)"
  t_done
}

# fake_up: the misbehaving server on a free port; sets FAKE_PORT, FAKE, FAKE_PID.
fake_up() {
  need_cmd python3
  local try
  for try in 1 2 3; do
    FAKE_PORT=$(free_port)
    t_bg "fake-$FAKE_PORT" python3 "$DEBIT_TOP/tests/e2e/client_fakesrv.py" "$FAKE_PORT"
    FAKE_PID=$T_LAST_PID
    FAKE=http://127.0.0.1:$FAKE_PORT
    wait_http "$FAKE/" 50 && return 0
    kill "$FAKE_PID" 2>/dev/null
  done
  t_fail "fake server started" "$(cat "$T_TMP"/fake-*.log)"
  t_done
}

# debitd_up: debitd serving /files/10Mio.dat on a free port, when build/debitd exists and
# serves files; sets DEBITD_URL, or leaves it empty.
debitd_up() {
  DEBITD_URL=
  [ -x "$DEBITD" ] || return 1
  local port try
  for try in 1 2 3; do
    port=$(free_port)
    cat >"$T_TMP/debitd.conf" <<CONF
listen = ( { address = "127.0.0.1"; port = $port; } );
files = ( { path = "/files/10Mio.dat"; size = "10Mio"; } );
CONF
    start_debitd "$T_TMP/debitd.conf"
    if wait_http "http://127.0.0.1:$port/files/10Mio.dat" 50 &&
       [ "$(curl -s -o /dev/null -w '%{size_download}' "http://127.0.0.1:$port/files/10Mio.dat")" = 10485760 ]; then
      DEBITD_URL=http://127.0.0.1:$port/files/10Mio.dat
      return 0
    fi
    kill "$DEBITD_PID" 2>/dev/null
  done
  return 1
}

# jq over a file, raw output.
jqr() { jq -r "$@"; }
