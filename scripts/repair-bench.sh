#!/usr/bin/env bash
# Measures anti-entropy repair on a local three-node LSM cluster (scripts/cluster.sh):
#
#   1. a full repair pass over N keys that every replica agrees on (the cost of finding
#      nothing), with no rate limit;
#   2. the same after 1% of the keys were overwritten while node 3 was down (hints off), so
#      node 3 differs in 1%;
#   3. client p99 of GETs at 2/3 at a constant rate (wrk2) for S seconds after as long a
#      warm-up: without a repair, while repairs run back to back under the default rate
#      limit, and without a repair again.
#
#   scripts/repair-bench.sh [--keys N] [--rate R] [--seconds S] [--dir D] [--base-port P]
#                           [--prefill loader|http]
#
# Defaults: 1,000,000 keys of 100 bytes, 1,000 requests/s, 60 s, run/repair-bench, port 18081.
# --prefill loader (the default) writes the N keys into each node's data folder before the
# cluster starts (scripts/lib/lsm-preload.sh: io.quorumkv.bench.LsmLoader, then copies; needs
# jmh/target/benchmarks.jar); --prefill http PUTs them at 3/3 through node 1
# (QKV_PREFILL_RATE, default 4,000/s).
# Prints one line per measurement; the cluster is stopped at the end (its folder is kept).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/lib/cluster-bench.sh
. "$ROOT/scripts/lib/cluster-bench.sh"
bench_defaults repair-bench 18081
prefill=loader
while [ $# -gt 0 ]; do
  if bench_option "$1" "${2:-}"; then
    shift 2
    continue
  fi
  case "$1" in
    --prefill) prefill="${2:?}"; shift 2 ;;
    *) echo "repair-bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
bench_wrk2
url1="http://127.0.0.1:$port"
common="--management.endpoints.web.exposure.include=health,metrics,prometheus,quorumkv \
--quorumkv.repair.scheduled=false --quorumkv.cluster.hints.max-pending=0"

log() { echo "[$(date -u +%H:%M:%S)] $*"; }
up() {
  QKV_NODE_ARGS="$common $1" "$ROOT/scripts/cluster.sh" up --insecure --nodes 3 --dir "$dir" --base-port "$port" ${2:-} > /dev/null
}
down() { "$ROOT/scripts/cluster.sh" down --dir "$dir" > /dev/null; }
repair() {
  "$ROOT/scripts/qkv" --cluster-dir "$dir" repair --node "http://127.0.0.1:$((port + 1000))" | head -n 1
}
p99() {
  QKV_KEYS="$keys" QKV_REPLICAS=2/3 "$wrk2" -t2 -c16 -d"${seconds}s" -R"$rate" --latency \
    -s "$ROOT/scripts/wrk2/get.lua" "$url1" | awk '/ 99.000% / { print $2 } / 50.000% / { p50 = $2 } END { }' | head -n 1
}
trap down EXIT

case "$prefill" in
  loader)
    log "loading $keys keys into each node's data folder (LsmLoader)"
    preload_replicas "$dir" 3 "$keys" "${QKV_VALUE_SIZE:-100}"
    log "cluster up"
    up "--quorumkv.repair.max-entries-per-second=0"
    ;;
  http)
    log "cluster up, prefilling $keys keys at 3/3"
    up "--quorumkv.repair.max-entries-per-second=0" --fresh
    QKV_KEYS="$keys" QKV_REPLICAS=3/3 QKV_PREFILL_RATE="${QKV_PREFILL_RATE:-4000}" \
      "$ROOT/scripts/prefill.sh" "$url1" --keys "$keys" --timeout 7200 | tail -n 1
    ;;
  *) echo "repair-bench.sh: --prefill is loader or http, not $prefill" >&2; exit 2 ;;
esac
"$ROOT/scripts/qkv" --cluster-dir "$dir" flush > /dev/null

log "1. replicas agree (no rate limit): $(repair)"

log "2. node 3 down, 1% of the keys overwritten at 2/3"
"$ROOT/scripts/cluster.sh" kill 3 --dir "$dir" > /dev/null
QKV_KEYS="$keys" QKV_REPLICAS=2/3 "$ROOT/scripts/prefill.sh" "$url1" --keys $((keys / 100)) --timeout 1800 \
  | tail -n 1
"$ROOT/scripts/cluster.sh" restart 3 --dir "$dir" > /dev/null
log "2. 1% differs on node 3 (no rate limit): $(repair)"

log "3. restarting with the default rate limit"
down
up ""
# The restarted nodes compile, and read their tables into the page cache, under the first
# load: a warm-up the figures leave out, then no repair, repairs, and no repair again.
p99 > /dev/null
log "3. p99 at $rate GET/s at 2/3, no repair: $(p99)"
(
  end=$((SECONDS + seconds + 5))
  while [ "$SECONDS" -lt "$end" ]; do repair > "$dir/repair-during-load.txt" || true; done
) &
repairs=$!
sleep 1
log "3. p99 at $rate GET/s at 2/3, repairs running: $(p99)"
wait "$repairs" || true
log "3. last repair during the load: $(cat "$dir/repair-during-load.txt")"
log "3. p99 at $rate GET/s at 2/3, no repair (again): $(p99)"
