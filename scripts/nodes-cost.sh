#!/usr/bin/env bash
# Measures what a request costs as the cluster grows (docs/performance.md, "More nodes"): for each
# node count, a fresh local cluster with replication factor 3, PUTs and then GETs at one constant
# rate spread over every node (wrk2), and the CPU time all node processes spent per request over
# each measured run (utime + stime, /proc/<pid>/stat). A cost per request that grows with the node
# count would be work that grows with the cluster (gossip, fan-out, per-peer pools); with RF 3 a
# write reaches three replicas whatever the count. Then a short closed-loop PUT run per count:
# its throughput is reported but cannot grow here, as every node shares the same cores.
# Before the measured runs, the nodes' CPU with no load at all for --idle seconds: what every JVM
# costs whatever the rate (collector, compiler, timers of membership, hints and repair); the
# table also gives CPU per request net of that idle cost, which a low rate otherwise inflates.
#
#   scripts/nodes-cost.sh [--nodes "3 5 7"] [--rate 4000 | --per-node R] [--duration 30] [--warmup 20]
#                         [--closed 20] [--idle 20] [--keys 100000] [--conns 105]
#
# --rate is the constant rate of the measured runs (requests/s, over all nodes); --per-node R
# instead runs each count at R requests/s per node (R x nodes over all), the same load on every
# node whatever their number: a request's CPU falls as a node's load rises (more requests per
# wake-up of its event loop), so one rate over more nodes also measures lighter-loaded nodes. --duration their
# length in seconds (wrk2 spends the first ~10 s calibrating: keep it at 30 or more), --warmup an
# unmeasured run at the same rate before them, --closed the closed-loop run's length (0: none).
# --conns is split evenly over one wrk2 thread per node (105 divides by 3, 5 and 7). Requests use
# the server's default replicas (a quorum of RF 3, 2/3) on a key space of --keys keys written
# once first (scripts/prefill.sh), 100-byte values. Environment: QKV_BASE_PORT (18781),
# QKV_JAVA_OPTS and QKV_NODE_ARGS (passed to scripts/cluster.sh; RF 3 is added to the latter),
# QKV_WRK2 (the wrk2 binary). Needs the build (./mvnw -DskipTests package), wrk2 and wrk.
# Output: run/nodes-cost/<time>/ (raw outputs, CPU ticks, summary.md).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLUSTER="$ROOT/scripts/cluster.sh"
# shellcheck source=scripts/lib/wrk-tool.sh
. "$ROOT/scripts/lib/wrk-tool.sh"
# shellcheck source=scripts/lib/node-cpu.sh
. "$ROOT/scripts/lib/node-cpu.sh"

die() {
  echo "nodes-cost.sh: $*" >&2
  exit 1
}

counts="3 5 7" rate=4000 per_node=0 duration=30 warmup=20 closed=20 idle=20 keys=100000 conns=105
while [ $# -gt 0 ]; do
  case "$1" in
    --nodes) counts="${2:?}"; shift 2 ;;
    --rate) rate="${2:?}"; shift 2 ;;
    --per-node) per_node="${2:?}"; shift 2 ;;
    --duration) duration="${2:?}"; shift 2 ;;
    --warmup) warmup="${2:?}"; shift 2 ;;
    --closed) closed="${2:?}"; shift 2 ;;
    --idle) idle="${2:?}"; shift 2 ;;
    --keys) keys="${2:?}"; shift 2 ;;
    --conns) conns="${2:?}"; shift 2 ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown option: $1" ;;
  esac
done
for n in $counts; do
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 3 ] || die "--nodes takes counts of at least 3 (RF 3), not '$n'"
  [ $((conns % n)) = 0 ] || die "--conns $conns does not divide evenly over $n nodes"
done
for v in "$rate" "$per_node" "$duration" "$warmup" "$closed" "$idle" "$keys"; do
  [[ "$v" =~ ^[0-9]+$ ]] || die "not a whole number: $v"
done
[ "$duration" -ge 30 ] || die "--duration must be at least 30 (wrk2 calibrates for ~10 s)"
[ -f "$ROOT/service/target/quorumkv.jar" ] || die "service/target/quorumkv.jar is missing: ./mvnw -DskipTests package"
command -v wrk >/dev/null || die "wrk is not installed (apt-get install wrk)"
QKV_TOOL=wrk2 detect_wrk_tool || exit 1
WRK2="$WRK_BIN"

port="${QKV_BASE_PORT:-18781}"
export QKV_KEYS="$keys" QKV_VALUE_SIZE=100 QKV_REPLICAS=""
out="$ROOT/run/nodes-cost/$(date -u +%Y%m%dT%H%M%SZ)"
work="$(mktemp -d "${TMPDIR:-/tmp}/quorumkv-nodes-cost.XXXXXX")"
mkdir -p "$out"

cleanup() {
  for d in "$work"/c*; do [ -d "$d" ] && "$CLUSTER" down --dir "$d" >/dev/null 2>&1; done
  rm -rf "$work"
}
trap cleanup EXIT

log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

# requests FILE: the requests a wrk or wrk2 run completed
requests() { awk '/requests in/ { n = $1 } END { print n + 0 }' "$1"; }

# errors FILE: non-2xx answers and socket errors of a run
errors() {
  awk '/Non-2xx/ { n += $NF } /Socket errors/ { gsub(",", ""); for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/) n += $i }
    END { printf "%d", n }' "$1"
}

# rate_of N: the rate over all N nodes
rate_of() { if [ "$per_node" != 0 ]; then echo $((per_node * $1)); else echo "$rate"; fi; }

# paced N SCRIPT LABEL SECONDS: wrk2 at the rate over the cluster's nodes; LABEL "" discards it
paced() {
  local n="$1" script="$2" label="$3" seconds="$4" file=/dev/null
  [ -z "$label" ] || file="$out/$label.txt"
  QKV_TARGETS="$targets" "$WRK2" -t"$n" -c"$conns" -d"${seconds}s" -R"$(rate_of "$n")" --latency \
    -s "$ROOT/scripts/wrk2/$script" "http://127.0.0.1:$port" >"$file" 2>&1
}

# measured N SCRIPT LABEL: a paced run, with the nodes' CPU ticks over it in LABEL.ticks
measured() {
  local before after
  before="$(cluster_cpu_ticks "$dir")"
  paced "$1" "$2" "$3" "$duration"
  after="$(cluster_cpu_ticks "$dir")"
  echo "$((after - before))" >"$out/$3.ticks"
  log "$3: $(wrk_rps "$out/$3.txt") rps, p99 $(wrk_pct "$out/$3.txt" 99) ms, $(cpu_us "$3") us CPU/request"
}

cpu_us() { cpu_us_per_request "$(cat "$out/$1.ticks")" "$(requests "$out/$1.txt")"; }
# net_us N LABEL: CPU per request of a measured run less N nodes' idle CPU over its length
net_us() {
  local idle_ticks=0
  [ ! -f "$out/n$1-idle.ticks" ] || idle_ticks="$(cat "$out/n$1-idle.ticks")"
  cpu_us_per_request "$(awk -v t="$(cat "$out/$2.ticks")" -v i="$idle_ticks" -v d="$duration" -v s="$idle" \
    'BEGIN { n = (s > 0) ? t - i * d / s : t; printf "%d", (n > 0) ? n : 0 }')" "$(requests "$out/$2.txt")"
}
# idle_cores N: the N nodes' CPU with no load, in cores
idle_cores() {
  awk -v t="$(cat "$out/n$1-idle.ticks" 2>/dev/null || echo 0)" -v s="$idle" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { if (s > 0) printf "%.2f", t / hz / s; else printf "n/a" }'
}

speed_before="$(host_speed)"
for n in $counts; do
  dir="$work/c$n"
  log "$n nodes, RF 3"
  QKV_UP_TIMEOUT="${QKV_UP_TIMEOUT:-300}" \
    QKV_NODE_ARGS="--quorumkv.cluster.replication-factor=3 ${QKV_NODE_ARGS:-}" \
    "$CLUSTER" up --insecure --nodes "$n" --base-port "$port" --dir "$dir" --fresh >/dev/null
  targets="$(sed 's#^[a-z]*://##; s#/.*$##' "$dir/nodes" | paste -sd, -)"
  "$ROOT/scripts/prefill.sh" "http://127.0.0.1:$port" --keys "$keys" >"$out/n$n-prefill.txt" 2>&1 ||
    die "prefill of $n nodes failed: $out/n$n-prefill.txt"
  [ "$warmup" = 0 ] || paced "$n" put.lua "" "$warmup"
  if [ "$idle" != 0 ]; then
    before="$(cluster_cpu_ticks "$dir")"
    sleep "$idle"
    echo "$(($(cluster_cpu_ticks "$dir") - before))" >"$out/n$n-idle.ticks"
    log "n$n idle: $(idle_cores "$n") cores with no load"
  fi
  measured "$n" put.lua "n$n-put"
  measured "$n" get.lua "n$n-get"
  if [ "$closed" != 0 ]; then
    QKV_TARGETS="$targets" wrk -t"$n" -c"$conns" -d"${closed}s" --latency -s "$ROOT/scripts/wrk2/put.lua" \
      "http://127.0.0.1:$port" >"$out/n$n-put-closed.txt" 2>&1
    log "n$n-put-closed: $(wrk_rps "$out/n$n-put-closed.txt") rps"
  fi
  grep -ho 'event loops [0-9]*' "$dir"/node1/node.log | head -1 >"$out/n$n-loops.txt" || true
  "$CLUSTER" down --dir "$dir" >/dev/null
done
speed_after="$(host_speed)"

first="${counts%% *}"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "n/a" && b != "n/a" && b > 0) printf "%.2f", a / b; else printf "n/a" }'; }
{
  echo "# CPU per request at $(echo "$counts" | sed 's/ /, /g') nodes, RF 3, $(date -u +%Y-%m-%dT%H:%MZ)"
  echo
  echo "Command: \`scripts/nodes-cost.sh --nodes \"$counts\" $(if [ "$per_node" != 0 ]; then echo "--per-node $per_node"; else echo "--rate $rate"; fi) --duration $duration --warmup $warmup" \
    "--closed $closed --idle $idle --keys $keys --conns $conns\` on commit $(git -C "$ROOT" rev-parse --short HEAD)." \
    "$(nproc) cores shared by every node and the load generator; wrk2 -t<nodes> -c$conns -R$(if [ "$per_node" != 0 ]; then echo "<$per_node x nodes>"; else echo "$rate"; fi), one thread per node;" \
    "the server's default replicas (2/3); $keys keys written first, 100-byte values. Host speed check before/after:" \
    "$speed_before / $speed_after; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg). Event loops per node:" \
    "$(for n in $counts; do printf '%s nodes %s; ' "$n" "$(awk '{ print $3 }' "$out/n$n-loops.txt" 2>/dev/null)"; done)"
  echo
  echo "| nodes | op | achieved rps | p50 ms | p99 ms | errors | CPU per request, all nodes (µs) | × $first nodes | idle CPU, all nodes (cores) | CPU per request net of idle (µs) | × $first nodes | closed-loop PUT rps |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  for n in $counts; do
    for op in put get; do
      label="n$n-$op"
      closed_rps="-"
      [ "$op" != put ] || [ ! -f "$out/n$n-put-closed.txt" ] || closed_rps="$(wrk_rps "$out/n$n-put-closed.txt")"
      echo "| $n | ${op^^} | $(wrk_rps "$out/$label.txt") | $(wrk_pct "$out/$label.txt" 50) | $(wrk_pct "$out/$label.txt" 99)" \
        "| $(errors "$out/$label.txt") | $(cpu_us "$label") | $(ratio "$(cpu_us "$label")" "$(cpu_us "n$first-$op")")" \
        "| $(idle_cores "$n") | $(net_us "$n" "$label") | $(ratio "$(net_us "$n" "$label")" "$(net_us "$first" "n$first-$op")") | $closed_rps |"
    done
  done
} >"$out/summary.md"
cat "$out/summary.md"
echo "raw outputs: $out" >&2
