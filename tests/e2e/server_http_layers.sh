#!/usr/bin/env bash
# server/http/ has no call circle (issue 30): the router (http_handler) on top, the routes
# in the middle, the replies (http_reply) at the bottom. Read from the built objects, not
# the source: an edge A -> B is a symbol A's object leaves undefined (nm U) that B's
# defines (nm T); tsort then names any loop. Also checks a few edges that must point down.
. "$DEBIT_TOP/tests/lib/common.sh"
need_cmd nm tsort
dir=$DEBIT_BUILD/server/http
[ -f "$dir/http_handler.o" ] || skip_all "no $dir/http_handler.o (build first)"

declare -A owner
for o in "$dir"/*.o; do
  m=$(basename "$o" .o)
  while read -r _ t sym; do
    [ "$t" = T ] && owner[$sym]=$m
  done < <(nm --defined-only "$o")
done
edges=$T_TMP/edges
: >"$edges"
for o in "$dir"/*.o; do
  m=$(basename "$o" .o)
  echo "$m $m" >>"$edges" # every module a node, even without edges
  while read -r t sym; do
    callee=${owner[$sym]:-}
    [ -n "$callee" ] && [ "$callee" != "$m" ] && echo "$m $callee"
  done < <(nm --undefined-only "$o") | sort -u >>"$edges"
done
t_diag "$(grep -v '^\(.*\) \1$' "$edges" | sort | tr '\n' ';')"
loops=$(tsort "$edges" 2>&1 >/dev/null)
check_eq "no call circle among server/http objects" "" "$loops"

has_edge() { grep -qx "$1 $2" "$edges"; }
check "the router calls the routes (http_handler -> http_files)" has_edge http_handler http_files
check "routes reply through http_reply (http_files -> http_reply)" has_edge http_files http_reply
check "pages reply through http_reply (http_pages -> http_reply)" has_edge http_pages http_reply
for m in http_files http_pages http_metrics http_upload http_headers http_reply http_body http_status; do
  [ -f "$dir/$m.o" ] || continue
  check "$m does not call up into the router" bash -c "! grep -qx '$m http_handler' '$edges'"
done
check "http_reply calls no route" bash -c "! grep -Eq '^http_reply (http_files|http_pages|http_metrics|http_upload|http_headers)\$' '$edges'"
t_done
