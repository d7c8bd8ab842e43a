#!/usr/bin/env bash
# Data beyond memory (issue 33, item 1): the same single LSM node on a small and on a large data
# set, in one run, so the two can be compared as ratios on a shared machine. For each key count
# (small first):
#
#   1. io.quorumkv.bench.LsmLoader writes the keys (k0000000000.., as scripts/wrk2/*.lua use
#      them, 100-byte values, random order) straight into the node's data folder through the
#      storage API, with the node's default LSM options, and reports its rate and amplification;
#   2. a node starts on the folder; a warm-up of --warmup seconds (half closed-loop PUTs, half
#      GETs, not measured: the JIT compiles the paths, and the first flushes after the load set
#      off their compactions), then up to 10 minutes' wait until the compaction debt is below
#      16 MiB and no compaction runs (the time waited is logged); then closed-loop PUTs of uniform random keys of the
#      key space for --duration (wrk -t1 -c64, scripts/wrk2/put.lua), then closed-loop GETs
#      (get.lua);
#   3. PUTs, then GETs, at the constant rate --rate for --paced seconds (wrk2 -t1 -c32 -R, its
#      corrected latencies: p99, p99.9 and the maximum, the longest a request waited);
#   4. measured: PUT and GET throughput and p99 (wrk's SUMMARY line), the node's write_bytes
#      (/proc/<pid>/io) during the closed-loop PUT run over the bytes it accepted (key + value +
#      8-byte timestamp per PUT: write amplification of that run), the data folder's size over
#      the key count's bytes (space amplification), and heap in use after the runs
#      (jcmd GC.heap_info);
#   5. on the large key count only, --debt-minutes of PUTs at --rate (wrk2), the node's
#      /actuator/prometheus read every 10 s: compaction debt (the LSM's
#      compaction.pending.bytes: bytes its planner still has to compact), level-0 tables,
#      immutable memtables, writers' stall time, disk bytes, live heap after GC
#      (jvm.gc.live.data.size) and heap in use, written to debt-<keys>.tsv; after the run, one
#      full collection (jcmd GC.run) and the heap it leaves: what is reachable; the run's write
#      amplification, the longest request (wrk2's corrected maximum: a stall of S seconds at a
#      constant rate shows as a request that waited about S) and the debt's trend; the node's
#      GC pauses by cause (gc-pauses-<keys>.txt) and its GC and safepoint log (jvm-<keys>.log);
#   6. with --profile, async-profiler (event=cpu, 1 ms) on the node during the closed-loop PUT and
#      GET runs (the throughput figures are then the profiled ones, on both key counts alike), and
#      the JIT compiler's share of the node's CPU in each (scripts/lib/jit-share.sh); at the end,
#      profile-put.md and profile-get.md: the CPU per request of the storage's parts and of the
#      transport on the large key count against the small (scripts/lib/profile-compare.py
#      --storage), what the ratio of the two rates is made of;
#   7. for each key count, the stall watchdog's reports from the node's log (stalls-<keys>.txt:
#      an event loop that ran no task, or a JVM that stood still, for 1 s or more, with the
#      stacks of the loop and the storage's threads; docs/operations.md).
#
#   scripts/scale-probe.sh [--small N] [--large N] [--duration S] [--warmup S] [--rate R]
#                          [--paced S] [--debt-minutes M] [--port P]
#                          [--keep-large DIR | --reuse-large DIR] [--profile]
#     --keep-large DIR   moves the large key count's data folder to DIR at the end instead of
#                        deleting it (100 million keys take 12 GB and 18 minutes to load)
#     --reuse-large DIR  starts the large key count's node on DIR, kept by an earlier run,
#                        without loading (the runs write into it, and it is kept)
#     --profile          profiles the closed-loop runs (item 6); QKV_ASYNC_PROFILER_LIB, else
#                        async-profiler is fetched from Maven Central (scripts/lib/profiler.sh)
#     defaults: --small 100000 --large 10000000 --duration 30 --warmup 60 --rate 10000 --paced 60
#               --debt-minutes 30 (0 leaves the long run out) --port 18795
#     QKV_JAVA_OPTS  the node's JVM options (default "-Xms1g -Xmx1g -XX:+UseG1GC -XX:MaxTenuringThreshold=2 -XX:MaxGCPauseMillis=10")
#     QKV_WRK2       the wrk2 binary (scripts/lib/wrk-tool.sh finds it otherwise)
#
# Needs service/target/quorumkv.jar, jmh/target/benchmarks.jar, wrk, wrk2, curl and jcmd. Data
# folders are made under ${TMPDIR:-/tmp} and deleted at the end (100 million keys take about
# 12 GB of tables and 80 GB written in all). Output: run/scale-probe/<time>/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
JCMD="${JAVA_HOME:+$JAVA_HOME/bin/}jcmd"
small=100000
large=10000000
duration=30
warmup=60
rate=10000
paced=60
debt_minutes=30
port=18795
keep_large=""
reuse_large=""
profile=0
while [ $# -gt 0 ]; do
  case "$1" in
    --small) small="${2:?}"; shift 2 ;;
    --large) large="${2:?}"; shift 2 ;;
    --duration) duration="${2:?}"; shift 2 ;;
    --warmup) warmup="${2:?}"; shift 2 ;;
    --rate) rate="${2:?}"; shift 2 ;;
    --paced) paced="${2:?}"; shift 2 ;;
    --debt-minutes) debt_minutes="${2:?}"; shift 2 ;;
    --port) port="${2:?}"; shift 2 ;;
    --keep-large) keep_large="${2:?}"; shift 2 ;;
    --reuse-large) reuse_large="${2:?}"; shift 2 ;;
    --profile) profile=1; shift ;;
    *) echo "scale-probe.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
read -r -a java_opts <<<"${QKV_JAVA_OPTS:--Xms1g -Xmx1g -XX:+UseG1GC -XX:MaxTenuringThreshold=2 -XX:MaxGCPauseMillis=10}"
for f in "$ROOT/service/target/quorumkv.jar" "$ROOT/jmh/target/benchmarks.jar"; do
  [ -f "$f" ] || { echo "scale-probe.sh: build $f first" >&2; exit 1; }
done
command -v wrk >/dev/null || { echo "scale-probe.sh: wrk is not installed" >&2; exit 1; }
[ "$paced" -ge 30 ] || { echo "scale-probe.sh: --paced must be at least 30 (wrk2 calibrates for ~10 s)" >&2; exit 2; }
# shellcheck source=scripts/lib/wrk-tool.sh
. "$ROOT/scripts/lib/wrk-tool.sh"
# shellcheck source=scripts/lib/lsm-node.sh
. "$ROOT/scripts/lib/lsm-node.sh"
# shellcheck source=scripts/lib/profiler.sh
. "$ROOT/scripts/lib/profiler.sh"
# shellcheck source=scripts/lib/jit-share.sh
. "$ROOT/scripts/lib/jit-share.sh"
QKV_TOOL=wrk2 detect_wrk_tool || exit 1
WRK2="$WRK_BIN"

out="$ROOT/run/scale-probe/$(date -u +%Y%m%dT%H%M%SZ)"
work="$(mktemp -d "${TMPDIR:-/tmp}/quorumkv-scale.XXXXXX")"
mkdir -p "$out"
node_pid=""
sampler_pid=""
cleanup() {
  [ -n "$sampler_pid" ] && kill "$sampler_pid" 2>/dev/null || true
  [ -n "$node_pid" ] && kill -9 "$node_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$out/summary.txt" >&2; }
die() { log "scale-probe.sh: $*"; exit 1; }
[ "$profile" = 0 ] || ensure_profiler
# closed NAME SCRIPT: a closed-loop run of --duration (wrk -t1 -c64) into NAME-<keys>.txt, profiled
# with --profile (NAME-<keys>.collapsed) and the JIT's share of the node's CPU logged; prints wrk's
# SUMMARY line
closed() {
  local jit_before
  jit_before="$(jit_ticks "$node_pid")"
  if [ "$profile" = 1 ]; then
    profiler_command "$node_pid" "start,event=cpu,interval=1ms" >>"$out/profiler.log" || die "async-profiler did not start"
  fi
  QKV_KEYS="$keys" wrk -t1 -c64 -d"${duration}s" -s "$ROOT/scripts/wrk2/$2" "$url" >"$out/$1-$keys.txt"
  if [ "$profile" = 1 ]; then
    profiler_command "$node_pid" "stop,file=$out/$1-$keys.collapsed,collapsed" >>"$out/profiler.log" ||
      die "async-profiler did not stop"
  fi
  log "$1 on $keys keys: the JIT compiler took $(jit_share "$jit_before" "$(jit_ticks "$node_pid")")% of the node's CPU"
  grep '^SUMMARY' "$out/$1-$keys.txt"
}
url="http://127.0.0.1:$port"
entry_bytes=$((11 + 100 + 8))
write_bytes() { awk '/^write_bytes:/ { print $2 }' "/proc/$1/io"; }
field() { sed -n "s/.* $1=\\([0-9.]*\\).*/\\1/p" <<<"$2"; }
# paced SCRIPT FILE SECONDS: wrk2 at --rate over the key space; prints "p99 / p99.9 / max" in ms
paced() {
  QKV_KEYS="$keys" "$WRK2" -t1 -c32 -d"$3s" -R"$rate" --latency -s "$ROOT/scripts/wrk2/$1" "$url" >"$2" 2>&1
  echo "$(wrk_pct "$2" 99) / $(wrk_pct "$2" 99.9) / $(wrk_pct "$2" 100)"
}
# metric TEXT NAME: the sum of a Prometheus sample's values over its series (0 if absent)
metric() { awk -v n="$2" '$1 == n || index($1, n "{") == 1 { s += $NF } END { printf "%.0f", s }' <<<"$1"; }
# settle: waits, up to 600 s, until the compaction debt is below 16 MiB and no compaction is
# running (the debt leaves out what a running compaction merges); prints the seconds waited
settle() {
  local i text
  for ((i = 0; i < 600; i++)); do
    text="$(curl -s -m 5 "$url/actuator/prometheus" || true)"
    if [ -n "$text" ] && [ "$(metric "$text" quorumkv_storage_compaction_pending_bytes)" -lt $((16 << 20)) ] \
      && [ "$(metric "$text" quorumkv_storage_compaction_running)" -eq 0 ]; then
      break
    fi
    sleep 1
  done
  echo "$i"
}
# sample_debt FILE SECONDS: every 10 s for SECONDS, one line of the node's storage and heap gauges
sample_debt() {
  local text start now
  start=$(date +%s)
  printf 'elapsed_s\tpending_compaction_bytes\tlevel0_tables\ttables\timmutable_memtables\tstall_ms\tdisk_bytes\tlive_heap_bytes\theap_used_bytes\n' >"$1"
  for ((i = 0; i <= $2 / 10; i++)); do
    now=$(date +%s)
    text="$(curl -s -m 5 "$url/actuator/prometheus" || true)"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$((now - start))" \
      "$(metric "$text" quorumkv_storage_compaction_pending_bytes)" "$(metric "$text" quorumkv_storage_tables_level_0)" \
      "$(metric "$text" quorumkv_storage_tables)" "$(metric "$text" quorumkv_storage_memtables_immutable)" \
      "$(($(metric "$text" quorumkv_storage_stall_nanos_total) / 1000000))" "$(metric "$text" quorumkv_storage_disk_bytes)" \
      "$(metric "$text" jvm_gc_live_data_size_bytes)" \
      "$(awk '/^jvm_memory_used_bytes\{/ && /area="heap"/ { s += $NF } END { printf "%.0f", s }' <<<"$text")" >>"$1"
    sleep $((start + (i + 1) * 10 - $(date +%s) > 0 ? start + (i + 1) * 10 - $(date +%s) : 0))
  done
}

{
  echo "commit $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%FT%TZ)"
  echo "nproc $(nproc), load average $(cut -d' ' -f1-3 /proc/loadavg); node JVM: ${java_opts[*]}"
  echo "command: scripts/scale-probe.sh --small $small --large $large --duration $duration --warmup $warmup --rate $rate" \
    "--paced $paced --debt-minutes $debt_minutes${keep_large:+ --keep-large $keep_large}${reuse_large:+ --reuse-large $reuse_large}$([ "$profile" = 1 ] && echo " --profile")"
  echo "load generators: wrk ($(wrk -v 2>&1 | head -n 1 || true)), $WRK_VERSION"
} >"$out/summary.txt"
echo "| keys | load entries/s | load write amp. | PUT rps | PUT p99 ms | GET rps | GET p99 ms | GET non-2xx | PUT p99 / p99.9 / max ms at $rate/s | GET p99 / p99.9 / max ms at $rate/s | PUT run write amp. | space amp. | heap used after |" >"$out/table.md"
echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|" >>"$out/table.md"

for keys in "$small" "$large"; do
  node_dir="$work/node-$keys"
  if [ "$keys" = "$large" ] && [ -n "$reuse_large" ]; then
    # A folder an earlier run kept (--keep-large): no load; the runs below write into it.
    node_dir="$reuse_large"
    [ -d "$node_dir/data" ] || { echo "scale-probe.sh: $node_dir holds no data folder" >&2; exit 1; }
    log "reusing $keys keys in $node_dir (no load)"
    load_rate="reused"
    load_wamp="-"
  else
    log "loading $keys keys (LsmLoader)"
    "$JAVA" -cp "$ROOT/jmh/target/benchmarks.jar" io.quorumkv.bench.LsmLoader "$node_dir/data" "$keys" 100 random \
      >"$out/loader-$keys.log" 2>&1
    grep '^loader: [0-9,]* entries\|^loader: total' "$out/loader-$keys.log" | tee -a "$out/summary.txt" >&2
    load_rate="$(sed -n 's/.*(\([0-9]*\) entries\/s).*/\1/p' "$out/loader-$keys.log")"
    load_wamp="$(sed -n 's/.*(write amplification \([0-9.]*\)).*/\1/p' "$out/loader-$keys.log")"
  fi

  # The collector's pauses and the safepoints: what a stall of the node was, when a request
  # waited long.
  start_lsm_node "$port" "$node_dir" "$out/node-$keys.log" "$out/jvm-$keys.log" "${java_opts[@]}"
  node_pid="$LSM_NODE_PID"
  log "node on $keys keys serving"
  if [ "$warmup" -gt 0 ]; then
    QKV_KEYS="$keys" wrk -t1 -c64 -d"$((warmup / 2))s" -s "$ROOT/scripts/wrk2/put.lua" "$url" >"$out/warmup-put-$keys.txt" 2>&1
    QKV_KEYS="$keys" wrk -t1 -c64 -d"$((warmup - warmup / 2))s" -s "$ROOT/scripts/wrk2/get.lua" "$url" \
      >"$out/warmup-get-$keys.txt" 2>&1
    log "warmed up for ${warmup}s; compaction debt under 16 MiB and no compaction running after $(settle) s more"
  fi

  before="$(write_bytes "$node_pid")"
  put="$(closed put put.lua)"
  after="$(write_bytes "$node_pid")"
  get="$(closed get get.lua)"
  log "PUTs, then GETs, at $rate/s for ${paced}s each (wrk2)"
  put_paced="$(paced put.lua "$out/put-paced-$keys.txt" "$paced")"
  get_paced="$(paced get.lua "$out/get-paced-$keys.txt" "$paced")"
  log "at $rate/s: PUT p99 / p99.9 / max $put_paced ms, GET $get_paced ms"
  "$JCMD" "$node_pid" GC.heap_info >"$out/heap-$keys.txt" 2>&1 || true
  heap="$(grep -o 'committed [0-9]*K, used [0-9]*K' "$out/heap-$keys.txt" | head -n 1 || true)"
  disk="$(du -sb "$node_dir/data" | cut -f1)"
  puts="$(field requests "$put")"
  put_wamp="$(awk -v w=$((after - before)) -v n="$puts" -v e="$entry_bytes" 'BEGIN { printf "%.2f", w / (n * e) }')"
  space_amp="$(awk -v d="$disk" -v k="$keys" -v e="$entry_bytes" 'BEGIN { printf "%.2f", d / (k * e) }')"
  printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$keys" "$load_rate" "$load_wamp" \
    "$(field rps "$put")" "$(field p99_ms "$put")" "$(field rps "$get")" "$(field p99_ms "$get")" \
    "$(field non2xx "$get")" "$put_paced" "$get_paced" "$put_wamp" "$space_amp" "${heap:-?}" >>"$out/table.md"
  log "PUT: $put"
  log "GET: $get"
  log "node wrote $((after - before)) bytes during $puts PUTs; data folder $disk bytes; heap: ${heap:-?}"
  if [ "$keys" = "$large" ] && [ "$debt_minutes" -gt 0 ]; then
    seconds=$((debt_minutes * 60))
    log "compaction debt: PUTs at $rate/s for $debt_minutes min (wrk2), the node's gauges every 10 s"
    sample_debt "$out/debt-$keys.tsv" "$seconds" &
    sampler_pid=$!
    before="$(write_bytes "$node_pid")"
    QKV_KEYS="$keys" "$WRK2" -t1 -c32 -d"${seconds}s" -R"$rate" --latency -s "$ROOT/scripts/wrk2/put.lua" "$url" \
      >"$out/put-debt-$keys.txt" 2>&1
    after="$(write_bytes "$node_pid")"
    curl -s -m 5 "$url/actuator/prometheus" | grep '^jvm_gc_pause_seconds' >"$out/gc-pauses-$keys.txt" || true
    wait "$sampler_pid" || true
    sampler_pid=""
    # What is reachable: jvm.gc.live.data.size is the old generation after the last collection
    # that shrank it, dead memtable chunks included until a mixed collection takes them; one full
    # collection after the timed run counts only what is reachable.
    # The heap that collection left, from G1's log line of it ("Pause Full (Diagnostic Command)
    # 543M->86M(1024M)"): the heap in use a moment later holds the young objects of the work
    # the node still does (compactions).
    "$JCMD" "$node_pid" GC.run >/dev/null 2>&1 || true
    sleep 1
    reachable_mib="$(grep 'Pause Full (Diagnostic Command)' "$out/jvm-$keys.log" | tail -n 1 | sed -n 's/.*->\([0-9]*\)M(.*/\1/p')"
    debt_puts="$(field requests "$(grep '^SUMMARY' "$out/put-debt-$keys.txt")")"
    {
      echo
      echo "Compaction debt, $keys keys: PUTs at $rate/s for $debt_minutes min (wrk2 -t1 -c32; debt-$keys.tsv every 10 s)"
      echo
      echo "| PUTs answered | rps | p99 / p99.9 / max ms | write amp. | pending compaction, max / last MiB | pending, mean of first / last third MiB | level-0 tables max | writers stalled s | live heap after GC max MiB | heap used max MiB | reachable after a full GC at the end MiB |"
      echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
      awk -F'\t' -v puts="$debt_puts" -v rps="$(wrk_rps "$out/put-debt-$keys.txt")" \
        -v lat="$(wrk_pct "$out/put-debt-$keys.txt" 99) / $(wrk_pct "$out/put-debt-$keys.txt" 99.9) / $(wrk_pct "$out/put-debt-$keys.txt" 100)" \
        -v reach="${reachable_mib:-0}" -v wamp="$(awk -v w=$((after - before)) -v n="$debt_puts" -v e="$entry_bytes" 'BEGIN { printf "%.2f", w / (n * e) }')" '
        NR == 1 { next }
        { n++; p[n] = $2; if ($2 > pmax) pmax = $2; if ($3 > l0) l0 = $3; if (n == 1) s0 = $6; s1 = $6
          if ($8 > live) live = $8; if ($9 > used) used = $9 }
        END {
          third = int(n / 3); for (i = 1; i <= third; i++) { a += p[i]; b += p[n - third + i] }
          m = 1048576
          printf "| %s | %s | %s | %s | %.0f / %.0f | %.0f / %.0f | %d | %.1f | %.0f | %.0f | %.0f |\n", puts, rps, lat, wamp,
            pmax / m, p[n] / m, (third ? a / third / m : 0), (third ? b / third / m : 0), l0, (s1 - s0) / 1000, live / m, used / m, reach
        }' "$out/debt-$keys.tsv"
    } >>"$out/debt.md"
    tee -a "$out/summary.txt" <"$out/debt.md" >&2
  fi
  stop_lsm_node
  node_pid=""
  # The stall watchdog's reports (docs/operations.md): each with the stacks under it, up to
  # the next line of the log that starts with a time.
  awk '/^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T/ { keep = /StallWatchdog/ } keep' "$out/node-$keys.log" >"$out/stalls-$keys.txt"
  log "stall watchdog, $keys keys: $(grep -c 'has run no task' "$out/stalls-$keys.txt") event-loop stalls," \
    "$(grep -c 'stood still' "$out/stalls-$keys.txt") JVM stalls of 1 s or more (stalls-$keys.txt)"
  if [ "$keys" = "$large" ] && [ -n "$reuse_large" ]; then
    log "kept $node_dir (reused)"
  elif [ "$keys" = "$large" ] && [ -n "$keep_large" ]; then
    rm -rf "$keep_large"
    mkdir -p "$(dirname "$keep_large")"
    mv "$node_dir" "$keep_large"
    log "kept the $keys keys' folder in $keep_large (--reuse-large $keep_large skips the load next time)"
  else
    rm -rf "$node_dir"
  fi
done
cat "$out/table.md"
[ -f "$out/debt.md" ] && cat "$out/debt.md"
if [ "$profile" = 1 ]; then
  for run in put get; do
    {
      echo "CPU per closed-loop ${run^^} (async-profiler, cpu, 1 ms), $large keys against $small:"
      echo
      python3 "$ROOT/scripts/lib/profile-compare.py" --storage \
        "$large=$out/$run-$large.collapsed:$(field requests "$(grep '^SUMMARY' "$out/$run-$large.txt")")" \
        "$small=$out/$run-$small.collapsed:$(field requests "$(grep '^SUMMARY' "$out/$run-$small.txt")")"
    } >"$out/profile-$run.md"
    tee -a "$out/summary.txt" <"$out/profile-$run.md" >&2
  done
fi
log "results in $out"
