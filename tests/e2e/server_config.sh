#!/usr/bin/env bash
# debitd's command line and configuration errors: each bad configuration exits 2 with
# "FILE:LINE: setting: reason"; -t prints the effective settings; --listen overrides.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"

# bad CONTENT EXPECTED_REGEX : write CONTENT (one setting per line) and run debitd -t on it
n=0
bad() {
  n=$((n + 1))
  local f=$T_TMP/bad$n.conf
  printf '%b\n' "$1" >"$f"
  "$DEBITD" -t -c "$f" >"$T_TMP/out" 2>&1; local rc=$?
  check_eq "bad config $n exits 2 ($2)" 2 "$rc"
  check_match "bad config $n message" "$(printf '%s' "$f" | sed 's/[.]/\\./g'):$2" "$(cat "$T_TMP/out")"
}
bad 'threads = 1;\nbogus = 3;' '2: bogus: unknown setting \(expected one of: listen, threads'
bad 'listen = ( { address = "::"; port = 70000; } );' '1: listen\[0\]\.port: 70000 is out of range \[1, 65535\]'
bad 'listen = ( { address = "::"; port = 0; } );' '1: listen\[0\]\.port: 0 is out of range'
bad 'listen = ( { address = "::"; } );' '1: listen\[0\]: port is missing'
bad 'listen = ( { address = "localhost"; port = 80; } );' '1: listen\[0\]\.address: "localhost" is not a numeric IPv4 or IPv6 address'
bad 'listen = ( { address = "::"; port = 80; },\n { address = "::"; port = 80; } );' '2: listen\[1\]\.address: :: port 80 is already listed'
bad 'listen = ( { address = "::"; port = 80; } );\nfiles = ( { path = "/a.dat"; size = "1GiB"; },\n { path = "/a.dat"; size = "1MiB"; } );' '3: files\[1\]\.path: duplicate path "/a\.dat"'
bad 'files = ( { path = "/a.dat"; size = "1 GB x"; } );' '1: files\[0\]\.size: "1 GB x": '
bad 'files = ( { path = "/a.dat"; size = "12Gb"; } );' '1: files\[0\]\.size: "12Gb": '
bad 'files = ( { path = "/a.dat"; size = -5; } );' '1: files\[0\]\.size: must not be negative'
bad 'files = ( { path = "a.dat"; size = 5; } );' '1: files\[0\]\.path: "a\.dat" must start with'
bad 'files = ( { path = "/x/../a.dat"; size = 5; } );' "1: files\\[0\\]\\.path: \"/x/\\.\\./a\\.dat\": empty, '\\.' or '\\.\\.' path segment"
bad 'files = ( { path = "/a b.dat"; size = 5; } );' '1: files\[0\]\.path: "/a b\.dat": character 0x20 \(a space or control character\) is not allowed'
bad 'threads = 1;\nlog = { access = "/nonexistent/dir/a.log"; };' '2: log\.access: cannot open "/nonexistent/dir/a\.log": No such file or directory'
bad 'files = ( { path = "/status"; size = 5; } );' '1: files\[0\]\.path: "/status" is reserved'
bad 'files = ( { path = "/a"; size = 5; },\n { path = "/a/b"; size = 5; } );' '2: files\[1\]\.path: "/a/b" and "/a": a path cannot be both a file and a folder'
bad 'files = ( { path = "/a"; size = 5; },\n { path = "/a.sha256"; size = 5; } );' '2: files\[1\]\.path: "/a\.sha256" collides with the checksum of "/a"'
bad 'files = ( { path = "/a"; } );' '1: files\[0\]: size is missing'
bad 'files = ( { path = "/a"; size = 1; colour = "red"; } );' '1: files\[0\]\.colour: unknown setting'
bad 'upload = { path = "/a"; max_size = "lots"; };' '1: upload\.max_size: "lots": '
bad 'files = ( { path = "/up"; size = 5; } );\nupload = { path = "/up"; };' '1: files\[0\]\.path: duplicate path "/up"'
bad 'limits = { per_ip = -1; };' '1: limits\.per_ip: -1 is out of range'
bad 'limits = { idle_timeout = "1.5s"; };' '1: limits\.idle_timeout: must be whole seconds'
bad 'limits = {\n header_timeout = "10min2ms"; };' '2: limits\.header_timeout: "10min2ms": '
bad 'limits = { header_timeout = "90min"; };' '1: limits\.header_timeout: 5400000 ms is out of range \(0 = none, or 100ms to 1 hour\)'
bad 'limits = {\n per_ip = 5;\n body_min_rate = "1kB/h"; };' '3: limits\.body_min_rate: "1kB/h": '
bad 'log = { level = "loud"; };' '1: log\.level: unknown level "loud"'
bad 'threads = 5000;' '1: threads: 5000 is out of range \[0, 1024\]'
bad 'ram = "1KiB";' '1: ram: 1024 bytes is too small'
bad 'seed = "one";' '1: seed: expected an integer'
bad 'threads = 1;\nseed = = 2;' '2: syntax: syntax error'
bad 'listen = ( { address = "::"; port = 80; tcp = { congestion = "nosuchcc"; }; } );' '1: listen\[0\]\.tcp\.congestion: .*nosuchcc.*available'
bad 'offload = { tso = false; };' '1: offload: interface is missing'
# -t fails where a start would: an interface that does not exist (here: in this namespace)
bad 'threads = 1;\noffload = { interface = "nosuch0"; tso = false; };' '2: offload\.interface: nosuch0: no such network interface \(in this network namespace\)$'
printf 'offload = { interface = "nosuch0"; tso = false; required = false; };\n' >"$T_TMP/ifopt.conf"
"$DEBITD" -t -c "$T_TMP/ifopt.conf" >/dev/null 2>"$T_TMP/ifopt.err"
check_eq "-t, a missing interface with required = false: valid (exit 0), a warning with FILE:LINE" "0 1" \
  "$? $(grep -c "warn: $T_TMP/ifopt.conf:1: offload.interface: nosuch0: no such network interface (in this network namespace) (a start would continue: offload.required = false)" "$T_TMP/ifopt.err")"
bad 'offload = { interface = "lo"; tso = "no"; };' '1: offload\.tso: expected true or false'
bad 'threads = 1;\nuser = "nosuchuser-x";' '2: user: user "nosuchuser-x" does not exist'
bad 'user = "nobody";\ngroup = "nosuchgroup-x";' '2: group: group "nosuchgroup-x" does not exist'
bad 'user = 65534;' '1: user: expected a string'
bad 'user = "../etc";' '1: user: "\.\./etc" is not a valid user name'
bad 'seccomp = "maybe";' '1: seccomp: unknown mode "maybe" \(expected eperm, kill, log or off\)'
# libconfig 1.5 keeps a bare integer in 32 bits without a word (4294967296 reads as 0,
# 4294986497 as port 19201): refused with the literal, not served as an empty file or a
# port nobody asked for; the same values with L or as a string are taken as written
bad 'files = ( { path = "/a.dat"; size = 4294967296; } );' '1: files\[0\]\.size: 4294967296 does not fit a libconfig integer \(32 bits\): write it with the L suffix \(4294967296L\) or, for a size, as a string \("4GiB"\)'
bad 'files = ( { path = "/a.dat";\n size = 10737418240; } );' '2: files\[0\]\.size: 10737418240 does not fit a libconfig integer \(32 bits\): write it with the L suffix \(10737418240L\) or, for a size, as a string \("10GiB"\)'
bad 'listen = ( { address = "127.0.0.1"; port = 4294986497; } );' '1: listen\[0\]\.port: 4294986497 does not fit a libconfig integer \(32 bits\): write it with the L suffix \(4294986497L\)$'
bad 'listen = ( { address = "127.0.0.1"; port = 4294986497L; } );' '1: listen\[0\]\.port: 4294986497 is out of range \[1, 65535\]'
bad 'limits = { per_ip = 0; idle_timeout = 4294967326; };' '1: limits\.idle_timeout: 4294967326 does not fit a libconfig integer'
bad 'seed = 9223372036854775808L;' '1: seed: 9223372036854775808L does not fit a 64-bit integer'
printf 'files = ( { path = "/a.dat"; size = 4294967296L; }, { path = "/b.dat"; size = "4GiB"; } );\n' >"$T_TMP/big.conf"
check_match "a size of 4294967296L and \"4GiB\" are 4 GiB" '/a\.dat"; size = "4GiB"; \},? # 4294967296 bytes.*/b\.dat"; size = "4GiB"; \} # 4294967296 bytes' \
  "$("$DEBITD" -t -c "$T_TMP/big.conf" 2>&1 | tr '\n' ' ')"

"$DEBITD" -t -c "$T_TMP/none.conf" >"$T_TMP/out" 2>&1; rc=$?
check_eq "missing file: exit 2" 2 "$rc"
check_match "missing file: message" "none\.conf: cannot read: No such file or directory" "$(cat "$T_TMP/out")"

# -t prints the effective settings in the config's own syntax, which -t accepts again
"$DEBITD" -t -c "$DEBIT_TOP/etc/debitd.conf" >"$T_TMP/eff" 2>"$T_TMP/err"; rc=$?
check_eq "etc/debitd.conf is valid" 0 "$rc"
check_match "-t says valid on stderr" 'configuration .*etc/debitd\.conf is valid' "$(cat "$T_TMP/err")"
check_eq "etc/debitd.conf serves the seed's paths, 100Mio and 10Gio, with ram = 1GiB" \
  '/ram/1GiB.dat /files/1Gio.dat /files/100Mio.dat /files/10Gio.dat ram="1GiB"' \
  "$(sed -n 's/^ *{ path = "\([^"]*\)"; size.*/\1/p' "$T_TMP/eff" | tr '\n' ' ')ram=$(sed -n 's/^ram = \("[^"]*"\);.*/\1/p' "$T_TMP/eff")"
check_match "-t prints the files" 'path = "/files/10Gio.dat"; size = "10GiB"; \} # 10737418240 bytes, repeats the region' "$(cat "$T_TMP/eff")"
check_match "-t prints the resolved thread count" 'threads = 0; # [0-9]+ worker thread' "$(cat "$T_TMP/eff")"
"$DEBITD" -t -c "$T_TMP/eff" >"$T_TMP/eff2" 2>/dev/null; rc=$?
check_eq "the printed settings are a valid config" 0 "$rc"
check_eq "and print the same (but the source line)" "$(tail -n +2 "$T_TMP/eff")" "$(tail -n +2 "$T_TMP/eff2")"
cat >"$T_TMP/tcp.conf" <<'CONF'
listen = ( { address = "::1"; port = 81; tcp = { congestion = "reno"; pacing_rate = "2.5Gbit"; sndbuf = "4MiB"; notsent_lowat = 131072; }; } );
seed = 5000000000L;
files = ( { path = "/odd.bin"; size = 12345678901L; } );
offload = { interface = "lo"; tso = false; restore = false; };
CONF
"$DEBITD" -t -c "$T_TMP/tcp.conf" >"$T_TMP/tcp.eff" 2>/dev/null
check_match "-t prints the TCP profile" 'tcp = \{ congestion = "reno"; pacing_rate = "2500Mbit"; sndbuf = "4MiB"; notsent_lowat = "128KiB"; \}' "$(cat "$T_TMP/tcp.eff")"
check_match "-t prints the offload group" 'offload = \{ interface = "lo"; tso = false; restore = false; required = true;' "$(cat "$T_TMP/tcp.eff")"
"$DEBITD" -t -c "$T_TMP/tcp.eff" >"$T_TMP/tcp.eff2" 2>/dev/null; rc=$?
check_eq "TCP profile, offload, 64-bit seed and size survive the round trip" "0 $(tail -n +2 "$T_TMP/tcp.eff")" "$rc $(tail -n +2 "$T_TMP/tcp.eff2")"
eff=$("$DEBITD" -t -c "$DEBIT_TOP/etc/debitd.conf" --listen 127.0.0.1:9 --listen '[::1]:10' --log-level debug 2>/dev/null)
check_match "--listen replaces the listeners" '\{ address = "127\.0\.0\.1"; port = 9; tcp_nopush = true; connection_memory = "32KiB"; \},.*\{ address = "::1"; port = 10; tcp_nopush = true; connection_memory = "32KiB"; \}' "$(tr '\n' ' ' <<<"$eff")"
check_match "--log-level overrides log.level" 'level = "debug"' "$eff"
"$DEBITD" -t --listen 127.0.0.1:99999 >"$T_TMP/out" 2>&1; rc=$?
check_eq "--listen bad port: exit 2" 2 "$rc"
check_match "--listen bad port: message names the option" '--listen: "127\.0\.0\.1:99999": port "99999"' "$(cat "$T_TMP/out")"

# CLI
check_match "--help" 'Usage: debitd \[OPTIONS\]' "$("$DEBITD" --help)"
check_match "--version" '^debitd [0-9]+\.[0-9]+\.[0-9]+ \(libmicrohttpd 0\.9\.[0-9]+\)$' "$("$DEBITD" --version)"
"$DEBITD" --bogus >"$T_TMP/out" 2>&1; rc=$?
check_eq "unknown option: exit 2" 2 "$rc"
check_match "unknown option: named" 'unknown option --bogus' "$(cat "$T_TMP/out")"
"$DEBITD" -c >"$T_TMP/out" 2>&1; rc=$?
check_eq "missing argument: exit 2" 2 "$rc"
check_match "missing argument: named" 'option -c needs an argument' "$(cat "$T_TMP/out")"
"$DEBITD" stray >"$T_TMP/out" 2>&1; rc=$?
check_eq "stray argument: exit 2" 2 "$rc"

# -t warns when the content region is larger than the host's memory (MemTotal: it is held in
# RAM), and only then
mem_kib=$(awk '$1 == "MemTotal:" {print $2}' /proc/meminfo)
over=$(( (mem_kib / 1048576 + 2) ))GiB
printf 'files = ( { path = "/big.dat"; size = "%s"; } );\nram = "%s";\n' "$over" "$over" >"$T_TMP/big.conf"
"$DEBITD" -t -c "$T_TMP/big.conf" >/dev/null 2>"$T_TMP/out"; rc=$?
check_eq "ram = $over (MemTotal $mem_kib KiB): -t still exit 0" 0 "$rc"
check_match "... with a warning naming ram, the region and MemTotal" \
  "warn: .*big\.conf:2: ram: the content region \([0-9.]+ GiB, ram\) is larger than this host's memory \(MemTotal [0-9.]+ GiB\)" \
  "$(cat "$T_TMP/out")"
printf 'files = ( { path = "/big.dat"; size = "%s"; } );\n' "$over" >"$T_TMP/big2.conf"
check_match "... also when the largest file sets the region (no ram)" \
  "big2\.conf: ram: the content region \([0-9.]+ GiB, the largest file: ram not set\)" "$("$DEBITD" -t -c "$T_TMP/big2.conf" 2>&1 >/dev/null)"
printf 'files = ( { path = "/big.dat"; size = "%s"; } );\nram = "64MiB";\n' "$over" >"$T_TMP/small.conf"
check_nomatch "ram = 64MiB: no warning" 'MemTotal' "$("$DEBITD" -t -c "$T_TMP/small.conf" 2>&1 >/dev/null)"
t_done
