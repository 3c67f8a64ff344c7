#!/usr/bin/env bash
# make install / make uninstall into a scratch DESTDIR with PREFIX=/usr (Debian's layout,
# issue 11): what lands where, an edited debitd.conf is never overwritten (the new one goes
# beside it as .dist) nor removed, the man pages are clean under `man --warnings` and name
# every option of --help, the unit passes `systemd-analyze verify` (its security exposure
# is printed and bounded), bash completion completes, and uninstall leaves nothing but the
# edited config.
. "$(dirname "$0")/../lib/common.sh"
need_cmd make man cmp

B=$DEBIT_BUILD/deb   # the tree make deb uses (PREFIX=/usr compiled in)
R=$T_TMP/root
mk() { env -u MAKEFLAGS -u MAKELEVEL make --no-print-directory -C "$DEBIT_TOP" BUILD="$B" PREFIX=/usr DESTDIR="$R" "$@"; }

check "make install PREFIX=/usr DESTDIR=..." mk install
for f in usr/sbin/debitd usr/bin/debit usr/sbin/debit-netctl usr/sbin/debit-delayline \
         etc/debit/debitd.conf etc/logrotate.d/debitd lib/systemd/system/debitd.service \
         usr/share/man/man8/debitd.8 usr/share/man/man5/debitd.conf.5 usr/share/man/man1/debit.1 \
         usr/share/man/man8/debit-netctl.8 usr/share/man/man8/debit-delayline.8 \
         usr/share/bash-completion/completions/debit usr/share/bash-completion/completions/debitd; do
  check "installed /$f" test -s "$R/$f"
done
check_file_eq "debitd.conf is etc/debitd.conf" "$DEBIT_TOP/etc/debitd.conf" "$R/etc/debit/debitd.conf"
check_match "the installed debitd reads /etc/debit/debitd.conf without -c" \
  'Without -c, debitd reads /etc/debit/debitd.conf if it exists' "$("$R/usr/sbin/debitd" --help)"
check_match "the unit starts /usr/sbin/debitd" '^ExecStart=/usr/sbin/debitd$' "$(cat "$R/lib/systemd/system/debitd.service")"

# an edited config survives a second install; the new version lands beside it
echo '# edited by the operator' >>"$R/etc/debit/debitd.conf"
cp "$R/etc/debit/debitd.conf" "$T_TMP/edited.conf"
check "make install again" mk install
check_file_eq "the edited debitd.conf is kept" "$T_TMP/edited.conf" "$R/etc/debit/debitd.conf"
check_file_eq "the new one is debitd.conf.dist" "$DEBIT_TOP/etc/debitd.conf" "$R/etc/debit/debitd.conf.dist"

# man pages: no groff/man warnings, and every option --help shows is documented
for m in "$R"/usr/share/man/man*/*; do
  w=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$m" 2>&1 >/dev/null)
  check_eq "man --warnings -l ${m##*/}: clean" "" "$w"
done
opts_of() { "$1" --help 2>&1 | grep -oE '(^|[ ,])--?[A-Za-z0-9][A-Za-z0-9-]*' | tr -d ' ,' | sort -u; }
for pair in debitd:man8/debitd.8 debit:man1/debit.1 debit-netctl:man8/debit-netctl.8 \
            debit-delayline:man8/debit-delayline.8; do
  prog=${pair%%:*} page=$R/usr/share/man/${pair#*:}
  bin=$R/usr/sbin/$prog; [ -x "$bin" ] || bin=$R/usr/bin/$prog
  src=$(sed 's/\\-/-/g' "$page")
  missing=() n=0
  while read -r o; do
    n=$((n + 1))
    printf '%s\n' "$src" | grep -Eq -- "(^|[^A-Za-z0-9-])$o([^A-Za-z0-9-]|$)" || missing+=("$o")
  done < <(opts_of "$bin")
  check_cmp "$prog --help lists options ($n)" "$n" '>=' 3
  check_eq "$prog(${page##*.}) documents every option of --help" "" "${missing[*]}"
done

# the unit: systemd-analyze verify (paths pointed into the scratch root) and its score
if command -v systemd-analyze >/dev/null; then
  sed "s|/usr/sbin/debitd|$R/usr/sbin/debitd|g" "$R/lib/systemd/system/debitd.service" >"$T_TMP/debitd.service"
  out=$(MANPATH=$R/usr/share/man systemd-analyze verify "$T_TMP/debitd.service" 2>&1); rc=$?
  check_eq "systemd-analyze verify debitd.service: exit 0" 0 "$rc"
  check_eq "systemd-analyze verify debitd.service: no message" "" "$out"
  score=$(systemd-analyze security --offline=true "$R/lib/systemd/system/debitd.service" 2>/dev/null |
          sed -n 's/.*Overall exposure level for debitd.service: \([0-9.]*\).*/\1/p')
  t_diag "systemd-analyze security --offline=true debitd.service: $score"
  check_cmp "systemd-analyze security exposure ($score) below 2.0 (docs/deploy.md)" "${score:-99}" '<' 2.0
  for k in Type=notify 'ExecStartPre=/usr/sbin/debitd -t' 'ExecReload=/bin/kill -HUP $MAINPID' User=debit \
           'AmbientCapabilities=CAP_NET_ADMIN CAP_NET_BIND_SERVICE' ProtectSystem=strict ProtectHome=yes \
           PrivateTmp=yes NoNewPrivileges=yes 'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX AF_NETLINK' \
           MemoryDenyWriteExecute=yes SystemCallFilter=@system-service RuntimeDirectory=debitd; do
    check "unit has $k" grep -qxF -- "$k" "$R/lib/systemd/system/debitd.service"
  done
  # scheduled probing (docs/store.md): installed, disabled, randomized
  sed "s|/usr/bin/debit|$R/usr/bin/debit|g" "$R/lib/systemd/system/debit-probe.service" >"$T_TMP/debit-probe.service"
  cp "$R/lib/systemd/system/debit-probe.timer" "$T_TMP/"
  out=$(cd "$T_TMP" && MANPATH=$R/usr/share/man systemd-analyze verify debit-probe.service debit-probe.timer 2>&1); rc=$?
  check_eq "systemd-analyze verify debit-probe.service and .timer: exit 0, no message" "0 " "$rc $out"
  check "probe timer: RandomizedDelaySec" grep -q '^RandomizedDelaySec=' "$R/lib/systemd/system/debit-probe.timer"
  check_match "probe service runs the scenario file" \
    '^ExecStart=/usr/bin/debit -q --no-progress --scenario /etc/debit/probe.conf \$DEBIT_PROBE_ARGS$' \
    "$(cat "$R/lib/systemd/system/debit-probe.service")"
  check "probe service has no [Install]: only the timer is enabled" \
    bash -c "! grep -q '^\[Install\]' '$R/lib/systemd/system/debit-probe.service'"
  check "probe timer not enabled by make install" test ! -e "$R/etc/systemd/system/timers.target.wants/debit-probe.timer"
  check_file_eq "probe.conf.example installed" "$DEBIT_TOP/etc/probe.conf.example" "$R/etc/debit/probe.conf.example"
  check "probe.conf.example is a valid scenario (debit -t)" "$R/usr/bin/debit" -t --db none --scenario "$R/etc/debit/probe.conf.example"
else
  t_skip "systemd-analyze verify" "no systemd-analyze (Debian: systemd)"
fi

# bash completion, from the installed scripts and programs
comp() { # PROG WORDS... : what the installed completion of PROG offers for the last word
  local prog=$1 bin=$R/usr/sbin/$1; shift
  [ -x "$bin" ] || bin=$R/usr/bin/$prog
  bash -c 'f=$1 fn=$2; shift 2; source "$f"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); "$fn"; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "$R/usr/share/bash-completion/completions/$prog" "_${prog//-/_}" "$bin" "$@"
}
check_eq "completion: debitd --resto<TAB>" "--restore-offload" "$(comp debitd --resto)"
check_eq "completion: debitd --log-level w<TAB>" "warn" "$(comp debitd --log-level w)"
check_eq "completion: debit --no-p<TAB>" "--no-progress" "$(comp debit --no-p)"
check_eq "completion: debit --format m<TAB>" "markdown" "$(comp debit --format m)"
check_eq "completion: debit hist<TAB>" "history" "$(comp debit hist)"
check_eq "completion: debit history --ev<TAB>" "--every" "$(comp debit history --ev)"
check_eq "completion: debit --vant<TAB>" "--vantage" "$(comp debit --vant)"

# uninstall: nothing left but the edited config
check "make uninstall" mk uninstall
left=$(cd "$R" && find . ! -type d | sort)
check_eq "uninstall leaves only the edited debitd.conf" "./etc/debit/debitd.conf" "$left"
check_file_eq "... unchanged" "$T_TMP/edited.conf" "$R/etc/debit/debitd.conf"
# an unedited config is removed with the rest
check "install over the kept config" mk install
cp "$DEBIT_TOP/etc/debitd.conf" "$R/etc/debit/debitd.conf"
check "uninstall again" mk uninstall
check_eq "uninstall of an unedited install leaves no file" "" "$(cd "$R" && find . ! -type d)"
t_done
