#!/usr/bin/env bash
# make deb, then the package's life on this machine (issue 11): dpkg -i creates the debit
# system user and /var/log/debit and enables (does not start) the unit; /usr/sbin/debitd run
# as the unit runs it (user debit, ambient CAP_NET_ADMIN + CAP_NET_BIND_SERVICE, no -c)
# reads the edited /etc/debit/debitd.conf, serves a file on a port below 1024 and logs to
# /var/log/debit; logrotate's snippet rotates that log and SIGUSR1 reopens it; dpkg -r
# leaves only the conffiles (the edited config among them), dpkg -P leaves nothing.
# Before installing (issue 31): the version is debian/changelog's, the package carries a DEP-5
# usr/share/doc/debit/copyright and changelog.Debian.gz (gzip -9n), and lintian finds no
# error and no warning; after dpkg -i, dpkg --verify finds every file as shipped.
# Bounded; the trap purges the package even when a check fails.
. "$(dirname "$0")/../lib/common.sh"
need_root "dpkg -i"
need_cmd dpkg dpkg-deb dpkg-parsechangelog setpriv curl sha256sum gzip od
if dpkg-query -W -f='${db:Status-Status}' debit 2>/dev/null | grep -qv not-installed; then
  skip_all "a package named debit is already installed here; this test will not replace it"
fi
getent passwd debit >/dev/null && skip_all "a user debit exists already (not made by this package)"

deb=$(env -u MAKEFLAGS -u MAKELEVEL make --no-print-directory -C "$DEBIT_TOP" BUILD="$DEBIT_BUILD" deb 2>"$T_TMP/make.err" | tail -1)
check_match "make deb builds build/debit_VERSION-REV_ARCH.deb" '/debit_[0-9.]+-[0-9]+_[a-z0-9]+\.deb$' "$deb"
[ -f "$deb" ] || { t_fail "the .deb exists" "$(tail -5 "$T_TMP/make.err")"; t_done; }
check_eq "its version is debian/changelog's top entry" "$(dpkg-parsechangelog -l "$DEBIT_TOP/debian/changelog" -S Version)" \
  "$(dpkg-deb -f "$deb" Version)"

# The documentation Debian requires of every package: a DEP-5 copyright file and the
# changelog, gzip -9n (no name, no time stamp: the same bytes at every build).
dpkg-deb -x "$deb" "$T_TMP/x"
doc=$T_TMP/x/usr/share/doc/debit
check_match "usr/share/doc/debit/copyright is DEP-5 (machine-readable)" \
  '^Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' "$(head -1 "$doc/copyright" 2>&1)"
check_match "... with a Files: * paragraph and its License" $'Files: \\*\nCopyright: [0-9]{4} .+\nLicense: [a-z]' "$(cat "$doc/copyright" 2>&1)"
check_file_eq "... debian/copyright as it is" "$DEBIT_TOP/debian/copyright" "$doc/copyright"
check "usr/share/doc/debit/changelog.Debian.gz is gzip" gzip -t "$doc/changelog.Debian.gz"
check_file_eq "... of debian/changelog" "$DEBIT_TOP/debian/changelog" <(gzip -dc "$doc/changelog.Debian.gz" 2>/dev/null)
# RFC 1952 header: byte 3 FLG (8: a file name follows), bytes 4-7 MTIME, byte 8 XFL (2: -9)
check_eq "... made by gzip -9n: no name, no time stamp, best compression" "00 00000000 02" \
  "$(od -An -tx1 -j3 -N6 "$doc/changelog.Debian.gz" | awk '{print $1, $2 $3 $4 $5, $6}')"

# lintian's checks (errors and warnings; the one tag overridden is in debian/lintian-overrides,
# with its reason). Info tags (hardening flags of the build) are not checked.
if command -v lintian >/dev/null; then
  lintian "$deb" >"$T_TMP/lintian.out" 2>&1; rc=$?
  grep -v 'running with root privileges is not recommended' "$T_TMP/lintian.out" >"$T_TMP/lintian.tags"
  check_eq "lintian: no error" "" "$(grep '^E:' "$T_TMP/lintian.tags")"
  check_eq "lintian: no warning" "" "$(grep '^W:' "$T_TMP/lintian.tags")"
  check_eq "lintian exits 0" 0 "$rc"
  check_eq "lintian: the overrides are used (initial-upload-closes-no-bugs)" "" \
    "$(grep -E 'unused-override|mismatched-override' "$T_TMP/lintian.tags")"
else
  t_skip "lintian on the .deb" "no lintian (Debian: lintian; tools/deps installs it)"
fi
info=$(dpkg-deb -I "$deb")
check_match "Depends from dpkg-shlibdeps (libmicrohttpd)" 'Depends:.*libmicrohttpd12' "$info"
check_match "Depends: libsystemd0 (sd_notify)" 'Depends:.*libsystemd0' "$info"
check_match "conffile /etc/debit/debitd.conf" '^/etc/debit/debitd.conf$' "$(dpkg-deb -f "$deb" Package >/dev/null; dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles)"
dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|; s|/$||' | grep -v '^$' >"$T_TMP/contents"
conffiles=$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./conffiles)

# dpkg ARGS...: dpkg, retried while another process (an apt-get of another job on this
# machine) holds dpkg's lock: bounded, 180 s; any other failure returns at once.
dpkg_locked() {
  local i rc
  for ((i = 0; i < 180; i++)); do
    dpkg "$@" 2>"$T_TMP/dpkg.err"; rc=$?
    [ $rc -eq 2 ] && grep -q 'dpkg frontend lock\|dpkg status database is locked' "$T_TMP/dpkg.err" || break
    sleep 1
  done
  cat "$T_TMP/dpkg.err" >&2
  return $rc
}
t_on_exit "dpkg_locked -P debit >/dev/null 2>&1"
dpkg_locked -i "$deb" >"$T_TMP/dpkg-i.log" 2>&1; rc=$?
check_eq "dpkg -i exits 0" 0 "$rc"
[ $rc -eq 0 ] || { t_diag "$(tail -5 "$T_TMP/dpkg-i.log")"; t_done; }
uid=$(id -u debit 2>/dev/null)
check_match "postinst created the system user debit" '^[0-9]+$' "$uid"
check_cmp "... a system uid ($uid)" "${uid:-9999}" '<' 1000
check_eq "... with no login shell" /usr/sbin/nologin "$(getent passwd debit | cut -d: -f7)"
check_eq "/var/log/debit is debit's" debit "$(stat -c %U /var/log/debit 2>/dev/null)"
check "the unit is enabled (multi-user.target.wants)" test -L /etc/systemd/system/multi-user.target.wants/debitd.service
check "man debitd finds the page" man -w debitd
check_eq "dpkg --verify debit: every installed file matches the package's md5sums" "" "$(dpkg --verify debit 2>&1)"
check_match "/usr/sbin/debitd without -c reads /etc/debit/debitd.conf" \
  'from /etc/debit/debitd.conf$' "$(/usr/sbin/debitd -t 2>/dev/null | head -1)"

# a port below 1024 nobody uses: CAP_NET_BIND_SERVICE must come from the ambient set
port=
for p in $(shuf -i 700-999 -n 40); do
  ss -Htln "sport = :$p" | grep -q . || { port=$p; break; }
done
[ -n "$port" ] || port=$(free_port)
cat >/etc/debit/debitd.conf <<CONF
# edited for the test: small content, loopback, a log file logrotate knows
listen = ( { address = "127.0.0.1"; port = $port; } );
files = ( { path = "/f.dat"; size = "4MiB"; } );
log = { level = "info"; access = "/var/log/debit/access.log"; };
CONF
cp /etc/debit/debitd.conf "$T_TMP/edited.conf"
# what the unit does (ExecStartPre, then ExecStart) as debit with the ambient capabilities;
# setpriv execs debitd, so the PID t_bg tracks is debitd's
as_service=(setpriv --reuid=debit --regid=debit --init-groups --inh-caps=+net_admin,+net_bind_service
            --ambient-caps=+net_admin,+net_bind_service)
"${as_service[@]}" /usr/sbin/debitd -t >/dev/null 2>"$T_TMP/t.err"; rc=$?
check_eq "ExecStartPre (debitd -t as debit) accepts the edited config" 0 "$rc"
t_bg debitd "${as_service[@]}" /usr/sbin/debitd
DPID=$T_LAST_PID
wait_http "http://127.0.0.1:$port/status" 150 "" "$DPID"
curl -s --max-time 20 -o "$T_TMP/f.dat" -w '%{http_code}' "http://127.0.0.1:$port/f.dat" >"$T_TMP/code"
check_eq "the packaged debitd serves /f.dat on port $port (as debit)" 200 "$(cat "$T_TMP/code")"
check_eq "... the right bytes" "$(curl -s "http://127.0.0.1:$port/f.dat.sha256" | cut -d' ' -f1)" \
  "$(sha256sum <"$T_TMP/f.dat" | cut -d' ' -f1)"
check_match "... read the edited /etc/debit/debitd.conf" 'configuration: /etc/debit/debitd.conf' "$(cat "$T_TMP/debitd.log")"
wait_for 50 test -s /var/log/debit/access.log
wait_for 50 grep -q '"path":"/f.dat.sha256"' /var/log/debit/access.log
# one line per request: the download, its .sha256, and wait_http's /status probe
check_eq "access log in /var/log/debit: the download and its .sha256" "1 1" \
  "$(grep -c '"path":"/f.dat","status":200' /var/log/debit/access.log 2>/dev/null) $(grep -c '"path":"/f.dat.sha256"' /var/log/debit/access.log 2>/dev/null)"

# logrotate with the packaged snippet (its postrotate needs systemd, absent here: the
# signal logrotate would have sent is sent by hand)
if command -v logrotate >/dev/null; then
  logrotate -f -s "$T_TMP/logrotate.state" /etc/logrotate.d/debitd >"$T_TMP/logrotate.log" 2>&1; rc=$?
  check_eq "logrotate -f /etc/logrotate.d/debitd exits 0" 0 "$rc"
  check "... rotated access.log to access.log.1" test -s /var/log/debit/access.log.1
  check_eq "... created a new one, debit's" "debit 640" "$(stat -c '%U %a' /var/log/debit/access.log 2>/dev/null)"
  kill -USR1 "$DPID"
  wait_for 50 grep -q 'SIGUSR1: log files reopened' "$T_TMP/debitd.log"
  curl -s -o /dev/null -r 0-9 "http://127.0.0.1:$port/f.dat"
  wait_for 50 test -s /var/log/debit/access.log
  check_eq "after SIGUSR1 the new transfer is in the new file" 1 "$(grep -c . /var/log/debit/access.log)"
else
  t_skip "logrotate with the packaged snippet" "no logrotate (Debian: logrotate)"
fi
stop_pid "$DPID" TERM
check_eq "SIGTERM stops the packaged debitd with 0" 0 "$STOP_RC"

# dpkg -r: programs, man pages, unit and its enablement go; the conffiles stay
dpkg_locked -r debit >"$T_TMP/dpkg-r.log" 2>&1; rc=$?
check_eq "dpkg -r exits 0" 0 "$rc"
left=()
while read -r f; do
  [ -e "$f" ] && [ ! -d "$f" ] && ! grep -qxF "$f" <<<"$conffiles" && left+=("$f")
done <"$T_TMP/contents"
check_eq "after dpkg -r no file of the package is left but conffiles" "" "${left[*]}"
check_file_eq "... the edited debitd.conf is kept" "$T_TMP/edited.conf" /etc/debit/debitd.conf
check "... the unit is no longer enabled" test ! -e /etc/systemd/system/multi-user.target.wants/debitd.service
check_match "dpkg knows it as config-files" 'config-files' "$(dpkg-query -W -f='${db:Status-Status}' debit 2>&1)"

# dpkg -P: nothing at all
dpkg_locked -P debit >"$T_TMP/dpkg-p.log" 2>&1; rc=$?
check_eq "dpkg -P exits 0" 0 "$rc"
left=()
while read -r f; do [ -e "$f" ] && [ ! -d "$f" ] && left+=("$f"); done <"$T_TMP/contents"
check_eq "after dpkg -P no file of the package is left" "" "${left[*]}"
check "... /etc/debit is gone" test ! -e /etc/debit
check "... /var/log/debit is gone" test ! -e /var/log/debit
check "... the user debit is gone" bash -c '! getent passwd debit >/dev/null'
check "... the group debit is gone" bash -c '! getent group debit >/dev/null'
check "... no enablement state left" bash -c '! ls /var/lib/systemd/deb-systemd-helper-enabled 2>/dev/null | grep -q debitd; ! find /var/lib/systemd/deb-systemd-helper-enabled -name "*debitd*" 2>/dev/null | grep -q .'
t_done
