#!/usr/bin/env bash
# lab/lab.sh — a one-machine replica of the seed experiment's network, in namespaces.
#
#   client ──(c: GRO on, latency scenarios)── router ──(tbf 1 Gbit/s toward the client)
#                                               ├── s1: debitd, TSO/GSO on  ("ovh")
#                                               └── s2: debitd, TSO/GSO off ("degrouptest")
#
# That is the built-in default. With --scenario FILE whose servers carry `lab` groups
# (docs/lab.md), the lab builds one namespace s1..sN per such server instead, at the
# address of its URL, with its debitd settings (tso, gso, cc, pacing, sndbuf,
# notsent_lowat) and host settings (cpu budget: a cgroup; tcp_wmem/tcp_rmem; initcwnd;
# mtu). It reads them from `debit -t --scenario FILE --format json`, never from the file.
#
# Commands (as root; every name carries a per-run prefix; addresses in 198.18.0.0/15):
#   lab/lab.sh up DIR [options]     build it, start both servers, write DIR/lab.env
#   lab/lab.sh down DIR             stop every process, remove every namespace (idempotent)
#   lab/lab.sh delay DIR DUR|off [--direction both|out|in] [--mechanism auto|netem|delayline]
#                    [--loss P%]    add DUR of round-trip delay at the client (or remove it,
#                                   checking that nothing is left), held by debit-netctl;
#                                   --loss drops P% of the packets per direction (DUR may be 0)
#   lab/lab.sh exec DIR NODE CMD... run CMD in a node's namespace (NODE: c, r, s1 .. sN)
#   lab/lab.sh status DIR           topology, qdiscs, offloads, delay in force
#   lab/lab.sh run [DIR] [up options] [--delay DUR] -- CMD...
#                                   up, CMD in the client namespace (LAB_* exported), down;
#                                   torn down on exit, error and Ctrl-C; exits with CMD's status
#   lab/lab.sh demo                 up with the seed's 5.5 ms base RTT (LAB_BASE_DELAY) and the
#                                   servers of etc/lab-experiment.conf (LAB_SCENARIO), each
#                                   server's reported state, the scenario run (seed-style table,
#                                   JSON lines, plot), down. DEMO_SIZE=1GiB: the seed's 1 GiB files
#   lab/lab.sh check                can this machine run the lab? (prints why not)
# Options of `up`:
#   --rate RATE        bottleneck rate, tc syntax (default 1gbit)
#   --ram SIZE         debitd's content region (default 1GiB; the tests use less)
#   --base-delay DUR   extra base RTT (the seed's "natural ping"), via the delay line or
#                      netem on the router (default 0: the veths' own ~0.05 ms)
#   --port N           servers' HTTP port (default 80; a scenario's servers: their URL's)
#   --scenario FILE    the servers of FILE's `lab` groups instead of the default two
# Anything `up` creates is recorded in DIR, so that `down DIR` removes it even after a
# Ctrl-C or a failed `up` (up tears down what it built when it fails or is interrupted).
# Source it (`. lab/lab.sh` with LAB_SOURCE=1) to get the lab_* functions in a script.
set -u

LAB_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
: "${DEBIT_BUILD:=$LAB_TOP/${BUILD:-build}}"
LAB_DEBITD=${LAB_DEBITD:-$DEBIT_BUILD/debitd}
LAB_DELAYLINE=${LAB_DELAYLINE:-$DEBIT_BUILD/debit-delayline}
# Delay is added by debit-netctl, the network-control library's program (the same C code
# as `debit --delay`): netem where the kernel has it, else debit-delayline. The lab only
# starts it, waits for its ready line (common/wire.h), and stops it with SIGTERM.
LAB_NETCTL=${LAB_NETCTL:-$DEBIT_BUILD/debit-netctl}
LAB_READY=$(sed -n 's/^#define WIRE_DELAY_READY "\(.*\)"$/\1/p' "$LAB_TOP/common/wire.h")
LAB_QUEUE=7302    # NFQUEUE numbers: client delay 7302, router base delay 7303 + i and cost line 7402 + i for server i

# shellcheck source=lab/lab_servers.sh
. "$LAB_TOP/lab/lab_servers.sh"

lab_die() { echo "lab: $*" >&2; exit 2; }
lab_log() { [ -n "${LAB_QUIET:-}" ] || echo "lab: $*" >&2; }

# Parse a duration (10ms, 500us, 0.03s, 0) into microseconds.
lab_us() {
  awk -v s="$1" 'BEGIN {
    if (s == "0" || s == "off") { print 0; exit 0 }
    if (match(s, /^[0-9]+(\.[0-9]+)?/) == 0) exit 1
    v = substr(s, 1, RLENGTH); u = substr(s, RLENGTH + 1)
    if (u == "us") f = 1; else if (u == "ms") f = 1000; else if (u == "s" || u == "") f = 1000000; else exit 1
    printf "%d\n", v * f + 0.5 }'
}

lab_check() {
  local missing=()
  [ "$(id -u)" -eq 0 ] || { echo "lab: needs root (network namespaces, tc, iptables)"; return 1; }
  for c in ip tc iptables ethtool curl awk; do command -v "$c" >/dev/null 2>&1 || missing+=("$c"); done
  [ ${#missing[@]} -eq 0 ] || { echo "lab: missing commands: ${missing[*]} (run tools/deps)"; return 1; }
  [ -x "$LAB_DEBITD" ] || { echo "lab: $LAB_DEBITD not built (make)"; return 1; }
  [ -x "$LAB_NETCTL" ] || { echo "lab: $LAB_NETCTL not built (make)"; return 1; }
  local probe="dblprobe$$" why
  why=$("$LAB_NETCTL" probe 2>&1); local netem=$?
  [ $netem -le 1 ] || { echo "lab: cannot tell whether the kernel has netem: $why"; return 1; }
  ip netns add "$probe" 2>/dev/null || { echo "lab: cannot create network namespaces"; return 1; }
  ip -n "$probe" link add t0 type veth peer name t1 2>/dev/null; local veth=$?
  ip -n "$probe" link add i0 type ifb 2>/dev/null; local ifb=$?
  ip -n "$probe" link set t0 up 2>/dev/null
  ip netns exec "$probe" tc qdisc add dev t0 root tbf rate 1gbit burst 256kb latency 20ms 2>/dev/null; local tbf=$?
  ip netns exec "$probe" iptables -w -t mangle -A POSTROUTING -o t0 -j NFQUEUE --queue-num 1 --queue-bypass 2>/dev/null; local nfq=$?
  ip netns del "$probe"
  [ $veth -eq 0 ] || { echo "lab: the kernel cannot create veth pairs"; return 1; }
  [ $tbf -eq 0 ] || { echo "lab: the kernel has no tbf qdisc (sch_tbf) for the bottleneck"; return 1; }
  if [ $netem -eq 0 ]; then echo "lab: ok (latency via netem${ifb:+, ifb $([ $ifb -eq 0 ] && echo yes || echo no)})"
  elif [ $nfq -eq 0 ] && [ -x "$LAB_DELAYLINE" ]; then echo "lab: ok (no sch_netem: latency via debit-delayline)"
  else echo "lab: neither sch_netem nor iptables NFQUEUE + $LAB_DELAYLINE: no latency scenarios"; return 1; fi
}

lab_load() { # DIR: sources DIR/lab.env
  [ -f "$1/lab.env" ] || lab_die "$1/lab.env: no lab there (lab/lab.sh up $1 first)"
  # shellcheck disable=SC1091
  . "$1/lab.env"
}

lab_ns() { # NODE -> namespace name
  local v
  case $1 in
    c|client) echo "$LAB_NS_C" ;; r|router) echo "$LAB_NS_R" ;;
    s[1-9]|s[1-9][0-9]) v=LAB_NS_S${1#s}; [ -n "${!v:-}" ] || lab_die "unknown node '$1' (c, r, s1 .. s$LAB_NSERVERS)"
                        echo "${!v}" ;;
    *) lab_die "unknown node '$1' (c, r, s1 .. s$LAB_NSERVERS)" ;;
  esac
}

# Start CMD in the background inside namespace NS; its PID goes to DIR/pids with a label.
# In a session of its own: a Ctrl-C at the terminal reaches the measurement, not the
# servers and delay lines, which `down` then stops in order.
lab_spawn() { # DIR LABEL NS LOG CMD...
  local dir=$1 label=$2 ns=$3 log=$4; shift 4
  setsid ip netns exec "$ns" "$@" >"$log" 2>&1 </dev/null &
  local pid=$!
  echo "$pid $label" >>"$dir/pids"
  echo "$pid"
}

lab_tune_ns() { # NS: TCP buffers for +30 ms at 1 Gbit/s, no cached metrics
  ip netns exec "$1" sysctl -q -w net.ipv4.tcp_rmem="4096 131072 67108864" \
    net.ipv4.tcp_wmem="4096 16384 67108864" net.ipv4.tcp_no_metrics_save=1 >/dev/null
}

lab_wait_http() { # NS URL TRIES(x0.1 s)
  local i
  for ((i = 0; i < $3; i++)); do
    ip netns exec "$1" curl -s -o /dev/null --max-time 1 "$2" && return 0
    sleep 0.1
  done
  return 1
}

lab_offload_state() { # NS DEV -> "tso=on gso=off gro=on"
  ip netns exec "$1" ethtool -k "$2" 2>/dev/null | awk '
    /^tcp-segmentation-offload:/ {t=$2} /^generic-segmentation-offload:/ {g=$2}
    /^generic-receive-offload:/ {r=$2} END {printf "tso=%s gso=%s gro=%s\n", t, g, r}'
}

lab_up() {
  local dir=$1; shift
  local rate=1gbit ram=1GiB base=0 port=80 scenario=""
  while [ $# -gt 0 ]; do
    case $1 in
      --rate) rate=$2; shift 2 ;;
      --ram) ram=$2; shift 2 ;;
      --base-delay) base=$2; shift 2 ;;
      --port) port=$2; shift 2 ;;
      --scenario) scenario=$2; shift 2 ;;
      *) lab_die "up: unknown option '$1'" ;;
    esac
  done
  [ "$(id -u)" -eq 0 ] || lab_die "up: needs root (network namespaces, tc, iptables)"
  [ -x "$LAB_DEBITD" ] || lab_die "up: $LAB_DEBITD is not built (run make)"
  local base_us; base_us=$(lab_us "$base") || lab_die "up: --base-delay '$base' is not a duration"
  mkdir -p "$dir" || lab_die "up: cannot create $dir"
  dir=$(cd "$dir" && pwd)
  [ -f "$dir/lab.env" ] && lab_die "up: $dir already holds a lab (lab/lab.sh down $dir first)"
  local specs
  if [ -n "$scenario" ]; then specs=$(lab_servers_from_scenario "$scenario") || lab_die "up: the scenario's servers cannot be built"; fi
  [ -n "${specs:-}" ] || specs=$(lab_servers_default "$port")
  local id; id=$(printf '%04x%02x' $(( $$ & 0xffff )) $(( RANDOM & 0xff )))
  local p="dbl$id"
  : >"$dir/pids"
  printf '%s\n' "$specs" >"$dir/servers.tsv"
  local nsrv; nsrv=$(wc -l <"$dir/servers.tsv")
  # The env file is written first, so that down works on a half-built lab.
  cat >"$dir/lab.env" <<ENV
# lab/lab.sh environment (source it)
LAB_DIR=$dir
LAB_ID=$id
LAB_NS_C=${p}c
LAB_NS_R=${p}r
LAB_C_DEV=eth0
LAB_C_ADDR=198.18.3.2
LAB_NSERVERS=$nsrv
LAB_PORT=$port
LAB_RATE=$rate
LAB_RAM=$ram
LAB_BASE_DELAY_US=$base_us
ENV
  # Server i: LAB_NS_Si, LAB_Si_ADDR, LAB_Si_NAME, LAB_Si_URL (base URL), LAB_Si_PORT.
  local i=0 name addr sport rest
  while IFS=$'\t' read -r name addr sport rest; do
    i=$((i + 1))
    printf 'LAB_NS_S%d=%s\nLAB_S%d_ADDR=%s\nLAB_S%d_NAME=%q\nLAB_S%d_URL=%s\nLAB_S%d_PORT=%s\n' "$i" "${p}s$i" \
      "$i" "$addr" "$i" "$name" "$i" "http://$addr:$sport" "$i" "$sport" >>"$dir/lab.env"
  done <"$dir/servers.tsv"
  lab_load "$dir"
  # Interrupted while building: take down what exists, then let the caller's traps (if
  # any, e.g. `run`/`demo`) do the rest.
  local saved; saved=$(trap -p INT TERM)
  trap 'lab_down "$LAB_DIR" >/dev/null 2>&1; exit 130' INT
  trap 'lab_down "$LAB_DIR" >/dev/null 2>&1; exit 143' TERM
  if ! lab_build "$dir" "$rate" "$ram" "$base_us" "$port"; then
    lab_down "$dir" >/dev/null 2>&1
    trap - INT TERM; eval "$saved"
    lab_die "up: failed (everything it built was removed)"
  fi
  trap - INT TERM; eval "$saved"
  local list="" v u
  for ((i = 1; i <= LAB_NSERVERS; i++)); do v=LAB_NS_S$i u=LAB_S${i}_URL; list="$list${list:+, }${!v} (${!u})"; done
  lab_log "up: client $LAB_NS_C, router $LAB_NS_R, servers $list; env in $dir/lab.env"
}

lab_build() { # DIR RATE RAM BASE_US PORT
  local dir=$1 rate=$2 ram=$3 base_us=$4 port=$5 n i
  for n in "$LAB_NS_C" "$LAB_NS_R"; do
    ip netns add "$n" || return 1
    echo "$n" >>"$dir/netns"
    ip -n "$n" link set lo up || return 1
  done
  # veth pairs, created directly inside their namespaces (nothing in the root namespace).
  ip link add eth0 netns "$LAB_NS_C" type veth peer name c netns "$LAB_NS_R" || return 1
  ip -n "$LAB_NS_C" addr add 198.18.3.2/24 dev eth0 && ip -n "$LAB_NS_R" addr add 198.18.3.1/24 dev c || return 1
  ip -n "$LAB_NS_C" link set eth0 up && ip -n "$LAB_NS_R" link set c up || return 1
  ip -n "$LAB_NS_C" route add default via 198.18.3.1 || return 1
  ip netns exec "$LAB_NS_R" sysctl -q -w net.ipv4.ip_forward=1 >/dev/null || return 1
  lab_tune_ns "$LAB_NS_C" || return 1
  # GRO where packets arrive, so that the delay line and the router handle 64 KB
  # aggregates instead of 1500-byte packets (veth GRO is off by default).
  ip netns exec "$LAB_NS_C" ethtool -K eth0 gro on >/dev/null 2>&1
  ip netns exec "$LAB_NS_R" ethtool -K c gro on >/dev/null 2>&1
  # The bottleneck, toward the client (downloads). burst >= 64 KB or tbf splits GSO packets.
  ip netns exec "$LAB_NS_R" tc qdisc add dev c root tbf rate "$rate" burst 256kb latency 20ms || return 1
  for ((i = 1; i <= LAB_NSERVERS; i++)); do lab_server_build "$dir" "$i" "$ram" || return 1; done
  if [ "$base_us" -gt 0 ]; then lab_base_delay "$dir" "$base_us" || return 1; fi
  for ((i = 1; i <= LAB_NSERVERS; i++)); do lab_server_ready "$dir" "$i" || return 1; done
  # debitd looks its cgroup's budget up again every second: from then on every response's
  # X-Debit-Cpu says the quota just set.
  grep -q '^LAB_S[0-9]*_CGROUP=' "$dir/lab.env" && sleep 1.5
  return 0
}

# The seed's "natural ping": a constant base RTT added at the router, on what it sends to
# the servers (requests, ACKs: few packets), so that the client's own scenarios add to it.
lab_base_delay() { # DIR US
  local dir=$1 us=$2 i
  for ((i = 1; i <= LAB_NSERVERS; i++)); do
    lab_hold "$dir" "delay-base-s$i" "$LAB_NS_R" "$dir/base-s$i.log" \
      --dev "s$i" --delay "${us}us" --direction out --queue-num $((LAB_QUEUE + 1 + i)) --no-ipv6 >/dev/null || return 1
  done
}

# Start debit-netctl delay ARGS... in namespace NS (its PID recorded in DIR/pids, its
# output in LOG) and wait, bounded, for its ready line. Prints the PID; on failure it says
# why (the program's own message) and leaves nothing running.
lab_hold() { # DIR LABEL NS LOG ARGS...
  local dir=$1 label=$2 ns=$3 log=$4 pid i; shift 4
  [ -x "$LAB_NETCTL" ] || { lab_log "$label: $LAB_NETCTL is not built (make)"; return 1; }
  [ -x "$LAB_DELAYLINE" ] && set -- "$@" --delayline "$LAB_DELAYLINE"
  pid=$(lab_spawn "$dir" "$label" "$ns" "$log" "$LAB_NETCTL" delay "$@")
  # debit-netctl's own waits: the netem probe, then at most 5 s for the delay line.
  for ((i = 0; i < 160; i++)); do
    grep -qF "$LAB_READY" "$log" 2>/dev/null && { echo "$pid"; return 0; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  lab_stop_pid "$pid"
  sed -i "/^$pid /d" "$dir/pids"
  lab_log "$label: $(grep -v "^$LAB_READY" "$log" | tail -2 | tr '\n' ' ')"
  return 1
}

lab_delay() { # DIR DUR|off [--direction D] [--mechanism M] [--loss P%]
  local dir=$1 dur=$2; shift 2
  local direction=both mech=auto loss=0
  while [ $# -gt 0 ]; do
    case $1 in
      --direction) direction=$2; shift 2 ;;
      --mechanism) mech=$2; shift 2 ;;
      --loss) loss=$2; shift 2 ;;
      *) lab_die "delay: unknown option '$1'" ;;
    esac
  done
  case $direction in both|in|out) ;; *) lab_die "delay: --direction: '$direction' is not both, in or out" ;; esac
  case $mech in auto|netem|delayline) ;; *) lab_die "delay: --mechanism: '$mech' is not auto, netem or delayline" ;; esac
  # The form here, before anything is touched; debit-netctl parses it (common/lossrate.h).
  case $loss in 0|0%) loss=0 ;; *)
    [[ $loss =~ ^[0-9]+(\.[0-9]{1,4})?%$ ]] || lab_die "delay: --loss: '$loss': expected a percentage such as 1% or 0.5%"
    awk -v p="${loss%\%}" 'BEGIN { exit !(p <= 100) }' || lab_die "delay: --loss: '$loss': above 100%" ;;
  esac
  lab_load "$dir"
  local us; us=$(lab_us "$dur") || lab_die "delay: '$dur' is not a duration (10ms, 500us, off)"
  lab_delay_off "$dir" || lab_die "delay: the previous delay was not removed completely"
  [ "$us" -eq 0 ] && [ "$loss" = 0 ] && { echo "delay: off"; return 0; }
  local pid
  if ! pid=$(lab_hold "$dir" delay-client "$LAB_NS_C" "$dir/delayline.log" --dev "$LAB_C_DEV" --delay "${us}us" \
             --loss "$loss" --direction "$direction" --mechanism "$mech" --queue-num $LAB_QUEUE --no-ipv6); then
    [ "$mech" = netem ] && lab_die "delay: netem failed (no sch_netem? try --mechanism delayline)"
    lab_die "delay: the delay could not be applied"
  fi
  # The mechanism is the one debit-netctl chose (auto) or was told, from its ready line.
  mech=$(sed -n "s/^$LAB_READY mechanism=\([a-z]*\) .*/\1/p" "$dir/delayline.log")
  echo "${mech:-?} $us $pid loss=$loss" >"$dir/delay"
  local what="+$((us / 1000)).$(printf '%03d' $((us % 1000))) ms round trip"
  [ "$loss" = 0 ] || what="$what and $loss loss per direction"
  [ "$us" -eq 0 ] && what="$loss loss per direction"
  echo "delay: $what on the client ($direction) via ${mech:-?}"
}

# What a client delay could leave in the client namespace (netem or ingress qdisc, IFB
# device, NFQUEUE rule of the lab's queue), as words; empty when nothing.
lab_delay_left() { # (env loaded)
  local ns=$LAB_NS_C left=""
  ip netns exec "$ns" tc qdisc show dev "$LAB_C_DEV" 2>/dev/null | grep -qE 'netem|ingress' && left="qdisc"
  [ -n "$(ip -n "$ns" -br link show type ifb 2>/dev/null)" ] && left="$left${left:+ }ifb"
  ip netns exec "$ns" iptables -w -t mangle -S 2>/dev/null | grep -q "NFQUEUE --queue-num $LAB_QUEUE " &&
    left="$left${left:+ }nfqueue-rule"
  echo "$left"
}

# Stop the holder of the client delay, if any (debit-netctl removes the delay on SIGTERM),
# then check that no delay is left in the client namespace. Returns 1, saying what
# remains, when something is.
lab_delay_off() { # DIR (env loaded)
  local dir=$1 mech us pid left
  if [ -f "$dir/delay" ]; then
    read -r mech us pid _ <"$dir/delay"
    if [ -n "${pid:-}" ]; then
      lab_stop_pid "$pid"
      sed -i "/^$pid /d" "$dir/pids"
    fi
    rm -f "$dir/delay"
  fi
  left=$(lab_delay_left)
  [ -z "$left" ] && return 0
  lab_log "delay off: left behind in $LAB_NS_C: $left"
  return 1
}

lab_stop_pid() { # PID: TERM, bounded wait, KILL
  local pid=$1 i
  kill -TERM "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null
  for ((i = 0; i < 20; i++)); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.05; done
}

lab_down() { # DIR: idempotent; order per docs: processes, ingress qdiscs, namespaces
  local dir=$1
  [ -f "$dir/lab.env" ] || { echo "lab: nothing to take down in $dir"; return 0; }
  lab_load "$dir"
  lab_delay_off "$dir"
  local pid label n p
  if [ -f "$dir/pids" ]; then
    while read -r pid label; do [ -n "$pid" ] && lab_stop_pid "$pid"; done <"$dir/pids"
  fi
  if [ -f "$dir/netns" ]; then
    while read -r n; do
      # Anything else still running in there (by PID, never by name) keeps the netns alive.
      for p in $(ip netns pids "$n" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
    done <"$dir/netns"
    while read -r n; do
      ip netns exec "$n" tc qdisc del dev eth0 ingress 2>/dev/null
      ip netns del "$n" 2>/dev/null
    done <"$dir/netns"
  fi
  lab_cgroup_down "$dir"
  rm -f "$dir/lab.env" "$dir/pids" "$dir/netns" "$dir/delay" "$dir/servers.tsv"
  lab_log "down: $dir"
}

lab_status() {
  lab_load "$1"
  echo "client  $LAB_NS_C  eth0 $LAB_C_ADDR  $(lab_offload_state "$LAB_NS_C" eth0)"
  echo "router  $LAB_NS_R  bottleneck: $(ip netns exec "$LAB_NS_R" tc qdisc show dev c | head -1)"
  local i v u n c
  for ((i = 1; i <= LAB_NSERVERS; i++)); do
    v=LAB_NS_S$i u=LAB_S${i}_URL n=LAB_S${i}_NAME c=LAB_S${i}_CGROUP
    printf '%-7s %s  %s (%s)  %s%s\n' "s$i" "${!v}" "${!u}" "${!n}" "$(lab_offload_state "${!v}" eth0)" \
      "${!c:+  cgroup ${!c}}"
  done
  if [ -f "$1/delay" ]; then echo "delay   $(cat "$1/delay")"; else echo "delay   none"; fi
}

lab_run() {
  local dir="" delay="" upopts=()
  if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then dir=$1; shift; fi
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    case $1 in
      --delay) delay=$2; shift 2 ;;
      --rate|--ram|--base-delay|--port|--scenario) upopts+=("$1" "$2"); shift 2 ;;
      *) lab_die "run: unknown option '$1'" ;;
    esac
  done
  [ "${1:-}" = "--" ] && shift
  [ $# -gt 0 ] || lab_die "usage: lab/lab.sh run [DIR] [up options] [--delay DUR] -- CMD..."
  local tmp=""
  if [ -z "$dir" ]; then dir=$(mktemp -d /tmp/debit-lab.XXXXXX); tmp=$dir; fi
  # EXIT covers errors and normal ends; INT/TERM turn into an exit (so EXIT runs once).
  trap 'lab_down "$dir" >/dev/null 2>&1; [ -n "$tmp" ] && rm -rf "$tmp"' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  lab_up "$dir" "${upopts[@]+"${upopts[@]}"}" || exit 2
  if [ -n "$delay" ]; then lab_delay "$dir" "$delay" >&2 || exit 2; fi
  lab_load "$dir"
  local rc=0
  ( set -a; . "$dir/lab.env"; set +a; exec ip netns exec "$LAB_NS_C" "$@" ) || rc=$?
  exit $rc
}

# What each server of a scenario file says about itself: a HEAD request from the client
# namespace to every server URL (`debit -t` lists them), and the X-Debit-Offload/-Tcp
# headers of the answer, as a Markdown list. The seed's question is which server had
# TSO/GSO off, so the demo prints this above the table; debit records the same headers
# for every run (server_config in the JSON lines).
lab_demo_servers() { # CONF (env loaded)
  local name url h off ifc tcp cpu
  echo "Servers, as each one reports itself (X-Debit-Offload, X-Debit-Tcp and X-Debit-Cpu response headers):"
  echo
  "$DEBIT_BUILD/debit" -t --scenario "$1" 2>/dev/null | sed -n 's/^server \(.*\): \([a-z]*:\/\/.*\)$/\1\t\2/p' |
    while IFS=$'\t' read -r name url; do
      h=$(ip netns exec "$LAB_NS_C" curl -sI --max-time 5 "$url" 2>/dev/null | tr -d '\r')
      off=$(printf '%s\n' "$h" | sed -n 's/^[Xx]-[Dd]ebit-[Oo]ffload: //p')
      ifc=$(printf '%s\n' "$h" | sed -n 's/^[Xx]-[Dd]ebit-[Ii]nterface: //p')
      tcp=$(printf '%s\n' "$h" | sed -n 's/^[Xx]-[Dd]ebit-[Tt]cp: //p')
      cpu=$(printf '%s\n' "$h" | sed -n 's/^[Xx]-[Dd]ebit-[Cc]pu: //p')
      if [ -n "$off" ]; then
        echo "- $name: $off${ifc:+ on $ifc}${tcp:+; $tcp}${cpu:+; cpu $cpu} ($url)"
      elif [ -n "$h" ]; then
        echo "- $name: no X-Debit-Offload header (not debitd: offload state unknown) ($url)"
      else
        echo "- $name: no answer to HEAD ($url)"
      fi
    done
  echo
}

# What each server's interface and budget did over a measurement, for the per-packet
# cost: one line per server, "I TX_BYTES TX_PACKETS CPU_NS NR_PERIODS NR_THROTTLED" (the
# counters of its eth0; the CPU time of every thread of its cgroup, from
# /proc/TID/schedstat, and the cgroup's cpu.stat; "-" without a budget).
lab_counters() { # (env loaded)
  local i v ns cg b p t c n th
  for ((i = 1; i <= LAB_NSERVERS; i++)); do
    v=LAB_NS_S$i; ns=${!v}; v=LAB_S${i}_CGROUP; cg=${!v:-}
    read -r b p < <(ip netns exec "$ns" cat /sys/class/net/eth0/statistics/tx_bytes /sys/class/net/eth0/statistics/tx_packets | tr '\n' ' ')
    c=- n=- th=-
    if [ -n "$cg" ]; then
      c=0
      for t in $(cat "$cg/tasks" "$cg/cgroup.threads" 2>/dev/null); do
        read -r v _ <"/proc/$t/schedstat" 2>/dev/null && c=$((c + v))
      done
      n=$(awk '$1 == "nr_periods" {print $2}' "$cg/cpu.stat"); th=$(awk '$1 == "nr_throttled" {print $2}' "$cg/cpu.stat")
    fi
    echo "$i $b $p $c ${n:--} ${th:--}"
  done
}

# The per-packet cost, from two lab_counters snapshots: bytes per packet that left each
# server's eth0 (its veth's tx_bytes / tx_packets) and, for a server with a budget, the
# CPU-seconds its cgroup spent per GiB sent and the share of periods it was throttled.
lab_demo_costs() { # BEFORE AFTER (env loaded)
  echo "What left each server's eth0 over the whole measurement (tx_bytes / tx_packets of its veth) and what its CPU budget paid (the threads of its cgroup: debitd and its cost line):"
  echo
  local i b0 p0 c0 n0 t0 b1 p1 c1 n1 t1 v
  while read -r i b0 p0 c0 n0 t0 && read -r _ b1 p1 c1 n1 t1 <&3; do
    v=LAB_S${i}_NAME
    awk -v name="${!v}" -v b=$((b1 - b0)) -v p=$((p1 - p0)) -v c0="$c0" -v c1="$c1" -v n0="$n0" -v n1="$n1" \
        -v t0="$t0" -v t1="$t1" 'BEGIN {
      printf "- %s: %.2f GiB in %d packets, %.0f bytes per packet", name, b / 2^30, p, p ? b / p : 0
      if (c0 != "-" && b > 0) printf "; %.2f CPU-s per GiB", (c1 - c0) / 1e9 / (b / 2^30)
      if (n0 != "-" && n1 > n0) printf ", throttled in %.0f%% of %d periods", (t1 - t0) / (n1 - n0) * 100, n1 - n0
      printf "\n" }'
  done <"$1" 3<"$2"
  echo
}

# The seed experiment in the lab: up (with the seed's natural RTT, 5.5 ms, as base delay
# at the router), `debit --scenario etc/lab-experiment.conf` in the client namespace (it
# applies each latency and client-offload setting to eth0 itself), each server's reported
# offload state and the seed-style table on stdout, the runs (JSON lines) and plot kept,
# down — also on Ctrl-C (debit then prints the table of the finished runs and exits 130).
#   LAB_SCENARIO=FILE   another scenario file;  LAB_OUT=DIR  where results go
#   LAB_BASE_DELAY=DUR  base RTT (default 5.5ms, the seed's natural ping; 0: the veths' own)
lab_demo() {
  [ "$(id -u)" -eq 0 ] || lab_die "demo: needs root (network namespaces, tc, iptables)"
  local conf=${LAB_SCENARIO:-$LAB_TOP/etc/lab-experiment.conf}
  [ -r "$conf" ] || lab_die "demo: cannot read $conf"
  conf=$(cd "$(dirname "$conf")" && pwd)/$(basename "$conf")
  [ -x "$DEBIT_BUILD/debit" ] || lab_die "demo: $DEBIT_BUILD/debit is not built (make)"
  local base=${LAB_BASE_DELAY-5.5ms}
  lab_us "$base" >/dev/null || lab_die "demo: LAB_BASE_DELAY: '$base' is not a duration (5.5ms, 0)"
  local out=${LAB_OUT:-$(mktemp -d /tmp/debit-demo.XXXXXX)}
  mkdir -p "$out" || lab_die "demo: cannot create $out"
  out=$(cd "$out" && pwd)
  local dir="$out/lab"
  # DEMO_SIZE: another of the lab's files in every URL (a copy of the scenario file).
  if [ -n "${DEMO_SIZE:-}" ]; then
    local f
    case $DEMO_SIZE in
      1GiB|1Gio|1G) f=1Gio ;; 256MiB|256Mio) f=256Mio ;; 100MiB|100Mio) f=100Mio ;;
      32MiB|32Mio) f=32Mio ;; 10MiB|10Mio) f=10Mio ;;
      *) lab_die "demo: DEMO_SIZE: '$DEMO_SIZE' is not one of the lab's files (10MiB 32MiB 100MiB 256MiB 1GiB)" ;;
    esac
    sed -E "s#/files/[0-9]+[MG]io\.dat#/files/$f.dat#g" "$conf" >"$out/scenario.conf" || lab_die "demo: cannot write $out/scenario.conf"
    conf=$out/scenario.conf
  fi
  trap 'lab_down "$dir" >/dev/null 2>&1' EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
  lab_up "$dir" --base-delay "$base" --scenario "$conf" ${LAB_RAM:+--ram "$LAB_RAM"} || exit 2
  lab_load "$dir"
  # debit's verdict needs the path's capacity: the lab's bottleneck, when debit knows the option.
  local bn=()
  "$DEBIT_BUILD/debit" --help 2>&1 | grep -q -- '--bottleneck' && bn=(--bottleneck "$LAB_RATE")
  echo "lab: $(lab_check 2>/dev/null | sed 's/^lab: //'); base RTT +$base at the router (the seed's natural ping)" >&2
  echo "lab: running $conf in the client namespace ($LAB_NS_C); Ctrl-C stops and cleans up" >&2
  lab_demo_servers "$conf" | tee "$out/table.md"
  lab_counters >"$out/counters.before"
  ip netns exec "$LAB_NS_C" "$DEBIT_BUILD/debit" --scenario "$conf" --format markdown "${bn[@]+"${bn[@]}"}" \
    --jsonl "$out/runs.jsonl" --plot "$out/plot.png" | tee -i -a "$out/table.md"   # -i: survive Ctrl-C, keep the final table
  local rc=${PIPESTATUS[0]}
  lab_counters >"$out/counters.after"
  echo | tee -a "$out/table.md"
  lab_demo_costs "$out/counters.before" "$out/counters.after" | tee -a "$out/table.md"
  echo "lab: table in $out/table.md, every run as JSON in $out/runs.jsonl (one line per run: limited_by, server_record), plot in $out/plot.png" >&2
  exit $rc
}

if [ -z "${LAB_SOURCE:-}" ]; then
  cmd=${1:-}; [ $# -gt 0 ] && shift
  case $cmd in
    up) [ $# -ge 1 ] || lab_die "usage: lab/lab.sh up DIR [options]"; lab_up "$@" ;;
    down) [ $# -eq 1 ] || lab_die "usage: lab/lab.sh down DIR"; lab_down "$1" ;;
    delay) [ $# -ge 2 ] || lab_die "usage: lab/lab.sh delay DIR DUR|off [--direction D] [--mechanism M] [--loss P%]"; lab_delay "$@" ;;
    exec) [ $# -ge 3 ] || lab_die "usage: lab/lab.sh exec DIR NODE CMD..."
          lab_load "$1"; ns=$(lab_ns "$2"); shift 2; exec ip netns exec "$ns" "$@" ;;
    status) [ $# -eq 1 ] || lab_die "usage: lab/lab.sh status DIR"; lab_status "$1" ;;
    run) lab_run "$@" ;;
    demo) lab_demo ;;
    check) lab_check ;;
    -h|--help|help|"") sed -n '2,/^set -u/p' "$0" | sed 's/^# \{0,1\}//; /^set -u/d' ;;
    *) lab_die "unknown command '$cmd' (see lab/lab.sh --help)" ;;
  esac
fi
