#!/usr/bin/env bash
# The verdict's labelled set (issue 32): seven staged conditions in the lab, RUNS (default 5)
# downloads each, the real debitd in its namespace and the real debit client, no
# --bottleneck (the verdict must hold without hints). A 200 Mbit/s tbf toward the client,
# 10 ms of base RTT at the router; one lab server per condition:
#   clean     nothing staged (bbr, the lab's 64 MiB buffers)       -> network (inferred)
#   capped    debitd sndbuf 64 KiB                                  -> sender_buffer
#   rwnd      the clean server, debit --rcvbuf 64KiB                -> receiver_window
#   cpu_off   TSO/GSO off, 5 % of a CPU (cgroup + the lab's cost line), cubic,
#             notsent_lowat 128 KiB                                 -> sender_cpu
#   cpu_on    the same with TSO/GSO on                              -> sender_cpu
#   busy_rcv  the clean server, debit in a cgroup of 0.2 % of a CPU (1 ms per 500 ms)
#                                                                   -> receiver_cpu
#   lossy     cubic, TSO/GSO off, 1 % of its packets dropped at the router (iptables
#             statistic; TSO/GSO off, or a veth carries the server's 64 KB GSO packets
#             whole to the router, and one drop takes up to 44 segments)  -> congestion
# The runs go round-robin over the conditions (a change in the machine's load hits them
# all). Each run's verdict from debit (limited_by) and from debitd itself (its
# /transfers/ID, fetched with curl) are printed, then both confusion matrices (rows: the
# staged label, columns: the verdict). Fails when debit's accuracy is below 90 % or a
# condition got its label in fewer than 3 of 5 runs (MIN_CLASS of RUNS). The clean runs
# also check the hintless network verdict: "path_mbps" (the path's rate inferred from the
# plateau) within 15 % of the tbf rate. VSET_MD=FILE also writes both matrices as Markdown,
# VSET_KEEP=DIR keeps every run's JSON (debit's, and debitd's record as NAME-K.json.srv).
# Runtime ≈ 2.5 min (35 runs of about 2-3 s).
. "$DEBIT_TOP/tests/lib/common.sh"
. "$DEBIT_TOP/tests/e2e/lab_lib.bash"
lab_require
need_cmd ip curl jq iptables ethtool
[ -x "$DEBIT" ] || skip_all "build/debit is not built"
"$DEBIT" --help 2>&1 | grep -q -- '--bottleneck' || skip_all "this debit has no verdict (--bottleneck, limited_by)"
awk '$3 == "cgroup2" || ($3 == "cgroup" && $4 ~ /(^|,)cpu(,|$)/) {f = 1} END {exit !f}' /proc/mounts ||
  skip_all "no cgroup hierarchy with the cpu controller (v1 or v2) for the CPU budgets"

RUNS=${RUNS:-5}
MIN_CLASS=${MIN_CLASS:-3}
RATE_MBIT=200
S=$T_TMP/set.conf
cat >"$S" <<'CONF'
servers = (
  { name = "clean";   url = "http://198.18.1.2/files/100Mio.dat"; lab = {}; },
  { name = "capped";  url = "http://198.18.2.2/files/100Mio.dat"; lab = { sndbuf = "64KiB"; }; },
  { name = "cpu_off"; url = "http://198.18.4.2/files/100Mio.dat";
    lab = { tso = false; gso = false; cpu = "5%"; cc = "cubic"; notsent_lowat = "128KiB"; }; },
  { name = "cpu_on";  url = "http://198.18.5.2/files/100Mio.dat";
    lab = { cpu = "5%"; cc = "cubic"; notsent_lowat = "128KiB"; }; },
  { name = "lossy";   url = "http://198.18.6.2/files/100Mio.dat"; lab = { cc = "cubic"; tso = false; gso = false; }; }
);
CONF
lab_up_set "$S" "$RATE_MBIT"
# The lab's cgroup helpers, for the busy receiver's cgroup: made under the lab's own
# (debit-lab-ID) and recorded in $D/cgroups, so that `lab.sh down` removes it.
# shellcheck source=lab/lab.sh
LAB_SOURCE=1 . "$LAB"
read -r CG_VER CG < <(lab_cgroup_new "$D" client)
[ -n "${CG:-}" ] || { t_fail "client cgroup" "lab_cgroup_new failed"; t_done; }
lab_cgroup_quota "$CG_VER" "$CG" 0.2
R() { ip netns exec "$LAB_NS_R" "$@"; }
# The router forwards what it receives: with GRO on, one tbf or iptables drop takes a whole
# 64 KB aggregate (≈ 44 segments at once), which no real router does. Off on the links of
# the servers whose drops matter (the cost-line servers have it off already); the lossy
# server's own TSO/GSO is off too, so that it sends wire-sized packets.
R ethtool -K s1 gro off && R ethtool -K s5 gro off
check_eq "router: GRO off toward clean and lossy" "off off" \
  "$(for d in s1 s5; do R ethtool -k "$d" | awk '/^generic-receive-offload:/ {print $2}'; done | paste -sd' ')"
R iptables -w -A FORWARD -s "$LAB_S5_ADDR" -m statistic --mode random --probability 0.01 -j DROP
check_match "router: 1 % of lossy's packets dropped (iptables statistic)" "statistic mode random probability 0\.0(1|099999)" \
  "$(R iptables -w -S FORWARD; R iptables -w -L FORWARD -n)"

# name|expected|base URL|bytes|extra debit options ("cg": run debit in the busy cgroup)
CLASSES=(
  "clean|network|$LAB_S1_URL|64MiB|"
  "capped|sender_buffer|$LAB_S2_URL|24MiB|"
  "rwnd|receiver_window|$LAB_S1_URL|24MiB|--rcvbuf 64KiB"
  "cpu_off|sender_cpu|$LAB_S3_URL|20MiB|"
  "cpu_on|sender_cpu|$LAB_S4_URL|40MiB|"
  "busy_rcv|receiver_cpu|$LAB_S1_URL|8MiB|cg"
  "lossy|congestion|$LAB_S5_URL|4MiB|"
)
VERDICTS=(network sender_buffer receiver_window sender_cpu receiver_cpu congestion unknown)
RES=$T_TMP/results.tsv   # class expected debit_verdict debitd_verdict mbps path_mbps run
: >"$RES"
run_one() { # NAME EXPECTED URL BYTES EXTRA RUN
  local name=$1 exp=$2 url=$3 bytes=$4 extra=$5 k=$6 j=$T_TMP/$1-$6.json opts=() pre=()
  # shellcheck disable=SC2016  # expanded by that sh: its own PID into the cgroup, then exec
  case $extra in
    cg) pre=(sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG") ;;
    ?*) read -ra opts <<<"$extra" ;;
  esac
  "${pre[@]}" ip netns exec "$LAB_NS_C" timeout 60 "$DEBIT" -q -n 1 --db none --max-time 40 --max-bytes "$bytes" \
    "${opts[@]}" --format json -o "$j" "$url/files/100Mio.dat" 2>"$T_TMP/$name-$k.err"
  local v mbps id srv path ev
  v=$(jq -r '.runs[0].limited_by // "none"' "$j" 2>/dev/null) || v=none
  mbps=$(jq -r '.runs[0].avg_mbps // 0 | floor' "$j" 2>/dev/null)
  path=$(jq -r '.runs[0].path_mbps // "null"' "$j" 2>/dev/null)
  id=$(jq -r '.runs[0].server_record.id // empty' "$j" 2>/dev/null)
  # debitd's own verdict of the transfer, from its /transfers/ID
  srv=none sev=''
  if [ -n "$id" ] && ip netns exec "$LAB_NS_C" curl -s --max-time 5 -o "$j.srv" "$url/transfers/$id"; then
    srv=$(jq -r '.limited_by // "none"' "$j.srv" 2>/dev/null)
    sev=$(jq -r '.limited_by_evidence // empty' "$j.srv" 2>/dev/null)
  fi
  ev=$(jq -r '.runs[0].limited_by_evidence // (.runs[0].error // "no output")' "$j" 2>/dev/null)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$exp" "$v" "${srv:-none}" "${mbps:-0}" "$path" "$k" >>"$RES"
  [ -n "${VSET_KEEP:-}" ] && cp "$j" "$j.srv" "$VSET_KEEP/" 2>/dev/null
  t_diag "$name #$k: ${mbps:-0} Mb/s -> debit $v: $ev"
  [ "$srv" = "$v" ] || t_diag "   debitd ${srv:-none}: ${sev:-no record}"
}
t0=$(date +%s)
for ((k = 1; k <= RUNS; k++)); do
  for c in "${CLASSES[@]}"; do
    IFS='|' read -r name exp url bytes extra <<<"$c"
    run_one "$name" "$exp" "$url" "$bytes" "$extra" "$k"
  done
done
t_diag "$((RUNS * ${#CLASSES[@]})) runs in $(($(date +%s) - t0)) s; load average $(cut -d' ' -f1-3 /proc/loadavg)"

# matrix COLUMN(3 debit, 4 debitd) TITLE: the confusion matrix as Markdown, one row per
# condition (its label), one column per verdict, then the per-row hits.
matrix() {
  awk -F'\t' -v col="$1" -v vs="${VERDICTS[*]}" -v order="$(printf '%s\n' "${CLASSES[@]}" | cut -d'|' -f1 | paste -sd' ')" '
    BEGIN { nv = split(vs, V, " "); nr = split(order, O, " ") }
    { n[$1, $col]++; tot[$1]++; lab[$1] = $2; if ($col == $2) hit[$1]++ }
    END {
      h = "| staged (label) |"; s = "|---|"
      for (i = 1; i <= nv; i++) { h = h " " V[i] " |"; s = s "---|" }
      print h " right |"; print s "---|"
      for (r = 1; r <= nr; r++) {
        c = O[r]; line = "| " c " (" lab[c] ") |"; other = tot[c]
        for (i = 1; i <= nv; i++) { x = n[c, V[i]] + 0; other -= x; line = line " " (x ? x : ".") " |" }
        if (other) line = line " (+" other " none)"
        print line " " hit[c] + 0 "/" tot[c] " |"
      }
    }' "$RES"
}
acc() { awk -F'\t' -v col="$1" '{t++; if ($col == $2) h++} END {printf "%d %d %.1f\n", h, t, t ? 100 * h / t : 0}' "${2:-/dev/stdin}"; }
read -r hit tot pct < <(acc 3 "$RES")
read -r shit stot spct < <(acc 4 "$RES")
# debitd's accuracy over the classes it can see: all but busy_rcv (the client's CPU is the
# client's to see; debitd says receiver_window there, with the busy-reader caveat).
read -r vhit vtot vpct < <(grep -v '^busy_rcv' "$RES" | acc 4)
t_diag "debit's verdict (limited_by), $hit of $tot right ($pct %):"
matrix 3 | while IFS= read -r l; do t_diag "$l"; done
t_diag "debitd's own verdict (/transfers/ID), $shit of $stot right ($spct %; $vhit of $vtot, $vpct %, without busy_rcv, whose CPU it cannot see):"
matrix 4 | while IFS= read -r l; do t_diag "$l"; done
if [ -n "${VSET_MD:-}" ]; then
  {
    echo "debit's verdict: $hit of $tot right ($pct %); $(date -u +%FT%TZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
    echo; matrix 3; echo
    echo "debitd's own verdict (/transfers/ID): $shit of $stot right ($spct %); without busy_rcv $vhit of $vtot ($vpct %)"
    echo; matrix 4
  } >"$VSET_MD"
fi
check_cmp "debit's verdict accuracy >= 90 % ($hit of $tot)" "$pct" ">=" 90
# debitd's floor: 80 % (24 of 30), below the 90 % it reaches, so that one class going
# wrong in every run (5 of 30: 83 %) still passes on a loaded machine but two do not.
check_cmp "debitd's own verdict accuracy >= 80 % without busy_rcv ($vhit of $vtot)" "$vpct" ">=" 80
# busy_rcv: when debitd blames the window, its evidence says it cannot see a busy reader
while IFS=$'\t' read -r name _ _ srv _ _ k; do
  if [ "$name" != busy_rcv ] || [ "$srv" != receiver_window ]; then continue; fi
  check_match "busy_rcv #$k: debitd's receiver_window says the client may be busy" "client too busy to read" \
    "$(jq -r '.limited_by_evidence // empty' "$T_TMP/busy_rcv-$k.json.srv")"
done <"$RES"
for c in "${CLASSES[@]}"; do
  IFS='|' read -r name exp _ <<<"$c"
  check_cmp "$name: $exp in at least $MIN_CLASS of $RUNS runs" \
    "$(awk -F'\t' -v c="$name" '$1 == c && $3 == $2 {h++} END {print h + 0}' "$RES")" ">=" "$MIN_CLASS"
done
# The hintless network verdict (no --bottleneck): the path's rate inferred from the
# plateau, within 15 % of the tbf's rate, in every clean run judged network.
while IFS=$'\t' read -r name _ v _ mbps path _; do
  if [ "$name" != clean ] || [ "$v" != network ]; then continue; fi
  check_cmp "clean run at $mbps Mb/s: inferred path rate $path Mb/s within 15 % of the ${RATE_MBIT} Mbit/s tbf" \
    "$(awk -v p="$path" -v r=$RATE_MBIT 'BEGIN {d = (p - r) / r; print (p != "null" && d <= 0.15 && d >= -0.15) ? 1 : 0}')" "=" 1
done <"$RES"
"$LAB" down "$D" 2>/dev/null
check_eq "down: none of its namespaces left" 0 "$(ip netns list | grep -c "^dbl$LAB_ID")"
check_eq "down: no cgroup left (the busy receiver's included)" "" "$(ls -d "$CG" /sys/fs/cgroup/*/debit-lab-"$LAB_ID" /sys/fs/cgroup/debit-lab-"$LAB_ID" 2>/dev/null)"
t_done
