#!/usr/bin/env bash
# /status for a browser (issue 31): a client whose Accept weighs text/html above
# application/json (every browser) gets an HTML page made from the same JSON sections,
# every value escaped, nothing loaded from elsewhere; curl's default Accept (*/*), an
# explicit application/json or a tie get the JSON as before. With privacy.details = false
# the hidden fields are absent from both.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/server_lib.bash"
need_cmd jq
FIREFOX='text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8'

# get ACCEPT: the body of /status into $T_TMP/body, its headers into $T_TMP/hh; prints the Content-Type
get() {
  if [ -n "$1" ]; then curl -s -D "$T_TMP/hh" -o "$T_TMP/body" -H "Accept: $1" "$BASE/status"
  else curl -s -D "$T_TMP/hh" -o "$T_TMP/body" "$BASE/status"; fi
  hdr "$T_TMP/hh" Content-Type
}
has() { grep -qF -- "$2" "$T_TMP/$1"; }

# a configuration file whose name needs escaping in HTML (config.source shows it)
conf="$T_TMP/a&b'c.conf"
srv_conf "$conf" 'files = ( { path = "/f.dat"; size = "64KiB"; }, { path = "/d/g.dat"; size = "1MiB"; } );'
srv_start "$conf"
curl -s -o /dev/null "$BASE/f.dat"

# --- which answer ------------------------------------------------------------------------------
check_eq "curl's default Accept (*/*): JSON" "application/json" "$(get '')"
check "... and it parses, with the version" jq -e .version "$T_TMP/body"
cp "$T_TMP/body" "$T_TMP/json"
check_eq "Accept: application/json: JSON" "application/json" "$(get 'application/json')"
check_eq "Accept: text/html, application/json (a tie): JSON" "application/json" "$(get 'text/html, application/json')"
check_eq "Accept: text/html;q=0.5, application/json: JSON" "application/json" "$(get 'text/html;q=0.5, application/json')"
check_eq "Accept: application/json;q=0.5, text/html: HTML" "text/html; charset=utf-8" \
  "$(get 'application/json;q=0.5, text/html')"
check_eq "a browser's Accept (Firefox): HTML" "text/html; charset=utf-8" "$(get "$FIREFOX")"
cp "$T_TMP/body" "$T_TMP/html"
check_eq "the page is not cached (Cache-Control: no-store)" "no-store" "$(hdr "$T_TMP/hh" Cache-Control)"
check_eq "HEAD with a browser's Accept: HTML too" "text/html; charset=utf-8" \
  "$(curl -s -I -H "Accept: $FIREFOX" "$BASE/status" | hdr /dev/stdin Content-Type)"

# --- the page's bytes: the JSON's values ----------------------------------------------------------
j() { jq -r "$1" "$T_TMP/json"; }
ver=$(j .version)
check "title: debitd $ver status" has html "<title>debitd $ver status</title>"
check "heading and a link back to the index" has html "<h1>debitd $ver status</h1>"
for sec in server content listeners files upload limits counters config cpu; do
  check "section $sec" has html "<h2 id=\"$sec\">$sec</h2>"
done
check "content.seed = JSON's ($(j .content.seed))" has html "<tr><th>seed</th><td><code>$(j .content.seed)</code></td></tr>"
check "content.region_bytes = JSON's" has html "<tr><th>region_bytes</th><td><code>$(j .content.region_bytes)</code></td></tr>"
check "kernel = JSON's ($(j .kernel))" has html "<tr><th>kernel</th><td>$(j .kernel)</td></tr>"
check "listeners[0].x_debit_tcp = JSON's" has html "<tr><th>x_debit_tcp</th><td>$(j '.listeners[0].x_debit_tcp')</td></tr>"
check "files[1].path = JSON's" has html "<tr><th>path</th><td>/d/g.dat</td></tr>"
etag=$(j '.files[0].etag' | sed 's/"/\&quot;/g')
check "files[0].etag escaped: $etag" has html "<tr><th>etag</th><td>$etag</td></tr>"
src=$(j .config.source | sed "s/&/\&amp;/g; s/'/\&#39;/g")
check "config.source escaped (& and '): ${src##*/}" has html "<tr><th>source</th><td>$src</td></tr>"
check_eq "details=true, HTML: accept has its limit (workers, then limit)" "<tr><th>limit</th>" \
  "$(grep -A1 '<tr><th>workers</th>' "$T_TMP/html" | tail -1 | grep -o '<tr><th>limit</th>')"
check_nomatch "no raw value from the JSON with & or ' unescaped" "a&b'c" "$(cat "$T_TMP/html")"
# a row per object member but the top's sections (headings); the HTML was fetched after the JSON
check_eq "a row per member of the JSON (but the sections, which are headings)" \
  "$(jq '([paths | select(.[-1] | type == "string")] | length) - ([to_entries[] | select(.value | type == "object" or type == "array")] | length)' "$T_TMP/json")" \
  "$(grep -o '<tr><th>' "$T_TMP/html" | wc -l)"
# nothing from elsewhere: no script, stylesheet, image or font, and the only link is the index
check_nomatch "no outside requests (src=, <link, <script, url(, @import)" '(src=|<link|<script|url\(|@import)' "$(cat "$T_TMP/html")"
check_eq "the only link: the index" '/' "$(grep -o 'href="[^"]*"' "$T_TMP/html" | sed 's/href="//; s/"$//' | sort -u | tr '\n' ' ' | sed 's/ $//')"
srv_stop

# --- privacy.details = false ------------------------------------------------------------------------
srv_conf "$T_TMP/p.conf" 'files = ( { path = "/f.dat"; size = "64KiB"; } );' 'privacy = { details = false; };'
srv_start "$T_TMP/p.conf"
get '' >/dev/null
check_eq "details=false, JSON: no pid, kernel, limits, config.source, connection_memory, accept.limit" \
  "null null null null null null" \
  "$(jq -r '[.pid, .kernel, .limits, .config.source, .listeners[0].connection_memory, .listeners[0].accept.limit] | map(tostring) | join(" ")' "$T_TMP/body")"
get "$FIREFOX" >/dev/null
check_eq "details=false, HTML: accept has no limit (workers, then open)" "<tr><th>open</th>" \
  "$(grep -A1 '<tr><th>workers</th>' "$T_TMP/body" | tail -1 | grep -o '<tr><th>open</th>')"
for f in pid kernel source connection_memory; do
  check "details=false, HTML: no $f" bash -c "! grep -qF '<tr><th>$f</th>' '$T_TMP/body'"
done
check "details=false, HTML: no limits section" bash -c "! grep -qF 'id=\"limits\"' '$T_TMP/body'"
check "details=false, HTML: still the counters" has body '<h2 id="counters">counters</h2>'
t_done
