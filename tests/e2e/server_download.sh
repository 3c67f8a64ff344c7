#!/usr/bin/env bash
# debitd end to end: real downloaders (curl, wget, aria2c segmented) get bytes whose SHA-256
# equals debitd's FILE.sha256; ranged pieces concatenate to the whole; a file larger than the
# `ram` cap repeats the region (iovec path); IPv6 and dual stack; same seed = same bytes.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
need_cmd wget aria2c

srv_conf "$T_TMP/d.conf" 'seed = 42;' 'ram = "16MiB";' \
  'files = ( { path = "/files/32Mio.dat"; size = "32Mio"; }, { path = "/ram/16MiB.dat"; size = "16MiB"; },' \
  '          { path = "/small/1000.bin"; size = 1000; }, { path = "/empty.dat"; size = 0; } );'
srv_start "$T_TMP/d.conf"

want=$(sha_of "$BASE/ram/16MiB.dat")
check_match ".sha256 answer is a hex digest and the file name" '^[0-9a-f]{64}  16MiB.dat$' "$(curl -s "$BASE/ram/16MiB.dat.sha256")"

curl -s -o "$T_TMP/c.dat" "$BASE/ram/16MiB.dat"
check_eq "curl: size" 16777216 "$(stat -c %s "$T_TMP/c.dat")"
check_eq "curl: sha256 = .sha256" "$want" "$(sha256sum <"$T_TMP/c.dat" | cut -d' ' -f1)"

wget -q -O "$T_TMP/w.dat" "$BASE/ram/16MiB.dat"
check_eq "wget: sha256 = .sha256" "$want" "$(sha256sum <"$T_TMP/w.dat" | cut -d' ' -f1)"

want32=$(sha_of "$BASE/files/32Mio.dat")
aria2c -q -x4 -s4 -k1M --min-split-size=1M --allow-overwrite=true -d "$T_TMP" -o a.dat "$BASE/files/32Mio.dat" \
  >"$T_TMP/aria.out" 2>&1
check_eq "aria2c -x4 -s4: sha256 = .sha256" "$want32" "$(sha256sum <"$T_TMP/a.dat" | cut -d' ' -f1)"
# aria2c really made ranged requests on several connections: the access log has 206s
n206=$(jq -s '[.[] | select(.path == "/files/32Mio.dat" and .status == 206)] | length' "$T_TMP/access.log")
check_cmp "aria2c made several ranged requests ($n206)" "$n206" ">=" 2

# ranged pieces concatenated equal the whole, with every Range form
: >"$T_TMP/pieces"
curl -s -r 0-999999 "$BASE/ram/16MiB.dat" >>"$T_TMP/pieces"
curl -s -r 1000000-9999999 "$BASE/ram/16MiB.dat" >>"$T_TMP/pieces"
curl -s -H 'Range: bytes=10000000-16000000' "$BASE/ram/16MiB.dat" >>"$T_TMP/pieces"
curl -s -H 'Range: bytes=16000001-' "$BASE/ram/16MiB.dat" >>"$T_TMP/pieces"
check_file_eq "4 ranges (a-b, a-b, a-b, a-) concatenate to the whole" "$T_TMP/pieces" "$T_TMP/c.dat"
curl -s -H 'Range: bytes=-777' "$BASE/ram/16MiB.dat" >"$T_TMP/suffix"
check_file_eq "suffix range -777 = last 777 bytes" "$T_TMP/suffix" <(tail -c 777 "$T_TMP/c.dat")

# the 32 MiB file repeats the 16 MiB region: its halves are identical, and the region is
# the 16 MiB file; a range across the seam is right too
curl -s -o "$T_TMP/big.dat" "$BASE/files/32Mio.dat"
check_eq "repeated file: sha256 = .sha256" "$want32" "$(sha256sum <"$T_TMP/big.dat" | cut -d' ' -f1)"
check_file_eq "repeated file: first half = region" <(head -c 16777216 "$T_TMP/big.dat") "$T_TMP/c.dat"
check_file_eq "repeated file: second half = region" <(tail -c 16777216 "$T_TMP/big.dat") "$T_TMP/c.dat"
curl -s -r 16777000-16778000 "$BASE/files/32Mio.dat" >"$T_TMP/seam"
check_file_eq "range across the repetition seam" "$T_TMP/seam" <(tail -c +16777001 "$T_TMP/big.dat" | head -c 1001)
check_eq "/status says the repeated file uses iovec" "iovec sendfile" \
  "$(curl -s "$BASE/status" | jq -r '[.files[] | select(.path=="/files/32Mio.dat" or .path=="/ram/16MiB.dat") | .send_path] | join(" ")')"

# small and empty files
check_eq "1000-byte file" 1000 "$(curl -s "$BASE/small/1000.bin" | wc -c)"
check_eq "1000-byte file is the region's first 1000 bytes" "$(head -c 1000 "$T_TMP/c.dat" | sha256sum)" \
  "$(curl -s "$BASE/small/1000.bin" | sha256sum)"
check_eq "empty file: 200 and 0 bytes" "200 0" "$(curl -s -o /dev/null -w '%{http_code} %{size_download}' "$BASE/empty.dat")"
check_eq "empty file sha256" "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" "$(sha_of "$BASE/empty.dat")"
check_eq "/status: a file of 64 KiB or less is sent as a buffer with its headers (and an empty one)" "buffer buffer" \
  "$(curl -s "$BASE/status" | jq -r '[.files[] | select(.path=="/small/1000.bin" or .path=="/empty.dat") | .send_path] | join(" ")')"
tid=$(curl -s -D - -o /dev/null "$BASE/small/1000.bin" | tr -d '\r' | awk -F': ' 'tolower($1)=="x-debit-transfer"{print $2}')
check_eq "... as its transfer record says" buffer "$(curl -s "$BASE/transfers/$tid" | jq -r .send_path)"
check_eq "bytes are incompressible (gzip saves < 1%)" 1 \
  "$(awk -v a="$(gzip -c "$T_TMP/c.dat" | wc -c)" 'BEGIN{print (a > 0.99 * 16777216) ? 1 : 0}')"
srv_stop

# IPv6 and dual stack on "::", a second, v6-only listener on ::1, with the same seed: same
# bytes, different seed: different
P6=$(free_port); P6b=$(free_port)
while [ "$P6b" = "$P6" ]; do P6b=$(free_port); done
cat >"$T_TMP/v6.conf" <<CONF
listen = ( { address = "::"; port = $P6; }, { address = "::1"; port = $P6b; } );
seed = 42;
files = ( { path = "/ram/16MiB.dat"; size = "16MiB"; } );
log = { access = "off"; };
CONF
debitd_spawn "$T_TMP/v6.conf"
if wait_http "http://[::1]:$P6/status" 150 "" "$DEBITD_PID" && wait_http "http://[::1]:$P6b/status" 50 "" "$DEBITD_PID"; then
  check_eq "dual stack: IPv6 download, same seed = same bytes" "$want" "$(curl -s -g "http://[::1]:$P6/ram/16MiB.dat" | sha256sum | cut -d' ' -f1)"
  check_eq "dual stack: IPv4 on the \"::\" listener" "$want" "$(curl -s "http://127.0.0.1:$P6/ram/16MiB.dat" | sha256sum | cut -d' ' -f1)"
  check_eq "second listener [::1]: same bytes" "$want" "$(curl -s -g "http://[::1]:$P6b/ram/16MiB.dat" | sha256sum | cut -d' ' -f1)"
  check_eq "[::1] listener is IPv6 only: 127.0.0.1 refused" 000 "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P6b/status")"
  check_eq "/status lists both listeners" "[::]:$P6 [::1]:$P6b" "$(curl -s -g "http://[::1]:$P6b/status" | jq -r '[.listeners[].name] | join(" ")')"
else
  t_fail "debitd on [::]:$P6 started" "$(tail -3 "$T_TMP/debitd.log")"
fi
stop_pid "$DEBITD_PID"
sed -i 's/seed = 42;/seed = 43;/' "$T_TMP/v6.conf"
debitd_spawn "$T_TMP/v6.conf"
wait_http "http://[::1]:$P6/status" 150 "" "$DEBITD_PID"
other=$(curl -s -g "http://[::1]:$P6/ram/16MiB.dat.sha256" | cut -d' ' -f1)
check_match "another seed: another digest" '^[0-9a-f]{64}$' "$other"
check_nomatch "another seed: bytes differ" "$want" "$other"
t_done
