#!/usr/bin/env bash
# `make demo` as an ordinary user (the README's first command): tools/demo run as `nobody`
# (setpriv, no capabilities) on a copy of the tree and the built programs in a directory
# that user can read, with a 16 MiB file. The lab needs root, so it falls back to the
# loopback demo, whose two debitd listeners use congestion controls an unprivileged process
# may set (net.ipv4.tcp_allowed_congestion_control), and it says so; the table has two
# debitd rows and nginx, 5 runs ok each; nothing is left behind.
. "$(dirname "$0")/../lib/common.sh"
need_root "switching to the user nobody"
need_cmd setpriv nginx curl
id nobody >/dev/null 2>&1 || skip_all "no user 'nobody' here"
copy=$(mktemp -d /tmp/debit-demo-user.XXXXXX)
t_on_exit "rm -rf '$copy'"
chmod 755 "$copy"
tar -C "$DEBIT_TOP" --exclude='./build*' --exclude=./.git -cf - . | tar -C "$copy" -xf -
mkdir -p "$copy/build"
for p in debitd debit debit-netctl debit-delayline; do cp "$DEBIT_BUILD/$p" "$copy/build/" 2>/dev/null; done
chmod -R a+rX "$copy"
# debit keeps its runs under XDG_DATA_HOME (docs/store.md): one nobody may write, in the copy.
mkdir -p "$copy/xdg" && chown nobody "$copy/xdg"
allowed=$(cat /proc/sys/net/ipv4/tcp_allowed_congestion_control)
t_diag "net.ipv4.tcp_allowed_congestion_control = $allowed"
before=$(ls -d /dev/shm/debit-demo.* 2>/dev/null | sort)
t0=$(date +%s.%N)
setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups --inh-caps=-all \
  env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp XDG_DATA_HOME="$copy/xdg" \
  DEMO_SIZE=16Mio BUILD=build timeout -k 5 120 "$copy/tools/demo" >"$T_TMP/out" 2>"$T_TMP/err"
rc=$?
secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}')
t_diag "the demo as nobody took $secs s"
out=$(cat "$T_TMP/out") err=$(cat "$T_TMP/err")
check_eq "demo as nobody: exit 0" 0 "$rc"
check "the demo's runs kept in nobody's store" test -s "$copy/xdg/debit/results.db"
[ "$rc" -eq 0 ] || t_diag "$(tail -5 "$T_TMP/err")"
check_match "falls back from the lab, saying why" 'demo: the lab cannot run here: .*root' "$err"
# The two listeners' algorithms, as the demo announced them, must be allowed ones.
ccs=$(printf '%s\n' "$out" | sed -n 's/^demo: debitd [0-9.]* on 127\.0\.0\.1:[0-9]* (\([a-z0-9_]*\)) and :[0-9]* (\([a-z0-9_]*\)); nginx on.*/\1 \2/p')
check_match "announces two listeners and nginx with the shared checksum" '^[a-z0-9_]+ [a-z0-9_]+$' "$ccs"
bad=
for c in $ccs; do [[ " $allowed " == *" $c "* ]] || bad+=" $c"; done
check_eq "both congestion controls are allowed for a user ($allowed)" "" "$bad"
if [[ " $allowed " != *" cubic "* ]]; then
  check_match "says it does not use cubic, and why" \
    "^demo: congestion control [a-z0-9_]+ and [a-z0-9_]+ instead of cubic and bbr \(net\.ipv4\.tcp_allowed_congestion_control = $allowed for a process without CAP_NET_ADMIN\)" "$out"
else
  t_skip "says it does not use cubic" "cubic is allowed here"
fi
for c in $ccs; do
  check_match "table: debitd-$c, 5 runs ok, 0 failed, a median in Mb/s" "^debitd-$c +5 +0 +[0-9]+ Mb/s" "$out"
  check_match "debitd-$c reported cc=$c itself" "^  debitd-$c: offload .*; tcp cc=$c " "$out"
done
check_match "table: nginx, 5 runs ok, 0 failed" '^nginx +5 +0 +[0-9]+ Mb/s' "$out"
check_eq "its tmpfs copy removed" "$before" "$(ls -d /dev/shm/debit-demo.* 2>/dev/null | sort)"
check_eq "no process of the demo left" "" "$(pgrep -u nobody -f "$copy|/tmp/debit-demo\." || true)"
t_done
