#!/usr/bin/env bash
# Server CPU per operation at a constant rate, for A/B comparisons of builds or settings on a busy
# shared machine (docs/performance.md): CPU time per request moves much less with what else runs
# than throughput does. Starts a fresh local cluster of the build (scripts/cluster.sh), warms it
# with a closed-loop PUT load, then sends PUTs at RATE requests/s through node 1 (wrk2) and reports
# the CPU time all node processes spent per request over that run (utime + stime,
# /proc/<pid>/stat), with the achieved rate and p99; last a short closed-loop run's throughput.
#
#   scripts/cpu-per-op.sh LABEL [--nodes N] [--rate R] [--replicas ACK/FROM] [--warmup 60s]
#                         [--duration 40s] [--closed 20s]
#
# Environment: QKV_JAR (the build; default service/target/quorumkv.jar), QKV_NODE_ARGS and
# QKV_JAVA_OPTS (passed to scripts/cluster.sh), QKV_BASE_PORT (18581), QKV_WRK2 (the wrk2 binary).
# 100-byte values over QKV_KEYS (100000) keys, 64 connections. Output: run/cpu-per-op/<LABEL>-*.txt
# and one summary line appended to run/cpu-per-op/summary.txt.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLUSTER="$ROOT/scripts/cluster.sh"
# shellcheck source=scripts/lib/wrk-tool.sh
. "$ROOT/scripts/lib/wrk-tool.sh"
# shellcheck source=scripts/lib/node-cpu.sh
. "$ROOT/scripts/lib/node-cpu.sh"
label="${1:?usage: scripts/cpu-per-op.sh LABEL [--nodes N] [--rate R] [--replicas A/F] [--warmup 60s] [--duration 40s] [--closed 20s]}"
shift
nodes=3 rate=8000 replicas=2/3 warmup=60s duration=40s closed=20s
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) nodes="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --replicas) replicas="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --closed) closed="$2"; shift 2 ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }
QKV_TOOL=wrk2 detect_wrk_tool || exit 1
export QKV_KEYS="${QKV_KEYS:-100000}" QKV_VALUE_SIZE="${QKV_VALUE_SIZE:-100}"
port="${QKV_BASE_PORT:-18581}"
out="$ROOT/run/cpu-per-op"
work="$(mktemp -d "${TMPDIR:-/tmp}/quorumkv-cpu-per-op.XXXXXX")"
mkdir -p "$out"
trap '"$CLUSTER" down --dir "$work" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT

"$CLUSTER" up --insecure --nodes "$nodes" --backend lsm --base-port "$port" --dir "$work" --fresh >/dev/null
url="http://127.0.0.1:$port"
QKV_REPLICAS="$replicas" wrk -t1 -c64 -d"$warmup" -s "$ROOT/scripts/wrk2/put.lua" "$url" >"$out/$label-warmup.txt" 2>&1
before="$(cluster_cpu_ticks "$work")"
QKV_REPLICAS="$replicas" "$WRK_BIN" -t1 -c64 -d"$duration" -R"$rate" --u_latency -s "$ROOT/scripts/wrk2/put.lua" "$url" \
  >"$out/$label-rate.txt" 2>&1
after="$(cluster_cpu_ticks "$work")"
requests="$(awk '/requests in/ { print $1 }' "$out/$label-rate.txt")"
QKV_REPLICAS="$replicas" wrk -t1 -c64 -d"$closed" -s "$ROOT/scripts/wrk2/put.lua" "$url" >"$out/$label-closed.txt" 2>&1
line="$label: $nodes node(s), PUT $replicas at $rate rps: $requests requests, p99 $(wrk_pct "$out/$label-rate.txt" 99) ms,"
line="$line $(cpu_us_per_request "$((after - before))" "$requests") us CPU/request (all nodes); closed loop $(wrk_rps "$out/$label-closed.txt") rps"
echo "$line" | tee -a "$out/summary.txt"
