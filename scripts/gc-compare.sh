#!/usr/bin/env bash
# Collectors and their settings on one LSM node with a large data set (issue 55, item 5): for
# each variant, the node starts with those JVM options on a fresh copy of the same data folder,
# takes PUTs of uniform random keys of the key space at a constant rate (wrk2 -t1 -c32, its
# corrected latencies) for --warmup seconds, then for --seconds measured; reported per variant:
# p99 / p99.9 / max, the rate reached, the JVM's stops (safepoints, a collector's pauses among
# them: count, sum, longest, from its own log), allocation stalls (ZGC) and the CPU the node used
# over warm-up and run.
# Variants run one after another: compare them as ratios within one run. A variant may name a
# jar of its own ("NAME|JVM OPTIONS|JAR": another build, A/B against this one; a name may recur,
# as in A B A B).
#
#   scripts/gc-compare.sh [--keys N] [--rate R] [--warmup S] [--seconds S] [--port P]
#                         [--data DIR] [--compact-at S] "NAME|JVM OPTIONS[|JAR]" ...
#     --keys N    the key count (default 10000000); loaded once with io.quorumkv.bench.LsmLoader
#                 (100-byte values, random order) unless --data names a folder that holds them
#     --data DIR  a folder with data/ loaded for --keys (kept; each variant runs on a copy)
#     --compact-at S  S seconds into the measured run, asks the node for a full compaction
#                 (POST /actuator/quorumkv/compact, with an admin API key made for the run):
#                 a compaction's CPU beside the requests, as on a node with a large backlog
#     defaults: --rate 10000 --warmup 60 --seconds 90 --port 18795
#   e.g. scripts/gc-compare.sh "g1|-Xmx1g -XX:+UseG1GC" "zgc|-Xmx1g -XX:+UseZGC"
#
# Needs service/target/quorumkv.jar, jmh/target/benchmarks.jar and wrk2 (QKV_WRK2, or on PATH).
# Copies go under ${TMPDIR:-/tmp} and are deleted. Output: run/gc-compare/<time>/ (table.md,
# and per variant the wrk2 outputs, the node's log and its GC and safepoint log).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
keys=10000000
rate=10000
warmup=60
seconds=90
port=18795
data=""
compact_at=""
while [ $# -gt 0 ]; do
  case "$1" in
    --keys) keys="${2:?}"; shift 2 ;;
    --rate) rate="${2:?}"; shift 2 ;;
    --warmup) warmup="${2:?}"; shift 2 ;;
    --seconds) seconds="${2:?}"; shift 2 ;;
    --port) port="${2:?}"; shift 2 ;;
    --data) data="${2:?}"; shift 2 ;;
    --compact-at) compact_at="${2:?}"; shift 2 ;;
    --*) echo "gc-compare.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "gc-compare.sh: name at least one variant, \"NAME|JVM OPTIONS\"" >&2; exit 2; }
for f in "$ROOT/service/target/quorumkv.jar" "$ROOT/jmh/target/benchmarks.jar"; do
  [ -f "$f" ] || { echo "gc-compare.sh: build $f first" >&2; exit 1; }
done
# shellcheck source=scripts/lib/wrk-tool.sh
. "$ROOT/scripts/lib/wrk-tool.sh"
# shellcheck source=scripts/lib/lsm-node.sh
. "$ROOT/scripts/lib/lsm-node.sh"
QKV_TOOL=wrk2 detect_wrk_tool || exit 1

out="$ROOT/run/gc-compare/$(date -u +%Y%m%dT%H%M%SZ)"
work="$(mktemp -d "${TMPDIR:-/tmp}/quorumkv-gc.XXXXXX")"
mkdir -p "$out"
node_pid=""
compactor=""
cleanup() {
  [ -n "$compactor" ] && kill "$compactor" 2>/dev/null || true
  [ -n "$node_pid" ] && kill -9 "$node_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$out/summary.txt" >&2; }
url="http://127.0.0.1:$port"
admin_key="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

{
  echo "commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%FT%TZ)"
  echo "nproc $(nproc), load average $(cut -d' ' -f1-3 /proc/loadavg), autogroup $(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null || echo ?)"
  echo "command: scripts/gc-compare.sh --keys $keys --rate $rate --warmup $warmup --seconds $seconds${compact_at:+ --compact-at $compact_at} $(printf '"%s" ' "$@")"
  echo "load generator: $WRK_VERSION"
} >"$out/summary.txt"

if [ -z "$data" ]; then
  data="$work/source"
  log "loading $keys keys (LsmLoader)"
  "$JAVA" -cp "$ROOT/jmh/target/benchmarks.jar" io.quorumkv.bench.LsmLoader "$data/data" "$keys" 100 random \
    >"$out/loader.log" 2>&1
fi
[ -d "$data/data" ] || { echo "gc-compare.sh: $data holds no data folder" >&2; exit 1; }

echo "| variant | JVM options | jar | rate | p99 / p99.9 / max ms | safepoints | their sum ms | longest ms | allocation stalls | node CPU s |" >"$out/table.md"
echo "|---|---|---|---:|---:|---:|---:|---:|---:|---:|" >>"$out/table.md"
for variant in "$@"; do
  name="${variant%%|*}"
  rest="${variant#*|}"
  jar="$ROOT/service/target/quorumkv.jar"
  if [ "$rest" != "${rest#*|}" ]; then
    jar="${rest#*|}"
    rest="${rest%%|*}"
  fi
  [ -f "$jar" ] || { echo "gc-compare.sh: no jar $jar (variant $name)" >&2; exit 1; }
  read -r -a opts <<<"$rest"
  node_opts=("${opts[@]}")
  if [ -n "$compact_at" ]; then
    node_opts+=("-Dmanagement.endpoints.web.exposure.include=health,metrics,prometheus,quorumkv"
      "-Dquorumkv.security.api-keys.bench.sha256=$(printf '%s' "$admin_key" | sha256sum | cut -c1-64)"
      "-Dquorumkv.security.api-keys.bench.access=admin")
  fi
  n=1
  while [ -e "$out/$name-node.log" ]; do
    n=$((n + 1))
    name="${variant%%|*}-$n"
  done
  rm -rf "$work/node"
  cp -a "$data" "$work/node"
  LSM_NODE_JAR="$jar" start_lsm_node "$port" "$work/node" "$out/$name-node.log" "$out/$name-jvm.log" "${node_opts[@]}"
  node_pid="$LSM_NODE_PID"
  log "$name: ${opts[*]}: ${warmup}s of warm-up, then ${seconds}s at $rate PUT/s"
  before="$(ticks "$node_pid")"
  QKV_KEYS="$keys" "$WRK_BIN" -t1 -c32 -d"${warmup}s" -R"$rate" --latency -s "$ROOT/scripts/wrk2/put.lua" "$url" \
    >"$out/$name-warmup.txt" 2>&1
  lines_before="$(wc -l <"$out/$name-jvm.log")"
  compactor=""
  if [ -n "$compact_at" ]; then
    (
      sleep "$compact_at"
      curl -sS -X POST -H "Authorization: Bearer $admin_key" -H 'Content-Type: application/json' -d '{}' \
        -w ' %{http_code} %{time_total}s\n' "$url/actuator/quorumkv/compact" >"$out/$name-compact.txt" 2>&1
    ) &
    compactor=$!
  fi
  QKV_KEYS="$keys" "$WRK_BIN" -t1 -c32 -d"${seconds}s" -R"$rate" --latency -s "$ROOT/scripts/wrk2/put.lua" "$url" \
    >"$out/$name.txt" 2>&1
  if [ -n "$compactor" ]; then
    wait "$compactor" || true
    compactor=""
    log "$name: the compaction asked ${compact_at}s in answered $(tail -c 200 "$out/$name-compact.txt")"
  fi
  cpu="$(awk -v a="$before" -v b="$(ticks "$node_pid")" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.0f", (b - a) / hz }')"
  stop_lsm_node
  node_pid=""
  # The measured run only: the log's lines after the warm-up's. Every stop of the world is a
  # safepoint (a collector's pause among them), whatever the collector.
  tail -n +"$((lines_before + 1))" "$out/$name-jvm.log" >"$out/$name-jvm-run.log"
  pauses="$(awk '/Safepoint ".*Total: [0-9]+ ns/ { v = $0; sub(/.*Total: /, "", v); sub(/ ns.*/, "", v)
    n++; s += v; if (v + 0 > m) m = v + 0 } END { printf "%d | %.0f | %.1f", n, s / 1e6, m / 1e6 }' "$out/$name-jvm-run.log")"
  stalls="$(grep -c 'Allocation Stall' "$out/$name-jvm-run.log" || true)"
  printf '| %s | `%s` | %s | %s | %s / %s / %s | %s | %s | %s |\n' "$name" "${opts[*]}" "${jar#"$ROOT"/}" "$(wrk_rps "$out/$name.txt")" \
    "$(wrk_pct "$out/$name.txt" 99)" "$(wrk_pct "$out/$name.txt" 99.9)" "$(wrk_pct "$out/$name.txt" 100)" \
    "$pauses" "$stalls" "$cpu" >>"$out/table.md"
  tail -n 1 "$out/table.md" >&2
done
cat "$out/table.md"
log "results in $out"
