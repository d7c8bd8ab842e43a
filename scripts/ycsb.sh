#!/usr/bin/env bash
# Runs one YCSB core workload against one store, with YCSB 0.17.0's client and our bindings.
#
#   scripts/ycsb.sh WORKLOAD TARGET [options]
#     WORKLOAD  a|b|c|d|e|f (scripts/ycsb/workloads/workload<w>, YCSB's core workloads)
#     TARGET    quorumkv   three local nodes (scripts/cluster.sh), binding io.quorumkv.ycsb.QuorumKvDb
#               cassandra  three nodes (scripts/anchors/cassandra.sh), io.quorumkv.ycsb.anchors.CassandraDb
#               etcd       three members (scripts/anchors/etcd.sh), io.quorumkv.ycsb.anchors.EtcdDb
#   options:
#     --phase load|run|both   (both)          --threads N      client threads (16)
#     --records N             (10000)         --ops N          operations of the run phase (100000)
#     --duration S            cap of the run phase in seconds (YCSB maxexecutiontime; 0 = none; 60)
#     --rate OPS              a fixed rate for the run phase (YCSB -target; 0 = closed loop; 0)
#     --replicas ACK/FROM     QuorumKV's quorum (2/3)     --backend lsm|h2|derby   QuorumKV's storage (lsm)
#     --out DIR               where outputs go (run/ycsb/<target>-<workload>-<UTC time>)
#     --keep                  leave a target this script started running
#     --conditional-update    update (workload F's read-modify-write) by compare-and-set: QuorumKV's
#                             conditional writes (quorumkv.conditional-update=true), Cassandra's
#                             lightweight transactions (cassandra.conditional-update=true), etcd's
#                             transactions (etcd.conditional-update=true); docs/ycsb.md
#     --prop NAME=VALUE       one more YCSB property (-p, which wins over the workload file): e.g.
#                             --prop updateproportion=1 --prop readproportion=0 (repeatable)
#
# A target that is not running is started (QuorumKV: scripts/cluster.sh up --fresh in
# run/ycsb/cluster; the anchors: their scripts) and stopped at the end unless --keep. Outputs in
# DIR: <phase>.txt (YCSB's summary: throughput and per-operation latency percentiles),
# <phase>.log (its stderr and status lines), <phase>-<OP>.hdr (HdrHistogram logs of each
# operation) and, with measurement.interval=both, the Intended-<OP> series: latency measured from
# when an operation should have started at the fixed rate (coordinated omission included), next
# to the plain service time; command.txt records the exact command.
#
# Needs: ./mvnw -DskipTests package (ycsb/target, ycsb-anchors/target, service/target/quorumkv.jar).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

die() {
  echo "ycsb.sh: $*" >&2
  exit 1
}

usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "${BASH_SOURCE[0]}"
  exit "${1:-2}"
}

[ $# -ge 2 ] || usage
WORKLOAD="$1"
TARGET="$2"
shift 2
PHASE=both THREADS=16 RECORDS=10000 OPS=100000 DURATION=60 RATE=0 REPLICAS=2/3 BACKEND=lsm OUT="" KEEP=0 CONDITIONAL=false
EXTRA_PROPS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --phase) PHASE="${2:?}"; shift 2 ;;
    --threads) THREADS="${2:?}"; shift 2 ;;
    --records) RECORDS="${2:?}"; shift 2 ;;
    --ops) OPS="${2:?}"; shift 2 ;;
    --duration) DURATION="${2:?}"; shift 2 ;;
    --rate) RATE="${2:?}"; shift 2 ;;
    --replicas) REPLICAS="${2:?}"; shift 2 ;;
    --backend) BACKEND="${2:?}"; shift 2 ;;
    --out) OUT="${2:?}"; shift 2 ;;
    --keep) KEEP=1; shift ;;
    --conditional-update) CONDITIONAL=true; shift ;;
    --prop)
      [[ "${2:-}" =~ ^[A-Za-z0-9_.-]+=.*$ ]] || die "--prop takes NAME=VALUE, not '${2:-}'"
      EXTRA_PROPS+=(-p "$2"); shift 2 ;;
    -h | --help) usage 0 ;;
    *) die "unknown option: $1" ;;
  esac
done
WORKLOAD_FILE="$ROOT/scripts/ycsb/workloads/workload$WORKLOAD"
[ -f "$WORKLOAD_FILE" ] || die "no workload '$WORKLOAD' (a..f)"
case "$PHASE" in load | run | both) ;; *) die "--phase is load, run or both" ;; esac
for n in THREADS RECORDS OPS DURATION RATE; do
  [[ "${!n}" =~ ^[0-9]+$ ]] || die "--${n,,} must be a number, not ${!n}"
done
[ "$THREADS" -ge 1 ] || die "--threads must be at least 1"

JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
major="$("$JAVA" -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n 1)"
[ -n "$major" ] && [ "$major" -ge 25 ] ||
  die "the bindings are built for Java 25, $JAVA is ${major:-unknown}: export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64"
CLUSTER_DIR="$ROOT/run/ycsb/cluster"
STARTED=0

reachable() {
  case "$TARGET" in
    quorumkv) curl -s -o /dev/null -m 2 -w '%{http_code}' http://127.0.0.1:8081/v0/status 2>/dev/null | grep -q 200 ;;
    cassandra) (exec 3<>/dev/tcp/127.0.0.1/9042) 2>/dev/null ;;
    etcd) curl -s -m 2 http://127.0.0.1:2379/health 2>/dev/null | grep -q '"health":"true"' ;;
  esac
}

start_target() {
  case "$TARGET" in
    quorumkv) "$ROOT/scripts/cluster.sh" up --insecure --nodes 3 --backend "$BACKEND" --fresh --dir "$CLUSTER_DIR" ;;
    cassandra) "$ROOT/scripts/anchors/cassandra.sh" up --fresh ;;
    etcd) "$ROOT/scripts/anchors/etcd.sh" up --fresh ;;
  esac
}

stop_target() {
  case "$TARGET" in
    quorumkv) "$ROOT/scripts/cluster.sh" down --dir "$CLUSTER_DIR" ;;
    cassandra) "$ROOT/scripts/anchors/cassandra.sh" down ;;
    etcd) "$ROOT/scripts/anchors/etcd.sh" down ;;
  esac
}

case "$TARGET" in
  quorumkv)
    DB=io.quorumkv.ycsb.QuorumKvDb
    LIB="$ROOT/ycsb/target"
    JAR="$LIB/ycsb.jar"
    DB_PROPS=(-p "quorumkv.seeds=http://127.0.0.1:8081,http://127.0.0.1:8082,http://127.0.0.1:8083" -p "quorumkv.replicas=$REPLICAS"
      -p "quorumkv.conditional-update=$CONDITIONAL")
    ;;
  cassandra)
    DB=io.quorumkv.ycsb.anchors.CassandraDb
    LIB="$ROOT/ycsb-anchors/target"
    JAR="$LIB/ycsb-anchors.jar"
    DB_PROPS=(-p cassandra.hosts=127.0.0.1,127.0.0.2,127.0.0.3 -p cassandra.consistency=QUORUM
      -p "cassandra.conditional-update=$CONDITIONAL")
    ;;
  etcd)
    DB=io.quorumkv.ycsb.anchors.EtcdDb
    LIB="$ROOT/ycsb-anchors/target"
    JAR="$LIB/ycsb-anchors.jar"
    DB_PROPS=(-p "etcd.endpoints=http://127.0.0.1:2379,http://127.0.0.1:22379,http://127.0.0.1:32379"
      -p "etcd.conditional-update=$CONDITIONAL")
    ;;
  *) die "TARGET is quorumkv, cassandra or etcd, not $TARGET" ;;
esac
[ -f "$JAR" ] && [ -d "$LIB/lib" ] || die "$JAR or $LIB/lib is missing: run ./mvnw -DskipTests package first"

OUT="${OUT:-$ROOT/run/ycsb/$TARGET-$WORKLOAD-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"

if ! reachable; then
  start_target
  STARTED=1
fi
cleanup() {
  if [ "$STARTED" = 1 ] && [ "$KEEP" = 0 ]; then
    stop_target >/dev/null || true
  fi
}
trap cleanup EXIT

run_phase() {
  local phase="$1" flag=-t
  local -a extra=(-p "operationcount=$OPS")
  if [ "$phase" = load ]; then
    flag=-load
    extra=()
  else
    [ "$DURATION" -gt 0 ] && extra+=(-p "maxexecutiontime=$DURATION")
    [ "$RATE" -gt 0 ] && extra+=(-target "$RATE")
  fi
  local -a command=("$JAVA" -Xmx1g -cp "$JAR:$LIB/lib/*" site.ycsb.Client "$flag" -db "$DB" -P "$WORKLOAD_FILE"
    -threads "$THREADS" -p "recordcount=$RECORDS" "${extra[@]}" "${EXTRA_PROPS[@]}" "${DB_PROPS[@]}"
    -p measurementtype=hdrhistogram -p hdrhistogram.fileoutput=true
    -p "hdrhistogram.output.path=$OUT/$phase-" -p measurement.interval=both
    -p hdrhistogram.percentiles=50,95,99,99.9 -p status.interval=5 -s)
  printf '%q ' "${command[@]}" >"$OUT/$phase.command.txt"
  echo "ycsb: $TARGET workload $WORKLOAD $phase, $THREADS threads -> $OUT/$phase.txt"
  "${command[@]}" >"$OUT/$phase.txt" 2>"$OUT/$phase.log" || die "YCSB $phase failed (see $OUT/$phase.log)"
  grep -E '^\[OVERALL\]|Return=' "$OUT/$phase.txt" | sed 's/^/  /' || true
}

[ "$PHASE" != run ] && run_phase load
[ "$PHASE" != load ] && run_phase run
echo "done: $OUT"
