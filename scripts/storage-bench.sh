#!/usr/bin/env bash
# Runs the LSM-against-RocksDB storage benchmarks of docs/benchmarks.md and prints their table:
# StorageBenchmark's put, putList32, getPresent, getAbsent and scan1000 on the LSM and on RocksDB
# (blind put), then put and putList32 on RocksDB comparing versions (rocksdb-lww), each on
# 100,000 keys (inside the memtable and RocksDB's block cache) and on 4,000,000 keys (about
# 470 MiB, far beyond both), with the annotations' settings: 3 forks, 2 x 2 s warm-up,
# 5 x 2 s measurement, 2 threads (about 22 minutes on 2 cores, prefills included).
#
#   scripts/storage-bench.sh [extra JMH options, e.g. -f 1 -i 3]
#     QKV_JMH_KEYS=100000,4000000   the key counts
#     QKV_JMH_DIR=<dir>             where the prefilled stores live (default: a temporary folder,
#                                   deleted at the end; set it to keep them for the next run)
#
# Needs jmh/target/benchmarks.jar (./mvnw -o -q package -DskipTests -pl jmh -am).
# Output: run/storage-bench/<time>/{lsm-rocksdb.json,rocksdb-lww.json,*.log,table.md}.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JAR="$ROOT/jmh/target/benchmarks.jar"
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
keys="${QKV_JMH_KEYS:-100000,4000000}"
out="$ROOT/run/storage-bench/$(date -u +%Y%m%dT%H%M%SZ)"
[ -f "$JAR" ] || { echo "storage-bench.sh: build $JAR first" >&2; exit 1; }
mkdir -p "$out"

data="${QKV_JMH_DIR:-}"
own_data=false
if [ -z "$data" ]; then
  data="$(mktemp -d "${TMPDIR:-/tmp}/quorumkv-storage-bench.XXXXXX")"
  own_data=true
fi
cleanup() {
  if [ "$own_data" = true ]; then rm -rf "$data"; fi
}
trap cleanup EXIT

log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }

# A command-line -jvmArgsAppend replaces the annotation's: repeat the native-access flag.
jvm_args="--enable-native-access=ALL-UNNAMED -Dquorumkv.jmh.dir=$data"
{
  echo "commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%FT%TZ)"
  echo "nproc $(nproc), load average $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$out/machine.txt"

log "LSM and RocksDB (blind put): five benchmarks, keys $keys"
"$JAVA" -jar "$JAR" 'StorageBenchmark\.(put|putList32|getPresent|getAbsent|scan1000)$' \
  -p backend=lsm,rocksdb -p keys="$keys" -jvmArgsAppend "$jvm_args" "$@" \
  -rf json -rff "$out/lsm-rocksdb.json" >"$out/lsm-rocksdb.log" 2>&1
log "RocksDB comparing versions: put and putList32, keys $keys"
"$JAVA" -jar "$JAR" 'StorageBenchmark\.(put|putList32)$' \
  -p backend=rocksdb-lww -p keys="$keys" -jvmArgsAppend "$jvm_args" "$@" \
  -rf json -rff "$out/rocksdb-lww.json" >"$out/rocksdb-lww.log" 2>&1
echo "load average at the end $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
grep -h '^# quorumkv-jmh: prefilled' "$out"/*.log >>"$out/machine.txt" || true

"$JAVA" -cp "$JAR" io.quorumkv.bench.report.StorageComparison "$out/lsm-rocksdb.json" "$out/rocksdb-lww.json" \
  | tee "$out/table.md"
log "results in $out"
