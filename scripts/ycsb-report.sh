#!/usr/bin/env bash
# Builds the YCSB report: QuorumKV (three nodes at 2/3; LSM, H2 and Derby) beside Cassandra (three
# nodes, QUORUM) and etcd (three members), with YCSB's core workloads.
#
#   scripts/ycsb-report.sh [--out DIR] [--raw DIR] [--targets "..."] [--workloads "..."]
#                          [--threads N] [--records N] [--duration S] [--rate OPS] [--quick]
#
#   --targets    of qkv-lsm qkv-h2 qkv-derby cassandra etcd (default: all five)
#   --workloads  of a b c d e f (default "a b c f e"; e only where the store scans: all three here)
#   --threads    YCSB client threads of every run (16)       --records   records loaded (100000)
#   --duration   seconds of each measured run (60)           --rate      the common fixed rate (1000 ops/s),
#                or several ("400 2000"): the first gives the latency table and charts, every
#                one a row of the servers' CPU per operation
#   --warmup     seconds of an unmeasured closed-loop run before each workload's runs (30)
#   --settle     seconds at the start of each fixed-rate run left out of its latencies (10): a
#                fixed-rate run is a new YCSB JVM, whose start delays the operations due then
#   --out        the report folder (docs/reports/ycsb)       --raw       raw outputs (run/ycsb-report)
#   --report-only  rebuild README.md from the raw outputs of an earlier run, start nothing
#   --quick      a pipeline check of seconds: 500 records, 3 s runs, 2 s warm-ups, 100 ops/s;
#                write --out elsewhere
#
# For each target: start it fresh, load the records once, then per workload a closed-loop run at
# the same client threads (throughput) and a run at the fixed rate (YCSB -target), whose
# latencies are the intended ones (from when each operation was due: coordinated omission
# included). The servers' CPU per operation is their user+system time from /proc/<pid>/stat over
# a run, divided by its operations. Each run's raw output stays in RAW/<target>/<workload>-<kind>/
# and each figure of README.md names that run. The machine should be calm: run nothing else.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$ROOT/docs/reports/ycsb"
RAW="$ROOT/run/ycsb-report"
TARGETS="qkv-lsm qkv-h2 qkv-derby cassandra etcd"
WORKLOADS="a b c f e"
THREADS=16 RECORDS=100000 DURATION=60 RATES=1000 WARMUP=30 SETTLE=10 REPORT_ONLY=0

die() {
  echo "ycsb-report.sh: $*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT="${2:?}"; shift 2 ;;
    --raw) RAW="${2:?}"; shift 2 ;;
    --targets) TARGETS="${2:?}"; shift 2 ;;
    --workloads) WORKLOADS="${2:?}"; shift 2 ;;
    --threads) THREADS="${2:?}"; shift 2 ;;
    --records) RECORDS="${2:?}"; shift 2 ;;
    --duration) DURATION="${2:?}"; shift 2 ;;
    --rate) RATES="${2:?}"; shift 2 ;;
    --warmup) WARMUP="${2:?}"; shift 2 ;;
    --settle) SETTLE="${2:?}"; shift 2 ;;
    --report-only) REPORT_ONLY=1; shift ;;
    --quick) RECORDS=500 DURATION=3 RATES=100 WARMUP=2 SETTLE=0; shift ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown option: $1" ;;
  esac
done
for t in $TARGETS; do
  case "$t" in qkv-lsm | qkv-h2 | qkv-derby | cassandra | etcd) ;; *) die "unknown target $t" ;; esac
done
for r in $RATES; do [[ "$r" =~ ^[1-9][0-9]*$ ]] || die "--rate takes ops/s: $r"; done
RATE="${RATES%% *}" # the first: the latency table's and the charts' runs are <workload>-rate
mkdir -p "$OUT" "$RAW"
OUT="$(cd "$OUT" && pwd)"
RAW="$(cd "$RAW" && pwd)"
CLK_TCK="$(getconf CLK_TCK)"
STAMP="$(date -u +%Y-%m-%dT%H:%MZ)"
CURRENT=""

start_target() {
  case "$1" in
    qkv-*) "$ROOT/scripts/cluster.sh" up --insecure --nodes 3 --backend "${1#qkv-}" --fresh --dir "$ROOT/run/ycsb/cluster" ;;
    cassandra) "$ROOT/scripts/anchors/cassandra.sh" up --fresh ;;
    etcd) "$ROOT/scripts/anchors/etcd.sh" up --fresh ;;
  esac
  CURRENT="$1"
}

stop_target() {
  case "$1" in
    qkv-*) "$ROOT/scripts/cluster.sh" down --dir "$ROOT/run/ycsb/cluster" ;;
    cassandra) "$ROOT/scripts/anchors/cassandra.sh" down ;;
    etcd) "$ROOT/scripts/anchors/etcd.sh" down ;;
  esac
  CURRENT=""
}
trap '[ -z "$CURRENT" ] || stop_target "$CURRENT" >/dev/null 2>&1 || true' EXIT

server_pids() {
  case "$1" in
    qkv-*) cat "$ROOT"/run/ycsb/cluster/node*/node.pid ;;
    cassandra) cat "${QKV_ANCHORS_DIR:-$ROOT/run/anchors}"/cassandra/node*/node.pid ;;
    etcd) cat "${QKV_ANCHORS_DIR:-$ROOT/run/anchors}"/etcd/m*/etcd.pid ;;
  esac
}

# User plus system clock ticks of the target's server processes, summed.
cpu_ticks() {
  local pid total=0
  for pid in $(server_pids "$1"); do
    # Fields 14 and 15 of /proc/PID/stat, counted after the command name's closing parenthesis.
    total=$((total + $(sed 's/^.*) //' "/proc/$pid/stat" | awk '{ print $12 + $13 }')))
  done
  echo "$total"
}

ycsb_target() { case "$1" in qkv-*) echo quorumkv ;; *) echo "$1" ;; esac; }

# rate_run WORKLOAD R: the name of a fixed-rate run, <workload>-rate at the first rate,
# <workload>-rate-R at the others.
rate_run() { if [ "$2" = "$RATE" ]; then echo "$1-rate"; else echo "$1-rate-$2"; fi; }

# One measured run: WORKLOAD KIND(closed|rate) [R] -> RAW/<target>/<workload>-closed/ or
# RAW/<target>/$(rate_run WORKLOAD R)/, with cpu.txt.
measure() {
  local target="$1" workload="$2" kind="$3" dir="$RAW/$1/$2-$3" before after ops
  local -a rate=()
  if [ "$kind" = rate ]; then
    rate=(--rate "$4")
    dir="$RAW/$target/$(rate_run "$workload" "$4")"
  fi
  rm -rf "$dir"
  before="$(cpu_ticks "$target")"
  "$ROOT/scripts/ycsb.sh" "$workload" "$(ycsb_target "$target")" --phase run --threads "$THREADS" \
    --records "$RECORDS" --ops 100000000 --duration "$DURATION" "${rate[@]}" --backend "${target#qkv-}" --out "$dir"
  after="$(cpu_ticks "$target")"
  ops="$(awk -F', ' '/^\[OVERALL\], RunTime/ { t = $3 } /^\[OVERALL\], Throughput/ { print int($3 * t / 1000 + 0.5) }' "$dir/run.txt")"
  echo "server_cpu_ticks=$((after - before)) clk_tck=$CLK_TCK operations=$ops" >"$dir/cpu.txt"
}

for target in $TARGETS; do
  [ "$REPORT_ONLY" = 0 ] || break
  echo "=== $target"
  start_target "$target"
  rm -rf "$RAW/$target"
  mkdir -p "$RAW/$target"
  "$ROOT/scripts/ycsb.sh" a "$(ycsb_target "$target")" --phase load --threads "$THREADS" --records "$RECORDS" \
    --backend "${target#qkv-}" --out "$RAW/$target/load"
  for workload in $WORKLOADS; do
    # Unmeasured: the servers' JIT and caches warm up on this workload's mix first.
    "$ROOT/scripts/ycsb.sh" "$workload" "$(ycsb_target "$target")" --phase run --threads "$THREADS" \
      --records "$RECORDS" --ops 100000000 --duration "$WARMUP" --backend "${target#qkv-}" --out "$RAW/$target/$workload-warmup"
    measure "$target" "$workload" closed
    for r in $RATES; do measure "$target" "$workload" rate "$r"; done
  done
  stop_target "$target"
done

# --- the report ---------------------------------------------------------------------------------

# A report rebuilt from earlier outputs is dated by its newest run, not by today.
if [ "$REPORT_ONLY" = 1 ]; then
  newest="$(find "$RAW" -name run.txt -printf '%T@\n' | sort -n | tail -1)"
  [ -n "$newest" ] || die "no run.txt under $RAW"
  STAMP="$(date -u -d "@${newest%.*}" +%Y-%m-%dT%H:%MZ)"
fi

# The charts and the fixed-rate latencies, from the same raw outputs (io.quorumkv.bench.report in
# jmh/target/benchmarks.jar).
[ -f "$ROOT/jmh/target/benchmarks.jar" ] || die "jmh/target/benchmarks.jar is missing (./mvnw -DskipTests package)"
report_tool() { "${JAVA_HOME:+$JAVA_HOME/bin/}java" -Djava.awt.headless=true -cp "$ROOT/jmh/target/benchmarks.jar" "io.quorumkv.bench.report.$@"; }
CHARTS=0
report_tool YcsbCharts "$RAW" "$OUT" "$TARGETS" "$WORKLOADS" "$SETTLE" && CHARTS=1

value() { # FILE SERIES FIELD
  awk -F', ' -v s="[$2]" -v f="$3" '$1 == s && $2 == f { print $3; exit }' "$1"
}

ms() { awk -v us="${1:-}" 'BEGIN { if (us == "") print "-"; else printf "%.2f", us / 1000 }'; }

cpu_per_op() { # cpu.txt -> microseconds of server CPU per operation
  awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
       END { if (v["operations"] > 0) printf "%.0f", v["server_cpu_ticks"] / v["clk_tck"] * 1e6 / v["operations"]; else print "-" }' "$1"
}

{
  echo "# YCSB: QuorumKV beside Cassandra and etcd"
  echo
  echo "Built by \`scripts/ycsb-report.sh\` on $STAMP: $THREADS YCSB client threads, $RECORDS records of YCSB's"
  echo "default shape (10 fields of 100 bytes, 1,144 bytes encoded by \`FieldCodec\`), ${DURATION} s per measured"
  echo "run after a ${WARMUP} s unmeasured warm-up, the fixed rate$( [ "$RATES" = "$RATE" ] || echo s) ${RATES// /, } ops/s (latencies after each run's first ${SETTLE} s). Raw outputs: \`${RAW#"$ROOT"/}/<target>/<workload>-<closed|rate|rate-R>/\`; a"
  echo "run is named \`<target>/<workload>-<kind>\` below. All processes share one host: $(nproc) cores."
  echo
  echo "| target | what runs | durability promised when a write is acknowledged |"
  echo "|---|---|---|"
  echo "| qkv-lsm, qkv-h2, qkv-derby | three QuorumKV nodes (\`scripts/cluster.sh\`), \`replicas=2/3\` | on 2 of 3 replicas, each durable by its backend's default (docs/storage-*.md) |"
  echo "| cassandra | Cassandra 5.0.6, three nodes, RF 3, QUORUM (\`scripts/anchors/cassandra.sh\`) | in 2 of 3 commit logs, fsynced every 10 s (\`commitlog_sync: periodic\`, the default): not yet on disk |"
  echo "| etcd | etcd 3.4, three members (\`scripts/anchors/etcd.sh\`) | linearizable: appended and fsynced to a majority's Raft log |"
  echo
  echo "## Closed loop: throughput at $THREADS threads"
  echo
  printf '| workload |'; for t in $TARGETS; do printf ' %s |' "$t"; done; echo
  printf '|---|'; for t in $TARGETS; do printf -- '---|'; done; echo
  for w in $WORKLOADS; do
    printf '| %s |' "${w^^}"
    for t in $TARGETS; do
      f="$RAW/$t/$w-closed/run.txt"
      printf ' %s |' "$( [ -f "$f" ] && printf '%.0f ops/s (`%s/%s-closed`)' "$(value "$f" OVERALL 'Throughput(ops/sec)')" "$t" "$w" || echo -)"
    done
    echo
  done
  echo
  if [ "$CHARTS" = 1 ]; then
    echo "![Closed-loop throughput per workload and target (log scale)](ycsb-throughput.svg)"
    echo
  fi
  echo "## Servers' CPU per operation at fixed rates"
  echo
  echo "Microseconds of the servers' user+system time per operation, over each fixed-rate run (the"
  echo "run named in parentheses; the achieved rate where it fell short by more than 5%)."
  echo
  printf '| workload |'; for t in $TARGETS; do for r in $RATES; do printf ' %s at %s/s |' "$t" "$r"; done; done; echo
  printf '|---|'; for t in $TARGETS; do for r in $RATES; do printf -- '---|'; done; done; echo
  for w in $WORKLOADS; do
    printf '| %s |' "${w^^}"
    for t in $TARGETS; do
      for r in $RATES; do
        f="$RAW/$t/$(rate_run "$w" "$r")"
        if [ -f "$f/cpu.txt" ]; then
          achieved="$(printf '%.0f' "$(value "$f/run.txt" OVERALL 'Throughput(ops/sec)')")"
          printf ' %s (`%s/%s`)%s |' "$(cpu_per_op "$f/cpu.txt")" "$t" "$(basename "$f")" \
            "$(awk -v a="$achieved" -v r="$r" 'BEGIN { if (a < 0.95 * r) printf ", %d ops/s", a }')"
        else
          printf ' - |'
        fi
      done
    done
    echo
  done
  echo
  echo "## At $RATE ops/s: intended latency (ms) and servers' CPU per operation"
  echo
  if [ "$CHARTS" = 1 ]; then
    echo "![Intended p99 latency per workload, operation and target at the fixed rate (log scale)](ycsb-p99.svg)"
    echo
  fi
  echo "| run | operation | p50 | p99 | p99.9 | operations after ${SETTLE} s | achieved ops/s | server CPU per op (us) |"
  echo "|---|---|---|---|---|---|---|---|"
  for w in $WORKLOADS; do
    for t in $TARGETS; do
      f="$RAW/$t/$w-rate/run.txt"
      [ -f "$f" ] || continue
      for op in READ UPDATE INSERT SCAN READ-MODIFY-WRITE; do
        # count p50 p99 p99.9 max, in microseconds, of the intervals after the settle time
        read -r count p50 p99 p999 _ < <(report_tool YcsbLatency "$RAW/$t/$w-rate/run-Intended-$op.hdr" "$SETTLE") || continue
        echo "| \`$t/$w-rate\` | $op | $(ms "$p50") | $(ms "$p99") | $(ms "$p999") | $count | $(printf '%.0f' "$(value "$f" OVERALL 'Throughput(ops/sec)')") | $(cpu_per_op "$RAW/$t/$w-rate/cpu.txt") |"
      done
    done
  done
  echo
  echo "Latencies are intended ones (from when YCSB meant to send each operation: coordinated omission"
  echo "included), read from each run's HdrHistogram logs (\`run-Intended-<OPERATION>.hdr\`, 5 s intervals)"
  echo "leaving out the intervals that start in the run's first ${SETTLE} s: each fixed-rate run is a new"
  echo "YCSB JVM, and its start delays every operation due then (wrk2 drops its first 10 s for the same"
  echo "reason). YCSB's own summary in \`run.txt\` counts the whole run."
  echo
  echo "Server CPU per operation is the user+system time of the target's server processes over the run"
  echo "(\`/proc/<pid>/stat\`), divided by the run's operations; a closed-loop run's is in its \`cpu.txt\`."
  if [ -f "$OUT/ANALYSIS.md" ]; then
    echo
    cat "$OUT/ANALYSIS.md"
  fi
} >"$OUT/README.md"
echo "report: $OUT/README.md"
