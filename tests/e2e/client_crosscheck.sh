#!/usr/bin/env bash
# Cross-check with curl on the same files (nginx, and debitd when built): debit's byte
# count equals curl's size_download, and its curl-style average (total_mbps) is within a
# sane factor of curl's speed_download, the medians of 5 interleaved runs each (a 10 MiB
# download lasts milliseconds: medians keep one descheduled run on a loaded machine from
# deciding the ratio).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/client_lib.bash"
need_cmd nginx
www_new
nginx_up
urls=("$NGINX/files/10Mio.dat")
# Without a debitd build: nginx only. A built debitd that does not come up is a failure.
if [ ! -x "$DEBITD" ]; then t_diag "build/debitd not built: nginx only"
elif debitd_serve_10mio; then urls+=("$DEBITD_URL")
else t_fail "debitd serves /files/10Mio.dat" "$(tail -5 "$T_TMP/debitd.log" 2>/dev/null)"; fi

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
for u in "${urls[@]}"; do
  cs=() ds=() cb=
  for i in 1 2 3 4 5; do
    read -r cb cspeed < <(curl -s -o /dev/null -w '%{size_download} %{speed_download}\n' "$u")
    cs+=("$(awk -v s="$cspeed" 'BEGIN{print s * 8 / 1e6}')")
    "$DEBIT" -q -n 1 --format json "$u" >"$T_TMP/x.json"
    db=$(jqr '.runs[0].bytes' "$T_TMP/x.json")
    ds+=("$(jqr '.runs[0].total_mbps' "$T_TMP/x.json")")
  done
  check_eq "$u: debit bytes == curl size_download" "$cb" "$db"
  c=$(median "${cs[@]}") d=$(median "${ds[@]}")
  t_diag "$u: curl speed_download median $c Mb/s, debit total_mbps median $d Mb/s"
  check_cmp "$u: debit's curl-style average within 4x of curl's (debit/curl)" "$(awk -v a="$d" -v b="$c" 'BEGIN{print a/b}')" '>' 0.25
  check_cmp "$u: ... and not more than 4x above" "$(awk -v a="$d" -v b="$c" 'BEGIN{print a/b}')" '<' 4
done
t_done
