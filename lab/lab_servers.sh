# shellcheck shell=bash
# lab/lab_servers.sh — the lab's servers: which ones (the built-in two, or a scenario
# file's `lab` groups as `debit -t --format json` prints them), and each one's namespace,
# debitd and host settings. Sourced by lab/lab.sh (not a program of its own).
#
# A server spec is one tab-separated line of DIR/servers.tsv, "-" for a setting not given:
#   name address port tso gso cc pacing_bps sndbuf notsent_lowat cpu_pct tcp_wmem tcp_rmem initcwnd mtu
# Every host change is recorded in DIR so that `down` removes it after any failure:
#   DIR/netns     namespaces (with them die their sysctls, routes, veths and MTUs)
#   DIR/cgroups   "MOUNT PATH" of each cgroup made for a CPU budget (down moves any pid
#                 left to MOUNT's root cgroup, then removes PATH, children first)
#   DIR/cgroup-v2-enabled  the v2 root's cpu controller was enabled by the lab (down
#                 disables it again; refused harmlessly while others use it)

# The built-in default: the seed replica's two servers.
lab_servers_default() { # PORT
  printf '%s\t198.18.1.2\t%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\n' ovh "$1"
  printf '%s\t198.18.2.2\t%s\tfalse\tfalse\t-\t-\t-\t-\t-\t-\t-\t-\t-\n' degrouptest "$1"
}

# The lab servers of a scenario file, as specs (nothing when it declares none). Fails,
# with debit's FILE:LINE message, when the file is bad.
lab_servers_from_scenario() { # FILE
  local debit=$DEBIT_BUILD/debit json
  [ -x "$debit" ] || { lab_log "--scenario: $debit is not built (make)"; return 1; }
  json=$("$debit" -t --scenario "$1" --format json 2>&1) || { lab_log "--scenario: ${json#debit: --scenario: }"; return 1; }
  jq -r 'def v(x): if x == null then "-" else x end;
    .servers[] | select(.lab) | .lab |
    [.name, .address, .port, v(.tso), v(.gso), v(.cc), v(.pacing_bps), v(.sndbuf), v(.notsent_lowat),
     v(.cpu_pct), v(.tcp_wmem), v(.tcp_rmem), v(.initcwnd), v(.mtu)] | map(tostring) | @tsv' <<<"$json"
}

# Where a CPU budget can be set: "v2 MOUNT" (a cgroup2 mount offering the cpu
# controller) or "v1 MOUNT" (the v1 hierarchy holding cpu), else fails.
lab_cgroup_mount() {
  local m
  for m in $(awk '$3 == "cgroup2" {print $2}' /proc/mounts); do
    grep -qw cpu "$m/cgroup.controllers" 2>/dev/null && { echo "v2 $m"; return 0; }
  done
  m=$(awk '$3 == "cgroup" && $4 ~ /(^|,)cpu(,|$)/ {print $2; exit}' /proc/mounts)
  [ -n "$m" ] && [ -f "$m/cgroup.procs" ] && { echo "v1 $m"; return 0; }
  return 1
}

# A new, unlimited cgroup for server NODE under the lab's own, both recorded: prints
# "VERSION PATH".
lab_cgroup_new() { # DIR NODE
  local dir=$1 node=$2 ver mnt top
  read -r ver mnt < <(lab_cgroup_mount) || { lab_log "cpu: no cgroup hierarchy with the cpu controller (v1 or v2)"; return 1; }
  top=$mnt/debit-lab-$LAB_ID
  if [ ! -d "$top" ]; then
    if [ "$ver" = v2 ] && ! grep -qw cpu "$mnt/cgroup.subtree_control"; then
      echo +cpu >"$mnt/cgroup.subtree_control" || { lab_log "cpu: cannot enable the cpu controller in $mnt"; return 1; }
      echo "$mnt" >"$dir/cgroup-v2-enabled"
    fi
    mkdir "$top" || return 1
    echo "$mnt $top" >>"$dir/cgroups"
    if [ "$ver" = v2 ]; then echo +cpu >"$top/cgroup.subtree_control" || return 1; fi
  fi
  mkdir "$top/$node" || return 1
  echo "$mnt $top/$node" >>"$dir/cgroups"
  echo "$ver $top/$node"
}

# PCT % of one CPU for the cgroup, over a short period: quota = PCT % of a 10 ms period
# (LAB_CPU_PERIOD_US), the period lengthened where that quota would fall below the
# kernel's 1 ms minimum (1 %: 1 ms per 100 ms). A short period matters: a throttled
# cgroup runs at the machine's full speed between its stops, and over a 100 ms period
# those bursts (20 ms at several Gb/s) overflow the bottleneck's queue, where a slow CPU
# would have sent evenly (v1 cpu.cfs_quota_us / cpu.cfs_period_us, v2 cpu.max).
lab_cgroup_quota() { # VERSION PATH PCT
  local q p
  read -r q p < <(awk -v c="$3" -v per="${LAB_CPU_PERIOD_US:-10000}" 'BEGIN {
    if (c * per / 100 < 1000) per = int(100000 / c + 0.999)
    printf "%d %d\n", c * per / 100 + 0.5, per }')
  if [ "$1" = v2 ]; then echo "$q $p" >"$2/cpu.max"
  else echo "$p" >"$2/cpu.cfs_period_us" && echo "$q" >"$2/cpu.cfs_quota_us"; fi
}

# Remove every recorded cgroup, children first, moving what is still in one to the root.
lab_cgroup_down() { # DIR
  local dir=$1 mnt path p i
  [ -f "$dir/cgroups" ] || return 0
  tac "$dir/cgroups" | while read -r mnt path; do
    [ -d "$path" ] || continue
    for ((i = 0; i < 40; i++)); do
      for p in $(cat "$path/cgroup.procs" 2>/dev/null); do echo "$p" >"$mnt/cgroup.procs" 2>/dev/null; done
      rmdir "$path" 2>/dev/null && break
      sleep 0.05
    done
    [ -d "$path" ] && lab_log "down: could not remove cgroup $path"
  done
  if [ -f "$dir/cgroup-v2-enabled" ]; then
    echo -cpu >"$(cat "$dir/cgroup-v2-enabled")/cgroup.subtree_control" 2>/dev/null
    rm -f "$dir/cgroup-v2-enabled"
  fi
  rm -f "$dir/cgroups"
}

# debitd's configuration for one server spec (tcp and offload groups only where set).
lab_server_conf() { # FILE ADDR PORT RAM TSO GSO CC PACING SNDBUF NOTSENT STATEFILE
  local f=$1 addr=$2 port=$3 ram=$4 tso=$5 gso=$6 cc=$7 pacing=$8 sndbuf=$9 notsent=${10} state=${11}
  local tcp="" off=""
  [ "$cc" != - ] && tcp="$tcp congestion = \"$cc\";"
  [ "$pacing" != - ] && tcp="$tcp pacing_rate = \"${pacing}bit\";"
  [ "$sndbuf" != - ] && tcp="$tcp sndbuf = \"$sndbuf\";"
  [ "$notsent" != - ] && tcp="$tcp notsent_lowat = \"$notsent\";"
  [ -n "$tcp" ] && tcp=" tcp = {$tcp };"
  [ "$tso" != - ] && off="$off tso = $tso;"
  [ "$gso" != - ] && off="$off gso = $gso;"
  [ -n "$off" ] && off="offload = { interface = \"eth0\";$off restore = true; state_file = \"$state\"; };"
  cat >"$f" <<CONF
# debitd in the lab (generated by lab/lab.sh)
listen = ( { address = "$addr"; port = $port;$tcp } );
ram = "$ram";
files = (
  { path = "/ram/1GiB.dat"; size = "1GiB"; },
  { path = "/files/1Gio.dat"; size = "1Gio"; },
  { path = "/files/256Mio.dat"; size = "256Mio"; },
  { path = "/files/100Mio.dat"; size = "100Mio"; },
  { path = "/files/32Mio.dat"; size = "32Mio"; },
  { path = "/files/10Mio.dat"; size = "10Mio"; }
);
log = { level = "warn"; access = "off"; };
$off
CONF
}

# Server I's namespace, veth, addresses, routes and host settings; its debitd started
# (in its cgroup, still unlimited, when it has a CPU budget: the budget is set once it
# serves, so that filling its RAM at start-up does not take minutes).
lab_server_build() { # DIR I RAM (env loaded)
  local dir=$1 i=$2 ram=$3 name addr port tso gso cc pacing sndbuf notsent cpu wmem rmem icw mtu
  IFS=$'\t' read -r name addr port tso gso cc pacing sndbuf notsent cpu wmem rmem icw mtu < <(sed -n "${i}p" "$dir/servers.tsv")
  local nsv=LAB_NS_S$i; local ns=${!nsv} net=${addr%.*} r=$LAB_NS_R
  ip netns add "$ns" || return 1
  echo "$ns" >>"$dir/netns"
  ip -n "$ns" link set lo up || return 1
  ip link add eth0 netns "$ns" type veth peer name "s$i" netns "$r" || return 1
  if [ "$mtu" != - ]; then
    ip -n "$ns" link set eth0 mtu "$mtu" && ip -n "$r" link set "s$i" mtu "$mtu" || return 1
  fi
  ip -n "$ns" addr add "$addr/24" dev eth0 && ip -n "$r" addr add "$net.1/24" dev "s$i" || return 1
  ip -n "$ns" link set eth0 up && ip -n "$r" link set "s$i" up || return 1
  local cw=(); [ "$icw" != - ] && cw=(initcwnd "$icw")
  ip -n "$ns" route add default via "$net.1" "${cw[@]+"${cw[@]}"}" || return 1
  if [ "$icw" != - ]; then
    ip -n "$ns" route change "$net.0/24" dev eth0 proto kernel scope link src "$addr" initcwnd "$icw" || return 1
  fi
  lab_tune_ns "$ns" || return 1
  [ "$wmem" != - ] && { ip netns exec "$ns" sysctl -q -w net.ipv4.tcp_wmem="$wmem" >/dev/null || return 1; }
  [ "$rmem" != - ] && { ip netns exec "$ns" sysctl -q -w net.ipv4.tcp_rmem="$rmem" >/dev/null || return 1; }
  ip netns exec "$r" ethtool -K "s$i" gro on >/dev/null 2>&1
  lab_server_conf "$dir/s$i.conf" "$addr" "$port" "$ram" "$tso" "$gso" "$cc" "$pacing" "$sndbuf" "$notsent" \
    "$dir/s$i-offload.state"
  if [ "$cpu" != - ]; then
    local ver cg
    read -r ver cg < <(lab_cgroup_new "$dir" "s$i") && [ -n "${cg:-}" ] || return 1
    printf 'LAB_S%d_CGROUP=%s\nLAB_S%d_CGROUP_VERSION=%s\n' "$i" "$cg" "$i" "$ver" >>"$dir/lab.env"
    printf -v "LAB_S${i}_CGROUP" %s "$cg"
    printf -v "LAB_S${i}_CGROUP_VERSION" %s "$ver"
    # Joined first, and the network namespace entered by nsenter, not `ip netns exec`:
    # that one mounts the namespace's own /sys, hiding /sys/fs/cgroup, where debitd reads
    # its budget and throttling (X-Debit-Cpu, the transfer record's cgroup figures).
    setsid sh -c 'echo $$ >"$1/cgroup.procs" || exit 1; n=$2; shift 2; exec nsenter --net="/run/netns/$n" -- "$@"' \
      sh "$cg" "$ns" "$LAB_DEBITD" -c "$dir/s$i.conf" >"$dir/s$i.log" 2>&1 </dev/null &
    echo "$! debitd-s$i" >>"$dir/pids"
  else
    lab_spawn "$dir" "debitd-s$i" "$ns" "$dir/s$i.log" "$LAB_DEBITD" -c "$dir/s$i.conf" >/dev/null
  fi
}

# Once server I answers: its CPU budget, and a check that debitd set the offloads it was
# told to (ethtool otherwise, with a warning).
lab_server_ready() { # DIR I (env loaded)
  local dir=$1 i=$2 name addr port tso gso x cpu
  IFS=$'\t' read -r name addr port tso gso x x x x cpu x < <(sed -n "${i}p" "$dir/servers.tsv")
  local nsv=LAB_NS_S$i urlv=LAB_S${i}_URL; local ns=${!nsv} url=${!urlv}
  local pid t; pid=$(awk -v l="debitd-s$i" '$2 == l {print $1}' "$dir/pids")
  # Served only once its content is: /status content.state "ready" (the region is
  # generated in the background; a download before that is served while it is made).
  for ((t = 0; t < 600; t++)); do # 60 s at most, less when debitd exits
    [ "$(ip netns exec "$LAB_NS_C" curl -s --max-time 1 "$url/status" 2>/dev/null | jq -r '.content.state' 2>/dev/null)" = ready ] &&
      break
    kill -0 "$pid" 2>/dev/null || t=600
    sleep 0.1
  done
  [ "$t" -lt 600 ] || { lab_log "s$i ($name) did not answer with its content ready: $(tail -3 "$dir/s$i.log")"; return 1; }
  local st want; st=$(lab_offload_state "$ns" eth0)
  for x in tso gso; do
    want=${!x}
    [ "$want" = - ] && continue
    [ "$want" = true ] && want=on || want=off
    case " $st " in
      *" $x=$want "*) ;;
      *) lab_log "warning: debitd left s$i's offloads at '$st'; setting $x $want with ethtool"
         ip netns exec "$ns" ethtool -K eth0 "$x" "$want" >/dev/null 2>&1 ;;
    esac
  done
  if [ "$cpu" != - ]; then
    local cgv=LAB_S${i}_CGROUP verv=LAB_S${i}_CGROUP_VERSION
    lab_cost_line "$dir" "$i" "${!cgv}" || return 1
    lab_cgroup_quota "${!verv}" "${!cgv}" "$cpu" || { lab_log "s$i: cannot set the cpu quota in ${!cgv}"; return 1; }
  fi
  return 0
}

# The per-packet cost of a server with a CPU budget (docs/lab.md "The CPU budget"): a
# debit-delayline in the router's namespace on what arrives from the server (s<i>, GRO
# off there, so it sees what left the server: one GSO packet per 64 KB when the server's
# eth0 segments (TSO on), one per 1448-byte segment when its kernel does (TSO off)), run
# in the server's cgroup. It holds nothing (--delay 0) but spends CPU for each packet
# before letting it go: what the kernel and it really spend to queue and release a
# packet, plus LAB_COST_PACKET_NS per packet and LAB_COST_BYTE_NS per byte spun on its
# own CPU clock. So the server's quota pays for its packets as a slow CPU's driver would:
# while the budget is spent, nothing leaves. The cgroup's weight is raised so that the
# quota binds, not the load of the rest of the machine.
lab_cost_line() { # DIR I CGROUP (env loaded)
  local dir=$1 i=$2 cg=$3 log k
  [ -x "$LAB_DELAYLINE" ] || { lab_log "s$i: cpu budget: $LAB_DELAYLINE is not built (make)"; return 1; }
  ip netns exec "$LAB_NS_R" ethtool -K "s$i" gro off >/dev/null 2>&1 || { lab_log "s$i: cannot switch GRO off on the router's s$i"; return 1; }
  log=$dir/cost-s$i.log
  setsid sh -c 'echo $$ >"$1/cgroup.procs" || exit 1; n=$2; shift 2; exec ip netns exec "$n" "$@"' sh "$cg" "$LAB_NS_R" \
    "$LAB_DELAYLINE" --dev "s$i" --delay 0 --direction in --queue-num $((LAB_QUEUE + 100 + i)) --no-ipv6 --no-realtime \
    --packet-cost "${LAB_COST_PACKET_NS:-0}" --byte-cost "${LAB_COST_BYTE_NS:-2}" >"$log" 2>&1 </dev/null &
  local pid=$!
  echo "$pid cost-s$i" >>"$dir/pids"
  for ((k = 0; k < 100; k++)); do
    grep -qF "$LAB_READY" "$log" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || k=100
    sleep 0.05
  done
  [ "$k" -lt 100 ] || { lab_log "s$i: the cost line did not start: $(tail -2 "$log" | tr '\n' ' ')"; return 1; }
  if [ -f "$cg/cpu.shares" ]; then echo 262144 >"$cg/cpu.shares"; elif [ -f "$cg/cpu.weight" ]; then echo 10000 >"$cg/cpu.weight"; fi
  return 0
}
