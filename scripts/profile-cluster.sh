#!/usr/bin/env bash
# Where a cluster's CPU goes per request, against one node's (goal 2 of docs/performance.md,
# issue 50): starts one node (LSM, scripts/cluster.sh), then a cluster of --nodes nodes (the
# default replication factor, 3),
# and for each: closed-loop PUTs to node 1 (wrk, 64 connections, 100-byte values, --replicas
# on the cluster) for the warm-up, then the same load with async-profiler (event=cpu, 1 ms) on
# every node. The table (scripts/lib/profile-compare.py --sum) gives the CPU per request of each
# part on each node and on the cluster as a whole, against the one node's; the replica
# operations per chunk of node 1's replica streams (quorumkv.replica.requests against
# quorumkv.replica.stream.chunks over the profiled run) say how much the streams batch.
# The collapsed stacks, wrk outputs and metrics are kept.
#
# With --tls the anchor is the same cluster over plain HTTP instead of one node, and the
# profiled cluster speaks TLS to the client and mutual TLS between its nodes (scripts/cluster.sh
# up --tls, certificates from scripts/dev-certs.sh, the public API open as in tls-cost.sh): the
# table says where what TLS costs goes (docs/performance.md, "TLS").
#
#   scripts/profile-cluster.sh [--nodes N] [--replicas ACK/FROM] [--tls] [--rate R]
#     defaults: --nodes 3 --replicas 2/3
#
# With --rate R the profiled run is R PUTs a second (wrk2, 16 connections) instead of the closed
# loop (the warm-up stays one): the CPU per request at a low rate, where what the nodes do
# without requests (timers, heartbeats, the JIT, the collector) weighs, as in the YCSB report's
# fixed-rate runs (docs/performance.md, goal 5). Needs wrk2 (scripts/lib/wrk-tool.sh finds it).
#
# Environment: QKV_WARMUP (60s), QKV_DURATION (20s), QKV_BASE_PORT (18881), QKV_JAR (the build;
# default service/target/quorumkv.jar), QKV_ASYNC_PROFILER_LIB (else async-profiler is fetched
# from Maven Central). Needs `./mvnw -DskipTests package` first and wrk. Output:
# run/profile-cluster/<time>/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLUSTER="$ROOT/scripts/cluster.sh"
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
warmup="${QKV_WARMUP:-60s}"
duration="${QKV_DURATION:-20s}"
port="${QKV_BASE_PORT:-18881}"
nodes=3
replicas=2/3
tls=0
rate=""
out="$ROOT/run/profile-cluster/$(date -u +%Y%m%dT%H%M%SZ)"
work="$(mktemp -d "${TMPDIR:-/tmp}/quorumkv-profile-cluster.XXXXXX")"
export QKV_KEYS="${QKV_KEYS:-100000}" QKV_VALUE_SIZE="${QKV_VALUE_SIZE:-100}" QKV_THREADS=1

die() {
  echo "profile-cluster: $*" >&2
  exit 1
}
log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }
# shellcheck source=scripts/lib/profiler.sh
. "$ROOT/scripts/lib/profiler.sh"

while [ $# -gt 0 ]; do
  case "$1" in
    --nodes)
      [ $# -ge 2 ] && [[ "$2" =~ ^[2-9]$ ]] || die "--nodes takes 2 to 9"
      nodes="$2"
      shift 2
      ;;
    --replicas)
      [ $# -ge 2 ] && [[ "$2" =~ ^[1-9]/[1-9]$ ]] || die "--replicas takes ACK/FROM, such as 2/3"
      replicas="$2"
      shift 2
      ;;
    --tls)
      tls=1
      shift
      ;;
    --rate)
      [ $# -ge 2 ] && [[ "$2" =~ ^[1-9][0-9]*$ ]] || die "--rate takes requests a second, such as 400"
      rate="$2"
      shift 2
      ;;
    *) die "usage: scripts/profile-cluster.sh [--nodes N] [--replicas ACK/FROM] [--tls] [--rate R]" ;;
  esac
done
command -v wrk >/dev/null || die "wrk is not installed (apt-get install wrk)"
if [ -n "$rate" ]; then
  # shellcheck source=scripts/lib/wrk-tool.sh
  . "$ROOT/scripts/lib/wrk-tool.sh"
  QKV_TOOL=wrk2 detect_wrk_tool || die "--rate needs wrk2 (docs/load-testing.md)"
fi
cleanup() {
  "$CLUSTER" down --dir "$work/one" >/dev/null 2>&1 || true
  "$CLUSTER" down --dir "$work/cluster" >/dev/null 2>&1 || true
  "$CLUSTER" down --dir "$work/plain" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$out"
ensure_profiler

# The replica streams' counters of node 1 (its management URL, the first of DIR/management).
stream_counters() {
  curl -sfk "$(head -1 "$1/management")/actuator/prometheus" |
    awk '/^quorumkv_replica_requests_seconds_count\{.*op="upsert".*outcome="success"/ { ops += $NF }
         /^quorumkv_replica_stream_chunks_total/ { chunks += $NF }
         END { printf "%d %d\n", ops, chunks }'
}

# profile LABEL DIR REPLICAS: warm-up, then the profiled run with every node of DIR profiled
profile() {
  local label="$1" dir="$2" url pid i
  url="$(head -1 "$2/nodes")"
  export QKV_REPLICAS="$3"
  local -a pids=()
  for i in $(seq 1 "$(wc -l <"$dir/nodes")"); do pids+=("$(cat "$dir/node$i/node.pid")"); done
  log "$label: warm-up $warmup"
  wrk -t1 -c64 -d"$warmup" -s "$ROOT/scripts/wrk2/put.lua" "$url" >"$out/$label-warmup.txt" 2>&1
  for pid in "${pids[@]}"; do
    profiler_command "$pid" "start,event=cpu,interval=1ms" >>"$out/$label-profiler.log" ||
      die "async-profiler did not start in $label (see $out/$label-profiler.log)"
  done
  [ "$label" = one ] || stream_counters "$dir" >"$out/$label-streams-before.txt"
  log "$label: $duration profiled${rate:+ at $rate requests a second}"
  if [ -n "$rate" ]; then
    "$WRK_BIN" -t1 -c16 -d"$duration" -R"$rate" -s "$ROOT/scripts/wrk2/put.lua" "$url" >"$out/$label-profiled.txt" 2>&1
  else
    wrk -t1 -c64 -d"$duration" -s "$ROOT/scripts/wrk2/put.lua" "$url" >"$out/$label-profiled.txt" 2>&1
  fi
  [ "$label" = one ] || stream_counters "$dir" >"$out/$label-streams-after.txt"
  i=1
  for pid in "${pids[@]}"; do
    profiler_command "$pid" "stop,file=$out/$label-node$i.collapsed,collapsed" >>"$out/$label-profiler.log" ||
      die "async-profiler did not stop in $label"
    i=$((i + 1))
  done
}
rps() { awk '/^Requests\/sec:/ { printf "%d", $2 }' "$out/$1.txt"; }
requests() { awk '/requests in/ { print $1 }' "$out/$1.txt"; }

if [ "$tls" = 1 ]; then
  "$ROOT/scripts/dev-certs.sh" ca "$work/ca" >/dev/null
  "$ROOT/scripts/dev-certs.sh" node "$work/ca" "$work/certs" node profile-cluster >/dev/null
  log "$nodes nodes (LSM) on ports $port.., plain HTTP"
  "$CLUSTER" up --insecure --nodes "$nodes" --backend lsm --base-port "$port" --dir "$work/plain" >/dev/null
  profile plain "$work/plain" "$replicas"
  "$CLUSTER" down --dir "$work/plain" >/dev/null
  log "$nodes nodes (LSM) on ports $port.., TLS and mutual TLS between the nodes"
  QKV_NODE_ARGS="--quorumkv.security.public-api=open" "$CLUSTER" up --tls "$work/certs" --nodes "$nodes" \
    --backend lsm --base-port "$port" --dir "$work/cluster" >/dev/null
  profile cluster "$work/cluster" "$replicas"
  "$CLUSTER" down --dir "$work/cluster" >/dev/null
  base=plain
  cat "$out"/plain-node*.collapsed >"$out/plain-all.collapsed"
  anchor="plain ($nodes nodes)=$out/plain-all.collapsed"
  title="$nodes nodes at $replicas with TLS against the same over plain HTTP"
else
  log "one node (LSM) on port $port"
  "$CLUSTER" up --insecure --nodes 1 --backend lsm --base-port "$port" --dir "$work/one" >/dev/null
  profile one "$work/one" ""
  "$CLUSTER" down --dir "$work/one" >/dev/null
  log "$nodes nodes (LSM) on ports $port.."
  "$CLUSTER" up --insecure --nodes "$nodes" --backend lsm --base-port "$port" --dir "$work/cluster" >/dev/null
  profile cluster "$work/cluster" "$replicas"
  "$CLUSTER" down --dir "$work/cluster" >/dev/null
  base=one
  anchor="one=$out/one-node1.collapsed"
  title="$nodes nodes at $replicas against one node"
fi

read -r ops0 chunks0 <"$out/cluster-streams-before.txt"
read -r ops1 chunks1 <"$out/cluster-streams-after.txt"
{
  echo "# $title, PUT, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  if [ -n "$rate" ]; then
    echo -n "$rate requests a second to node 1 (wrk2 -t1 -c16) after a closed-loop warm-up,"
  else
    echo -n "Closed loop to node 1, wrk -t1 -c64,"
  fi
  echo " PUTs of $QKV_VALUE_SIZE-byte values over $QKV_KEYS keys, warm-up $warmup," \
    "then $duration with async-profiler (cpu, 1 ms) on every node. Requests per second, profiled:" \
    "$base $(rps "$base-profiled"), $nodes nodes$([ "$tls" = 1 ] && echo " with TLS") $(rps cluster-profiled)." \
    "Node 1's replica streams: $((ops1 - ops0)) operations in $((chunks1 - chunks0)) chunks" \
    "($(awk -v o=$((ops1 - ops0)) -v c=$((chunks1 - chunks0)) 'BEGIN { printf "%.1f", (c > 0) ? o / c : 0 }') per chunk)."
  echo
  args=("$anchor:$(requests "$base-profiled")")
  for i in $(seq 1 "$nodes"); do args+=("node$i=$out/cluster-node$i.collapsed:$(requests cluster-profiled)"); done
  python3 "$ROOT/scripts/lib/profile-compare.py" --sum "$nodes nodes" "${args[@]}"
} >"$out/summary.md"
cat "$out/summary.md"
