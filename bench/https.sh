#!/usr/bin/env bash
# Benchmark: debitd HTTPS (libmicrohttpd + GnuTLS) vs nginx HTTPS (OpenSSL) with the SAME
# self-signed certificate and key (made here with openssl req -x509; CERT=ec: ECDSA P-256, the
# default; ed25519; rsa: RSA 2048), the same SIZE bytes
# from RAM (nginx: a copy on tmpfs, checked equal by SHA-256), downloaded by curl --cacert
# to /dev/null over loopback, RUNS interleaved pairs in ABBA order (debitd nginx, nginx
# debitd, ...). Per server: median throughput and server CPU seconds per GiB (sched runtime
# of every thread: exact) and the machine's (all CPUs busy: server, curl and the kernel,
# bench/lib.bash machine_cpu_ms; read on a quiet machine), each with its min-max; then the ratios debitd/nginx (of the
# medians) with the min-max of the per-pair ratios. The certificate's key type, and the TLS
# version, cipher suite, key exchange group and signature each server negotiated (curl and
# openssl s_client) are printed first (they must match for a fair comparison).
# nginx gets ssl_protocols TLSv1.2 TLSv1.3 (debitd's default; nginx 1.22's own default
# lacks 1.3) and otherwise its TLS defaults (no sendfile with TLS: no kTLS in this build).
# Then handshakes per second, full and resumed, with one client for both servers: openssl
# s_time (OpenSSL, as nginx) fetching a 100-byte file over a new connection each time,
# -new (a full handshake every time) and -reuse (the session of the first connection
# resumed: TLS 1.3 tickets), HS_SECONDS each, HS_RUNS pairs in ABBA order; per server the
# median rate [min-max] and the server's CPU ms per handshake, then the ratios.
#   RUNS=10 SIZE=1GiB bench/https.sh   (SIZE: 256MiB or 1GiB; PIN=1: servers CPU 0, curl CPU 1)
#   HS_RUNS=3 HS_SECONDS=5             (HS_RUNS=0: no handshake runs; RUNS=0: no throughput runs)
#   CERT=ec|ed25519|rsa                (the certificate's key type, both servers)
#   DEFERRED=1                         (nginx's listen gets `deferred`, TCP_DEFER_ACCEPT, which
#                                       debitd's HTTPS listeners always have; 0: nginx without)
# The handshake rows also give the server's voluntary context switches per connection (its
# threads' wake-ups: each waits for a CPU on a loaded machine).
. "$(dirname "$0")/../tests/lib/common.sh"
. "$(dirname "$0")/lib.bash"
need_cmd curl nginx openssl
RUNS=${RUNS:-10}
HS_RUNS=${HS_RUNS:-3}
HS_SECONDS=${HS_SECONDS:-5}
SIZE=${SIZE:-1GiB}
PIN=${PIN:-0}
CERT=${CERT:-ec}
DEFERRED=${DEFERRED:-1}
case "$CERT" in
  ec) newkey=(-newkey ec -pkeyopt ec_paramgen_curve:P-256) ;;
  ed25519) newkey=(-newkey ed25519) ;;
  rsa) newkey=(-newkey rsa:2048) ;;
  *) echo "CERT: ec, ed25519 or rsa"; exit 2 ;;
esac
case "$SIZE" in 256MiB) BYTES=268435456 ;; 1GiB) BYTES=1073741824 ;; *) echo "SIZE: 256MiB or 1GiB"; exit 2 ;; esac
command -v "$DEBITD" >/dev/null || { echo "build debitd first (make)"; exit 1; }
cli_pin=()
if [ "$PIN" = 1 ]; then need_cmd taskset; cli_pin=(taskset -c 1); fi
echo "machine: $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg), $RUNS pairs of $SIZE, pinning: $([ "$PIN" = 1 ] && echo 'servers CPU 0, curl CPU 1' || echo none)"
echo "nginx listen: ssl$([ "$DEFERRED" = 1 ] && echo " deferred") (DEFERRED=$DEFERRED); debitd's HTTPS listener: TCP_DEFER_ACCEPT 1 s"

pki=$T_TMP/pki
mkdir -p "$pki"
openssl req -x509 "${newkey[@]}" -nodes -days 2 -subj "/CN=127.0.0.1" \
  -addext "subjectAltName=IP:127.0.0.1" -keyout "$pki/key.pem" -out "$pki/cert.pem" 2>"$pki/err" ||
  { cat "$pki/err"; exit 1; }
root=$(mktemp -d /dev/shm/debit-bench-https.XXXXXX)
t_on_exit "rm -rf '$root'"
mkdir -p "$root/ram" && chmod 755 "$root" "$root/ram"

port_p=$(free_port); port_d=$(free_port); port_n=$(free_port)
cat >"$T_TMP/d.conf" <<CONF
listen = ( { address = "127.0.0.1"; port = $port_p; },
           { address = "127.0.0.1"; port = $port_d; tls = { cert = "$pki/cert.pem"; key = "$pki/key.pem"; }; } );
files = ( { path = "/ram/f.dat"; size = "$SIZE"; }, { path = "/ram/hs.dat"; size = 100; } );
log = { access = "off"; level = "info"; };
CONF
t_bg debitd "$DEBITD" -c "$T_TMP/d.conf"
DEBITD_PID=$T_LAST_PID
for _ in $(seq 300); do curl -s -o /dev/null -r 0-0 "http://127.0.0.1:$port_p/ram/f.dat" && break; sleep 0.1; done
curl -s -o "$root/ram/f.dat" "http://127.0.0.1:$port_p/ram/f.dat" || { echo "debitd did not start"; cat "$T_TMP/debitd.log"; exit 1; }
curl -s -o "$root/ram/hs.dat" "http://127.0.0.1:$port_p/ram/hs.dat"
debitd_content_ready "http://127.0.0.1:$port_p" || { echo "debitd: content not ready in 30 s"; exit 1; }

NGINX_LISTEN_OPTS="ssl$([ "$DEFERRED" = 1 ] && echo ' deferred')" NGINX_SERVER_EXTRA="ssl_protocols TLSv1.2 TLSv1.3; ssl_certificate $pki/cert.pem; ssl_certificate_key $pki/key.pem;" \
  nginx_spawn "$root" "$port_n"
D=https://127.0.0.1:$port_d/ram/f.dat N=https://127.0.0.1:$port_n/ram/f.dat
for _ in $(seq 100); do curl -s -o /dev/null -r 0-0 --cacert "$pki/cert.pem" "$N" && break; sleep 0.1; done
curl -s -o /dev/null -r 0-0 --cacert "$pki/cert.pem" "$N" || { echo "nginx did not start"; cat "$T_TMP"/nginx*.log; exit 1; }
nginx_pids() { echo "$NGINX_PID $(pgrep -P "$NGINX_PID" | tr '\n' ' ')"; }
if [ "$PIN" = 1 ]; then for p in "$DEBITD_PID" $(nginx_pids); do taskset -a -p -c 0 "$p" >/dev/null; done; fi
h_d=$(curl -s --cacert "$pki/cert.pem" "$D" | sha256sum); h_n=$(curl -s --cacert "$pki/cert.pem" "$N" | sha256sum)
[ "$h_d" = "$h_n" ] || { echo "servers differ: debitd $h_d, nginx $h_n"; exit 1; }
echo "certificate ($CERT, both servers): $(openssl x509 -in "$pki/cert.pem" -noout -text |
  sed -n 's/^ *Public Key Algorithm: //p; s/^ *ASN1 OID: //p; s/^ *Public-Key: //p' | paste -sd ' ')"
for s in debitd nginx; do
  u=$D p=$port_d; [ $s = nginx ] && u=$N p=$port_n
  # s_client: the group of the key exchange and the server's signature (OpenSSL's names)
  sc=$(openssl s_client -connect "127.0.0.1:$p" -CAfile "$pki/cert.pem" </dev/null 2>/dev/null)
  kx="signature $(sed -n 's/^Peer signature type: //p' <<<"$sc"), group $(sed -n 's/^Server Temp Key: //p' <<<"$sc" |
    sed 's/, [0-9]* bits$//; s/, / /g')"
  echo "$s: $(curl -sv -o /dev/null -r 0-0 --cacert "$pki/cert.pem" "$u" 2>&1 | sed -n 's/^\* SSL connection using //p' | head -1); $kx"
done

run_one() { # name url pids...
  local name=$1 url=$2 c0 c1 w m0 m1; shift 2
  c0=$(cpu_of "$@") m0=$(machine_cpu_ms)
  w=$("${cli_pin[@]}" curl -s -o /dev/null --cacert "$pki/cert.pem" -w '%{time_total}' "$url")
  m1=$(machine_cpu_ms) c1=$(cpu_of "$@")
  # wall s, CPU s per GiB (sched runtime), the machine's CPU s per GiB (server, curl, kernel)
  awk -v n="$name" -v w="$w" -v a="$c0" -v b="$c1" -v by="$BYTES" -v m=$((m1 - m0)) 'BEGIN{split(a, x, " "); split(b, y, " ");
    printf "%s %.4f %.4f %.4f\n", n, w, (y[2] - x[2]) / 1000 * 1073741824 / by, m / 1000 * 1073741824 / by}' >>"$T_TMP/runs"
}
: >"$T_TMP/runs"
for i in $(seq "$RUNS"); do
  if [ $((i % 2)) = 1 ]; then run_one debitd "$D" "$DEBITD_PID"; run_one nginx "$N" $(nginx_pids)
  else run_one nginx "$N" $(nginx_pids); run_one debitd "$D" "$DEBITD_PID"; fi
done
col() { awk -v s="$1" -v c="$2" '$1 == s {print $c}' "$T_TMP/runs"; }
mbps() { awk -v b="$BYTES" '{printf "%.0f\n", b * 8 / $1 / 1e6}'; }
for s in debitd nginx; do
  [ "$RUNS" -gt 0 ] || break
  printf '%-6s HTTPS throughput %.0f Mb/s [%s]  server CPU %.3f s/GiB [%s]  machine CPU %.3f s/GiB [%s]\n' "$s" "$(col $s 2 | mbps | median)" \
    "$(col $s 2 | mbps | minmax)" "$(col $s 3 | median)" "$(col $s 3 | minmax)" "$(col $s 4 | median)" "$(col $s 4 | minmax)"
done
ratio() { # NAME COL TRANSFORM(cat|mbps)
  local md mn pr
  md=$(col debitd "$2" | $3 | median); mn=$(col nginx "$2" | $3 | median)
  pr=$(paste <(col debitd "$2" | $3) <(col nginx "$2" | $3) | awk '$2 > 0 {printf "%.3f\n", $1 / $2}' | minmax)
  awk -v n="$1" -v a="$md" -v b="$mn" -v pr="$pr" 'BEGIN{printf "ratio debitd/nginx %-16s %.3f [per pair %s]\n", n, (b > 0 ? a / b : 0), pr}'
}
if [ "$RUNS" -gt 0 ]; then
  ratio "throughput" 2 mbps
  ratio "CPU per GiB" 3 cat
  ratio "machine CPU/GiB" 4 cat
  echo "runs (name wall_s cpu_s_per_GiB machine_cpu_s_per_GiB):"; sed 's/^/  /' "$T_TMP/runs"
fi
[ "$HS_RUNS" -gt 0 ] || exit 0

vcsw_of() { # pids...: voluntary context switches of all their threads
  local p t v=0
  for p in "$@"; do for t in /proc/"$p"/task/*/status; do v=$((v + $(awk '/^voluntary_ctxt_switches/ {print $2}' "$t" 2>/dev/null || echo 0))); done; done
  echo "$v"
}
hs_one() { # name mode(new|reuse) port pids...: handshakes/s, the server's CPU ms and wake-ups per handshake
  local name=$1 mode=$2 port=$3 c0 c1 t0 t1 n v0 v1; shift 3
  v0=$(vcsw_of "$@") c0=$(cpu_of "$@") t0=$(date +%s.%N)
  n=$("${cli_pin[@]}" openssl s_time -connect "127.0.0.1:$port" -CAfile "$pki/cert.pem" -"$mode" -time "$HS_SECONDS" \
        -www /ram/hs.dat 2>&1 | awk '/connections in .* real seconds/ {n = $1} END {print n + 0}')
  t1=$(date +%s.%N) c1=$(cpu_of "$@") v1=$(vcsw_of "$@")
  awk -v n="$name" -v m="$mode" -v c="$n" -v t0="$t0" -v t1="$t1" -v a="$c0" -v b="$c1" -v l="$(cut -d' ' -f1 /proc/loadavg)" \
    -v w=$((v1 - v0)) 'BEGIN{split(a, x, " "); split(b, y, " ");
    printf "%s %s %.1f %.3f %s %.2f\n", n, m, c / (t1 - t0), (c > 0 ? (y[2] - x[2]) / c : 0), l, (c > 0 ? w / c : 0)}' >>"$T_TMP/hs"
}
: >"$T_TMP/hs"
for i in $(seq "$HS_RUNS"); do
  for mode in new reuse; do
    if [ $((i % 2)) = 1 ]; then hs_one debitd $mode "$port_d" "$DEBITD_PID"; hs_one nginx $mode "$port_n" $(nginx_pids)
    else hs_one nginx $mode "$port_n" $(nginx_pids); hs_one debitd $mode "$port_d" "$DEBITD_PID"; fi
  done
done
hcol() { awk -v s="$1" -v m="$2" -v c="$3" '$1 == s && $2 == m {print $c}' "$T_TMP/hs"; }
for mode in new reuse; do
  label=full; [ $mode = reuse ] && label=resumed
  for s in debitd nginx; do
    printf '%-6s %-7s handshakes/s %.0f [%s]  server CPU %.3f ms/handshake [%s]  wake-ups %.2f/handshake [%s]\n' "$s" "$label" \
      "$(hcol $s $mode 3 | median)" "$(hcol $s $mode 3 | minmax)" "$(hcol $s $mode 4 | median)" "$(hcol $s $mode 4 | minmax)" \
      "$(hcol $s $mode 6 | median)" "$(hcol $s $mode 6 | minmax)"
  done
  pr=$(paste <(hcol debitd $mode 3) <(hcol nginx $mode 3) | awk '$2 > 0 {printf "%.3f\n", $1 / $2}' | minmax)
  awk -v l="$label" -v a="$(hcol debitd $mode 3 | median)" -v b="$(hcol nginx $mode 3 | median)" -v pr="$pr" \
    'BEGIN{printf "ratio debitd/nginx %-7s handshakes/s %.3f [per pair %s]\n", l, (b > 0 ? a / b : 0), pr}'
done
echo "handshake runs (name mode per_s server_cpu_ms_per_handshake load1 server_wakeups_per_handshake):"; sed 's/^/  /' "$T_TMP/hs"
