#!/usr/bin/env bash
# debitd under a service manager (issue 11): sd_notify READY=1 once it serves and STOPPING=1
# at SIGTERM (to a NOTIFY_SOCKET this test listens on, as systemd would); SIGUSR1 reopens
# the access log after it was renamed (logrotate); without -c, the compiled-in path or the
# built-in defaults, said by -t.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
need_cmd python3

# --- without -c: the compiled-in path (debitd --help names it) or the built-in defaults ---
def=$("$DEBITD" --help | sed -n 's/^Without -c, debitd reads \(.*\) if it exists.*/\1/p')
check_match "--help names the configuration read without -c" '^/.*/debit/debitd\.conf$' "$def"
if [ -e "$def" ]; then
  t_skip "-t without -c says the built-in defaults" "$def exists on this machine"
else
  out=$("$DEBITD" -t 2>"$T_TMP/t.err"); rc=$?
  check_eq "-t without -c (no $def) exits 0" 0 "$rc"
  check_match "-t says the built-in defaults are in use" "^# no -c and no $def: the built-in defaults$" "$out"
  check_match "-t lists the built-in files" '/ram/1GiB\.dat' "$out"
fi

# --- sd_notify: a datagram listener standing in for systemd (bounded: 60 s) ---
sock=$T_TMP/notify.sock
notify_listen "$sock" "$T_TMP/notify.txt" 60

srv_conf "$T_TMP/d.conf" 'files = ( { path = "/f.dat"; size = "1MiB"; } );'
export NOTIFY_SOCKET=$sock
srv_start "$T_TMP/d.conf"
unset NOTIFY_SOCKET
wait_for 50 grep -q READY=1 "$T_TMP/notify.txt"
check_match "READY=1 sent to NOTIFY_SOCKET once serving" '^READY=1 STATUS=serving' "$(cat "$T_TMP/notify.txt" 2>/dev/null)"
check_match "the log names the configuration read" "info: configuration: $T_TMP/d.conf\$" "$(cat "$T_TMP/debitd.log")"
check_nomatch "no STOPPING=1 while serving" 'STOPPING=1' "$(cat "$T_TMP/notify.txt" 2>/dev/null)"

# --- SIGUSR1 reopens the access log ---
code=$(curl -s -o /dev/null -w '%{http_code}' "$BASE/f.dat")
check_eq "download before the rotation" 200 "$code"
wait_for 50 test -s "$T_TMP/access.log"
mv "$T_TMP/access.log" "$T_TMP/access.log.1"
kill -USR1 "$DEBITD_PID"
wait_for 50 grep -q 'SIGUSR1: log files reopened' "$T_TMP/debitd.log"
check_match "SIGUSR1 is logged as a reopen" 'SIGUSR1: log files reopened' "$(cat "$T_TMP/debitd.log")"
check "debitd still runs after SIGUSR1" kill -0 "$DEBITD_PID"
check "SIGUSR1 created a new access log" test -e "$T_TMP/access.log"
code=$(curl -s -o /dev/null -w '%{http_code}' -r 0-99 "$BASE/f.dat")
check_eq "download after the rotation" 206 "$code"
wait_for 50 test -s "$T_TMP/access.log"
new=$(cat "$T_TMP/access.log" 2>/dev/null)
old=$(grep -v '"path":"/status"' "$T_TMP/access.log.1") # every request has a line: srv_start's probe too
check_eq "the new file has one line" 1 "$(printf '%s\n' "$new" | grep -c .)"
check_eq "... the transfer after the signal" 206 "$(printf '%s\n' "$new" | jq -r .status)"
check_eq "the renamed file keeps the earlier line only" 1 "$(printf '%s\n' "$old" | grep -c .)"
check_eq "... the transfer before it" 200 "$(printf '%s\n' "$old" | jq -r .status)"
# the reopened descriptor is O_APPEND and still close-on-exec (dup3), as fopen("ae") made it
flags=
for f in /proc/"$DEBITD_PID"/fd/*; do
  [ "$(readlink "$f")" = "$T_TMP/access.log" ] && flags=$(awk '/^flags:/ {print $2}' /proc/"$DEBITD_PID"/fdinfo/"${f##*/}")
done
check "reopened access log is O_APPEND|O_CLOEXEC (flags ${flags:-none})" \
  python3 -c "import os,sys; f=int(sys.argv[1],8); sys.exit(not (f & os.O_APPEND and f & os.O_CLOEXEC))" "${flags:-0}"

# a reopen that fails (the name is now a folder) is logged; the old file stays in use
mv "$T_TMP/access.log" "$T_TMP/access.log.2"
mkdir "$T_TMP/access.log"
kill -USR1 "$DEBITD_PID"
wait_for 50 grep -q 'SIGUSR1: log.access: cannot reopen' "$T_TMP/debitd.log"
check_match "a failed reopen is logged with the reason" 'error: SIGUSR1: log.access: cannot reopen ".*access.log": Is a directory' "$(cat "$T_TMP/debitd.log")"
code=$(curl -s -o /dev/null -w '%{http_code}' "$BASE/f.dat")
check_eq "still serving after a failed reopen" 200 "$code"
wait_for 50 eval '[ $(grep -c . "$T_TMP/access.log.2") -ge 2 ]'
check_eq "... logging to the file it had" 2 "$(grep -c . "$T_TMP/access.log.2")"

# --- SIGTERM: STOPPING=1, exit 0 ---
srv_stop
check_eq "SIGTERM: exit 0" 0 "$SRV_RC"
check_match "STOPPING=1 sent at SIGTERM" 'STOPPING=1' "$(cat "$T_TMP/notify.txt")"
check_eq "READY=1 sent once" 1 "$(grep -c READY=1 "$T_TMP/notify.txt")"

# --- without NOTIFY_SOCKET nothing is sent and nothing complains ---
rmdir "$T_TMP/access.log"
srv_start "$T_TMP/d.conf"
srv_stop
check_eq "outside systemd: exit 0" 0 "$SRV_RC"
check_nomatch "outside systemd: no sd_notify warning" 'sd_notify' "$(cat "$T_TMP/debitd.log")"
t_done
