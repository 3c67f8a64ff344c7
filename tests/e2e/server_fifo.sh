#!/usr/bin/env bash
# A FIFO where debitd expects a file (issue 31): a reader-less FIFO blocked debitd's main
# thread in open(2) for ever (a reload never ended, SIGTERM went unanswered). A FIFO at the
# configuration, access log, certificate or key path is now refused by its type, at once and
# naming the path: by debitd -t (exit 2 within 3 s) and by a reload (refused, the running
# configuration stays, debitd still serves), and SIGTERM still stops it. An anonymous pipe
# (-c <(...)) is still read at start.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
need_cmd openssl mkfifo timeout
C=$T_TMP/c
mkdir "$C"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 -subj "/CN=debit-fifo" \
  -keyout "$C/a.key" -out "$C/a.crt" 2>"$C/err" || { t_fail "openssl made a test certificate" "$(cat "$C/err")"; t_done; }
mkfifo "$T_TMP/fifo"

# conf FILE CERT KEY LOG: an HTTPS listener, then the HTTP one (last: the port srv_start uses)
conf() {
  srv_conf "$1" 'files = ( { path = "/f.dat"; size = "64KiB"; } );'
  local tls_port
  tls_port=$(free_port)
  sed -i "1s|( {|( { address = \"127.0.0.1\"; port = $tls_port; tls = { cert = \"$2\"; key = \"$3\"; }; }, {|" "$1"
  sed -i "s|access = \"[^\"]*\"|access = \"$4\"|" "$1"
}
# t_quick NAME WANT_RE CONF: debitd -t refuses CONF within 3 s, exit 2, message matching WANT_RE
t_quick() {
  local t0 out rc
  t0=$(date +%s%N)
  out=$(timeout -k 1 10 "$DEBITD" -t -c "$3" 2>&1); rc=$?
  local ms=$((($(date +%s%N) - t0) / 1000000))
  check_eq "-t, FIFO at the $1: exit 2" 2 "$rc"
  check_cmp "... within 3 s (took $ms ms)" "$ms" "<" 3000
  check_match "... naming the path" "$2" "$out"
}
F=$T_TMP/fifo
conf "$T_TMP/cert.conf" "$F" "$C/a.key" "$T_TMP/access.log"
t_quick certificate "listen\[0\]\.tls\.cert: \"$F\" is a FIFO, not a regular file" "$T_TMP/cert.conf"
conf "$T_TMP/key.conf" "$C/a.crt" "$F" "$T_TMP/access.log"
t_quick key "listen\[0\]\.tls\.key: \"$F\" is a FIFO, not a regular file" "$T_TMP/key.conf"
conf "$T_TMP/log.conf" "$C/a.crt" "$C/a.key" "$F"
t_quick "access log" "log\.conf:2: log\.access: \"$F\" is a FIFO, not a regular file" "$T_TMP/log.conf"
t_quick configuration "$F: cannot read: it is a FIFO, not a regular file" "$F"
conf "$T_TMP/ok.conf" "$C/a.crt" "$C/a.key" "$T_TMP/access.log"
"$DEBITD" -t -c <(cat "$T_TMP/ok.conf") >/dev/null 2>&1
check_eq "an anonymous pipe (-c <(...)) is still read at start" 0 $?

# --- reloads: each FIFO refused at once, debitd serves on, SIGTERM stops it ---------------------
cp "$T_TMP/ok.conf" "$T_TMP/run.conf"
srv_start "$T_TMP/run.conf"
refusals() { grep -c "reload refused" "$T_TMP/debitd.log"; }
n=0
reload_refused() { # NAME WANT_RE: SIGHUP, refused within 3 s with WANT_RE
  n=$((n + 1))
  kill -HUP "$DEBITD_PID"
  if wait_for 30 eval '[ "$(refusals)" -ge '$n' ]'; then
    check_match "reload, FIFO at the $1: refused at once, naming the path" "$2" "$(grep "reload refused" "$T_TMP/debitd.log" | tail -1)"
  else
    t_fail "reload, FIFO at the $1: refused within 3 s" "$(tail -3 "$T_TMP/debitd.log")"
  fi
  check_eq "... debitd still serves" 200 "$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' "$BASE/f.dat")"
}
cp "$T_TMP/log.conf" "$T_TMP/run.conf.new"; sed -i "1s/port = [0-9]*;/port = $PORT;/" "$T_TMP/run.conf.new"
# the same listeners as running (ports), only the log changed
sed -i "1s|.*|$(head -1 "$T_TMP/run.conf" | sed 's/[|&]/\\&/g')|" "$T_TMP/run.conf.new"
mv "$T_TMP/run.conf.new" "$T_TMP/run.conf"
reload_refused "access log" "log\.access: \"$F\" is a FIFO, not a regular file"
cp "$T_TMP/ok.conf" "$T_TMP/run.conf"
mv "$C/a.crt" "$C/a.crt.real"; mkfifo "$C/a.crt"
reload_refused certificate "listen\[0\]\.tls\.cert: \"$C/a\.crt\" is a FIFO, not a regular file"
rm "$C/a.crt"; mv "$C/a.crt.real" "$C/a.crt"
mv "$C/a.key" "$C/a.key.real"; mkfifo "$C/a.key"
reload_refused key "\"$C/a\.key\" is a FIFO, not a regular file"
rm "$C/a.key"; mv "$C/a.key.real" "$C/a.key"
mv "$T_TMP/run.conf" "$T_TMP/run.conf.real"; mkfifo "$T_TMP/run.conf"
reload_refused configuration "$T_TMP/run\.conf: cannot read: it is a FIFO, not a regular file"
t0=$SECONDS
srv_stop
check_eq "SIGTERM after all that: exit 0" 0 "$SRV_RC"
check_cmp "... within 5 s" "$((SECONDS - t0))" "<" 5
t_done
