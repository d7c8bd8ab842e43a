#!/usr/bin/env bash
# Conditional writes beside plain writes, and beside Cassandra's lightweight transactions and
# etcd's transactions: YCSB update-only runs at the same client threads against each store.
#
#   scripts/conditional-speed.sh [--targets "quorumkv cassandra etcd"] [--threads N] [--records N]
#                                [--duration S] [--warmup S] [--out DIR] [--keep-data] [--quick]
#
#   --targets   of quorumkv cassandra etcd (default all three)   --threads   YCSB client threads (8)
#   --records   records of the uncontended runs (10000)          --duration  seconds per measured run (30)
#   --warmup    seconds of an unmeasured plain update run per target first (20)
#   --out       outputs (run/conditional-speed/<UTC time>)       --keep-data keep the stores' data folders
#   --quick     a pipeline check: 200 records, 3 s runs, 2 s warm-up
#
# Per target, started fresh with three nodes or members as scripts/ycsb.sh starts them (QuorumKV:
# scripts/cluster.sh, LSM, update at 2/3; Cassandra 5.0.6: RF 3, QUORUM; etcd: three members):
# load the records once, one unmeasured warm-up, then four measured runs of scripts/ycsb.sh with
# workload A's settings made update-only (readproportion=0, updateproportion=1) with uniform keys, a closed loop of
# --threads threads for --duration seconds:
#   plain-spread  update = read, merge, plain write; keys uniform over --records records
#   cas-spread    update = read, merge, conditional write (--conditional-update: QuorumKV's
#                 If-Match, Cassandra's UPDATE ... IF / INSERT ... IF NOT EXISTS, etcd's Txn on
#                 mod_revision); retried after a jittered wait when another writer came between, up
#                 to ten rounds (the QuorumKV client's policy, shared by the anchors' bindings)
#   plain-onekey, cas-onekey   the same on one record: every thread updates the same key
# Before each run the 1-minute load average and the host check (lib/wrk-tool.sh host_speed: a
# fixed CPU loop, "min-max ms" of three) are recorded: the machine is shared, and they say how
# busy it was.
#
# Outputs in DIR: <target>/<run>/ (scripts/ycsb.sh's: run.txt, run.log, HdrHistogram logs,
# run.command.txt), host.txt per run, and summary.md: per run the applied updates per second,
# the p99 of applied updates (YCSB's [UPDATE] series), failed updates (YCSB's Return= other than
# OK: timeouts, and conditional updates that lost ten rounds), the retries (rounds past each
# update's first, printed by the bindings as "conditional-updates: ...") and the ratios to plain
# QuorumKV 2/3 updates of the same shape. Every store this script starts is stopped on exit and
# its data folder (DIR/servers) deleted unless --keep-data.
#
# Environment: QKV_UP_TIMEOUT (scripts/cluster.sh), CASSANDRA_UP_TIMEOUT, ETCD_UP_TIMEOUT: how long
# each store may take to start; raise them on a busy host (the run in docs/ycsb.md needed
# QKV_UP_TIMEOUT=400).
#
# Needs: ./mvnw -DskipTests package of service, ycsb and ycsb-anchors (scripts/ycsb.sh's needs) and,
# for Cassandra, scripts/anchors/cassandra.sh's (it resolves Cassandra's jars on first use).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/lib/wrk-tool.sh
. "$ROOT/scripts/lib/wrk-tool.sh"

die() {
  echo "conditional-speed.sh: $*" >&2
  exit 1
}

ARGS=("$@")
TARGETS="quorumkv cassandra etcd" THREADS=8 RECORDS=10000 DURATION=30 WARMUP=20 OUT="" KEEP_DATA=0
while [ $# -gt 0 ]; do
  case "$1" in
    --targets) TARGETS="${2:?}"; shift 2 ;;
    --threads) THREADS="${2:?}"; shift 2 ;;
    --records) RECORDS="${2:?}"; shift 2 ;;
    --duration) DURATION="${2:?}"; shift 2 ;;
    --warmup) WARMUP="${2:?}"; shift 2 ;;
    --out) OUT="${2:?}"; shift 2 ;;
    --keep-data) KEEP_DATA=1; shift ;;
    --quick) RECORDS=200 DURATION=3 WARMUP=2; shift ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown option: $1" ;;
  esac
done
for t in $TARGETS; do
  case "$t" in quorumkv | cassandra | etcd) ;; *) die "unknown target $t (quorumkv, cassandra, etcd)" ;; esac
done
for n in THREADS RECORDS DURATION WARMUP; do
  [[ "${!n}" =~ ^[0-9]+$ ]] && [ "${!n}" -ge 1 ] || die "--${n,,} must be a positive number, not ${!n}"
done

OUT="${OUT:-$ROOT/run/conditional-speed/$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
SERVERS="$OUT/servers"
export QKV_ANCHORS_DIR="$SERVERS/anchors"
QKV_DIR="$SERVERS/quorumkv"
printf '%q ' "$0" "${ARGS[@]}" >"$OUT/command.txt"
echo >>"$OUT/command.txt"

CURRENT=""
start_target() {
  case "$1" in
    quorumkv) "$ROOT/scripts/cluster.sh" up --insecure --nodes 3 --backend lsm --fresh --dir "$QKV_DIR" ;;
    cassandra) "$ROOT/scripts/anchors/cassandra.sh" up --fresh ;;
    etcd) "$ROOT/scripts/anchors/etcd.sh" up --fresh ;;
  esac
}
stop_target() {
  case "$1" in
    quorumkv) "$ROOT/scripts/cluster.sh" down --dir "$QKV_DIR" ;;
    cassandra) "$ROOT/scripts/anchors/cassandra.sh" down ;;
    etcd) "$ROOT/scripts/anchors/etcd.sh" down ;;
  esac
}
cleanup() {
  if [ -n "$CURRENT" ]; then
    stop_target "$CURRENT" >/dev/null 2>&1 || true
    CURRENT=""
  fi
  [ "$KEEP_DATA" = 1 ] || rm -rf "$SERVERS"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A store on a port this script would use, not started by it, would be measured instead.
for port in 8081 9042 2379; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    die "127.0.0.1:$port is in use: stop what runs there first (this script starts its own stores)"
  fi
done

UPDATE_ONLY=(--prop readproportion=0 --prop updateproportion=1 --prop scanproportion=0 --prop insertproportion=0
  --prop readmodifywriteproportion=0 --prop requestdistribution=uniform)

# measure TARGET NAME RECORDS [ycsb.sh options...]: one measured run into OUT/TARGET/NAME.
measure() {
  local target="$1" name="$2" records="$3" dir="$OUT/$1/$2"
  shift 3
  mkdir -p "$dir"
  echo "load_avg_1m=$(cut -d' ' -f1 /proc/loadavg) host_check=\"$(host_speed)\"" >"$dir/host.txt"
  # A run that fails (YCSB exits non-zero) is named in the summary; the others still run.
  "$ROOT/scripts/ycsb.sh" a "$target" --phase run --threads "$THREADS" --records "$records" --ops 1000000000 \
    --duration "$DURATION" "${UPDATE_ONLY[@]}" "$@" --out "$dir" || touch "$dir/failed"
}

for target in $TARGETS; do
  echo "=== $target"
  CURRENT="$target"
  start_target "$target"
  "$ROOT/scripts/ycsb.sh" a "$target" --phase load --threads "$THREADS" --records "$RECORDS" --out "$OUT/$target/load"
  # Unmeasured: the servers' JIT, caches and connections warm up on plain updates first.
  "$ROOT/scripts/ycsb.sh" a "$target" --phase run --threads "$THREADS" --records "$RECORDS" --ops 1000000000 \
    --duration "$WARMUP" "${UPDATE_ONLY[@]}" --out "$OUT/$target/warmup"
  # Spread: uniform over every record, so that two threads rarely meet on a key.
  measure "$target" plain-spread "$RECORDS"
  measure "$target" cas-spread "$RECORDS" --conditional-update
  # One key: with recordcount=1 every operation goes to the first record loaded.
  measure "$target" plain-onekey 1
  measure "$target" cas-onekey 1 --conditional-update
  stop_target "$target"
  CURRENT=""
done

# --- the summary ----------------------------------------------------------------------------------

value() { # FILE SERIES FIELD
  awk -F', ' -v s="[$2]" -v f="$3" '$1 == s && $2 == f { print $3; exit }' "$1" 2>/dev/null
}
# Applied updates per second: YCSB's Return=OK count over the run's time.
applied_rate() {
  awk -F', ' '$1 == "[OVERALL]" && $2 == "RunTime(ms)" { t = $3 } $1 == "[UPDATE]" && $2 == "Return=OK" { ok = $3 }
    END { if (t > 0) printf "%.0f", ok * 1000 / t; else print "-" }' "$1"
}
failed_updates() {
  awk -F', ' '$1 == "[UPDATE]" && $2 ~ /^Return=/ && $2 != "Return=OK" { n += $3 } END { print n + 0 }' "$1"
}
# retries=N from the binding's "conditional-updates:" line, "-" for plain updates.
retries() {
  local line
  line="$(grep -h '^conditional-updates:' "$1" 2>/dev/null | tail -n 1 || true)"
  [ -n "$line" ] && sed 's/.* retries=\([0-9]*\).*/\1/' <<<"$line" || echo -
}
ratio() { awk -v a="${1:-}" -v b="${2:-}" 'BEGIN { if (a == "" || b == "" || a == "-" || b == "-" || b + 0 == 0) print "-"; else printf "%.2f", a / b }'; }
ms() { awk -v us="${1:-}" 'BEGIN { if (us == "") print "-"; else printf "%.1f", us / 1000 }'; }

{
  echo "# Conditional writes beside plain writes, LWT and transactions"
  echo
  echo "\`$(sed -e "s|$ROOT/||" -e "s/ *$//" "$OUT/command.txt")\`, $(date -u +%Y-%m-%dT%H:%MZ) (the end), $(nproc) cores shared by"
  echo "the stores and YCSB. $THREADS YCSB threads, closed loop, ${DURATION} s per run after a ${WARMUP} s plain warm-up;"
  echo "update-only (workload A's settings, readproportion=0, updateproportion=1); *spread*: uniform over"
  echo "$RECORDS records, *onekey*: one record. Updates/s are applied ones; p99 is of applied updates."
  echo
  echo "| target | run | updates/s | p99 (ms) | failed | retries | ÷ QuorumKV plain: updates/s | ÷ QuorumKV plain: p99 | load (1 min) | host check |"
  echo "|---|---|---|---|---|---|---|---|---|---|"
  for target in $TARGETS; do
    for run in plain-spread cas-spread plain-onekey cas-onekey; do
      f="$OUT/$target/$run/run.txt"
      if [ -f "$OUT/$target/$run/failed" ]; then
        echo "| $target | $run | YCSB failed: see \`$target/$run/run.log\` | | | | | | | |"
        continue
      fi
      [ -f "$f" ] || continue
      base="$OUT/quorumkv/plain-${run#*-}/run.txt"
      rate="$(applied_rate "$f")"
      p99="$(value "$f" UPDATE '99thPercentileLatency(us)')"
      base_rate="-" base_p99=""
      if [ -f "$base" ]; then
        base_rate="$(applied_rate "$base")"
        base_p99="$(value "$base" UPDATE '99thPercentileLatency(us)')"
      fi
      # shellcheck disable=SC1090
      . "$OUT/$target/$run/host.txt"
      echo "| $target | $run | $rate | $(ms "$p99") | $(failed_updates "$f") | $(retries "$OUT/$target/$run/run.log") | $(ratio "$rate" "$base_rate") | $(ratio "$p99" "$base_p99") | $load_avg_1m | $host_check |"
    done
  done
  echo
  echo "Raw outputs: \`${OUT#"$ROOT"/}/<target>/<run>/\` (run.txt: YCSB's summary; run.log: the bindings'"
  echo "\`conditional-updates:\` line with rounds, retries and updates that lost all ten rounds)."
} >"$OUT/summary.md"
cat "$OUT/summary.md"
