# Shared by tests/e2e/server_*.sh (sourced after tests/lib/common.sh; not a test itself):
# debitd on a free loopback port with a small test configuration (tests/lib/servers.sh),
# under the short names these tests use: PORT, BASE, srv_conf, srv_start, srv_stop.

need_cmd curl jq sha256sum

# srv_conf FILE [EXTRA CONFIG LINES...]: debitd_conf; exports PORT and BASE.
srv_conf() { debitd_conf "$@"; PORT=$DEBITD_PORT BASE=$DEBITD_BASE; }

# srv_start CONF: start debitd and wait (bounded) until it answers /status, or fail the test
# and stop. Sets DEBITD_PID (and PORT/BASE again, in case another port had to be taken).
srv_start() {
  if ! debitd_up "$1"; then
    t_fail "debitd started" "$(tail -5 "$T_TMP/debitd.log")"
    t_done
  fi
  PORT=$DEBITD_PORT BASE=$DEBITD_BASE
}

# srv_stop: SIGTERM and wait (bounded); sets SRV_RC to the exit status.
srv_stop() { stop_pid "$DEBITD_PID" TERM; SRV_RC=$STOP_RC; }

# srv_transfer URL [curl args...]: one download to $T_TMP/body; prints the transfer's
# record (/transfers/ID on the same server) once it is no longer "sending" (bounded: 5 s).
srv_transfer() {
  local url=$1 id hdr base; shift
  hdr=$(wire_get WIRE_HDR_TRANSFER)
  base=$(sed -E 's#^(https?://[^/]+).*#\1#' <<<"$url")
  id=$(curl -s -D - -o "$T_TMP/body" "$@" "$url" | tr -d '\r' | awk -v h="$hdr" 'tolower($1) == tolower(h ":") {print $2}')
  srv_record "$base" "$id"
}

# srv_record BASE ID: the record /transfers/ID at BASE once it is no longer "sending"
# (bounded: 5 s).
srv_record() {
  local rec=""
  for _ in $(seq 50); do
    rec=$(curl -s "$1/transfers/$2")
    [ "$(jq -r .state <<<"$rec")" = sending ] || break
    sleep 0.1
  done
  echo "$rec"
}

# sha_of URL: the hex digest debitd announces at URL.sha256.
sha_of() { curl -s "$1.sha256" | cut -d' ' -f1; }

# notify_listen SOCK OUT SECONDS: a datagram listener standing in for systemd's
# NOTIFY_SOCKET, in the background (tracked), bounded to SECONDS: each sd_notify message
# becomes one line of OUT (its newlines as spaces). Returns once SOCK exists.
notify_listen() {
  python3 - "$1" "$2" "$3" <<'PY' &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1]); s.settimeout(0.5)
end = time.time() + float(sys.argv[3])
with open(sys.argv[2], "a") as out:
    while time.time() < end:
        try:
            msg = s.recv(4096).decode()
        except socket.timeout:
            continue
        out.write(msg.replace("\n", " ") + "\n"); out.flush()
PY
  t_track $!
  wait_for 50 test -S "$1"
}
