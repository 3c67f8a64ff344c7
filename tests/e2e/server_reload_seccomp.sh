#!/usr/bin/env bash
# Reloads after the privilege drop look no name up (issue 31): with user = "nobody" and
# seccomp = "kill", each reload used to look the user up again (getpwnam), and glibc retries
# nscd's socket every 100th lookup: a connect the filter does not allow, which killed
# debitd at about the 100th SIGHUP. The user and group are resolved once at start; here 200
# reloads, each changing limits.per_ip and waited for (bounded) in /status, leave debitd
# alive and serving; strace of a few reloads shows no passwd, group or nscd access; a
# reload that names another user is refused without a lookup.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
need_root "switching users and a seccomp filter that kills"
id nobody >/dev/null 2>&1 || skip_all "needs the user nobody"
chmod o+x "$T_TMP" # nobody re-reads the configuration here

conf() { # PER_IP [EXTRA]: the configuration, rewritten in place (same port)
  {
    echo "listen = ( { address = \"127.0.0.1\"; port = $PORT; } );"
    echo 'log = { level = "info"; access = "-"; };' # the log file's owner: server_logowner.sh
    echo 'files = ( { path = "/f.dat"; size = "1MiB"; } );'
    echo "limits = { per_ip = $1; };"
    echo "user = \"${2:-nobody}\";"
    echo 'seccomp = "kill";'
  } >"$T_TMP/s.conf.new"
  mv "$T_TMP/s.conf.new" "$T_TMP/s.conf"
}
srv_conf "$T_TMP/s.conf"
conf 100
srv_start "$T_TMP/s.conf"
P=$DEBITD_PID
if grep -q 'seccomp: not installed (a sanitizer build)' "$T_TMP/debitd.log"; then
  skip_all "a sanitizer build installs no seccomp filter"
fi
check_eq "running as nobody under a seccomp filter" "65534 2" \
  "$(sed -n 's/^Uid:[[:space:]]*\([0-9]*\).*/\1/p' /proc/$P/status) $(sed -n 's/^Seccomp:[[:space:]]*//p' /proc/$P/status)"

gen() { curl -s --max-time 2 "$BASE/status" | jq -r '.config.generation'; }
ok=0 t0=$SECONDS
for i in $(seq 1 200); do
  conf $((100 + i))
  kill -HUP "$P" 2>/dev/null || break
  # bounded: 5 s for this reload's generation to show
  wait_for 50 eval '[ "$(gen)" = '$((i + 1))' ]' || break
  ok=$i
done
t_diag "200 reloads in $((SECONDS - t0)) s"
check_eq "200 reloads applied, each seen in /status (generation 201)" 200 "$ok"
check "debitd alive after 200 reloads" kill -0 "$P"
check_eq "and serving: /f.dat's bytes match its .sha256" "$(sha_of "$BASE/f.dat")" "$(curl -s "$BASE/f.dat" | sha256sum | cut -d' ' -f1)"
check_eq "the last reload's limit is in force" 300 "$(curl -s "$BASE/status" | jq -r '.limits.per_ip')"
check_nomatch "no SIGSYS, no refused reload in the log" 'reload refused|Bad system call' "$(cat "$T_TMP/debitd.log")"

# what a reload touches, seen by strace: no passwd/group/nsswitch file, no nscd socket
if command -v strace >/dev/null; then
  strace -f -qq -e trace=connect,openat,open -o "$T_TMP/strace" -p "$P" & sp=$!; t_track $sp
  wait_for 50 grep -q "TracerPid:[[:space:]]*$sp" "/proc/$P/status"
  for i in 1 2 3; do
    conf $((400 + i)); kill -HUP "$P"
    wait_for 50 eval '[ "$(gen)" = '$((201 + i))' ]'
  done
  kill "$sp"; wait "$sp" 2>/dev/null
  check_match "strace saw the reloads read the configuration" "s\.conf" "$(cat "$T_TMP/strace")"
  check_nomatch "... and no /etc/passwd, /etc/group, nsswitch.conf or nscd access" 'passwd|/etc/group|nsswitch|nscd' \
    "$(cat "$T_TMP/strace")"
  check_nomatch "... and no connect at all" 'connect\(' "$(cat "$T_TMP/strace")"
else
  t_skip "strace: no passwd/group/nscd access on reload" "strace is not installed (tools/deps)"
fi

# another user: refused by name, without a lookup (a restart changes it)
conf 500 root
kill -HUP "$P"
wait_for 50 grep -q 'reload refused' "$T_TMP/debitd.log"
check_match "a reload naming another user is refused with FILE:LINE" \
  "reload refused: .*s\.conf:5: user: \"root\" is not the user debitd started as \(\"nobody\"\): changes need a restart" \
  "$(cat "$T_TMP/debitd.log")"
check "still alive" kill -0 "$P"
srv_stop
check_eq "SIGTERM: exit 0" 0 "$SRV_RC"
t_done
