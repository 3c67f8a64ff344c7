#!/usr/bin/env bash
# A scenario's lab servers (servers[].lab, client/scenario_lab.h) are checked by debit at
# load time: `debit -t --scenario F` rejects an unknown lab key, a CPU budget out of range,
# bad tcp_wmem/tcp_rmem, initcwnd, mtu, cc, sndbuf and an address outside the lab's plan,
# each with FILE:LINE: setting and exit 2; `-t --format json` prints the plan lab/lab.sh
# reads. Runs nothing (no root, no network).
. "$DEBIT_TOP/tests/lib/common.sh"
need_cmd jq
[ -x "$DEBIT" ] || skip_all "build/debit is not built"
ncpu=$(getconf _NPROCESSORS_ONLN)
over=$((100 * ncpu + 100))

# bad_conf NAME FILE-TEXT REGEX: -t refuses FILE-TEXT with "FILE:REGEX", exit 2.
bad_conf() {
  local f=$T_TMP/bad.conf out rc
  printf '%s\n' "$2" >"$f"
  out=$("$DEBIT" -t --scenario "$f" 2>&1); rc=$?
  check_eq "$1: exit 2" 2 $rc
  check_match "$1: FILE:LINE: setting: reason" "^debit: --scenario: $f:$3" "$out"
}
# bad_lab NAME 'LAB GROUP BODY' REGEX: one server with that lab group, line 2.
bad_lab() {
  bad_conf "$1" "servers = (
  { name = \"A\"; url = \"http://198.18.1.2/files/10Mio.dat\"; lab = { $2 }; }
);" "2: $3"
}
bad_lab "unknown lab key" 'tso = true; turbo = 1;' "servers\[0\]\.lab\.turbo: unknown setting \(expected one of: tso, gso, cc, pacing, sndbuf, notsent_lowat, cpu, tcp_wmem, tcp_rmem, initcwnd, mtu\)"
bad_lab "cpu 0%" 'cpu = "0%";' "servers\[0\]\.lab\.cpu: '0%': out of range 1%\.\.$((100 * ncpu))% \($ncpu CPUs? online\)"
bad_lab "cpu $over% on $ncpu CPUs" "cpu = \"$over%\";" "servers\[0\]\.lab\.cpu: '$over%': out of range"
bad_lab "cpu not a percentage" 'cpu = "lots";' "servers\[0\]\.lab\.cpu: 'lots': expected a percentage of one CPU"
bad_lab "tcp_wmem: two sizes" 'tcp_wmem = "4096 1MiB";' "servers\[0\]\.lab\.tcp_wmem: '4096 1MiB': expected \"min default max\""
bad_lab "tcp_wmem: out of order" 'tcp_wmem = "1MiB 4096 2MiB";' "servers\[0\]\.lab\.tcp_wmem: '1MiB 4096 2MiB': expected"
bad_lab "tcp_rmem: not a size" 'tcp_rmem = "4096 x 2MiB";' "servers\[0\]\.lab\.tcp_rmem: '4096 x 2MiB': expected"
bad_lab "tcp_rmem: over 1 GiB" 'tcp_rmem = "4096 16384 2GiB";' "servers\[0\]\.lab\.tcp_rmem: .*4KiB\.\.1GiB"
bad_lab "tcp_wmem: a number" 'tcp_wmem = 4096;' "servers\[0\]\.lab\.tcp_wmem: expected \"min default max\""
bad_lab "initcwnd 0" 'initcwnd = 0;' "servers\[0\]\.lab\.initcwnd: .*range"
bad_lab "mtu 70000" 'mtu = 70000;' "servers\[0\]\.lab\.mtu: 70000 is out of range \[576, 65535\]"
bad_lab "cc not available" 'cc = "nosuchcc";' "servers\[0\]\.lab\.cc: 'nosuchcc' is not available"
bad_lab "sndbuf not a size" 'sndbuf = "big";' "servers\[0\]\.lab\.sndbuf: 'big' is not a size"
bad_lab "tso not a boolean" 'tso = "yes";' "servers\[0\]\.lab\.tso: "

# Addresses: the second server (line 3) against the plan.
bad_addr() {
  bad_conf "$1" "servers = (
  { name = \"A\"; url = \"http://198.18.1.2/f\"; lab = {}; },
  { name = \"B\"; url = \"$2\"; lab = {}; }
);" "3: servers\[1\]\.url: $3"
}
bad_addr "address outside 198.18.0.0/15" "http://10.1.2.3/f" "'10\.1\.2\.3': a lab server's address must be in 198\.18\.0\.0/15"
bad_addr "the client's /24" "http://198.18.3.9/f" "'198\.18\.3\.9': 198\.18\.3\.0/24 is the lab's client network"
bad_addr "the same /24 as another server" "http://198.18.1.7/f" "'198\.18\.1\.7': in the same /24 as lab server \"A\" \(198\.18\.1\.2\)"
bad_addr "the router's .1" "http://198.19.4.1/f" "'198\.19\.4\.1': the host part must be 2\.\.254"
bad_addr "a host name" "http://lab.example/f" "'lab\.example': a lab server's host must be an IPv4 address"
bad_addr "https" "https://198.18.5.2/f" "'https://198\.18\.5\.2/f': a lab server is plain http://"

# A good one: -t --format json prints each server's lab settings (null when not set), and
# a server without a lab group has "lab": null.
G=$T_TMP/good.conf
cat >"$G" <<'CONF'
servers = (
  { name = "A"; url = "http://198.19.200.9:8081/files/10Mio.dat";
    lab = { tso = false; cpu = "1.5%"; pacing = "500Mbit"; notsent_lowat = "128KiB";
            tcp_wmem = "4KiB 16KiB 1MiB"; initcwnd = 4; mtu = 1400; }; },
  { name = "mirror"; url = "http://198.51.100.1/files/10Mio.dat"; }
);
runs = 2;
latency = ( { name = "natural"; delay = 0; }, { name = "+10"; delay = "10ms"; device = "eth0"; } );
CONF
out=$("$DEBIT" -t --scenario "$G" --format json 2>&1)
check_eq "good lab: -t --format json exit 0" 0 $?
check_eq "good lab: the lab settings as lab.sh reads them" \
  'A 198.19.200.9 8081 false null null 500000000 null 131072 1.5 4096 16384 1048576 null 4 1400' \
  "$(jq -r '.servers[0].lab | [.name, .address, .port, .tso, .gso, .cc, .pacing_bps, .sndbuf, .notsent_lowat, .cpu_pct, .tcp_wmem, .tcp_rmem, .initcwnd, .mtu] | map(tostring) | join(" ")' <<<"$out" 2>&1)"
check_eq "good lab: a server without a lab group has lab null" "null" "$(jq -c '.servers[1].lab' <<<"$out" 2>&1)"
check_eq "good lab: the plan's axes and count" "2 natural,+10 8" \
  "$(jq -r '"\(.runs) \([.latency[].name] | join(",")) \(.downloads)"' <<<"$out" 2>&1)"
check_match "good lab: the text form still says OK" "^debit: configuration OK: $G" "$("$DEBIT" -t --scenario "$G" 2>&1)"
t_done
