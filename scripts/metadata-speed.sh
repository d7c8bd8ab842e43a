#!/usr/bin/env bash
# The metadata log's speed (issue 51, reported, not asserted), on a local cluster of real
# processes (scripts/cluster.sh, RF 3):
#
#   1. CPU at rest: each node's CPU time (utime + stime from /proc/<pid>/stat) over
#      --rest seconds with no request, after --settle seconds of quiet, as % of one core;
#   2. join, idle: `scripts/qkv join` of a fourth node (cluster.sh add), timed from the
#      request to its answer, which comes once the change's first entry is applied;
#   3. join under load: the same for a fifth node while wrk2 sends --rate requests/s of
#      2/3 PUTs to node 1;
#   4. election after a kill: SIGKILL of the metadata group's leader, then every 50 ms a
#      surviving node is asked who leads; the time until one names a new leader.
#
# With --profile, async-profiler (event=cpu, 1 ms, thread names) runs on every node over the
# rest window and scripts/lib/rest-profile.py splits each node's CPU at rest into parts:
# the metadata layer's (Ratis, the ring's state machine, their messages on the event loops)
# against the JVM's and the rest of the node's; the stacks go to run/metadata-speed/<time>/.
# With --rest-only, the script stops after step 1.
#
#   scripts/metadata-speed.sh [--rest S] [--settle S] [--rate R] [--base-port P] [--dir D]
#                             [--profile] [--rest-only]
#     defaults: --rest 60 --settle 30 --rate 2000 --base-port 18681 --dir /tmp/qkv-metadata-speed
#
# Needs service/target/quorumkv.jar, curl, and wrk2 for step 3 (not with --rest-only; QKV_WRK2 or on PATH;
# docs/load-testing.md). Prints a table; the cluster's folder is removed at the end.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/lib/wrk-tool.sh
. "$ROOT/scripts/lib/wrk-tool.sh"
rest=60
settle=30
rate=2000
base_port=18681
dir=/tmp/qkv-metadata-speed
profile=false
rest_only=false
while [ $# -gt 0 ]; do
  case "$1" in
    --rest) rest="$2"; shift 2 ;;
    --settle) settle="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --base-port) base_port="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    --profile) profile=true; shift ;;
    --rest-only) rest_only=true; shift ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
WRK2=""
if ! $rest_only; then
  QKV_TOOL=wrk2 detect_wrk_tool || exit 1
  WRK2="$WRK_BIN"
fi
CLUSTER="$ROOT/scripts/cluster.sh"
QKV="$ROOT/scripts/qkv"
log() { echo "[$(date -u +%H:%M:%S)] $*" >&2; }
die() {
  log "$*"
  exit 1
}
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
# shellcheck source=scripts/lib/profiler.sh
. "$ROOT/scripts/lib/profiler.sh"
out="$ROOT/run/metadata-speed/$(date -u +%Y%m%dT%H%M%SZ)"
cleanup() { "$CLUSTER" down --dir "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT

ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
now_ms() { date +%s%3N; }
management() { echo "http://127.0.0.1:$((base_port + $1 - 1 + 1000))"; }
# The metadata group's leader as node $1 sees it, by its URL ("" when it knows none).
leader_seen_by() {
  curl -s -m 1 -H "Authorization: Bearer $(cat "$dir/admin-key")" -H 'Accept: text/plain' \
    "$(management "$1")/actuator/quorumkv/membership" 2>/dev/null |
    sed -n 's/^metadata log: leader \(http[^ ,]*\).*/\1/p'
}

log "three nodes on ports $base_port.. ($dir)"
QKV_NODE_ARGS="--quorumkv.cluster.replication-factor=3 --management.endpoints.web.exposure.include=health,quorumkv,prometheus" \
  "$CLUSTER" up --insecure --nodes 3 --base-port "$base_port" --dir "$dir" --fresh >/dev/null
hz="$(getconf CLK_TCK)"

log "CPU at rest: $settle s of quiet, then $rest s measured"
sleep "$settle"
declare -a before pids
for i in 1 2 3; do
  pids[$i]="$(cat "$dir/node$i/node.pid")"
  before[$i]="$(ticks "${pids[$i]}")"
done
if $profile; then
  ensure_profiler
  mkdir -p "$out"
  for i in 1 2 3; do
    profiler_command "${pids[$i]}" "start,event=cpu,interval=1ms,threads" >>"$out/profiler.log" ||
      die "could not start async-profiler on node $i (see $out/profiler.log)"
  done
fi
sleep "$rest"
rest_row=""
for i in 1 2 3; do
  used=$(($(ticks "${pids[$i]}") - before[i]))
  rest_row="$rest_row $(awk -v t="$used" -v hz="$hz" -v s="$rest" 'BEGIN { printf "%.2f%%", 100 * t / hz / s }')"
done
log "CPU at rest, % of one core, nodes 1-3:$rest_row"
if $profile; then
  for i in 1 2 3; do
    profiler_command "${pids[$i]}" "stop,file=$out/node$i.collapsed,collapsed" >>"$out/profiler.log" ||
      die "could not stop async-profiler on node $i (see $out/profiler.log)"
  done
  leader_now="$(leader_seen_by 1)"
  log "the metadata group's leader: ${leader_now:-unknown}; stacks in $out"
  python3 "$ROOT/scripts/lib/rest-profile.py" "$rest" node1="$out/node1.collapsed" node2="$out/node2.collapsed" \
    node3="$out/node3.collapsed" | tee "$out/summary.md"
fi
if $rest_only; then
  echo
  echo "| measure | value |"
  echo "|---|---|"
  echo "| CPU at rest, nodes 1-3, % of one core over ${rest} s |$rest_row |"
  exit 0
fi

join_ms() {
  local url start end
  url="$("$CLUSTER" add --dir "$dir" | grep -o 'http://[^ ]*' | head -1)"
  start="$(now_ms)"
  "$QKV" --cluster-dir "$dir" join "$url" >/dev/null
  end="$(now_ms)"
  "$QKV" --cluster-dir "$dir" --wait status >/dev/null 2>&1 || true
  echo $((end - start))
}
log "join of node 4, idle"
join_idle="$(join_ms)"
log "join, idle: $join_idle ms"
log "join of node 5 under $rate PUT/s (2/3, wrk2)"
QKV_KEYS=100000 QKV_VALUE_SIZE=100 QKV_REPLICAS=2/3 "$WRK2" -t1 -c16 -d60s -R"$rate" \
  -s "$ROOT/scripts/wrk2/put.lua" "http://127.0.0.1:$base_port" >"$dir/wrk2.txt" 2>&1 &
load_pid=$!
sleep 15
join_loaded="$(join_ms)"
log "join under load: $join_loaded ms"
kill "$load_pid" 2>/dev/null || true
wait "$load_pid" 2>/dev/null || true

leader="$(leader_seen_by 1)"
# Node i listens on base port + i - 1.
victim=""
if [ -n "$leader" ]; then
  victim=$((${leader##*:} - base_port + 1))
fi
[ -n "$victim" ] || { log "no leader found"; exit 1; }
witness=$((victim % 5 + 1))
log "killing node $victim (the leader $leader); node $witness watches"
start="$(now_ms)"
"$CLUSTER" kill "$victim" --dir "$dir" >/dev/null
elected=""
for ((k = 0; k < 600; k++)); do
  seen="$(leader_seen_by "$witness")"
  if [ -n "$seen" ] && [ "$seen" != "$leader" ]; then
    elected=$(($(now_ms) - start))
    break
  fi
  sleep 0.05
done

echo
echo "| measure | value |"
echo "|---|---|"
echo "| CPU at rest, nodes 1-3, % of one core over ${rest} s |$rest_row |"
echo "| join 3 → 4, idle: request to first entry applied | ${join_idle} ms |"
echo "| join 4 → 5 under ${rate} PUT/s: request to first entry applied | ${join_loaded} ms |"
echo "| leader killed → a survivor names a new leader | ${elected:-none within 30 s} ms |"
