#!/usr/bin/env bash
# lab/lab.sh up --scenario FILE with four lab servers, each with other host settings (a
# CPU budget, tcp_wmem/tcp_rmem, initcwnd, MTU, debitd's tso/gso/cc/sndbuf): every setting
# is read back where the kernel keeps it (the cgroup's quota files and debitd's pid in
# cgroup.procs, sysctl -n inside the namespace, `ip route`, `ip link`, ethtool, the
# server's own X-Debit-Tcp), downloads from all four work and are labelled with what each
# server is, and after `down` nothing is left: cgroups, namespaces, processes. Also: the
# built-in default (no scenario) is still the seed's two servers, a scenario without lab
# groups falls back to it, and a bad scenario makes `up` fail with debit's FILE:LINE.
. "$DEBIT_TOP/tests/lib/common.sh"
. "$DEBIT_TOP/tests/e2e/lab_lib.bash"
lab_require
need_cmd ip curl jq ethtool
[ -x "$DEBIT" ] || skip_all "build/debit is not built"
mounts=$(awk '$3 == "cgroup2" || ($3 == "cgroup" && $4 ~ /(^|,)cpu(,|$)/) {print $3}' /proc/mounts | sort -u | tr '\n' ' ')
[ -n "$mounts" ] || skip_all "no cgroup hierarchy with the cpu controller (v1 or v2) for the CPU budget"
t_diag "cgroup mounts: $mounts"

S=$T_TMP/four.conf
cat >"$S" <<'CONF'
servers = (
  { name = "budget"; url = "http://198.18.1.2/files/10Mio.dat";
    lab = { tso = true; gso = true; cpu = "30%"; }; },
  { name = "no offload"; url = "http://198.18.2.2/files/10Mio.dat";
    lab = { tso = false; gso = false; tcp_rmem = "4096 65536 8MiB"; }; },
  { name = "capped"; url = "http://198.18.4.2/files/10Mio.dat";
    lab = { sndbuf = "512KiB"; tcp_wmem = "4096 16384 1MiB"; initcwnd = 20; mtu = 1500; }; },
  { name = "tuned"; url = "http://198.18.7.2:8080/files/10Mio.dat";
    lab = { cc = "cubic"; initcwnd = 10; mtu = 9000; cpu = "150%"; }; }
);
runs = 1;
CONF
plan=$("$DEBIT" -t --scenario "$S" --format json 2>&1)
check_eq "debit -t --format json: the four lab servers, with their settings" \
  'budget 198.18.1.2:80 cpu=30 tso=true|no offload 198.18.2.2:80 tso=false rmem=4096 65536 8388608|capped 198.18.4.2:80 sndbuf=524288 wmem=4096 16384 1048576 icw=20 mtu=1500|tuned 198.18.7.2:8080 cpu=150 cc=cubic icw=10 mtu=9000' \
  "$(jq -r '[.servers[].lab | "\(.name) \(.address):\(.port)" + (if .cpu_pct then " cpu=\(.cpu_pct)" else "" end)
      + (if .tso != null then " tso=\(.tso)" else "" end) + (if .cc then " cc=\(.cc)" else "" end)
      + (if .sndbuf then " sndbuf=\(.sndbuf)" else "" end) + (if .tcp_wmem then " wmem=\(.tcp_wmem)" else "" end)
      + (if .tcp_rmem then " rmem=\(.tcp_rmem)" else "" end) + (if .initcwnd then " icw=\(.initcwnd)" else "" end)
      + (if .mtu then " mtu=\(.mtu)" else "" end)] | join("|")' <<<"$plan" 2>&1)"

lab_snap_root >"$T_TMP/root.before"
D=$T_TMP/lab
t_on_exit "[ -f '$D/lab.env' ] && '$LAB' down '$D'"
"$LAB" up "$D" --scenario "$S" --ram 64MiB 2>"$T_TMP/up.err"
rc=$?
check_eq "up --scenario: exit 0" 0 $rc
[ $rc -eq 0 ] || { t_diag "$(tail -5 "$T_TMP/up.err")"; t_done; }
# shellcheck disable=SC1091
. "$D/lab.env"
check_eq "four servers, at their URLs' addresses" "4 198.18.1.2 198.18.2.2 198.18.4.2 198.18.7.2" \
  "$LAB_NSERVERS $LAB_S1_ADDR $LAB_S2_ADDR $LAB_S3_ADDR $LAB_S4_ADDR"
check_eq "the fourth server's base URL has its port" "http://198.18.7.2:8080" "$LAB_S4_URL"

# cpu: a cgroup each, with the quota, debitd's pid in it.
pid1=$(awk '$2 == "debitd-s1" {print $1}' "$D/pids")
pid4=$(awk '$2 == "debitd-s4" {print $1}' "$D/pids")
cg1=${LAB_S1_CGROUP:-none} cg4=${LAB_S4_CGROUP:-none}
if [ "${LAB_S1_CGROUP_VERSION:-}" = v2 ]; then
  check_eq "s1 cpu 30%: cpu.max (a 10 ms period)" "3000 10000" "$(cat "$cg1/cpu.max" 2>&1)"
  check_eq "s4 cpu 150%: cpu.max" "15000 10000" "$(cat "$cg4/cpu.max" 2>&1)"
else
  check_eq "s1 cpu 30%: cfs_quota_us / cfs_period_us (a 10 ms period)" "3000/10000" \
    "$(cat "$cg1/cpu.cfs_quota_us" 2>&1)/$(cat "$cg1/cpu.cfs_period_us" 2>&1)"
  check_eq "s4 cpu 150%: cfs_quota_us / cfs_period_us" "15000/10000" \
    "$(cat "$cg4/cpu.cfs_quota_us" 2>&1)/$(cat "$cg4/cpu.cfs_period_us" 2>&1)"
fi
check "s1's debitd (pid $pid1) is in its cgroup.procs" grep -qx "$pid1" "$cg1/cgroup.procs"
# The per-packet cost of a budget: a cost line (debit-delayline) in the server's cgroup,
# on what arrives from it at the router (GRO off there), and the cgroup's weight raised.
cost1=$(awk '$2 == "cost-s1" {print $1}' "$D/pids")
check "s1's cost line (pid ${cost1:-none}) runs, in s1's cgroup" grep -qx "${cost1:-none}" "$cg1/cgroup.procs"
check_match "s1's cost line: queue 7403, --delay 0, a cost per byte" \
  "ready dev=s1 delay_us=0 direction=in queue=7403 .* byte_cost_ns=2 " "$(head -1 "$D/cost-s1.log")"
check_match "the router queues what s1 sends to that cost line" "-A PREROUTING -i s1 .*NFQUEUE --queue-num 7403" \
  "$(ip netns exec "$LAB_NS_R" iptables -w -t mangle -S PREROUTING 2>&1)"
check_eq "the router's s1: GRO off (the cost line sees what s1 sent)" "generic-receive-offload: off" \
  "$(ip netns exec "$LAB_NS_R" ethtool -k s1 | grep '^generic-receive-offload')"
if [ -f "$cg1/cpu.shares" ]; then check_eq "s1's cgroup: weight raised (cpu.shares)" 262144 "$(cat "$cg1/cpu.shares")"
else check_eq "s1's cgroup: weight raised (cpu.weight)" 10000 "$(cat "$cg1/cpu.weight")"; fi
check_eq "s2 (no budget): no cost line" "" "$(awk '$2 == "cost-s2"' "$D/pids")"
check_eq "up returns once every server's content is ready (/status content.state)" "ready ready ready ready" \
  "$(for u in "$LAB_S1_URL" "$LAB_S2_URL" "$LAB_S3_URL" "$LAB_S4_URL"; do
       ip netns exec "$LAB_NS_C" curl -s --max-time 5 "$u/status" | jq -r .content.state; done | tr '\n' ' ' | sed 's/ $//')"
check "s4's debitd (pid $pid4) is in its cgroup.procs" grep -qx "$pid4" "$cg4/cgroup.procs"
check_match "s1's debitd reports its budget (X-Debit-Cpu), when it does" "^(quota=30%;.*|)$" \
  "$(ip netns exec "$LAB_NS_C" curl -sI --max-time 5 "$LAB_S1_URL/files/10Mio.dat" | tr -d '\r' | sed -n 's/^X-Debit-Cpu: //Ip')"
check_eq "s1's debitd, by /proc: that cgroup" "${cg1#*/debit-lab-}" \
  "$(sed -n 's#^[0-9]*:[^:]*\bcpu\b[^:]*:/debit-lab-##p; s#^0::/debit-lab-##p' "/proc/$pid1/cgroup" | head -1)"
check_eq "s2, s3: no cgroup (no cpu setting)" "" "${LAB_S2_CGROUP:-}${LAB_S3_CGROUP:-}"

# sysctls inside the namespaces: the lab's tuning, overridden where the scenario says.
check_eq "s2 tcp_rmem (scenario)" "4096	65536	8388608" "$(ip netns exec "$LAB_NS_S2" sysctl -n net.ipv4.tcp_rmem)"
check_eq "s3 tcp_wmem (scenario)" "4096	16384	1048576" "$(ip netns exec "$LAB_NS_S3" sysctl -n net.ipv4.tcp_wmem)"
check_eq "s1 tcp_wmem (the lab's tuning)" "4096	16384	67108864" "$(ip netns exec "$LAB_NS_S1" sysctl -n net.ipv4.tcp_wmem)"

# initcwnd on both of the server's routes; none elsewhere.
check_eq "s3 routes: initcwnd 20" "2 2" \
  "$(ip -n "$LAB_NS_S3" route | wc -l) $(ip -n "$LAB_NS_S3" route | grep -c ' initcwnd 20 *$')"
check_match "s4 default route: initcwnd 10" "^default via 198.18.7.1 dev eth0 initcwnd 10" "$(ip -n "$LAB_NS_S4" route)"
check_nomatch "s1 routes: no initcwnd" "initcwnd" "$(ip -n "$LAB_NS_S1" route)"

# MTU: both ends of the veth.
mtu() { ip -n "$1" -o link show "$2" | sed -n 's/.* mtu \([0-9]*\) .*/\1/p'; }
check_eq "s4 MTU 9000 at both ends" "9000 9000" "$(mtu "$LAB_NS_S4" eth0) $(mtu "$LAB_NS_R" s4)"
check_eq "s3 MTU 1500 at both ends" "1500 1500" "$(mtu "$LAB_NS_S3" eth0) $(mtu "$LAB_NS_R" s3)"

# debitd settings: offloads, as ethtool and the server itself say; cc and sndbuf in X-Debit-Tcp.
check_match "s2 TSO/GSO off (ethtool)" "tcp-segmentation-offload: off.*generic-segmentation-offload: off" \
  "$(ip netns exec "$LAB_NS_S2" ethtool -k eth0 | tr '\n' ' ')"
hdr() { ip netns exec "$LAB_NS_C" curl -sI --max-time 5 "$1/files/10Mio.dat" | tr -d '\r' | sed -n "s/^$2: //Ip"; }
check_match "s2 reports TSO/GSO off (X-Debit-Offload)" "^tso=off gso=off" "$(hdr "$LAB_S2_URL" X-Debit-Offload)"
check_match "s3 reports sndbuf 512 KiB (X-Debit-Tcp)" "sndbuf=524288" "$(hdr "$LAB_S3_URL" X-Debit-Tcp)"
check_match "s4 reports cubic (X-Debit-Tcp)" "cc=cubic" "$(hdr "$LAB_S4_URL" X-Debit-Tcp)"

# Downloads from all four, in the client namespace; titles say what each server is.
ip netns exec "$LAB_NS_C" timeout 120 "$DEBIT" --no-progress --scenario "$S" --format markdown \
  --jsonl "$T_TMP/runs.jsonl" >"$T_TMP/out.md" 2>"$T_TMP/out.err"
check_eq "debit --scenario in the lab: exit 0" 0 $?
check_eq "four runs, all ok, 10 MiB each" "4 true" \
  "$(jq -s '"\(length) \([.[] | .ok and .bytes == 10485760] | all)"' -r "$T_TMP/runs.jsonl" 2>&1)"
hdrline=$(grep -m1 '^| scenario |' "$T_TMP/out.md")
t_diag "$hdrline"
check_match "column titles: reported state plus the lab's host settings" \
  "Srv budget \(TSO/GSO on, cpu 30%\) \| Srv no offload \(TSO/GSO off, tcp_rmem max 8 MiB\) \| Srv capped \(TSO/GSO on, sndbuf 512 KiB, tcp_wmem max 1 MiB, initcwnd 20, mtu 1500\) \| Srv tuned \(TSO/GSO on, cpu 150%, initcwnd 10, mtu 9000\)" \
  "$hdrline"

# Take it down: nothing left.
id=$LAB_ID
"$LAB" down "$D" 2>/dev/null
check_eq "down: no cgroup left" "" "$(ls -d /sys/fs/cgroup/*/debit-lab-"$id" /sys/fs/cgroup/debit-lab-"$id" 2>/dev/null)"
check_eq "down: none of its namespaces left" 0 "$(ip netns list | grep -c "^dbl$id")"
check "down: s1's debitd is gone" sh -c "! kill -0 $pid1 2>/dev/null"
check "down: s4's debitd is gone" sh -c "! kill -0 $pid4 2>/dev/null"
check_eq "down: DIR holds no lab any more" "" "$(ls "$D"/lab.env "$D"/cgroups "$D"/netns 2>/dev/null)"
lab_snap_root >"$T_TMP/root.after"
check "root namespace's qdiscs, iptables rules and links as before" diff "$T_TMP/root.before" "$T_TMP/root.after"

# A scenario debit rejects: up fails before building anything, with debit's message.
B=$T_TMP/bad.conf
cat >"$B" <<'CONF'
servers = (
  { name = "a"; url = "http://198.18.1.2/files/10Mio.dat"; lab = { cpu = "10%"; }; },
  { name = "b"; url = "http://198.18.2.2/files/10Mio.dat"; lab = { cpu = "500%"; }; }
);
CONF
out=$("$LAB" up "$T_TMP/lab2" --scenario "$B" 2>&1)
check_eq "up with a bad scenario: exit 2" 2 $?
check_match "up with a bad scenario: debit's FILE:LINE message" "bad.conf:3: servers\[1\]\.lab\.cpu: '500%': out of range" "$out"
check_eq "up with a bad scenario: built nothing" "" "$(ls "$T_TMP/lab2/lab.env" 2>/dev/null)"

# An up that fails half-way (the budgeted server's "debitd" exits at once) removes what it
# built: the cgroups too.
printf '#!/bin/sh\necho "fake debitd: refusing to start" >&2\nexit 1\n' >"$T_TMP/fake-debitd"
chmod +x "$T_TMP/fake-debitd"
labcgs() { ls -d /sys/fs/cgroup/*/debit-lab-* /sys/fs/cgroup/debit-lab-* 2>/dev/null | sort; }
labcgs >"$T_TMP/cg.before"
out=$(LAB_DEBITD=$T_TMP/fake-debitd timeout 60 "$LAB" up "$T_TMP/lab4" --scenario "$S" 2>&1)
check_eq "up whose debitd dies: exit 2" 2 $?
check_match "up whose debitd dies: says which server and why" "s1 \(budget\) did not answer with its content ready: fake debitd: refusing to start" "$out"
check_eq "up whose debitd dies: no new cgroup left" "" "$(labcgs | comm -13 "$T_TMP/cg.before" -)"
check_eq "up whose debitd dies: DIR holds no lab" "" "$(ls "$T_TMP/lab4/lab.env" "$T_TMP/lab4/cgroups" "$T_TMP/lab4/netns" 2>/dev/null)"

# The built-in default, and a scenario without lab groups: the seed's two servers.
N=$T_TMP/nolab.conf
echo 'servers = ( { name = "x"; url = "http://198.18.1.2/files/10Mio.dat"; } );' >"$N"
D3=$T_TMP/lab3
t_on_exit "[ -f '$D3/lab.env' ] && '$LAB' down '$D3'"
if "$LAB" up "$D3" --scenario "$N" --ram 64MiB 2>"$T_TMP/up3.err"; then
  . "$D3/lab.env"
  check_eq "no lab groups: the default two servers (ovh, degrouptest)" "2 ovh degrouptest 198.18.1.2 198.18.2.2" \
    "$LAB_NSERVERS $LAB_S1_NAME $LAB_S2_NAME $LAB_S1_ADDR $LAB_S2_ADDR"
  check_match "default s2: TSO/GSO off" "^tso=off gso=off" "$(hdr "$LAB_S2_URL" X-Debit-Offload)"
  "$LAB" down "$D3" 2>/dev/null
else
  t_fail "up with a scenario without lab groups" "$(tail -3 "$T_TMP/up3.err")"
fi
t_done
