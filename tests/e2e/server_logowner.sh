#!/usr/bin/env bash
# The access log belongs to the user debitd runs as (issue 31). The procedure of README.md
# and docs/deploy.md (edit the configuration, `debitd -t` as root, start) as root with
# user = "nobody" and log.access in a directory of the test's: -t creates no file, the
# start creates it for nobody, and SIGUSR1 (after a rotation too) and SIGHUP succeed. The
# same as the systemd unit does it (User= runs debitd and its ExecStartPre -t as the user)
# after root's -t. A root-owned log left by an older -t is refused with its owner and the
# chown that fixes it; a root-owned directory is accepted with a warning (debitd creates the
# file for the user; a rotation must too: logrotate's create).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
need_root "starting debitd as root with a user to drop to"
need_cmd setpriv stat
id nobody >/dev/null 2>&1 || skip_all "needs the user nobody"
NOGROUP=$(id -gn nobody)
chmod 0755 "$T_TMP" # nobody re-reads the configuration here, as from /etc/debit
D=$T_TMP/log
mkdir "$D"
chown nobody:"$NOGROUP" "$D" # as the unit's LogsDirectory= and the package's postinst make it
LOG=$D/access.log
owner() { stat -c '%U' "$1"; }

# usr1_ok / hup_ok N: the signal's outcome line in the log (bounded wait), N-th reload
usr1_ok() { wait_for 50 eval '[ "$(grep -c "SIGUSR1: log files reopened" "$T_TMP/debitd.log")" -ge '"$1"' ]'; }
reloaded() { wait_for 50 grep -q "reload: generation $1 " "$T_TMP/debitd.log"; }
one_line_for() { # a download's transfer ID, once it is in the access log (bounded)
  local id
  id=$(curl -s -D - -o /dev/null "$BASE/f.dat" | hdr /dev/stdin "$(wire_get WIRE_HDR_TRANSFER)")
  wait_for 50 grep -q "\"$id\"" "$LOG" && echo "$id"
}

# --- the documented procedure, as root with user = "nobody" ------------------------------------
srv_conf "$T_TMP/d.conf" 'files = ( { path = "/f.dat"; size = "64KiB"; } );' 'user = "nobody";'
sed -i "s|access = \"[^\"]*\"|access = \"$LOG\"|" "$T_TMP/d.conf"
out=$("$DEBITD" -t -c "$T_TMP/d.conf" 2>&1); rc=$?
check_eq "debitd -t as root: exit 0" 0 "$rc"
check_eq "debitd -t creates no log file" no "$([ -e "$LOG" ] && echo yes || echo no)"
srv_start "$T_TMP/d.conf"
check_eq "the start created the log for nobody" nobody "$(owner "$LOG")"
check_match "a download is logged" . "$(one_line_for)"
kill -USR1 "$DEBITD_PID"
check "SIGUSR1: reopened" usr1_ok 1
mv "$LOG" "$LOG.1" # a rotation without logrotate's create: nobody makes the new file
kill -USR1 "$DEBITD_PID"
check "SIGUSR1 after a rotation: reopened" usr1_ok 2
check_eq "... the new file is nobody's" nobody "$(owner "$LOG")"
check_match "... and gets the next line" . "$(one_line_for)"
sed -i 's|^files = .*|files = ( { path = "/f.dat"; size = "64KiB"; }, { path = "/g.dat"; size = "4KiB"; } );|' "$T_TMP/d.conf"
kill -HUP "$DEBITD_PID"
check "SIGHUP: reload applied (generation 2)" reloaded 2
check_eq "... serving the new file" 200 "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/g.dat")"
check_nomatch "no 'Permission denied', no refused reload" 'Permission denied|reload refused' "$(cat "$T_TMP/debitd.log")"
srv_stop
check_eq "SIGTERM: exit 0" 0 "$SRV_RC"

# --- as the systemd unit: root's -t first, then -t and the start as the user (User=) ---------
rm -f "$LOG" "$LOG.1"
srv_conf "$T_TMP/u.conf" 'files = ( { path = "/f.dat"; size = "64KiB"; } );'
sed -i "s|access = \"[^\"]*\"|access = \"$LOG\"|" "$T_TMP/u.conf"
"$DEBITD" -t -c "$T_TMP/u.conf" >/dev/null 2>&1
check_eq "root's debitd -t (no user setting): exit 0, no file made" "0 no" "$? $([ -e "$LOG" ] && echo yes || echo no)"
as_user=(setpriv --reuid=nobody --regid="$NOGROUP" --clear-groups)
"${as_user[@]}" "$DEBITD" -t -c "$T_TMP/u.conf" >/dev/null 2>&1
check_eq "ExecStartPre as nobody: debitd -t exit 0" 0 $?
t_bg debitd "${as_user[@]}" "$DEBITD" -c "$T_TMP/u.conf"; DEBITD_PID=$T_LAST_PID
wait_http "$BASE/status" 150 "" "$DEBITD_PID"
check "started as nobody" curl -sf -o /dev/null "$BASE/status"
check_eq "... its log is nobody's" nobody "$(owner "$LOG")"
kill -USR1 "$DEBITD_PID"
check "... SIGUSR1: reopened" usr1_ok 1
kill -HUP "$DEBITD_PID"
check "... SIGHUP: reload applied" reloaded 2
srv_stop

# --- a root-owned log (as an older debitd -t left it): refused, with its owner and the fix ----
rm -f "$LOG"
install -o root -m 0644 /dev/null "$LOG"
out=$("$DEBITD" -t -c "$T_TMP/d.conf" 2>&1); rc=$?
check_eq "root-owned log, user nobody: -t exit 2" 2 "$rc"
check_match "... naming the file, its owner and the chown" \
  "d\.conf:2: log\.access: \"$LOG\" is owned by root \(uid 0\), mode 0644, and user nobody \(uid 65534\) cannot write it.*chown nobody \"$LOG\"" "$out"
"$DEBITD" -c "$T_TMP/d.conf" >"$T_TMP/start.log" 2>&1
check_eq "... and a start exits 2 before serving" 2 $?

# --- a directory root keeps: accepted with a warning; debitd creates the file for nobody ---------
rm -f "$LOG"
chown root:root "$D"
out=$("$DEBITD" -t -c "$T_TMP/d.conf" 2>&1); rc=$?
check_eq "root's log directory, user nobody: -t exit 0" 0 "$rc"
check_match "... with a warning about rotations" "warn: .*log\.access: user nobody \(uid 65534\) cannot create files in $D: debitd creates" "$out"
check_eq "... and no file made" no "$([ -e "$LOG" ] && echo yes || echo no)"
srv_start "$T_TMP/d.conf"
check_eq "the start made it nobody's" nobody "$(owner "$LOG")"
kill -USR1 "$DEBITD_PID"
check "SIGUSR1: reopened" usr1_ok 1
sed -i 's|size = "4KiB"|size = "8KiB"|' "$T_TMP/d.conf"
kill -HUP "$DEBITD_PID"
check "SIGHUP: reload applied" reloaded 2
srv_stop

# --- a directory nobody cannot even reach: refused ---------------------------------------------
rm -f "$LOG"
chmod 0700 "$D"
out=$("$DEBITD" -t -c "$T_TMP/d.conf" 2>&1); rc=$?
check_eq "unreachable log directory: -t exit 2" 2 "$rc"
check_match "... saying so, with the owner and the fix" "cannot even reach $D \(owned by root \(uid 0\), mode 0700\): make the directory writable by that user \(chown nobody \"$D\"\)" "$out"
t_done
