#!/usr/bin/env bash
# debit as a speed-test client (issue 33): a LibreSpeed garbage.php URL and a Cloudflare
# __down URL are measured like test files, with their kind in the run JSON ("librespeed",
# "cloudflare") and in the default server name; --families measures one URL over IPv4 and
# IPv6 as two servers, alternating, against debitd listening on 127.0.0.1 and ::1.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
python3 -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null ||
  skip_all "no IPv6 loopback (::1)"

srv_conf "$T_TMP/s.conf" 'files = ( { path = "/f.dat"; size = "32MiB"; } );'
# the same port on ::1 too (line 1 is the listener debitd_up reads the port from)
sed -i "1s/);\$/, { address = \"::1\"; port = $PORT; } );/" "$T_TMP/s.conf"
srv_start "$T_TMP/s.conf"
HOSTURL=http://localhost:$PORT

f=$T_TMP/k.json
"$DEBIT" -q -n 2 --format json -o "$f" "$BASE/garbage.php?ckSize=8" "$BASE/__down?bytes=5000000" "$BASE/f.dat"
check_eq "exit 0" 0 $?
check_eq "run kinds: librespeed, cloudflare, file (alternating)" \
  "librespeed cloudflare file librespeed cloudflare file" "$(jq -r '[.runs[].kind] | join(" ")' "$f")"
check_eq "bytes: 8 MiB, 5000000, 32 MiB" "8388608 5000000 33554432" \
  "$(jq -r '[.runs[0:3][].bytes | tostring] | join(" ")' "$f")"
check_eq "every run ok, with debitd's record (server_record.bytes = bytes)" true \
  "$(jq -r '[.runs[] | .ok and .server_record.bytes == .bytes] | all' "$f")"
check_eq "summary kinds" "librespeed cloudflare file" "$(jq -r '[.summary[].kind] | join(" ")' "$f")"
check_match "default names say the protocol" '^127\.0\.0\.1:[0-9]+/garbage\.php librespeed$' \
  "$(jq -r '.summary[0].server' "$f")"
check_match "... and the table shows them" 'garbage\.php librespeed .*/__down cloudflare' \
  "$("$DEBIT" -q -n 1 "$BASE/garbage.php?ckSize=1" "$BASE/__down?bytes=2000000" | tr '\n' ' ')"

f=$T_TMP/fam.json
"$DEBIT" -q -n 3 --families --format json -o "$f" "$HOSTURL/__down?bytes=4000000"
check_eq "--families: exit 0" 0 $?
check_eq "--families: two servers, IPv4 then IPv6, alternating, 3 runs each" \
  "IPv4 IPv6 IPv4 IPv6 IPv4 IPv6" "$(jq -r '[.runs[].server | split(" ") | last] | join(" ")' "$f")"
check_eq "--families: IPv4 runs reached 127.0.0.1, IPv6 runs ::1" "127.0.0.1 ::1 127.0.0.1 ::1 127.0.0.1 ::1" \
  "$(jq -r '[.runs[].remote_ip] | join(" ")' "$f")"
check_eq "--families: every run 4000000 bytes, ok" true "$(jq -r '[.runs[] | .ok and .bytes == 4000000] | all' "$f")"
check_eq "--families: two summary rows" 2 "$(jq -r '.summary | length' "$f")"
f=$T_TMP/fam2.json
"$DEBIT" -q -n 1 --format json -o "$f" v4v6="$HOSTURL/garbage.php?ckSize=2" --families
check_eq "--families after a NAME=URL: NAME IPv4, NAME IPv6" "v4v6 IPv4|v4v6 IPv6" \
  "$(jq -r '[.runs[].server] | join("|")' "$f")"
out=$("$DEBIT" -q -4 --families "$BASE/f.dat" 2>&1); rc=$?
check_eq "--families with -4: exit 2" 2 "$rc"
check_match "... saying why" '--families' "$out"

# a LibreSpeed server-list entry in a scenario file: dlURL and ulURL relative to server
cat >"$T_TMP/ls.conf" <<CONF
servers = ( { name = "LS"; librespeed = { server = "$BASE/backend/"; dlURL = "garbage.php"; ulURL = "empty.php";
                                          ckSize = 6; upload = "3MiB"; }; },
            { name = "CF"; url = "$BASE/__down?bytes=4000000"; } );
runs = 2;
CONF
f=$T_TMP/ls.json
"$DEBIT" -q --scenario "$T_TMP/ls.conf" --format json -o "$f"
check_eq "librespeed entry: exit 0" 0 $?
check_eq "librespeed entry: LS (download), LS upload, CF, alternating" \
  "LS|download|librespeed|6291456 LS upload|upload|librespeed|3145728 CF|download|cloudflare|4000000" \
  "$(jq -r '[.runs[0:3][] | "\(.server)|\(.direction)|\(.kind)|\(.bytes)"] | join(" ")' "$f")"
check_eq "librespeed entry: dlURL gets ?ckSize=6 under server" "$BASE/backend/garbage.php?ckSize=6" \
  "$(jq -r '.runs[0].url' "$f")"
check_eq "librespeed entry: every run ok" true "$(jq -r '[.runs[].ok] | all' "$f")"
printf 'servers = ( { name = "X";\n  librespeed = { server = "%s/"; }; } );\n' "$BASE" >"$T_TMP/bad.conf"
out=$("$DEBIT" -t --scenario "$T_TMP/bad.conf" 2>&1); rc=$?
check_eq "librespeed entry without dlURL/ulURL: exit 2" 2 "$rc"
check_match "... FILE:LINE: setting" 'bad\.conf:2: .*dlURL and ulURL: missing' "$out"
printf 'servers = ( { name = "X"; url = "%s/f.dat";\n  librespeed = { dlURL = "%s/garbage.php"; }; } );\n' "$BASE" "$BASE" >"$T_TMP/bad2.conf"
check_match "librespeed with url: refused" 'bad2\.conf:1: .*url: not with librespeed' \
  "$("$DEBIT" -t --scenario "$T_TMP/bad2.conf" 2>&1)"
srv_stop
t_done
