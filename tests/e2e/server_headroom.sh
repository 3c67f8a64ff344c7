#!/usr/bin/env bash
# listen[].connection_memory (docs/server.md, "Connection memory"): libmicrohttpd's pool per
# connection, per listener. Checked: -t and /status show it, a bad value is refused with its
# file, line and setting, a reload cannot change it; it bounds the header block (a request
# that fits is served, a larger one refused with 431, one with more query arguments than the
# pool holds with 414 at once: libmicrohttpd 0.9.75 alone left that connection hanging until
# the header deadline); every request gets an answer but in the documented band at the
# pool's very end, where libmicrohttpd closes the connection; uploads work at 8 KiB.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
need_cmd python3

srv_conf "$T_TMP/d.conf" 'threads = 2;' \
  'files = ( { path = "/files/4KiB.dat"; size = "4KiB"; } );' 'upload = { path = "/up"; max_size = "64MiB"; };'
P1=$PORT
P2=$(free_port)
while [ "$P2" = "$P1" ]; do P2=$(free_port); done
# the first listener with the default pool, the second with the smallest
sed -i "1s/.*/listen = ( { address = \"127.0.0.1\"; port = $P1; }, { address = \"127.0.0.1\"; port = $P2; connection_memory = \"8KiB\"; } );/" "$T_TMP/d.conf"

eff=$("$DEBITD" -t -c "$T_TMP/d.conf" 2>/dev/null)
check_match "-t: the default, 32KiB" "port = $P1; tcp_nopush = true; connection_memory = \"32KiB\";" "$eff"
check_match "-t: the second listener's 8KiB" "port = $P2; tcp_nopush = true; connection_memory = \"8KiB\";" "$eff"
sed 's/"8KiB"/"6KiB"/' "$T_TMP/d.conf" >"$T_TMP/bad.conf"
out=$("$DEBITD" -t -c "$T_TMP/bad.conf" 2>&1); rc=$?
check_eq "connection_memory under 8KiB: exit 2" 2 "$rc"
check_match "... naming file, line, setting and range" \
  'bad\.conf:1: listen\[1\]\.connection_memory: 6144 bytes is out of range \(8KiB to 1MiB\)' "$out"

srv_start "$T_TMP/d.conf"
B1=http://127.0.0.1:$P1 B2=http://127.0.0.1:$P2
check_eq "/status: connection_memory per listener" "32768 8192" \
  "$(curl -s "$B1/status" | jq -r '[.listeners[].connection_memory] | map(tostring) | join(" ")')"

# The pool is libmicrohttpd's, not only debitd's arithmetic: a 12,000-byte header does not
# fit an 8 KiB pool, and libmicrohttpd itself refuses it (its own HTML page, before any
# callback); the default pool serves it.
pad=$(head -c 12000 /dev/zero | tr '\0' a)
code=$(curl -s -o "$T_TMP/b431" -w '%{http_code}' -H "X-Pad: $pad" "$B2/files/4KiB.dat")
check_eq "a 12,000-byte header in the 8 KiB pool: libmicrohttpd's own 431" "431 yes" \
  "$code $(grep -q '<title>Request too big</title>' "$T_TMP/b431" && echo yes || echo no)"
check_eq "... served in the 32 KiB pool" 200 "$(curl -s -o /dev/null -w '%{http_code}' -H "X-Pad: $pad" "$B1/files/4KiB.dat")"

# args_query N: a query of N arguments, a0=1&a1=1&...
args_query() { python3 -c "import sys; print('&'.join(f'a{i}=1' for i in range(int(sys.argv[1]))))" "$1"; }
q600=$(args_query 600)
t0=$(date +%s.%N)
out=$(curl -s -m 10 -D - -o "$T_TMP/b414" "$B1/files/4KiB.dat?$q600" | tr -d '\r')
t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b - a}')
check_eq "600 query arguments (3,450 bytes) in a 32 KiB pool: 414" "HTTP/1.1 414 URI Too Long" "$(head -1 <<<"$out")"
check_cmp "... at once, not after the header deadline (5 s): $t s" "$t" "<" 2
check_match "... closing the connection" '^Connection: close$' "$out"
check_match "... saying why" "^414 URI Too Long: 600 query arguments do not fit in a 32768-byte connection pool$" \
  "$(cat "$T_TMP/b414")"
check_eq "50 query arguments in the same pool: served" 200 \
  "$(curl -s -o /dev/null -w '%{http_code}' "$B1/files/4KiB.dat?$(args_query 50)")"
check_eq "150 query arguments in an 8 KiB pool: 414" 414 \
  "$(curl -s -m 10 -o /dev/null -w '%{http_code}' "$B2/files/4KiB.dat?$(args_query 150)")"
check_eq "20 in the 8 KiB pool: served" 200 "$(curl -s -o /dev/null -w '%{http_code}' "$B2/files/4KiB.dat?$(args_query 20)")"

# Header blocks up to and past each pool (server_headroom.py): per shape and target, what was
# served and refused, and the requests closed without an answer with their pool footprint.
for spec in "$P1 32768" "$P2 8192"; do
  read -r port pool <<<"$spec"
  t0=$SECONDS
  timeout 120 python3 "$(dirname "$0")/server_headroom.py" 127.0.0.1 "$port" "$pool" >"$T_TMP/room.$pool"
  t=$((SECONDS - t0))
  check_eq "$pool-byte pool: every shape and target probed (30 lines)" 30 "$(wc -l <"$T_TMP/room.$pool")"
  check_cmp "... in bounded time (no connection hangs until a deadline): $t s" "$t" "<" 40
  # only served (200/206/404) or refused (414/431) answers
  bad=$(awk '{sub("codes=", "", $6); n = split($6, c, ","); for (i = 1; i <= n; i++) { split(c[i], k, ":");
    if (k[1] !~ /^(200|206|404|414|431)$/) print $1, $2, c[i] } }' "$T_TMP/room.$pool")
  check_eq "... only 2xx/404 or 414/431 answers" "" "$bad"
  # a request closed without an answer only where its block nearly fills the pool, or where
  # it takes (with its records) the pool's last bytes: the band no answer fits in
  out=$(awk -v pool="$pool" '{sub("none=", "", $7); if ($7 == "-") next; n = split($7, a, ",");
    for (i = 1; i <= n; i++) { split(a[i], b, "/");
      if (!((b[1] >= pool - 512 && b[1] <= pool) || (b[2] >= pool - 768 && b[2] <= pool + 128))) print $1, $2, a[i] } }' \
    "$T_TMP/room.$pool")
  check_eq "... closed unanswered only in the band at the pool's end" "" "$out"
  check_cmp "... at most 10 such requests per shape and target" \
    "$(awk '{sub("none=", "", $7); print ($7 == "-") ? 0 : split($7, a, ",")}' "$T_TMP/room.$pool" | sort -n | tail -1)" "<=" 10
  # the refusals start where the guard says: a block with its records and room for an answer
  one=$(awk '$1 == "one" && $2 == "file" {sub("served_max=", "", $4); sub("refused_min=", "", $5); print $4, $5}' "$T_TMP/room.$pool")
  read -r smax rmin <<<"$one"
  check_cmp "... one long header: served up to pool - 2,048 - records - 250 bytes ($smax)" "$smax" ">=" $((pool - 2048 - 3 * 64 - 250))
  check_cmp "... and refused (431) from pool - 2,048 - records on ($rmin)" "$rmin" "<=" $((pool - 2048 - 3 * 64 + 48))
  check_eq "... 100 query arguments and a long one: 414s" yes \
    "$(awk '$1 == "args" && $2 == "file" {print ($6 ~ /414:/) ? "yes" : "no"}' "$T_TMP/room.$pool")"
  check_eq "... /status and .sha256 are served below the limit too" "yes yes" \
    "$(awk '$1 == "one" && ($2 == "status" || $2 == "sha256") {printf "%s%s", sep, ($6 ~ /200:/) ? "yes" : "no"; sep = " "}' "$T_TMP/room.$pool")"
done
t_diag "32768: $(grep '^one file' "$T_TMP/room.32768")"
t_diag "8192: $(grep '^one file' "$T_TMP/room.8192")"

# Uploads read half the pool at a time (docs/server.md): slower at 8 KiB, but whole.
head -c $((16 << 20)) /dev/urandom >"$T_TMP/16M"
for b in "$B1" "$B2"; do
  out=$(curl -s -w '\n%{http_code}' --data-binary @"$T_TMP/16M" "$b/up")
  check_eq "a 16 MiB upload to ${b##*:}: 200 and every byte counted" "200 16777216" \
    "$(tail -1 <<<"$out") $(head -n -1 <<<"$out" | jq .bytes)"
done

# a reload cannot resize the pools of running daemons
sed -i 's/"8KiB"/"16KiB"/' "$T_TMP/d.conf"
kill -HUP "$DEBITD_PID"
wait_for 50 grep -q 'reload refused' "$T_TMP/debitd.log"
check_match "a reload changing connection_memory is refused: restart needed" \
  'reload refused: .*listen\.connection_memory: changes need a restart' "$(grep 'reload refused' "$T_TMP/debitd.log" | tail -1)"
check_eq "... the pools as they were" "32768 8192" \
  "$(curl -s "$B1/status" | jq -r '[.listeners[].connection_memory] | map(tostring) | join(" ")')"
srv_stop
check_eq "debitd stopped cleanly" 0 "$SRV_RC"
t_done
