#!/usr/bin/env bash
# Closed-loop PUT and GET latency (wrk --latency) of a single node and of a three-node cluster
# at replicas=2/3, in one run on this machine: the figures of the cluster issue's note and the
# first input of docs/performance.md. Needs wrk and the built jar (./mvnw -DskipTests package).
#
#   scripts/compare-cluster.sh            QKV_DURATION=15s QKV_CONNS=32 QKV_BACKEND=lsm
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLUSTER="$ROOT/scripts/cluster.sh"
duration="${QKV_DURATION:-15s}"
conns="${QKV_CONNS:-32}"
backend="${QKV_BACKEND:-lsm}"
export QKV_KEYS="${QKV_KEYS:-100000}" QKV_VALUE_SIZE="${QKV_VALUE_SIZE:-100}"
dir="$(mktemp -d "${TMPDIR:-/tmp}/quorumkv-compare.XXXXXX")"
trap '"$CLUSTER" down --dir "$dir/single" >/dev/null 2>&1 || true; "$CLUSTER" down --dir "$dir/three" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT

command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }

run() { # label url script replicas
  echo "== $1"
  QKV_REPLICAS="$4" wrk -t1 -c"$conns" -d"$duration" --latency -s "$ROOT/scripts/wrk2/$3" "$2" \
    | grep -E 'Requests/sec|^ +(50|90|99)%|Non-2xx|Socket errors'
}

"$CLUSTER" up --insecure --nodes 1 --backend "$backend" --base-port 18280 --dir "$dir/single" >/dev/null
run "single node PUT (warm-up)" http://127.0.0.1:18280 put.lua "" >/dev/null
run "single node PUT" http://127.0.0.1:18280 put.lua ""
run "single node GET" http://127.0.0.1:18280 get.lua ""
"$CLUSTER" down --dir "$dir/single" >/dev/null

"$CLUSTER" up --insecure --nodes 3 --backend "$backend" --base-port 18281 --dir "$dir/three" >/dev/null
run "3 nodes PUT 2/3 (warm-up)" http://127.0.0.1:18281 put.lua 2/3 >/dev/null
run "3 nodes PUT 2/3" http://127.0.0.1:18281 put.lua 2/3
run "3 nodes GET 2/3" http://127.0.0.1:18281 get.lua 2/3
