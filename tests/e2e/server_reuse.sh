#!/usr/bin/env bash
# A kept-alive connection that asks for the same small file again gets the previous
# request's response sent again, with only a new X-Debit-Transfer (server/http/http_conn.c,
# docs/server.md "A small response sent again"). Over one raw connection (the bytes as sent): every
# response carries exactly the headers a fresh one would (all but Date and the transfer
# ID, compared with the same request on a new connection), a new transfer ID for each GET
# and none for HEAD, the right body; a Range, another file, a reload that changes the seed
# and a new connection on the same descriptor each build a new response; /status counts
# "response_reuse" built and reused to the request.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
need_cmd curl jq python3 sha256sum

C=$T_TMP/d.conf
srv_conf "$C" 'seed = 1;' 'files = ( { path = "/s4.dat"; size = "4KiB"; }, { path = "/s8.dat"; size = "8KiB"; } );'
srv_start "$C"
hdr_tr=$(wire_get WIRE_HDR_TRANSFER)
reuse() { curl -s "$BASE/status" | jq -c '.listeners[0].response_reuse'; }
check_eq "/status: nothing built or reused yet" '{"built":0,"reused":0}' "$(reuse)"

# keepalive STEPS...: one connection; a step is "GET PATH [RANGE]", "HEAD PATH", "HUP N"
# (reload, wait for generation N in the log) or "NEW" (close, reconnect); one JSON line per
# response: status, headers (lower-case names, Date left out), body's sha256, and whether
# the connection was the first's.
keepalive() {
  python3 - "$PORT" "$DEBITD_PID" "$T_TMP/debitd.log" "$@" <<'PY'
import hashlib, json, os, signal, socket, sys, time
port, pid, log = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
def connect():
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    return s, s.makefile("rb")
s, f = connect()
conn = 1
for step in sys.argv[4:]:
    w = step.split()
    if w[0] == "NEW":
        f.close(); s.close(); s, f = connect(); conn += 1; continue
    if w[0] == "HUP":
        os.kill(pid, signal.SIGHUP)
        for _ in range(100):
            if ("reload: generation %s " % w[1]) in open(log, errors="replace").read():
                break
            time.sleep(0.05)
        else:
            sys.exit("no reload generation " + w[1])
        continue
    extra = "Range: bytes=%s\r\n" % w[2] if len(w) > 2 else ""
    s.sendall(("%s %s HTTP/1.1\r\nHost: t\r\n%s\r\n" % (w[0], w[1], extra)).encode())
    status = f.readline().decode().rstrip("\r\n")
    h, names = {}, []
    while True:
        line = f.readline().decode().rstrip("\r\n")
        if not line:
            break
        k, v = line.split(":", 1)
        h[k.strip().lower()] = v.strip()
        names.append(k.strip().lower())
    body = f.read(int(h["content-length"])) if w[0] == "GET" else b""
    h.pop("date", None)
    print(json.dumps({"step": step, "status": status, "h": h, "names": names,
                      "sha": hashlib.sha256(body).hexdigest(), "conn": conn}, sort_keys=True))
PY
}
# fresh PATH [RANGE]: the same request on a new connection (curl): headers as keepalive prints them
fresh() {
  curl -s -D - -o "$T_TMP/fb" ${2:+-H "Range: bytes=$2"} "$BASE$1" | tr -d '\r' |
    python3 -c 'import json,sys
h={}
for l in sys.stdin.read().split("\n")[1:]:
    if ":" in l:
        k,v=l.split(":",1); h[k.strip().lower()]=v.strip()
h.pop("date",None); print(json.dumps(h,sort_keys=True))'
}
no_id() { jq -c "del(.[\"$(tr '[:upper:]' '[:lower:]' <<<"$hdr_tr")\"])"; }
sha() { sha256sum | cut -d' ' -f1; }
s4=$(curl -s "$BASE/s4.dat" | sha) s8=$(curl -s "$BASE/s8.dat" | sha)
r4=$(curl -s -H 'Range: bytes=100-199' "$BASE/s4.dat" | sha)
f4=$(fresh /s4.dat | no_id) f8=$(fresh /s8.dat | no_id) fr=$(fresh /s4.dat 100-199 | no_id)
check_eq "a fresh response carries a transfer ID (the reference)" 32 \
  "$(fresh /s4.dat | jq -r ".[\"$(tr '[:upper:]' '[:lower:]' <<<"$hdr_tr")\"]" | tr -d '\n' | wc -c)"
base=$(reuse)

keepalive "GET /s4.dat" "GET /s4.dat" "GET /s4.dat" "HEAD /s4.dat" "GET /s4.dat" "GET /s4.dat 100-199" \
  "GET /s4.dat" "GET /s8.dat" "GET /s4.dat" "NEW" "GET /s4.dat" "GET /s4.dat" >"$T_TMP/ka" ||
  t_fail "the keep-alive exchange ran" "$(tail -3 "$T_TMP/ka")"
check_eq "12 steps: 11 responses" 11 "$(wc -l <"$T_TMP/ka")"
lid=$(tr '[:upper:]' '[:lower:]' <<<"$hdr_tr")
check_eq "statuses" "200 200 200 200 200 206 200 200 200 200 200" \
  "$(jq -r '.status | split(" ")[1]' "$T_TMP/ka" | tr '\n' ' ' | sed 's/ $//')"
want="" got=""
while IFS= read -r line; do
  step=$(jq -r .step <<<"$line")
  case $step in
    "GET /s4.dat 100-199") ref=$fr sh=$r4 ;;
    "GET /s8.dat") ref=$f8 sh=$s8 ;;
    "HEAD /s4.dat") ref=$f4 sh=$(printf '' | sha) ;;
    *) ref=$f4 sh=$s4 ;;
  esac
  want+="$ref $sh|"
  got+="$(jq -c ".h | del(.[\"$lid\"])" <<<"$line") $(jq -r .sha <<<"$line")|"
done <"$T_TMP/ka"
check_eq "every response: a fresh one's headers (but Date and the ID) and the right body" "$want" "$got"
ids=$(jq -r ".h[\"$lid\"] // \"none\"" "$T_TMP/ka")
check_eq "HEAD has no transfer ID, every GET its own" "none" "$(sed -n 4p <<<"$ids")"
check_eq "X-Debit-Transfer lines per response (no stale one left beside the new)" "1 1 1 0 1 1 1 1 1 1 1" \
  "$(jq -r --arg n "$lid" '[.names[] | select(. == $n)] | length' "$T_TMP/ka" | tr '\n' ' ' | sed 's/ $//')"
check_eq "header lines per response: 15 with Date and the ID, HEAD 14, the range 16" \
  "15 15 15 14 15 16 15 15 15 15 15" "$(jq -r '.names | length' "$T_TMP/ka" | tr '\n' ' ' | sed 's/ $//')"
check_eq "10 GETs, 10 distinct IDs of 32 hex digits" 10 "$(grep -v none <<<"$ids" | sort -u | grep -c '^[0-9a-f]\{32\}$')"
check_eq "Content-Range only on the range request" "6:bytes 100-199/4096" \
  "$(jq -r '.h["content-range"] // empty | "\(input_line_number):\(.)"' "$T_TMP/ka")"
# built: 1st GET, the range, the whole file after it, s8, s4 after s8, the new connection's
# first: 6; reused: GETs 2-3, the HEAD, GET 5, the new connection's second: 5
check_eq "/status response_reuse: 6 built, 5 reused" \
  "$(jq -c --argjson b "$base" '{built: ($b.built + 6), reused: ($b.reused + 5)}' <<<null)" "$(reuse)"
for id in $(grep -v none <<<"$ids"); do
  curl -s "$BASE/transfers/$id" | jq -r '"\(.state):\(.bytes)"'
done >"$T_TMP/recs"
check_eq "every GET's record: done, its own bytes" \
  "done:4096 done:4096 done:4096 done:4096 done:100 done:4096 done:8192 done:4096 done:4096 done:4096" \
  "$(tr '\n' ' ' <"$T_TMP/recs" | sed 's/ $//')"

# a reload between two requests of one connection: the seed (so the bytes and the ETag)
# change, the kept response must not be sent again
sed -i 's/^seed = 1;/seed = 2;/' "$C"
keepalive "GET /s4.dat" "GET /s4.dat" "HUP 2" "GET /s4.dat" "GET /s4.dat" >"$T_TMP/rl" ||
  t_fail "the keep-alive exchange around a reload ran" "$(tail -3 "$T_TMP/rl")"
n4=$(curl -s "$BASE/s4.dat" | sha)
check_eq "seed 2 gives other bytes" true "$([ "$n4" != "$s4" ] && echo true || echo false)"
check_eq "around the reload: ETags" '"1-0-1000" "1-0-1000" "2-0-1000" "2-0-1000"' \
  "$(jq -r '.h.etag' "$T_TMP/rl" | tr '\n' ' ' | sed 's/ $//')"
check_eq "... and bodies (old, old, new, new)" "$s4 $s4 $n4 $n4" "$(jq -r .sha "$T_TMP/rl" | tr '\n' ' ' | sed 's/ $//')"
check_eq "... one connection throughout" "1 1 1 1" "$(jq -r .conn "$T_TMP/rl" | tr '\n' ' ' | sed 's/ $//')"
srv_stop
check_eq "debitd stopped cleanly" 0 "$SRV_RC"

# HTTPS: the buffer is encrypted from the region, the response sent again the same way
if command -v openssl >/dev/null; then
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 30 -subj /CN=debit-reuse \
    -addext "subjectAltName=IP:127.0.0.1" -keyout "$T_TMP/t.key" -out "$T_TMP/t.crt" 2>"$T_TMP/t.err" ||
    t_fail "openssl made a test certificate" "$(cat "$T_TMP/t.err")"
  srv_conf "$T_TMP/t.conf" 'files = ( { path = "/s4.dat"; size = "4KiB"; } );'
  TPORT=$(free_port) # beside the plain listener that srv_start waits for
  while [ "$TPORT" = "$PORT" ]; do TPORT=$(free_port); done
  sed -i "1s| } );\$| },\\n  { address = \"127.0.0.1\"; port = $TPORT; tls = { cert = \"$T_TMP/t.crt\"; key = \"$T_TMP/t.key\"; }; } );|" "$T_TMP/t.conf"
  srv_start "$T_TMP/t.conf"
  u=https://127.0.0.1:$TPORT/s4.dat
  curl -s --cacert "$T_TMP/t.crt" -D "$T_TMP/th" -w '%{num_connects}\n' -o "$T_TMP/t1" "$u" -o "$T_TMP/t2" "$u" \
    -o "$T_TMP/t3" "$u" >"$T_TMP/tn"
  check_eq "https: 3 responses over one connection" "1 0 0" "$(tr '\n' ' ' <"$T_TMP/tn" | sed 's/ $//')"
  check_eq "https: each body right" "$s4 $s4 $s4" "$(for i in 1 2 3; do sha <"$T_TMP/t$i"; done | tr '\n' ' ' | sed 's/ $//')"
  tr -d '\r' <"$T_TMP/th" >"$T_TMP/thh"
  check_eq "https: 3 distinct transfer IDs" 3 \
    "$(awk -v h="$lid:" 'tolower($1) == h {print $2}' "$T_TMP/thh" | sort -u | grep -c '^[0-9a-f]\{32\}$')"
  check_eq "https: X-Debit-Tls names the same session kind on all three" 1 \
    "$(awk 'tolower($1) == "x-debit-tls:" && $2 ~ /^TLS1/ {sub(/^[^:]*: /, ""); print}' "$T_TMP/thh" | sort | uniq -c | awk '$1 == 3' | wc -l)"
  check_eq "https: /status response_reuse built 1, reused 2" '{"built":1,"reused":2}' \
    "$(curl -s "$BASE/status" | jq -c '.listeners[1].response_reuse')"
  srv_stop
else
  t_skip "https: a small response sent again" "openssl not installed"
fi
t_done
