# Shared by tests/e2e/client_*.sh (sourced after tests/lib/common.sh; not a test itself).
# nginx serving a tmpfs web root (www_new, nginx_up: tests/lib/servers.sh) is the
# public-mirror stand-in; here: the misbehaving fake server and a debitd for the client.

need_cmd jq curl

# fake_up: tests/e2e/client_fakesrv.py on a free port; sets FAKE_PORT, FAKE, FAKE_PID.
_fake_spawn() { t_bg "fake-$1" python3 "$DEBIT_TOP/tests/e2e/client_fakesrv.py" "$1"; }
fake_up() {
  need_cmd python3
  if ! up_on_free_port _fake_spawn "" 50; then
    t_fail "fake server started" "$(cat "$T_TMP"/fake-*.log 2>/dev/null)"
    t_done
  fi
  FAKE_PORT=$UP_PORT FAKE_PID=$UP_PID FAKE=http://127.0.0.1:$UP_PORT
}

# debitd_serve_10mio: debitd serving /files/10Mio.dat on a free port (debitd_conf/debitd_up);
# sets DEBITD_URL, or returns 1 and leaves it empty.
debitd_serve_10mio() {
  DEBITD_URL=
  [ -x "$DEBITD" ] || return 1
  debitd_conf "$T_TMP/debitd.conf" 'files = ( { path = "/files/10Mio.dat"; size = "10Mio"; } );' || return 1
  debitd_up "$T_TMP/debitd.conf" || return 1
  DEBITD_URL=$DEBITD_BASE/files/10Mio.dat
}

# jq, raw output.
jqr() { jq -r "$@"; }
