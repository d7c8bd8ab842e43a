#!/usr/bin/env bash
# Measures what TLS costs (docs/performance.md, "TLS"): closed-loop PUT throughput and latency of
# a single node and of three nodes at 2/3, over plain HTTP and over TLS (mutual TLS between the
# nodes, scripts/cluster.sh up --tls), alternated A/B in one run so that the pairs share the
# machine's hour. With QKV_OLD_JAR=<another build's quorumkv.jar> it also alternates that build
# with this one on a plain single node (was the request path changed?). With QKV_TLS_JDK=1 (the
# default) it also runs TLS with the JDK's SSLEngine (-Dio.netty.handler.ssl.noOpenSsl=true)
# beside the default, Netty's OpenSSL engine (BoringSSL from netty-tcnative, in the jar).
#
#   scripts/tls-cost.sh     QKV_ROUNDS=2 QKV_DURATION=20s QKV_WARMUP=15s QKV_THREE_WARMUP=30s
#                           QKV_CONNS=32 QKV_BASE_PORT=18681 QKV_TLS_JDK=1
#                           QKV_JAVA_OPTS (node JVM options)
#
# Clients keep their connections (wrk), so a handshake is paid once per connection: the figures
# are the cost of encrypting and decrypting every request and answer, between client and node
# and between nodes. Besides throughput and latency, each run reports the nodes' CPU time per
# request (utime + stime of the node processes over the measured run, /proc/<pid>/stat), which a
# busy shared machine disturbs less than throughput, and the client's (wrk's, from the shell's
# `times`): on shared cores what the client spends on its own TLS is taken from the nodes. Needs the build, wrk (it speaks TLS) and openssl. Output: run/tls-cost/<time>/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLUSTER="$ROOT/scripts/cluster.sh"
# shellcheck source=scripts/lib/wrk-tool.sh
. "$ROOT/scripts/lib/wrk-tool.sh"
# shellcheck source=scripts/lib/node-cpu.sh
. "$ROOT/scripts/lib/node-cpu.sh"
rounds="${QKV_ROUNDS:-2}"
duration="${QKV_DURATION:-20s}"
warmup="${QKV_WARMUP:-15s}"
three_warmup="${QKV_THREE_WARMUP:-30s}"
conns="${QKV_CONNS:-32}"
port="${QKV_BASE_PORT:-18681}"
old_jar="${QKV_OLD_JAR:-}"
tls_jdk="${QKV_TLS_JDK:-1}"
java_opts="${QKV_JAVA_OPTS:--Xms1g -Xmx1g -XX:+UseG1GC -XX:MaxTenuringThreshold=2 -XX:MaxGCPauseMillis=10}"
export QKV_KEYS="${QKV_KEYS:-100000}" QKV_VALUE_SIZE="${QKV_VALUE_SIZE:-100}"
out="$ROOT/run/tls-cost/$(date -u +%Y%m%dT%H%M%SZ)"
work="$(mktemp -d "${TMPDIR:-/tmp}/quorumkv-tls-cost.XXXXXX")"
mkdir -p "$out"
command -v wrk >/dev/null || { echo "wrk is not installed" >&2; exit 1; }

cleanup() {
  for d in "$work"/c-*; do [ -d "$d" ] && "$CLUSTER" down --dir "$d" >/dev/null 2>&1; done
  rm -rf "$work"
}
trap cleanup EXIT

log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

"$ROOT/scripts/dev-certs.sh" ca "$work/ca" >/dev/null
"$ROOT/scripts/dev-certs.sh" node "$work/ca" "$work/certs" node tls-cost >/dev/null

# measure LABEL NODES MODE(plain|tls|tls-jdk) REPLICAS WARMUP [JAR]: a fresh cluster, a warm-up, a run
measure() {
  local label="$1" nodes="$2" mode="$3" replicas="$4" warm="$5" jar="${6:-}" dir="$work/c-$1" scheme=http
  # TLS alone: the public API stays open in both modes (cluster.sh would turn API keys on with TLS).
  local -a tls=(--insecure) args=()
  local opts="$java_opts"
  if [ "$mode" != plain ]; then tls=(--tls "$work/certs"); args=(--quorumkv.security.public-api=open); scheme=https; fi
  if [ "$mode" = tls-jdk ]; then opts="$opts -Dio.netty.handler.ssl.noOpenSsl=true"; fi
  log "$label: $nodes node(s), $mode${jar:+, $jar}"
  QKV_UP_TIMEOUT="${QKV_UP_TIMEOUT:-300}" QKV_JAR="$jar" QKV_JAVA_OPTS="$opts" QKV_NODE_ARGS="${args[*]}" "$CLUSTER" up --nodes "$nodes" --base-port "$port" \
    --dir "$dir" --fresh "${tls[@]}" >/dev/null
  QKV_REPLICAS="$replicas" wrk -t1 -c"$conns" -d"$warm" -s "$ROOT/scripts/wrk2/put.lua" "$scheme://127.0.0.1:$port" >/dev/null 2>&1
  local before after
  before="$(cluster_cpu_ticks "$dir")"
  # The subshell's `times` prints its children's (wrk's) user and system time on its second
  # line (not in a pipeline: that would be another subshell, without children).
  (
    QKV_REPLICAS="$replicas" wrk -t1 -c"$conns" -d"$duration" --latency -s "$ROOT/scripts/wrk2/put.lua" \
      "$scheme://127.0.0.1:$port" >"$out/$label.txt" 2>&1
    times >"$out/$label.client"
  )
  after="$(cluster_cpu_ticks "$dir")"
  echo "$((after - before))" >"$out/$label.ticks"
  "$CLUSTER" down --dir "$dir" >/dev/null
}

speed_before="$(host_speed)"
for ((r = 1; r <= rounds; r++)); do
  measure "single-plain-$r" 1 plain "" "$warmup"
  measure "single-tls-$r" 1 tls "" "$warmup"
  if [ "$tls_jdk" = 1 ]; then
    measure "single-tls-jdk-$r" 1 tls-jdk "" "$warmup"
  fi
  if [ -n "$old_jar" ]; then
    measure "single-old-$r" 1 plain "" "$warmup" "$old_jar"
  fi
  measure "three-plain-$r" 3 plain 2/3 "$three_warmup"
  measure "three-tls-$r" 3 tls 2/3 "$three_warmup"
  if [ "$tls_jdk" = 1 ]; then
    measure "three-tls-jdk-$r" 3 tls-jdk 2/3 "$three_warmup"
  fi
done
speed_after="$(host_speed)"

# cpu_us LABEL: the nodes' CPU microseconds per request of a run
cpu_us() {
  cpu_us_per_request "$(cat "$out/$1.ticks")" "$(awk '/requests in/ { n = $1 } END { print n + 0 }' "$out/$1.txt")"
}

# client_us LABEL: the load generator's (wrk's) CPU microseconds per request of a run
client_us() {
  awk -v n="$(awk '/requests in/ { n = $1 } END { print n + 0 }' "$out/$1.txt")" '
    function seconds(t, m) { m = t; sub(/m.*/, "", m); sub(/^[0-9]+m/, "", t); sub(/s$/, "", t); return m * 60 + t }
    NR == 2 { if (n > 0) printf "%.0f", (seconds($1) + seconds($2)) * 1000000 / n; else printf "n/a" }' "$out/$1.client"
}

row() { # row LABEL-PREFIX: rps, p50/p99 and CPU per request (nodes, client) of each round
  local r cells=""
  for ((r = 1; r <= rounds; r++)); do
    cells="$cells $(wrk_rps "$out/$1-$r.txt") rps, p50 $(wrk_pct "$out/$1-$r.txt" 50) / p99 $(wrk_pct "$out/$1-$r.txt" 99) ms, $(cpu_us "$1-$r") µs nodes' CPU/req, $(client_us "$1-$r") µs client's |"
  done
  echo "| $1 |$cells"
}
{
  echo "# TLS cost, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "$(nproc) cores, load generator on the same cores; closed loop wrk -t1 -c$conns -d$duration after a" \
    "warm-up of $warmup (single) / $three_warmup (three); $QKV_VALUE_SIZE-byte values; rounds alternated in the order" \
    "of the rows. Host speed check before/after: $speed_before / $speed_after; load average at the end:" \
    "$(cut -d' ' -f1-3 /proc/loadavg). Command: \`scripts/tls-cost.sh\`."
  echo
  header="| run |"; sep="|---|"
  for ((r = 1; r <= rounds; r++)); do header="$header round $r |"; sep="$sep---|"; done
  echo "$header"
  echo "$sep"
  row single-plain
  row single-tls
  [ "$tls_jdk" != 1 ] || row single-tls-jdk
  [ -z "$old_jar" ] || row single-old
  row three-plain
  row three-tls
  [ "$tls_jdk" != 1 ] || row three-tls-jdk
} >"$out/summary.md"
cat "$out/summary.md"
