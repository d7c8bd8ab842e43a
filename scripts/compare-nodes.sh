#!/usr/bin/env bash
# A/B of node settings in one run: for each variant, start a fresh local cluster with that
# variant's JVM options and node arguments, warm it up, measure closed-loop PUT throughput
# (wrk) and the latency of a constant-rate PUT load (wrk2) with the nodes' CPU and
# allocation per request over it, stop it. The figures of
# docs/performance.md for the GC choice and the other "keep only if it helps" changes.
#
#   scripts/compare-nodes.sh [--nodes N] [--replicas ACK/FROM] [--rate RPS] [--backend lsm|h2|derby] VARIANT...
#   VARIANT: "label|JVM options|node arguments[|jar]", e.g.
#   scripts/compare-nodes.sh --rate 8000 "g1|-Xmx1g -XX:+UseG1GC|" "zgc|-Xmx1g -XX:+UseZGC|"
#   (the jar, default service/target/quorumkv.jar, compares two builds: copy one aside first)
#
# Environment: QKV_DURATION (closed loop, 20s), QKV_RATE_DURATION (wrk2, 40s), QKV_WARMUP (30s),
# QKV_CONNS (64), QKV_BASE_PORT (18581). Needs wrk and wrk2 (see docs/load-testing.md).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLUSTER="$ROOT/scripts/cluster.sh"
# shellcheck source=scripts/lib/wrk-tool.sh
. "$ROOT/scripts/lib/wrk-tool.sh"
nodes=1
replicas=""
rate=5000
backend=lsm
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes="$2"; shift 2 ;;
    --replicas) replicas="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --backend) backend="$2"; shift 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
duration="${QKV_DURATION:-20s}"
rate_duration="${QKV_RATE_DURATION:-40s}"
warmup="${QKV_WARMUP:-30s}"
conns="${QKV_CONNS:-64}"
port="${QKV_BASE_PORT:-18581}"
export QKV_KEYS="${QKV_KEYS:-100000}" QKV_VALUE_SIZE="${QKV_VALUE_SIZE:-100}" QKV_REPLICAS="$replicas"
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }
QKV_TOOL=wrk2 detect_wrk_tool || exit 1
out="$ROOT/run/compare-nodes/$(date -u +%Y%m%dT%H%M%SZ)"
work="$(mktemp -d "${TMPDIR:-/tmp}/quorumkv-ab.XXXXXX")"
mkdir -p "$out"
trap '"$CLUSTER" down --dir "$work/cluster" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
url="http://127.0.0.1:$port"

pct() { wrk_pct "$@"; }
rps() { wrk_rps "$1"; }
# CPU time (user + system, clock ticks) of each node process so far, one line per node.
nodes_cpu_ticks() {
  local i pid
  for i in $(seq 1 "$nodes"); do
    pid="$(cat "$work/cluster/node$i/node.pid")"
    # Fields 14 and 15 of /proc/PID/stat, counted after the command name's closing parenthesis.
    sed 's/^.*) //' "/proc/$pid/stat" | awk '{ print $12 + $13 }'
  done
}
ticks_per_second="$(getconf CLK_TCK)"
# Bytes each node has allocated so far, one line per node: Micrometer's
# jvm_gc_memory_allocated_bytes_total, which grows at each young collection by what the
# young generation held. So it lags by at most one young generation (compare runs that
# allocate many times that), and it misses G1's humongous objects, which are allocated
# outside the young generation: arrays of half a heap region or more (512 KiB with a
# 1 GiB heap's 1 MiB regions), so keep QKV_VALUE_SIZE below that when it matters.
nodes_allocated() {
  local i
  for i in $(seq 1 "$nodes"); do
    curl -s "http://127.0.0.1:$((port + i - 1 + 1000))/actuator/prometheus" |
      awk '/^jvm_gc_memory_allocated_bytes_total/ { v = $2 } END { printf "%.0f\n", v }'
  done
}
# Each node's growth between two of the readings above (one line per node) times SCALE, per
# request of the constant-rate run ($requests), to FILE as "nodeN X UNIT per request";
# prints the nodes' total (n/a without requests).
per_request() {
  local before="$1" after="$2" scale="$3" unit="$4" file="$5"
  paste <(echo "$before") <(echo "$after") | awk -v s="$scale" -v u="$unit" -v n="${requests:-0}" \
    '{ printf "node%d %.1f %s per request\n", NR, (n > 0) ? ($2 - $1) * s / n : 0, u }' >"$file"
  awk -v n="${requests:-0}" '{ t += $2 } END { if (n > 0) printf "%.1f", t; else printf "n/a" }' "$file"
}

{
  echo "| variant | closed-loop PUT rps | PUT at $rate rps: p50 / p99 / p99.9 / max (ms) | achieved rps | nodes' CPU per request (µs) | nodes' allocation per request (KiB) | host speed check |"
  echo "|---|---|---|---|---|---|---|"
} >"$out/summary.md"
for variant in "$@"; do
  IFS='|' read -r label opts args jar <<<"$variant"
  # Before the variant's nodes start: how busy the machine is with other work (lib/wrk-tool.sh).
  speed="$(host_speed)"
  echo "[$(date -u +%H:%M:%S)] $label: up ($nodes node(s), JVM '$opts', args '$args'${jar:+, $jar})" >&2
  # An empty QKV_JAR is cluster.sh's default build.
  QKV_JAR="$jar" QKV_JAVA_OPTS="$opts" QKV_NODE_ARGS="$args" "$CLUSTER" up --insecure --nodes "$nodes" --backend "$backend" --base-port "$port" \
    --dir "$work/cluster" --fresh >/dev/null
  wrk -t1 -c"$conns" -d"$warmup" -s "$ROOT/scripts/wrk2/put.lua" "$url" >/dev/null
  wrk -t1 -c"$conns" -d"$duration" --latency -s "$ROOT/scripts/wrk2/put.lua" "$url" >"$out/$label-closed.txt"
  cpu_before="$(nodes_cpu_ticks)"
  allocated_before="$(nodes_allocated)"
  "$WRK_BIN" -t1 -c"$conns" -d"$rate_duration" -R"$rate" --u_latency -s "$ROOT/scripts/wrk2/put.lua" "$url" \
    >"$out/$label-rate.txt"
  cpu_after="$(nodes_cpu_ticks)"
  allocated_after="$(nodes_allocated)"
  requests="$(awk '/requests in/ { print $1; exit }' "$out/$label-rate.txt")"
  # The nodes' CPU and allocation over the constant-rate run divided by its requests: what
  # a change that saves work should lower. The totals go to the summary, node by node to files.
  cpu_per_request="$(per_request "$cpu_before" "$cpu_after" "$((1000000 / ticks_per_second))" us "$out/$label-cpu.txt")"
  allocated_per_request="$(per_request "$allocated_before" "$allocated_after" "$(awk 'BEGIN { print 1 / 1024 }')" KiB \
    "$out/$label-alloc.txt")"
  "$CLUSTER" down --dir "$work/cluster" >/dev/null
  r="$out/$label-rate.txt"
  echo "| $label | $(rps "$out/$label-closed.txt") | $(pct "$r" 50) / $(pct "$r" 99) / $(pct "$r" 99.9) / $(pct "$r" 100) | $(rps "$r") | $cpu_per_request | $allocated_per_request | $speed |" \
    >>"$out/summary.md"
done
echo "raw outputs: $out" >&2
cat "$out/summary.md"
