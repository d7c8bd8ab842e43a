#!/usr/bin/env bash
# Where a single node's PUT (or GET) spends its CPU, against the WebFlux baseline's (goal 1 of
# docs/performance.md): starts one node (LSM, scripts/cluster.sh) and the bare WebFlux server of
# module jmh, and for each: closed-loop PUTs (wrk, 64 connections, 100-byte values) for the
# warm-up, then the same load for the profile with async-profiler on (event=cpu, 1 ms), then
# again with it off. With --op get, every key is written first (scripts/prefill.sh) and the
# warm-up and both runs are GETs of them. The table (scripts/lib/profile-compare.py) gives the
# CPU per request of each part for both; the collapsed stacks and wrk outputs are kept.
#
#   scripts/profile-one-node.sh [--op put|get]
#
# Environment: QKV_WARMUP (60s), QKV_DURATION (20s), QKV_BASE_PORT (18781), QKV_JAR (the build;
# default service/target/quorumkv.jar), QKV_ASYNC_PROFILER_LIB (else async-profiler is fetched
# from Maven Central). Needs `./mvnw -DskipTests package` first (the node's jar and
# jmh/target/benchmarks.jar) and wrk. Output: run/profile-one-node/<time>/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLUSTER="$ROOT/scripts/cluster.sh"
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
warmup="${QKV_WARMUP:-60s}"
duration="${QKV_DURATION:-20s}"
port="${QKV_BASE_PORT:-18781}"
webflux_port=$((port + 8))
out="$ROOT/run/profile-one-node/$(date -u +%Y%m%dT%H%M%SZ)"
work="$(mktemp -d "${TMPDIR:-/tmp}/quorumkv-profile.XXXXXX")"
export QKV_KEYS="${QKV_KEYS:-100000}" QKV_VALUE_SIZE="${QKV_VALUE_SIZE:-100}"
op=put

die() {
  echo "profile-one-node: $*" >&2
  exit 1
}
log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }
# shellcheck source=scripts/lib/profiler.sh
. "$ROOT/scripts/lib/profiler.sh"

while [ $# -gt 0 ]; do
  case "$1" in
    --op)
      [ $# -ge 2 ] && [[ "$2" =~ ^(put|get)$ ]] || die "--op takes put or get"
      op="$2"
      shift 2
      ;;
    *) die "usage: scripts/profile-one-node.sh [--op put|get]" ;;
  esac
done
command -v wrk >/dev/null || die "wrk is not installed (apt-get install wrk)"
[ -f "$ROOT/jmh/target/benchmarks.jar" ] || die "no jmh/target/benchmarks.jar: run ./mvnw -DskipTests package"
webflux_pid=""
cleanup() {
  [ -z "$webflux_pid" ] || kill "$webflux_pid" 2>/dev/null || true
  "$CLUSTER" down --dir "$work/node" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$out"
ensure_profiler

log "one node (LSM) on port $port"
"$CLUSTER" up --insecure --nodes 1 --backend lsm --base-port "$port" --dir "$work/node" >/dev/null
node_pid="$(cat "$work/node/node1/node.pid")"
log "the WebFlux baseline on port $webflux_port"
"$JAVA" -Xmx1g -XX:+UseG1GC -cp "$ROOT/jmh/target/benchmarks.jar" io.quorumkv.bench.baseline.WebFluxBaselineServer \
  "$webflux_port" >"$out/webflux.log" 2>&1 &
webflux_pid=$!
for _ in $(seq 1 120); do
  curl -sf -o /dev/null -X PUT -d x "http://127.0.0.1:$webflux_port/v0/entity?id=x" && break
  sleep 0.5
done

# profile LABEL PORT PID: warm-up, the profiled run, a run without the profiler
profile() {
  local label="$1" url="http://127.0.0.1:$2" pid="$3"
  if [ "$op" = get ]; then
    log "$label: writing the $QKV_KEYS keys"
    "$ROOT/scripts/prefill.sh" "$url" >"$out/$label-prefill.txt" 2>&1 ||
      die "$label: the prefill failed (see $out/$label-prefill.txt)"
  fi
  log "$label: warm-up $warmup"
  wrk -t1 -c64 -d"$warmup" -s "$ROOT/scripts/wrk2/$op.lua" "$url" >"$out/$label-warmup.txt" 2>&1
  log "$label: $duration profiled"
  profiler_command "$pid" "start,event=cpu,interval=1ms" >"$out/$label-profiler.log" ||
    die "async-profiler did not start in $label (see $out/$label-profiler.log)"
  wrk -t1 -c64 -d"$duration" -s "$ROOT/scripts/wrk2/$op.lua" "$url" >"$out/$label-profiled.txt" 2>&1
  profiler_command "$pid" "stop,file=$out/$label.collapsed,collapsed" >>"$out/$label-profiler.log" ||
    die "async-profiler did not stop in $label"
  log "$label: $duration without the profiler"
  wrk -t1 -c64 -d"$duration" -s "$ROOT/scripts/wrk2/$op.lua" "$url" >"$out/$label-after.txt" 2>&1
}
rps() { awk '/^Requests\/sec:/ { printf "%d", $2 }' "$out/$1.txt"; }
requests() { awk '/requests in/ { print $1 }' "$out/$1.txt"; }

profile node "$port" "$node_pid"
profile webflux "$webflux_port" "$webflux_pid"

{
  echo "# One node's ${op^^} against the WebFlux baseline, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "Closed loop, wrk -t1 -c64, ${op^^}s of $QKV_VALUE_SIZE-byte values over $QKV_KEYS keys, warm-up $warmup, then $duration" \
    "with async-profiler (cpu, 1 ms) and $duration without. Requests per second:" \
    "node $(rps node-profiled) profiled, $(rps node-after) without;" \
    "WebFlux $(rps webflux-profiled) profiled, $(rps webflux-after) without (ratio without the profiler:" \
    "$(awk -v a="$(rps node-after)" -v b="$(rps webflux-after)" 'BEGIN { printf "%.2f", a / b }'))."
  echo
  python3 "$ROOT/scripts/lib/profile-compare.py" "node=$out/node.collapsed:$(requests node-profiled)" \
    "webflux=$out/webflux.collapsed:$(requests webflux-profiled)"
} >"$out/summary.md"
cat "$out/summary.md"
