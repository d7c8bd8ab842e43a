#!/usr/bin/env bash
# Measures backups on a local three-node LSM cluster (scripts/cluster.sh), as issue 54 asks
# (docs/backup.md, "Speed"):
#
#   1. the time of a snapshot of N entries per node (`qkv snapshot`, each node's own
#      durationMs: its memtable's flush and its links) beside `qkv flush` (on the LSM a force
#      of the WAL: it writes no table), both under the constant PUT load of step 2;
#   2. client p99 of PUTs at 2/3 at a constant rate (wrk2) for S seconds: without a
#      snapshot, with one snapshot taken halfway, and without again (snapshots one after
#      another would measure something else: each flushes a small table into level 0,
#      and level 0 compacting into the whole data set behind them stalls the writers);
#   3. the restore of that snapshot set into a fresh three-node cluster (`qkv restore`):
#      entries and megabytes of snapshot a second.
#
#   scripts/backup-bench.sh [--keys N] [--rate R] [--seconds S] [--dir D] [--base-port P]
#                           [--no-restore]
#
# --no-restore leaves step 3 out (at 10 million keys per node it alone takes over ten minutes).
# QKV_NODE_ARGS: extra Spring arguments for every node of both clusters (for instance
# --quorumkv.storage.lsm.compaction-nice=10); QKV_JAVA_OPTS as scripts/cluster.sh takes them.
# Defaults: 1,000,000 keys of 100 bytes per node (each node owns every key), 1,000 PUTs/s,
# 60 s, run/backup-bench, ports 18281 (the restored cluster: 100 above). The keys are written
# into each node's data folder before the cluster starts (scripts/lib/lsm-preload.sh: needs
# jmh/target/benchmarks.jar); the load then overwrites them. Prints one line per measurement
# and keeps the tools' outputs in D/out; both clusters are stopped at the end.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/lib/cluster-bench.sh
. "$ROOT/scripts/lib/cluster-bench.sh"
bench_defaults backup-bench 18281
restore=1
while [ $# -gt 0 ]; do
  if [ "$1" = --no-restore ]; then
    restore=0
    shift
    continue
  fi
  if bench_option "$1" "${2:-}"; then
    shift 2
    continue
  fi
  echo "backup-bench.sh: unknown option $1" >&2
  exit 2
done
bench_wrk2
QKV="$ROOT/scripts/qkv"
CLUSTER="$ROOT/scripts/cluster.sh"
restored="$dir-restored"
out="$dir/out"
url1="http://127.0.0.1:$port"
common="--management.endpoints.web.exposure.include=health,metrics,prometheus,quorumkv${QKV_NODE_ARGS:+ $QKV_NODE_ARGS}"

log() { echo "[$(date -u +%H:%M:%S)] $*"; }
down() {
  "$CLUSTER" down --dir "$dir" > /dev/null 2>&1 || true
  "$CLUSTER" down --dir "$restored" > /dev/null 2>&1 || true
}
trap down EXIT
# The PUT load at the constant rate for $seconds; prints wrk2's p99.
p99() {
  QKV_KEYS="$keys" QKV_REPLICAS=2/3 "$wrk2" -t2 -c16 -d"${seconds}s" -R"$rate" --latency \
    -s "$ROOT/scripts/wrk2/put.lua" "$url1" > "$out/wrk2-$1.txt"
  awk '/ 99.000% / { print $2 }' "$out/wrk2-$1.txt"
}
# Each node's durationMs of `qkv snapshot $1`, as "a b c".
snapshot() {
  "$QKV" --cluster-dir "$dir" snapshot "$1" > "$out/snapshot-$1.txt"
  sed -n 's/.*(\([0-9]*\) ms)$/\1/p' "$out/snapshot-$1.txt" | tr '\n' ' '
}
# The compactions each node has finished so far, as "a b c" (its Prometheus counter), each
# followed by "+R" when R compactions are running on it at this moment.
compactions() {
  local m
  while read -r m; do
    curl -s -m 5 "$m/actuator/prometheus" | awk '
      /^quorumkv_storage_compaction_count_total/ { s += $NF }
      /^quorumkv_storage_compaction_running/ { r += $NF }
      END { printf "%d%s ", s, (r > 0) ? "+" r : "" }'
  done < "$dir/management"
}
# Each node's time of `qkv flush`, as "a b c".
flush() {
  "$QKV" --cluster-dir "$dir" flush > "$out/flush.txt"
  sed -n 's/.* done in \([0-9]*\) ms$/\1/p' "$out/flush.txt" | tr '\n' ' '
}

log "commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown); node arguments: $common${QKV_JAVA_OPTS:+; JVM: $QKV_JAVA_OPTS}"
log "loading $keys keys into each node's data folder (LsmLoader)"
preload_replicas "$dir" 3 "$keys" "${QKV_VALUE_SIZE:-100}"
mkdir -p "$out"
QKV_NODE_ARGS="$common" "$CLUSTER" up --insecure --nodes 3 --dir "$dir" --base-port "$port" > /dev/null
"$QKV" --cluster-dir "$dir" flush > /dev/null
log "cluster up; warming up under the load"
p99 warmup > /dev/null

fill=$((seconds * 2 / 3))
log "1. a flush, then a snapshot, each after $fill s of the load since the last flush"
(p99 fill1 > /dev/null) &
sleep "$fill"
log "1. qkv flush (a WAL force) alone: $(flush)ms on nodes 1, 2, 3"
wait
(p99 fill2 > /dev/null) &
sleep "$fill"
log "1. snapshot bench-1: $(snapshot bench-1)ms on nodes 1, 2, 3 (each node's flush and links)"
wait
du -sb "$dir"/node*/data/snapshots/bench-1 > "$out/snapshot-bytes.txt"
bytes=$(awk '{ s += $1 } END { print s }' "$out/snapshot-bytes.txt")

# A compaction in a p99 minute weighs on it whatever started it: each minute's line says how
# many each node had finished before and after it, and which were running at either end.
before="$(compactions)"
log "2. p99 at $rate PUT/s at 2/3, no snapshot: $(p99 steady) (compactions on nodes 1, 2, 3: $before-> $(compactions))"
(
  sleep $((seconds / 2))
  snapshot during > "$out/snapshot-during-load.txt" || true
) &
taker=$!
before="$(compactions)"
log "2. p99 at $rate PUT/s at 2/3, a snapshot halfway: $(p99 snapshot) (compactions: $before-> $(compactions))"
wait "$taker" || true
log "2. the snapshot halfway took: $(cat "$out/snapshot-during-load.txt")ms on nodes 1, 2, 3"
before="$(compactions)"
log "2. p99 at $rate PUT/s at 2/3, no snapshot (again): $(p99 steady-again) (compactions: $before-> $(compactions))"

if [ "$restore" = 0 ]; then
  log "3. restore: left out (--no-restore)"
  exit 0
fi
log "3. restore of bench-1 ($((bytes / 1000000)) MB on three nodes) into a fresh three-node cluster"
set_dir="$dir/set-bench-1"
rm -rf "$set_dir"
mkdir -p "$set_dir"
for i in 1 2 3; do ln -s "$dir/node$i/data/snapshots/bench-1" "$set_dir/node$i"; done
QKV_NODE_ARGS="$common" "$CLUSTER" up --insecure --nodes 3 --fresh --dir "$restored" --base-port $((port + 100)) \
  > /dev/null
"$QKV" --cluster-dir "$restored" restore --from "$set_dir" > "$out/restore.txt"
cat "$out/restore.txt"
ms=$(sed -n 's/.* in \([0-9]*\) ms$/\1/p' "$out/restore.txt")
written=$(sed -n 's/.* \([0-9]*\) versions written.*/\1/p' "$out/restore.txt")
read_keys=$(sed -n 's/.*: \([0-9]*\) keys read.*/\1/p' "$out/restore.txt")
log "3. restore: $read_keys keys read, $written versions written in $ms ms:" \
  "$((read_keys * 1000 / (ms > 0 ? ms : 1))) keys/s, $((bytes / 1000 / (ms > 0 ? ms : 1))) MB/s of snapshot"
