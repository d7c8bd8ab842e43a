#!/usr/bin/env bash
# Measures how long a single LSM node takes from SIGKILL to serving again with a large data set
# and a full memtable (docs/performance.md, "Recovery"; issue 33, item 2):
#
#   1. io.quorumkv.bench.LsmLoader writes --keys entries of --value-size bytes (keys k0000000000..,
#      as scripts/wrk2/*.lua write them, in a random order) straight into a data folder through
#      the storage API with the node's default LSM options (much faster than through HTTP);
#   2. a node starts on that folder, and wrk PUTs random keys of the same key space until the
#      memtable's WAL segment holds --fill percent of what a full memtable's segment held (the
#      first segment the node rotates away from tells how large that is);
#   3. the node is SIGKILLed, started again, and GET /v0/entity?id=k0000000000 is asked every
#      20 ms until it answers 200: the time from the kill to that answer is the recovery time.
#      The node's log says what the start spent its time on: the LSM's recovery line (tables
#      opened, WAL records replayed and written to a level-0 table) and Spring's "Started ... in".
#
#   4. with --aot, steps 2 and 3 again, the node now restarted with an AOT cache (Java 25,
#      -XX:AOTCache, made by a training run as the Dockerfile makes it: docs/kubernetes.md) from
#      the extracted jar: how much of the start is the JVM loading and linking classes.
#
#   scripts/recovery-time.sh [--keys N] [--value-size B] [--fill PERCENT] [--port P] [--aot]
#     defaults: --keys 10000000 --value-size 100 --fill 90 --port 18790
#     QKV_JAVA_OPTS  the node's JVM options (default "-Xms1g -Xmx1g -XX:+UseG1GC -XX:MaxTenuringThreshold=2 -XX:MaxGCPauseMillis=10")
#     QKV_FILL_TIMEOUT  seconds the memtable fill may take (default 600)
#     QKV_NODE_ARGS  extra Spring arguments of the node (a quick check of the script itself:
#                    --quorumkv.storage.lsm.memtable-size=4MB with --keys 100000)
#
# Needs service/target/quorumkv.jar and jmh/target/benchmarks.jar
# (./mvnw -o -q package -DskipTests -pl service,jmh -am), wrk and curl. The data folder is made
# under ${TMPDIR:-/tmp} and deleted at the end. Output: run/recovery-time/<time>/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
keys=10000000
value_size=100
fill=90
port=18790
aot=false
while [ $# -gt 0 ]; do
  case "$1" in
    --keys) keys="${2:?}"; shift 2 ;;
    --value-size) value_size="${2:?}"; shift 2 ;;
    --fill) fill="${2:?}"; shift 2 ;;
    --port) port="${2:?}"; shift 2 ;;
    --aot) aot=true; shift ;;
    *) echo "recovery-time.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ "$keys" =~ ^[1-9][0-9]*$ && "$fill" =~ ^[1-9][0-9]?$ ]] || { echo "bad --keys or --fill" >&2; exit 2; }
read -r -a java_opts <<<"${QKV_JAVA_OPTS:--Xms1g -Xmx1g -XX:+UseG1GC -XX:MaxTenuringThreshold=2 -XX:MaxGCPauseMillis=10}"
read -r -a node_args <<<"${QKV_NODE_ARGS:-}"
fill_timeout="${QKV_FILL_TIMEOUT:-600}"
for f in "$ROOT/service/target/quorumkv.jar" "$ROOT/jmh/target/benchmarks.jar"; do
  [ -f "$f" ] || { echo "recovery-time.sh: build $f first" >&2; exit 1; }
done
command -v wrk >/dev/null || { echo "recovery-time.sh: wrk is not installed" >&2; exit 1; }

out="$ROOT/run/recovery-time/$(date -u +%Y%m%dT%H%M%SZ)"
work="$(mktemp -d "${TMPDIR:-/tmp}/quorumkv-recovery.XXXXXX")"
# The node keeps its LSM in <quorumkv.storage.path>/data (and its hints beside it).
node_dir="$work/node"
data="$node_dir/data"
mkdir -p "$out"
node_pid=""
wrk_pid=""
cleanup() {
  [ -n "$wrk_pid" ] && kill "$wrk_pid" 2>/dev/null || true
  [ -n "$node_pid" ] && kill -9 "$node_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$out/summary.txt" >&2; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
url="http://127.0.0.1:$port"
probe="$url/v0/entity?id=k0000000000"
code() { curl -s -o /dev/null -m 1 -w '%{http_code}' "$1" 2>/dev/null || true; }

jar="$ROOT/service/target/quorumkv.jar"
# start_node LOG [JVM options...]
start_node() {
  local name="$1"
  shift
  "$JAVA" "${java_opts[@]}" "$@" -jar "$jar" --server.port="$port" \
    --quorumkv.storage.backend=lsm --quorumkv.storage.path="$node_dir" "${node_args[@]}" \
    >>"$out/$name.log" 2>&1 </dev/null &
  node_pid=$!
}

# wait_serving: polls the probe key every 20 ms (at most 180 s); prints ms until its 200.
wait_serving() {
  local begin="$1" i
  for ((i = 0; i < 9000; i++)); do
    if [ "$(code "$probe")" = 200 ]; then
      echo $(($(now_ms) - begin))
      return 0
    fi
    kill -0 "$node_pid" 2>/dev/null || { echo "the node died; see $out" >&2; return 1; }
    sleep 0.02
  done
  echo "the node did not serve within 180 s" >&2
  return 1
}

# active_wal: "<number> <bytes>" of the newest non-empty WAL segment (a spare may be empty).
active_wal() {
  local f best="" size
  for f in "$data"/wal-*.log; do
    [ -e "$f" ] || continue
    size=$(stat -c %s "$f")
    [ "$size" -gt 0 ] && best="$((10#$(basename "$f" .log | sed 's/^wal-//'))) $size"
  done
  echo "${best:-0 0}"
}

{
  echo "commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%FT%TZ)"
  echo "nproc $(nproc), load average $(cut -d' ' -f1-3 /proc/loadavg); node JVM: ${java_opts[*]}" \
    "${node_args[*]}"
  echo "command: scripts/recovery-time.sh --keys $keys --value-size $value_size --fill $fill$([ "$aot" = true ] && echo ' --aot')"
} >"$out/summary.txt"

log "loading $keys entries of $value_size bytes into $data (LsmLoader)"
"$JAVA" -cp "$ROOT/jmh/target/benchmarks.jar" io.quorumkv.bench.LsmLoader "$data" "$keys" "$value_size" random \
  2>&1 | tee "$out/loader.log" | grep '^loader: ' | tail -n 3 | tee -a "$out/summary.txt" >&2

log "starting the node on it"
begin=$(now_ms)
start_node node-first
first_ms=$(wait_serving "$begin")
log "first start: serving after $first_ms ms"

# fill_kill_restart MODE [JVM options of the restart...]: fills the running node's memtable,
# SIGKILLs it and times its restart.
fill_kill_restart() {
  local mode="$1" wal bytes first_wal last_bytes full_bytes deadline kill_ms serving_ms
  shift
  log "filling the memtable to ${fill}% with wrk (uniform random keys of the $keys)"
  QKV_KEYS="$keys" QKV_VALUE_SIZE="$value_size" wrk -t1 -c16 -d"${fill_timeout}s" \
    -s "$ROOT/scripts/wrk2/put.lua" "$url" >"$out/fill-wrk-$mode.log" 2>&1 &
  wrk_pid=$!
  deadline=$((SECONDS + fill_timeout))
  # The node starts on an empty segment: wait for the first write to name the active one.
  first_wal=0
  while [ "$first_wal" = 0 ] && [ "$SECONDS" -lt "$deadline" ]; do
    read -r first_wal last_bytes <<<"$(active_wal)"
    sleep 0.1
  done
  full_bytes=0
  while [ "$SECONDS" -lt "$deadline" ]; do
    read -r wal bytes <<<"$(active_wal)"
    if [ "$full_bytes" = 0 ] && [ "$wal" -gt "$first_wal" ]; then
      # The node rotated: the segment before held one full memtable. It is deleted once
      # flushed, so its size is the last one seen (polled every 0.1 s: short by at most
      # 0.1 s of writes).
      full_bytes="$last_bytes"
      log "a full memtable's WAL segment holds about $full_bytes bytes; filling the next to ${fill}%"
    fi
    last_bytes="$bytes"
    if [ "$full_bytes" -gt 0 ] && [ $((bytes * 100)) -ge $((full_bytes * fill)) ]; then
      break
    fi
    sleep 0.1
  done
  [ "$full_bytes" -gt 0 ] && [ $((bytes * 100)) -ge $((full_bytes * fill)) ] \
    || { echo "the memtable did not fill within ${fill_timeout}s" >&2; exit 1; }
  ls -l "$data" >"$out/folder-at-kill-$mode.txt"
  kill -9 "$node_pid"
  kill_ms=$(now_ms)
  kill "$wrk_pid" 2>/dev/null || true
  wait "$wrk_pid" 2>/dev/null || true
  wrk_pid=""
  wait "$node_pid" 2>/dev/null || true
  log "SIGKILL with the active WAL segment at $bytes bytes ($((bytes * 100 / full_bytes))% of a full one);" \
    "WAL bytes on disk $(cat "$data"/wal-*.log | wc -c), tables on disk $(cat "$data"/*.sst | wc -c) bytes"

  start_node "node-restart-$mode" "$@"
  serving_ms=$(wait_serving "$kill_ms")
  log "RESULT ($mode start): SIGKILL to the first 200 on GET: $serving_ms ms (goal < 5000 ms)"
  grep -h 'recovered .* in .* ms' "$out/node-restart-$mode.log" | sed 's/^.*recovered/LSM: recovered/' \
    | tee -a "$out/summary.txt" >&2 || true
  grep -h 'Started .* in .* seconds' "$out/node-restart-$mode.log" | sed 's/^.*Started/Spring: Started/' \
    | tee -a "$out/summary.txt" >&2 || true
}

fill_kill_restart plain
if [ "$aot" = true ]; then
  log "making an AOT cache: the jar extracted, a training run that serves a short workload (quorumkv.aot-training)"
  "$JAVA" -Djarmode=tools -jar "$jar" extract --destination "$work/app" >"$out/aot-extract.log" 2>&1
  jar="$work/app/quorumkv.jar"
  "$JAVA" -XX:AOTCacheOutput="$work/quorumkv.aot" -Dquorumkv.aot-training=true -jar "$jar" \
    --quorumkv.storage.path="$work/aot-training" --server.port=0 --management.server.port=0 \
    >"$out/aot-training.log" 2>&1
  fill_kill_restart aot -XX:AOTCache="$work/quorumkv.aot"
fi
# A graceful stop, so that a profiler agent given in QKV_JAVA_OPTS writes its output.
kill "$node_pid" 2>/dev/null || true
for ((i = 0; i < 300; i++)); do
  kill -0 "$node_pid" 2>/dev/null || break
  sleep 0.1
done
log "results in $out"
