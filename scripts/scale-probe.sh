#!/usr/bin/env bash
# Data beyond memory at a small scale (issue 33, item 1): the same single LSM node on a small and
# on a large data set, in one run, so the two can be compared as ratios on a shared machine.
# For each key count (small first):
#
#   1. io.quorumkv.bench.LsmLoader writes the keys (k0000000000.., as scripts/wrk2/*.lua use
#      them, 100-byte values, random order) straight into the node's data folder through the
#      storage API, with the node's default LSM options, and reports its rate and amplification;
#   2. a node starts on the folder; closed-loop PUTs of uniform random keys of the key space for
#      --duration (wrk -t1 -c64, scripts/wrk2/put.lua), then closed-loop GETs (get.lua);
#   3. measured: PUT and GET throughput and p99 (wrk's SUMMARY line), the node's write_bytes
#      (/proc/<pid>/io) during the PUT run over the bytes it accepted (key + value + 8-byte
#      timestamp per PUT: write amplification of that run), the data folder's size over the
#      key count's bytes (space amplification), and heap in use after the run (jcmd GC.heap_info).
#
#   scripts/scale-probe.sh [--small N] [--large N] [--duration S] [--port P]
#     defaults: --small 100000 --large 10000000 --duration 30 --port 18795
#     QKV_JAVA_OPTS  the node's JVM options (default "-Xmx1g -XX:+UseG1GC")
#
# Needs service/target/quorumkv.jar, jmh/target/benchmarks.jar, wrk, curl and jcmd. Data folders
# are made under ${TMPDIR:-/tmp} and deleted at the end. Output: run/scale-probe/<time>/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
JCMD="${JAVA_HOME:+$JAVA_HOME/bin/}jcmd"
small=100000
large=10000000
duration=30
port=18795
while [ $# -gt 0 ]; do
  case "$1" in
    --small) small="${2:?}"; shift 2 ;;
    --large) large="${2:?}"; shift 2 ;;
    --duration) duration="${2:?}"; shift 2 ;;
    --port) port="${2:?}"; shift 2 ;;
    *) echo "scale-probe.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
read -r -a java_opts <<<"${QKV_JAVA_OPTS:--Xmx1g -XX:+UseG1GC}"
for f in "$ROOT/service/target/quorumkv.jar" "$ROOT/jmh/target/benchmarks.jar"; do
  [ -f "$f" ] || { echo "scale-probe.sh: build $f first" >&2; exit 1; }
done
command -v wrk >/dev/null || { echo "scale-probe.sh: wrk is not installed" >&2; exit 1; }

out="$ROOT/run/scale-probe/$(date -u +%Y%m%dT%H%M%SZ)"
work="$(mktemp -d "${TMPDIR:-/tmp}/quorumkv-scale.XXXXXX")"
mkdir -p "$out"
node_pid=""
cleanup() {
  [ -n "$node_pid" ] && kill -9 "$node_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$out/summary.txt" >&2; }
url="http://127.0.0.1:$port"
entry_bytes=$((11 + 100 + 8))
write_bytes() { awk '/^write_bytes:/ { print $2 }' "/proc/$1/io"; }
field() { sed -n "s/.* $1=\\([0-9.]*\\).*/\\1/p" <<<"$2"; }

{
  echo "commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%FT%TZ)"
  echo "nproc $(nproc), load average $(cut -d' ' -f1-3 /proc/loadavg); node JVM: ${java_opts[*]}"
  echo "command: scripts/scale-probe.sh --small $small --large $large --duration $duration"
} >"$out/summary.txt"
echo "| keys | load entries/s | load write amp. | PUT rps | PUT p99 ms | GET rps | GET p99 ms | GET non-2xx | PUT run write amp. | space amp. | heap used after |" >"$out/table.md"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|" >>"$out/table.md"

for keys in "$small" "$large"; do
  node_dir="$work/node-$keys"
  log "loading $keys keys (LsmLoader)"
  "$JAVA" -cp "$ROOT/jmh/target/benchmarks.jar" io.quorumkv.bench.LsmLoader "$node_dir/data" "$keys" 100 random \
    >"$out/loader-$keys.log" 2>&1
  grep '^loader: [0-9,]* entries\|^loader: total' "$out/loader-$keys.log" | tee -a "$out/summary.txt" >&2
  load_rate="$(sed -n 's/.*(\([0-9]*\) entries\/s).*/\1/p' "$out/loader-$keys.log")"
  load_wamp="$(sed -n 's/.*(write amplification \([0-9.]*\)).*/\1/p' "$out/loader-$keys.log")"

  "$JAVA" "${java_opts[@]}" -jar "$ROOT/service/target/quorumkv.jar" --server.port="$port" \
    --quorumkv.storage.backend=lsm --quorumkv.storage.path="$node_dir" >"$out/node-$keys.log" 2>&1 </dev/null &
  node_pid=$!
  for ((i = 0; i < 1800; i++)); do
    [ "$(curl -s -o /dev/null -m 1 -w '%{http_code}' "$url/v0/entity?id=k0000000000" || true)" = 200 ] && break
    kill -0 "$node_pid" 2>/dev/null || { echo "the node died; see $out/node-$keys.log" >&2; exit 1; }
    sleep 0.1
  done
  log "node on $keys keys serving"

  before="$(write_bytes "$node_pid")"
  put="$(QKV_KEYS="$keys" wrk -t1 -c64 -d"${duration}s" -s "$ROOT/scripts/wrk2/put.lua" "$url" | tee "$out/put-$keys.txt" \
    | grep '^SUMMARY')"
  after="$(write_bytes "$node_pid")"
  get="$(QKV_KEYS="$keys" wrk -t1 -c64 -d"${duration}s" -s "$ROOT/scripts/wrk2/get.lua" "$url" | tee "$out/get-$keys.txt" \
    | grep '^SUMMARY')"
  "$JCMD" "$node_pid" GC.heap_info >"$out/heap-$keys.txt" 2>&1 || true
  heap="$(grep -o 'committed [0-9]*K, used [0-9]*K' "$out/heap-$keys.txt" | head -n 1 || true)"
  disk="$(du -sb "$node_dir/data" | cut -f1)"
  puts="$(field requests "$put")"
  put_wamp="$(awk -v w=$((after - before)) -v n="$puts" -v e="$entry_bytes" 'BEGIN { printf "%.2f", w / (n * e) }')"
  space_amp="$(awk -v d="$disk" -v k="$keys" -v e="$entry_bytes" 'BEGIN { printf "%.2f", d / (k * e) }')"
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$keys" "$load_rate" "$load_wamp" \
    "$(field rps "$put")" "$(field p99_ms "$put")" "$(field rps "$get")" "$(field p99_ms "$get")" \
    "$(field non2xx "$get")" "$put_wamp" "$space_amp" "${heap:-?}" >>"$out/table.md"
  log "PUT: $put"
  log "GET: $get"
  log "node wrote $((after - before)) bytes during $puts PUTs; data folder $disk bytes; heap: ${heap:-?}"
  kill "$node_pid"
  for ((i = 0; i < 300; i++)); do
    kill -0 "$node_pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -9 "$node_pid" 2>/dev/null || true
  node_pid=""
  rm -rf "$node_dir"
done
cat "$out/table.md"
log "results in $out"
