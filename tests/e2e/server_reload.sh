#!/usr/bin/env bash
# SIGHUP reloads debitd's configuration (issue 11, docs/server.md "Reload"): a download under
# way when a reload adds and removes files completes with the right bytes, the new file is
# served and the removed one is a 404; a configuration with an error (unknown key, bad size)
# or one that changes the listeners is refused with its FILE:LINE message and the old one
# keeps serving (/status "config".last_reload, /metrics debitd_config_reloads_total); a new
# per-address limit and a new TCP profile take effect on new connections; ten reloads in a
# row (files, content region, limits) under running downloads drop none of them; systemd
# hears RELOADING=1 then READY=1 (a NOTIFY_SOCKET this test listens on).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
need_cmd python3

# --- a datagram listener standing in for systemd (bounded: 120 s) ---
sock=$T_TMP/notify.sock
notify_listen "$sock" "$T_TMP/notify.txt" 120

C=$T_TMP/d.conf
# conf [TCP] LINES...: rewrite the configuration on the same port (the listener line keeps
# its address and port; TCP is the body of its tcp group, "" for none)
conf() {
  local tcp=$1; shift
  {
    if [ -n "$tcp" ]; then echo "listen = ( { address = \"127.0.0.1\"; port = $PORT; tcp = { $tcp }; } );"
    else echo "listen = ( { address = \"127.0.0.1\"; port = $PORT; } );"; fi
    echo "log = { level = \"info\"; access = \"$T_TMP/access.log\"; };"
    printf '%s\n' "$@"
  } >"$C"
}
FILES_A='files = ( { path = "/a.dat"; size = "1MiB"; }, { path = "/big.dat"; size = "16MiB"; }, { path = "/gone.dat"; size = "1MiB"; } );'
FILES_B='files = ( { path = "/a.dat"; size = "1MiB"; }, { path = "/big.dat"; size = "16MiB"; }, { path = "/new.dat"; size = "2MiB"; } );'

srv_conf "$C"
conf "" "$FILES_A"
export NOTIFY_SOCKET=$sock
srv_start "$C"
unset NOTIFY_SOCKET
wait_for 50 grep -q READY=1 "$T_TMP/notify.txt"

# generation N of the log reached (bounded wait)
reloaded() { wait_for 100 grep -q "reload: generation $1 " "$T_TMP/debitd.log"; }
refused() { wait_for 100 eval '[ "$(grep -c "reload refused" "$T_TMP/debitd.log")" -ge '"$1"' ]'; }
code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
st() { curl -s "$BASE/status" | jq -r "$1"; }

check_eq "before any reload: generation 1" 1 "$(st .config.generation)"
check_eq "... no last_reload" null "$(st .config.last_reload)"
big_sha=$(sha_of "$BASE/big.dat")

# --- (1) a long download while a reload adds /new.dat and removes /gone.dat ---
# 16 MiB at 5 MB/s: about 3.4 s, the reload comes within the first second
t_bg dl1 curl -s --limit-rate 5M -o "$T_TMP/big1" -w '%{http_code} %{size_download}\n' "$BASE/big.dat"
dl1=$T_LAST_PID
wait_for 50 test -s "$T_TMP/big1"
conf "" "$FILES_B"
t0=$(date +%s.%N)
kill -HUP "$DEBITD_PID"
reloaded 2
t1=$(date +%s.%N)
t_diag "reload applied in $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}') s (SIGHUP to the log line)"
check "the download was still running at the reload" kill -0 "$dl1"
check_match "the log says what changed" 'info: reload: generation 2 from .*d\.conf: \+1 file, -1, 0 resized' "$(cat "$T_TMP/debitd.log")"
check_eq "the new file is served" "200 2097152" "$(curl -s -o "$T_TMP/new" -w '%{http_code} %{size_download}' "$BASE/new.dat")"
check_eq "... with the bytes its .sha256 names" "$(sha_of "$BASE/new.dat")" "$(sha256sum <"$T_TMP/new" | cut -d' ' -f1)"
check_eq "the removed file is a 404" 404 "$(code "$BASE/gone.dat")"
check_eq "... and its .sha256 too" 404 "$(code "$BASE/gone.dat.sha256")"
wait "$dl1"
check_eq "the download under way completed" "200 16777216" "$(cat "$T_TMP/dl1.log")"
check_eq "... with the right bytes (sha256 announced before the reload)" "$big_sha" "$(sha256sum <"$T_TMP/big1" | cut -d' ' -f1)"
check_eq "... the same bytes as a full fetch after it" "$(curl -s "$BASE/big.dat" | sha256sum | cut -d' ' -f1)" "$(sha256sum <"$T_TMP/big1" | cut -d' ' -f1)"
check_eq "/status: generation 2" 2 "$(st .config.generation)"
check_eq "/status: last_reload ok" "true null" "$(st '"\(.config.last_reload.ok) \(.config.last_reload.error)"')"
check_match "/status: files listed anew" '^/a.dat /big.dat /new.dat$' "$(st '[.files[].path] | join(" ")')"

# --- (6) RELOADING=1 then READY=1 (with the outcome in STATUS) ---
check_match "RELOADING=1 with MONOTONIC_USEC sent at SIGHUP" '^RELOADING=1 MONOTONIC_USEC=[0-9]+' "$(cat "$T_TMP/notify.txt")"
check_match "... then READY=1 with the outcome" '^READY=1 STATUS=reload: generation 2 ' "$(sed -n '/^RELOADING=1/,$p' "$T_TMP/notify.txt" | sed -n 2p)"

# --- (2) configurations with an error are refused, the old one keeps serving ---
conf "" "$FILES_B" 'bogus = 1;'
kill -HUP "$DEBITD_PID"
refused 1
check_match "unknown key refused with FILE:LINE: setting" "error: reload refused: $C:4: bogus: unknown setting" "$(cat "$T_TMP/debitd.log")"
check_eq "... the old files still serve" "200 200" "$(code "$BASE/new.dat") $(code "$BASE/a.dat")"
check_eq "... generation still 2" 2 "$(st .config.generation)"
check_eq "/status: last_reload.ok false" false "$(st .config.last_reload.ok)"
check_match "/status: last_reload.error is the message" "^$C:4: bogus: unknown setting" "$(st .config.last_reload.error)"
check_match "READY=1 again, STATUS says refused" '^READY=1 STATUS=reload refused: .*bogus' "$(tail -1 "$T_TMP/notify.txt")"
conf "" 'files = ( { path = "/a.dat"; size = "1MiB"; }, { path = "/b.dat"; size = "12XB"; } );'
kill -HUP "$DEBITD_PID"
refused 2
check_match "bad size refused with FILE:LINE: setting" "error: reload refused: $C:3: (files|size)[^ ]*: " "$(grep 'reload refused' "$T_TMP/debitd.log" | tail -1)"
check_eq "... /new.dat still served" 200 "$(code "$BASE/new.dat")"
other=$(free_port)
conf "" "$FILES_B"
sed -i "1s/port = $PORT;/port = $other;/" "$C"
kill -HUP "$DEBITD_PID"
refused 3
check_match "a listener change is refused as a whole" "reload refused: $C: listen: changes need a restart" "$(grep 'reload refused' "$T_TMP/debitd.log" | tail -1)"
check_eq "... still serving on the old port" 200 "$(code "$BASE/a.dat")"
check_eq "... nothing on the new one" 000 "$(code --max-time 2 "http://127.0.0.1:$other/a.dat")"
m=$(curl -s "$BASE/metrics")
check_match "/metrics: debitd_config_reloads_total{result=\"refused\"} 3" '^debitd_config_reloads_total\{result="refused"\} 3$' "$(printf '%s\n' "$m" | grep refused)"
check_match "/metrics: ... {result=\"ok\"} 1" '^debitd_config_reloads_total\{result="ok"\} 1$' "$(printf '%s\n' "$m" | grep 'result="ok"')"
check_match "/metrics: debitd_config_generation 2" '^debitd_config_generation 2$' "$(printf '%s\n' "$m" | grep '^debitd_config_generation')"
check_match "/metrics: the new file's row" 'debitd_sent_bytes_total\{file="/new.dat"' "$m"
check_nomatch "/metrics: no row for the removed file" 'file="/gone.dat"' "$m"

# --- (3) a per-address limit takes effect on new connections ---
two_at_once() { # codes of two concurrent downloads from this address
  curl -s --limit-rate 2M -o /dev/null -w '%{http_code}' "$BASE/big.dat" >"$T_TMP/first" &
  local p=$!
  # the probe from another address (127.0.0.2), counted apart: the download's connection is open
  wait_for 50 eval '[ "$(curl -s --interface 127.0.0.2 "$BASE/status" | jq .counters.active_connections)" -ge 2 ]'
  local second; second=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$BASE/a.dat")
  kill "$p" 2>/dev/null; wait "$p" 2>/dev/null
  echo "$second"
}
check_eq "per_ip unset: a second connection is served" 200 "$(two_at_once)"
conf "" "$FILES_B" 'limits = { per_ip = 1; };'
kill -HUP "$DEBITD_PID"
reloaded 3
check_match "... the log says limits changed" 'reload: generation 3 .*limits changed' "$(cat "$T_TMP/debitd.log")"
check_eq "per_ip = 1 after a reload: the second connection is refused" 000 "$(two_at_once)"
conf "" "$FILES_B"
kill -HUP "$DEBITD_PID"
reloaded 4
wait_for 50 eval '[ "$(curl -s --interface 127.0.0.2 "$BASE/status" | jq .counters.active_connections)" -le 1 ]'
check_eq "per_ip unset again: served" 200 "$(two_at_once)"

# --- logs and metrics rows across a reload ---
before=$(curl -s "$BASE/metrics" | sed -n 's/^debitd_sent_bytes_total{file="\/a.dat"[^}]*} //p')
conf "" "$FILES_B" "log = { level = \"debug\"; access = \"$T_TMP/access2.log\"; access_format = \"combined\"; };"
sed -i '2d' "$C"   # the one log group: this one
kill -HUP "$DEBITD_PID"
reloaded 5
check_match "... logged: level, access log, format" 'reload: generation 5 .*log level changed, access log changed, access log format changed' "$(cat "$T_TMP/debitd.log")"
curl -s -o /dev/null -A reload-test "$BASE/a.dat"
wait_for 50 grep -q reload-test "$T_TMP/access2.log"
check_match "the next request is logged to the new file, combined format" '"GET /a.dat HTTP/1.1" 200 1048576 .*"reload-test"' "$(cat "$T_TMP/access2.log" 2>/dev/null)"
check_nomatch "... not to the old one" 'reload-test' "$(cat "$T_TMP/access.log")"
after=$(curl -s "$BASE/metrics" | sed -n 's/^debitd_sent_bytes_total{file="\/a.dat"[^}]*} //p')
check_eq "/a.dat's byte counter kept across the reload, plus the new 1 MiB" "$((before + 1048576))" "$after"
# http.strict's 400s are logged at debug level: one now shows the new level in force
timeout 5 bash -c 'exec 3<>/dev/tcp/127.0.0.1/'"$PORT"'; printf "GET /a.dat HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n" >&3; head -c 12 <&3' >/dev/null 2>&1
wait_for 50 grep -q ' debug: ' "$T_TMP/debitd.log"
check_match "log.level = debug in force after the reload" ' debug: .*400 to a request' "$(cat "$T_TMP/debitd.log")"
conf "" "$FILES_B"
kill -HUP "$DEBITD_PID"
reloaded 6

# --- (4) a TCP profile change is what a new response's X-Debit-Tcp reports ---
allowed=$(cat /proc/sys/net/ipv4/tcp_allowed_congestion_control 2>/dev/null)
hdr_tcp() { curl -s -D - -o /dev/null -r 0-99 "$BASE/a.dat" | tr -d '\r' | sed -n 's/^X-Debit-Tcp: //Ip'; }
if [[ " $allowed " == *" reno "* && " $allowed " == *" bbr "* ]]; then
  conf 'congestion = "reno";' "$FILES_B"
  kill -HUP "$DEBITD_PID"
  reloaded 7
  check_match "tcp profile change logged" "reload: generation 7 .*tcp profile of 127.0.0.1:$PORT changed" "$(cat "$T_TMP/debitd.log")"
  check_match "X-Debit-Tcp: cc=reno after the reload" '^cc=reno ' "$(hdr_tcp)"
  conf 'congestion = "bbr";' "$FILES_B"
  kill -HUP "$DEBITD_PID"
  reloaded 8
  check_match "X-Debit-Tcp: cc=bbr after another" '^cc=bbr ' "$(hdr_tcp)"
  gen=8
else
  t_skip "TCP profile change on reload" "net.ipv4.tcp_allowed_congestion_control is '$allowed' (needs reno and bbr)"
  conf "" "$FILES_B"; kill -HUP "$DEBITD_PID"; reloaded 7; conf "" "$FILES_B"; kill -HUP "$DEBITD_PID"; reloaded 8
  gen=8
fi
conf 'congestion = "nosuchcc";' "$FILES_B"
kill -HUP "$DEBITD_PID"
refused 4
check_match "a TCP profile that cannot be set is refused, naming the listener" "reload refused: $C:1: .*congestion|reload refused: $C: listen 127.0.0.1:$PORT: tcp" "$(grep 'reload refused' "$T_TMP/debitd.log" | tail -1)"

# --- (5) ten reloads while downloads run: none dropped, bytes right ---
conf "" "$FILES_B"
kill -HUP "$DEBITD_PID"; gen=$((gen + 1)); reloaded $gen
small_sha=$(sha_of "$BASE/new.dat")
for i in 1 2 3; do
  t_bg "dl5_$i" curl -s --limit-rate 4M -o "$T_TMP/big5_$i" -w '%{http_code} %{size_download}\n' "$BASE/big.dat"
  eval "dl5_$i=$T_LAST_PID"
done
wait_for 50 test -s "$T_TMP/big5_3"
for i in $(seq 10); do
  case $((i % 3)) in
    0) conf "" "$FILES_B" ;;
    1) conf "" "$FILES_A" 'ram = "4MiB";' 'limits = { per_ip = 50; header_timeout = "3s"; };' ;;  # a new content region
    2) conf "" "$FILES_B" 'seed = 7;' ;;                                                          # and another
  esac
  kill -HUP "$DEBITD_PID"
  gen=$((gen + 1))
  reloaded $gen || t_diag "reload $i: generation $gen not reached"
  curl -s -o /dev/null "$BASE/a.dat" &   # short requests across the swaps
done
wait_for 100 eval '[ "$(curl -s "$BASE/status" | jq .config.generation)" = '"$gen"' ]'
check_eq "ten reloads applied (generation $gen)" "$gen" "$(st .config.generation)"
for i in 1 2 3; do
  eval "p=\$dl5_$i"
  wait "$p"
  check_eq "download $i across ten reloads completed" "200 16777216" "$(cat "$T_TMP/dl5_$i.log")"
  check_eq "... with the bytes of the configuration it started under" "$big_sha" "$(sha256sum <"$T_TMP/big5_$i" | cut -d' ' -f1)"
done
# the last configuration (i = 10: FILES_A, ram 4 MiB) is in force: big.dat repeats a 4 MiB region
check_eq "the last reload's files: /gone.dat is back" 200 "$(code "$BASE/gone.dat")"
check_eq "... /new.dat is gone" 404 "$(code "$BASE/new.dat")"
last_sha=$(sha_of "$BASE/big.dat")
check_eq "the new region's file matches its .sha256" "$last_sha" "$(curl -s "$BASE/big.dat" | sha256sum | cut -d' ' -f1)"
check_nomatch "... and differs from the first region's" "^$big_sha\$" "$last_sha"
check_eq "/status: region of the last configuration" 4194304 "$(st .content.region_bytes)"
# an upload under way keeps the limit it started under; the next one gets the new one
head -c 3145728 /dev/urandom >"$T_TMP/up.bin"
conf "" "$FILES_A" 'upload = { path = "/upload"; max_size = "4MiB"; };'
kill -HUP "$DEBITD_PID"; gen=$((gen + 1)); reloaded $gen
t_bg up1 curl -s --limit-rate 1M -T "$T_TMP/up.bin" -w '\n%{http_code}\n' "$BASE/upload"
up1=$T_LAST_PID
wait_for 50 eval '[ "$(curl -s "$BASE/status" | jq .counters.upload_bytes)" -gt 0 ]'
conf "" "$FILES_A" 'upload = { path = "/upload"; max_size = "1MiB"; };'
kill -HUP "$DEBITD_PID"; gen=$((gen + 1)); reloaded $gen
check "the upload was still running at the reload" kill -0 "$up1"
wait "$up1"
check_eq "an upload across a reload that lowered max_size completes (200, 3 MiB)" "200 3145728" "$(tail -1 "$T_TMP/up1.log") $(sed '$d' "$T_TMP/up1.log" | jq .bytes)"
check_eq "the next upload of 3 MiB: 413" 413 "$(curl -s -o /dev/null -w '%{http_code}' -T "$T_TMP/up.bin" "$BASE/upload")"
check "debitd still runs" kill -0 "$DEBITD_PID"
if grep -q 'seccomp.*not installed (a sanitizer build)' "$T_TMP/debitd.log"; then
  t_skip "seccomp filter in force during the reloads" "a sanitizer build installs no filter"
else
  check_eq "seccomp filter in force during the reloads (Seccomp: 2)" 2 "$(awk '/^Seccomp:/ {print $2}' /proc/"$DEBITD_PID"/status)"
fi
srv_stop
check_eq "SIGTERM after the reloads: exit 0" 0 "$SRV_RC"
check_nomatch "no sanitizer report" 'Sanitizer|runtime error' "$(cat "$T_TMP/debitd.log")"
check_nomatch "no seccomp refusal logged" 'Operation not permitted' "$(cat "$T_TMP/debitd.log")"
t_diag "reload lines of the log:"; grep -E 'reload' "$T_TMP/debitd.log" | sed 's/^/#   /' | head -30

# --- (7) after the privilege drop (user = "nobody"): the file is re-read as that user; what
# needs a capability it gave back is refused with the reason, the rest applies ---
if [ "$(id -u)" -ne 0 ] || ! id nobody >/dev/null 2>&1; then
  t_skip "reload after the privilege drop" "needs root and the user nobody"
else
  D=$T_TMP/pd; mkdir -p "$D"; chmod 755 "$T_TMP" "$D"; touch "$T_TMP/access.log"; chmod 666 "$T_TMP/access.log"
  C=$D/d.conf
  conf "" "$FILES_A" 'user = "nobody";'
  chmod 644 "$C"
  srv_start "$C"
  check_eq "running as nobody" 65534 "$(awk '/^Uid:/ {print $2}' /proc/"$DEBITD_PID"/status)"
  conf "" "$FILES_B" 'user = "nobody";'
  kill -HUP "$DEBITD_PID"
  reloaded 2
  check_eq "as nobody: a reload adds a file" "200 404" "$(code "$BASE/new.dat") $(code "$BASE/gone.dat")"
  if [[ " $allowed " != *" cubic "* ]] && grep -qw cubic /proc/sys/net/ipv4/tcp_available_congestion_control; then
    conf 'congestion = "cubic";' "$FILES_B" 'user = "nobody";'
    kill -HUP "$DEBITD_PID"
    refused 1
    check_match "as nobody: cubic (not in tcp_allowed_congestion_control) is refused: no CAP_NET_ADMIN" \
      "reload refused: $C: listen 127.0.0.1:$PORT: tcp: .*(not permitted|CAP_NET_ADMIN)" "$(grep 'reload refused' "$T_TMP/debitd.log" | tail -1)"
  else
    t_skip "as nobody: a congestion control beyond the allowed list is refused" "cubic is allowed here or unavailable"
  fi
  conf "" "$FILES_B" 'user = "nobody";'
  chmod 600 "$C"
  kill -HUP "$DEBITD_PID"
  refused 2
  check_match "as nobody: a file it cannot read is refused with the reason" "reload refused: .*$C.*(Permission denied|cannot)" "$(grep 'reload refused' "$T_TMP/debitd.log" | tail -1)"
  check_eq "... and the running configuration serves on" 200 "$(code "$BASE/new.dat")"
  srv_stop
  check_eq "as nobody: SIGTERM after the reloads: exit 0" 0 "$SRV_RC"
fi

# --- (8) offloads: a reload changes them on the same interface; the exit restores the
# original state, from before the first change (two namespaces joined by a veth) ---
if [ "$(id -u)" -ne 0 ] || ! command -v ethtool >/dev/null; then
  t_skip "offloads on reload" "needs root and ethtool"
elif ! ns_new S srv || ! ns_new NC cli || ! ns_veth "$S" "vs$T_ID" 198.18.0.1/24 "$NC" "vc$T_ID" 198.18.0.2/24; then
  t_skip "offloads on reload" "cannot create network namespaces and a veth pair"
else
  VS=vs$T_ID
  feat() { ip netns exec "$S" ethtool -k "$VS" | awk -v f="$1:" '$1 == f {print $2}'; }
  orig="$(feat tcp-segmentation-offload) $(feat generic-segmentation-offload)"
  OP=$(free_port)
  oconf() { # tso gso
    cat >"$T_TMP/o.conf" <<CONF
listen = ( { address = "198.18.0.1"; port = $OP; } );
files = ( { path = "/f.dat"; size = "1MiB"; } );
log = { access = "off"; };
offload = { interface = "$VS"; tso = $1; gso = $2; state_file = "$T_TMP/run/offload.state"; };
CONF
  }
  oconf false false
  debitd_spawn "$T_TMP/o.conf" "$S"
  if ! wait_http "http://198.18.0.1:$OP/status" 150 "$NC" "$DEBITD_PID"; then
    t_fail "debitd up in the namespace" "$(tail -5 "$T_TMP/debitd-$S.log")"
  else
    check_eq "offloads as started: tso off, gso off" "off off" "$(feat tcp-segmentation-offload) $(feat generic-segmentation-offload)"
    oconf true false
    kill -HUP "$DEBITD_PID"
    wait_for 100 grep -q 'reload: generation 2 .*offloads changed' "$T_TMP/debitd-$S.log"
    check_match "the reload changed the offloads (logged)" 'reload: generation 2 .*offloads changed' "$(cat "$T_TMP/debitd-$S.log")"
    check_eq "after the reload: tso on, gso off" "on off" "$(feat tcp-segmentation-offload) $(feat generic-segmentation-offload)"
    h=$(ip netns exec "$NC" curl -s -D - -o /dev/null -r 0-9 "http://198.18.0.1:$OP/f.dat" | tr -d '\r' | sed -n "s/^$(wire_get WIRE_HDR_OFFLOAD): //Ip")
    check_match "X-Debit-Offload of a new response: tso=on gso=off" 'tso=on gso=off' "$h"
    kill -TERM "$DEBITD_PID"; wait "$DEBITD_PID" 2>/dev/null
    check_eq "at exit: the original state ($orig), not the first configuration's" "$orig" "$(feat tcp-segmentation-offload) $(feat generic-segmentation-offload)"
  fi
fi
check_nomatch "no sanitizer report in any debitd's log" 'Sanitizer|runtime error' "$(cat "$T_TMP"/debitd*.log)"
t_done
