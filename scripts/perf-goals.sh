#!/usr/bin/env bash
# Measures the goals of docs/performance.md in one run on this machine, against two baselines
# under the same load: the bare WebFlux server (io.quorumkv.bench.baseline.WebFluxBaselineServer:
# Spring Boot, one functional endpoint over a map; the limit of the framework the node is built
# on) and the bare Reactor Netty server (io.quorumkv.bench.baseline.BaselineServer: the HTTP
# stack under it).
#
#   1. single node (LSM, 100-byte values), closed-loop PUT and GET throughput (wrk) vs the
#      WebFlux baseline (goal >= 0.9), and vs bare Reactor Netty (reported)
#   2. single node at a constant rate of half its own PUT maximum (wrk2): p99 vs the WebFlux
#      baseline's at that rate (goal <= 2x)
#   3. three nodes at 2/3: closed-loop PUT throughput vs the single node (goal >= 0.8)
#   4. three nodes at 2/3 at half their maximum (wrk2): p99 (goal <= 3 ms, and at most 2x the WebFlux
#      baseline's p99 at the same rate, the machine's floor)
#   5. three nodes at 3/3, closed loop: timeouts and non-2xx (goal: none)
#
# QKV_OLD_JAR=<another build's quorumkv.jar> also measures that build in the same run (closed-loop
# single-node PUT and GET, three nodes 2/3), alternated with this one, so that the two builds'
# figures share one hour of the machine. QKV_MAIN_JAR=<a third build> measures that one's three
# nodes at 2/3 too (closed-loop PUT), right after this build's.
#
# Needs the build (./mvnw -DskipTests package: service/target/quorumkv.jar and
# jmh/target/benchmarks.jar), wrk, and wrk2 for the constant-rate steps (QKV_WRK2 or `wrk2` on
# PATH; see docs/load-testing.md). Raw outputs and summary.md go to run/perf/<time>/.
#
#   scripts/perf-goals.sh      QKV_DURATION=30s QKV_RATE_DURATION=45s QKV_CONNS=64 QKV_WARMUP=120s
#                              QKV_THREE_WARMUP=180s QKV_AOT=1
#
# Every server is warmed under the closed-loop PUT load, in steps of 10 s, until its JIT compiler
# threads took under 2% of its CPU over a step (scripts/lib/jit-share.sh), at most QKV_WARMUP
# (QKV_THREE_WARMUP for three nodes: three JVMs compile on the same two cores); the time each
# took is in the summary. QKV_AOT=1 starts this build's nodes with an AOT cache trained by serving
# (scripts/cluster.sh up --aot).
#                              QKV_JAVA_OPTS (node JVM options, default "-Xms1g -Xmx1g -XX:+UseG1GC -XX:MaxTenuringThreshold=2 -XX:MaxGCPauseMillis=10")
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLUSTER="$ROOT/scripts/cluster.sh"
# shellcheck source=scripts/lib/wrk-tool.sh
. "$ROOT/scripts/lib/wrk-tool.sh"
# shellcheck source=scripts/lib/jit-share.sh
. "$ROOT/scripts/lib/jit-share.sh"
duration="${QKV_DURATION:-30s}"
rate_duration="${QKV_RATE_DURATION:-45s}"
warmup="${QKV_WARMUP:-120s}"
three_warmup="${QKV_THREE_WARMUP:-180s}"
conns="${QKV_CONNS:-64}"
export QKV_KEYS="${QKV_KEYS:-100000}" QKV_VALUE_SIZE="${QKV_VALUE_SIZE:-100}"
base_port="${QKV_BASE_PORT:-18481}"
baseline_port=$((base_port + 9))
webflux_port=$((base_port + 8))
old_jar="${QKV_OLD_JAR:-}"
main_jar="${QKV_MAIN_JAR:-}"
out="$ROOT/run/perf/$(date -u +%Y%m%dT%H%M%SZ)"
work="$(mktemp -d "${TMPDIR:-/tmp}/quorumkv-perf.XXXXXX")"
mkdir -p "$out"
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
baseline_pid=""
webflux_pid=""

cleanup() {
  [ -z "$baseline_pid" ] || kill "$baseline_pid" 2>/dev/null || true
  [ -z "$webflux_pid" ] || kill "$webflux_pid" 2>/dev/null || true
  "$CLUSTER" down --dir "$work/single" >/dev/null 2>&1 || true
  "$CLUSTER" down --dir "$work/three" >/dev/null 2>&1 || true
  "$CLUSTER" down --dir "$work/old-single" >/dev/null 2>&1 || true
  "$CLUSTER" down --dir "$work/old-three" >/dev/null 2>&1 || true
  "$CLUSTER" down --dir "$work/main-three" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }
WRK=$(command -v wrk)
QKV_TOOL=wrk2 detect_wrk_tool || exit 1
WRK2="$WRK_BIN"
[ -f "$ROOT/jmh/target/benchmarks.jar" ] || { echo "jmh/target/benchmarks.jar is missing: ./mvnw -DskipTests package" >&2; exit 1; }

log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

# closed LABEL URL SCRIPT REPLICAS DURATION: closed-loop wrk, raw output kept
closed() {
  log "$1: wrk -c$conns -d$5 $3 ${4:+replicas=$4}"
  QKV_REPLICAS="$4" "$WRK" -t1 -c"$conns" -d"$5" --latency -s "$ROOT/scripts/wrk2/$3" "$2" >"$out/$1.txt" 2>&1
}

# paced LABEL URL SCRIPT REPLICAS RATE: wrk2 at a constant rate, raw output kept
paced() {
  log "$1: wrk2 -R$5 -c$conns -d$rate_duration $3 ${4:+replicas=$4}"
  QKV_REPLICAS="$4" "$WRK2" -t1 -c"$conns" -d"$rate_duration" -R"$5" --u_latency -s "$ROOT/scripts/wrk2/$3" "$2" \
    >"$out/$1.txt" 2>&1
}

rps() { wrk_rps "$out/$1.txt"; }

# steady LABEL URL SCRIPT REPLICAS MAX PID...: closed-loop load in steps of 10 s until the JIT's
# share of the processes' CPU is under 2%, at most MAX; "LABEL SECONDS SHARE" goes to steady.txt.
steady() {
  local label="$1" url="$2" script="$3" replicas="$4" max="${5%s}"
  shift 5
  JIT_PIDS="$*"
  echo "$label $(warm_until_steady 10 "$max" closed_step "$label" "$url" "$script" "$replicas")" >>"$out/steady.txt"
}

closed_step() { closed "$1-$5" "$2" "$3" "$4" 10s; }

# pids DIR: the node processes of a cluster started by cluster.sh
pids() { cat "$1"/node*/node.pid | paste -sd' ' -; }

# warmed LABEL: "N s (JIT x%)" from steady.txt
warmed() { awk -v l="$1" '$1 == l { printf "%s s (JIT %s%%)", $2, $3 }' "$out/steady.txt"; }

# pct LABEL P: a latency percentile in ms
pct() { wrk_pct "$out/$1.txt" "$2"; }

errors() {
  awk '/Non-2xx/ { n += $NF } /Socket errors/ { gsub(",", ""); for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) n += $i }
    END { printf "%d", n }' "$out/$1.txt"
}

# event_loops DIR: the event loops per node of a cluster started by cluster.sh (its nodes' ready
# lines; cluster.sh gives each node one per core: docs/operations.md, "Event loops")
event_loops() {
  { grep -ho 'event loops [0-9]*' "$1"/node*/node.log || true; } | awk '{ print $3 }' | sort -u | paste -sd/ -
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else printf "n/a" }'; }

log "output: $out"
speed_before="$(host_speed)"
log "host speed check: $speed_before"
# start_baseline: the bare Reactor Netty server on $baseline_port, once it answers
start_baseline() {
  log "bare Reactor Netty baseline on port $baseline_port"
  "$JAVA" -Xmx1g -XX:+UseG1GC -cp "$ROOT/jmh/target/benchmarks.jar" io.quorumkv.bench.baseline.BaselineServer \
    "$baseline_port" >>"$out/baseline.log" 2>&1 &
  baseline_pid=$!
  wait_answers "$baseline_port"
}

stop_baseline() {
  kill "$baseline_pid" 2>/dev/null || true
  baseline_pid=""
}

# start_webflux: the bare WebFlux baseline on $webflux_port, once it answers
start_webflux() {
  log "bare WebFlux baseline on port $webflux_port"
  "$JAVA" -Xmx1g -XX:+UseG1GC -cp "$ROOT/jmh/target/benchmarks.jar" io.quorumkv.bench.baseline.WebFluxBaselineServer \
    "$webflux_port" >>"$out/webflux.log" 2>&1 &
  webflux_pid=$!
  wait_answers "$webflux_port"
}

stop_webflux() {
  kill "$webflux_pid" 2>/dev/null || true
  webflux_pid=""
}

wait_answers() {
  for _ in $(seq 1 120); do curl -sf -o /dev/null "http://127.0.0.1:$1/v0/entity?id=x" -X PUT -d x && return; sleep 0.5; done
  echo "nothing answers on port $1" >&2
  exit 1
}

# single JAR DIR: a single node of the given build, up
single() {
  log "single node (LSM) on port $base_port${1:+ ($1)}"
  QKV_JAR="${1:-}" "$CLUSTER" up --insecure --nodes 1 --backend lsm --base-port "$base_port" --dir "$2" $(aot "${1:-}") >/dev/null
}

# aot JAR: --aot for this build's clusters when QKV_AOT=1 (other builds may have no training mode)
aot() { [ "${QKV_AOT:-0}" = 1 ] && [ -z "$1" ] && echo --aot || true; }

W="http://127.0.0.1:$webflux_port"
B="http://127.0.0.1:$baseline_port"
S="http://127.0.0.1:$base_port"

start_webflux
start_baseline
single "" "$work/single"
loops_single="$(event_loops "$work/single")"
steady warm-webflux "$W" put.lua "" "$warmup" "$webflux_pid"
steady warm-baseline "$B" put.lua "" "$warmup" "$baseline_pid"
steady warm-single "$S" put.lua "" "$warmup" $(pids "$work/single")
closed webflux-put "$W" put.lua "" "$duration"
closed baseline-put "$B" put.lua "" "$duration"
closed single-put "$S" put.lua "" "$duration"
closed warm-webflux-get "$W" get.lua "" 10s
closed warm-baseline-get "$B" get.lua "" 10s
closed warm-single-get "$S" get.lua "" 10s
closed webflux-get "$W" get.lua "" "$duration"
closed baseline-get "$B" get.lua "" "$duration"
closed single-get "$S" get.lua "" "$duration"
half=$(($(rps single-put) / 2))
paced webflux-put-half "$W" put.lua "" "$half"
paced single-put-half "$S" put.lua "" "$half"
stop_baseline
"$CLUSTER" down --dir "$work/single" >/dev/null
if [ -n "$old_jar" ]; then
  single "$old_jar" "$work/old-single"
  steady warm-old-single "$S" put.lua "" "$warmup" $(pids "$work/old-single")
  closed old-single-put "$S" put.lua "" "$duration"
  closed warm-old-single-get "$S" get.lua "" 10s
  closed old-single-get "$S" get.lua "" "$duration"
  "$CLUSTER" down --dir "$work/old-single" >/dev/null
  # this build again right after the old one, so that the pair shares an hour
  single "" "$work/single"
  steady warm-single-2 "$S" put.lua "" "$warmup" $(pids "$work/single")
  closed single-put-2 "$S" put.lua "" "$duration"
  closed warm-single-get-2 "$S" get.lua "" 10s
  closed single-get-2 "$S" get.lua "" "$duration"
  "$CLUSTER" down --dir "$work/single" >/dev/null
fi

stop_webflux
log "three nodes (LSM) on ports $base_port.."
"$CLUSTER" up --insecure --nodes 3 --backend lsm --base-port "$base_port" --dir "$work/three" $(aot "") >/dev/null
loops_three="$(event_loops "$work/three")"
steady warm-three "$S" put.lua 2/3 "$three_warmup" $(pids "$work/three")
closed three-put-2of3 "$S" put.lua 2/3 "$duration"
three_half=$(($(rps three-put-2of3) / 2))
paced three-put-2of3-half "$S" put.lua 2/3 "$three_half"
closed three-put-3of3 "$S" put.lua 3/3 "$duration"
closed three-get-2of3 "$S" get.lua 2/3 "$duration"
"$CLUSTER" down --dir "$work/three" >/dev/null
if [ -n "$main_jar" ]; then
  log "three nodes of $main_jar"
  QKV_JAR="$main_jar" "$CLUSTER" up --insecure --nodes 3 --backend lsm --base-port "$base_port" --dir "$work/main-three" >/dev/null
  steady warm-main-three "$S" put.lua 2/3 "$three_warmup" $(pids "$work/main-three")
  closed main-three-put-2of3 "$S" put.lua 2/3 "$duration"
  "$CLUSTER" down --dir "$work/main-three" >/dev/null
fi
if [ -n "$old_jar" ]; then
  log "three nodes of $old_jar"
  QKV_JAR="$old_jar" "$CLUSTER" up --insecure --nodes 3 --backend lsm --base-port "$base_port" --dir "$work/old-three" >/dev/null
  steady warm-old-three "$S" put.lua 2/3 "$three_warmup" $(pids "$work/old-three")
  closed old-three-put-2of3 "$S" put.lua 2/3 "$duration"
  "$CLUSTER" down --dir "$work/old-three" >/dev/null
fi
# The machine's floor at goal 4's rate: the WebFlux baseline (one JVM, no replication) under the
# same constant-rate load as the three nodes' p99 was measured at.
start_webflux
steady warm-webflux-three "$W" put.lua "" "$warmup" "$webflux_pid"
paced webflux-put-three-half "$W" put.lua "" "$three_half"
stop_webflux
speed_after="$(host_speed)"

{
  echo "# Performance goals, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "Machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%d GiB", $2 / 1048576 }' /proc/meminfo); $("$JAVA" -version 2>&1 | head -n 1);" \
    "load generator on the same cores. Closed loop: wrk -t1 -c$conns -d$duration; constant rate: wrk2 -t1 -c$conns -d$rate_duration; each server warmed until its JIT took under 2% of its CPU over 10 s (at most $warmup, $three_warmup for three nodes$([ "${QKV_AOT:-0}" = 1 ] && echo '; this build with an AOT cache trained by serving'))" \
    "(first ~10 s are calibration); $QKV_VALUE_SIZE-byte values, $QKV_KEYS keys; event loops per node: $loops_single (single" \
    "node), $loops_three (three nodes), one per core for the WebFlux baseline, Reactor Netty's default for the bare one. Command: \`scripts/perf-goals.sh\`."
  echo
  echo "| Goal | WebFlux baseline | QuorumKV | Ratio | Target | bare Reactor Netty | QuorumKV / Reactor Netty |"
  echo "|---|---|---|---|---|---|---|"
  echo "| 1. PUT closed loop (rps) | $(rps webflux-put) | $(rps single-put) | $(ratio "$(rps single-put)" "$(rps webflux-put)") | ≥ 0.9 | $(rps baseline-put) | $(ratio "$(rps single-put)" "$(rps baseline-put)") |"
  echo "| 1. GET closed loop (rps) | $(rps webflux-get) | $(rps single-get) | $(ratio "$(rps single-get)" "$(rps webflux-get)") | ≥ 0.9 | $(rps baseline-get) | $(ratio "$(rps single-get)" "$(rps baseline-get)") |"
  echo "| 2. PUT at $half rps (half the single node's maximum): p99 (ms) | $(pct webflux-put-half 99) | $(pct single-put-half 99) | $(ratio "$(pct single-put-half 99)" "$(pct webflux-put-half 99)") | ≤ 2 | | |"
  echo "| 2. same: p99.9 (ms), achieved rps | $(pct webflux-put-half 99.9), $(rps webflux-put-half) | $(pct single-put-half 99.9), $(rps single-put-half) | | reported | | |"
  echo "| 3. 3 nodes 2/3 PUT closed loop (rps) vs single node | $(rps single-put) | $(rps three-put-2of3) | $(ratio "$(rps three-put-2of3)" "$(rps single-put)") | ≥ 0.8 | | |"
  echo "| 4. 3 nodes 2/3 PUT at $three_half rps: p99 (ms); the WebFlux baseline at that rate | $(pct webflux-put-three-half 99) | $(pct three-put-2of3-half 99) | $(ratio "$(pct three-put-2of3-half 99)" "$(pct webflux-put-three-half 99)") | ≤ 3 ms and ≤ 2 | | |"
  echo "| 4. same: p50 / p90 / p99.9 (ms), achieved rps | $(pct webflux-put-three-half 50) / $(pct webflux-put-three-half 90) / $(pct webflux-put-three-half 99.9), $(rps webflux-put-three-half) | $(pct three-put-2of3-half 50) / $(pct three-put-2of3-half 90) / $(pct three-put-2of3-half 99.9), $(rps three-put-2of3-half) | | reported | | |"
  echo "| 5. 3 nodes 3/3 PUT closed loop: rps, errors + non-2xx | | $(rps three-put-3of3), $(errors three-put-3of3) | | 0 | | |"
  echo "| 3 nodes 2/3 GET closed loop: rps, p99 (ms) | | $(rps three-get-2of3), $(pct three-get-2of3 99) | | reported | | |"
  if [ -n "$old_jar" ]; then
    echo
    echo "This build against \`$old_jar\` in the same run (closed loop, rps; this build measured before and right after it):"
    echo
    echo "| measure | this build (first, second) | other build | ratio (mean of this build / other) |"
    echo "|---|---|---|---|"
    echo "| single node PUT | $(rps single-put), $(rps single-put-2) | $(rps old-single-put) | $(ratio "$(( ($(rps single-put) + $(rps single-put-2)) / 2 ))" "$(rps old-single-put)") |"
    echo "| single node GET | $(rps single-get), $(rps single-get-2) | $(rps old-single-get) | $(ratio "$(( ($(rps single-get) + $(rps single-get-2)) / 2 ))" "$(rps old-single-get)") |"
    echo "| three nodes 2/3 PUT | $(rps three-put-2of3) | $(rps old-three-put-2of3) | $(ratio "$(rps three-put-2of3)" "$(rps old-three-put-2of3)") |"
  fi
  if [ -n "$main_jar" ]; then
    echo
    echo "| measure | this build | \`$main_jar\` | ratio |"
    echo "|---|---|---|---|"
    echo "| three nodes 2/3 PUT against \`$main_jar\` | $(rps three-put-2of3) | $(rps main-three-put-2of3) | $(ratio "$(rps three-put-2of3)" "$(rps main-three-put-2of3)") |"
  fi
  echo
  echo "Closed-loop latency (p50 / p99 ms): baseline PUT $(pct baseline-put 50) / $(pct baseline-put 99)," \
    "single PUT $(pct single-put 50) / $(pct single-put 99), baseline GET $(pct baseline-get 50) / $(pct baseline-get 99)," \
    "single GET $(pct single-get 50) / $(pct single-get 99), 3 nodes 2/3 PUT $(pct three-put-2of3 50) / $(pct three-put-2of3 99)." \
    "Errors (socket errors + non-2xx): single PUT $(errors single-put), GET $(errors single-get); 3 nodes 2/3 PUT" \
    "$(errors three-put-2of3), at half rate $(errors three-put-2of3-half)."
  echo
  echo "Warm-up until steady (closed-loop PUT; seconds, and the JIT's share of the last 10 s): WebFlux $(warmed warm-webflux)," \
    "Reactor Netty $(warmed warm-baseline), single node $(warmed warm-single), three nodes $(warmed warm-three)$([ -n "$old_jar" ] && echo ", other build's single node $(warmed warm-old-single), three nodes $(warmed warm-old-three)")$([ -n "$main_jar" ] && echo ", third build's three nodes $(warmed warm-main-three)")."
  echo
  echo "Host speed check (a fixed CPU loop, scripts/lib/wrk-tool.sh host_speed; lower is faster, compare" \
    "runs of one machine only): $speed_before before the run, $speed_after after it."
} >"$out/summary.md"
cat "$out/summary.md"
