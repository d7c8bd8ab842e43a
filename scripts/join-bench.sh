#!/usr/bin/env bash
# Measures a membership change on a local LSM cluster (scripts/cluster.sh, RF 3) holding a large
# data set (issue 26's speed figures, docs/performance.md "Membership changes"):
#
#   1. the wall time of 3 -> 4 with no load (`qkv join --wait`, from the request to the end of
#      the change, clean-up included), and the new node's streaming rate (keys/s, MB/s);
#   2. client latency at a constant rate (wrk2, mixed.lua: half GETs, half PUTs of random
#      loaded keys at 2/3, spread over nodes 1-3) for S seconds with no change, on four nodes
#      whose compactions settled (`qkv compact`), after as long a warm-up at that rate;
#   3. the same rate while 4 -> 5 runs: node 5's JVM is started and ready before the load, the
#      join is asked 15 s into it (after wrk2's calibration) and the load stops when the
#      change ends; the streaming rate under load; every 5 s each node's CPU time and
#      `qkv status` go to D/out/samples-during-join.txt; beside the load, a probe
#      (scripts/lib/LatencyProbe.java) sends one request every 10 ms and records when each
#      was sent and how long it took (D/out/probe-during-join.tsv), and the seconds in which
#      a probe request took over 50 ms are printed with the nodes' ring changes
#      (D/out/timeline.txt): where in the change a slow request falls.
#
#   scripts/join-bench.sh [--keys N] [--rate R] [--seconds S] [--dir D] [--base-port P]
#                         [--stream-rate SIZE] [--stream-sources N]
#
# Defaults: 1,000,000 keys of 100 bytes (QKV_VALUE_SIZE), 1,000 requests/s, 60 s,
# run/join-bench, port 18181, the nodes' default quorumkv.cluster.membership.stream-rate
# (--stream-rate 4MB sets it on every node: what a receiving node takes per second) and
# quorumkv.cluster.membership.stream-sources (--stream-sources N: how many sources a receiving
# node pulls from at once). The keys
# are written into nodes 1-3's data folders before the cluster starts
# (scripts/lib/lsm-preload.sh; needs jmh/target/benchmarks.jar and service/target/quorumkv.jar),
# wrk2 as QKV_WRK2 or on PATH. Prints one line per measurement and keeps the raw outputs in
# D/out; the cluster is stopped at the end.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/lib/cluster-bench.sh
. "$ROOT/scripts/lib/cluster-bench.sh"
bench_defaults join-bench 18181
stream_rate=""
stream_sources=""
while [ $# -gt 0 ]; do
  if bench_option "$1" "${2:-}"; then
    shift 2
    continue
  fi
  case "$1" in
    --stream-rate) stream_rate="${2:?}"; shift 2 ;;
    --stream-sources) stream_sources="${2:?}"; shift 2 ;;
    *) echo "join-bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
bench_wrk2
qkv() { "$ROOT/scripts/qkv" --cluster-dir "$dir" "$@"; }
url() { echo "http://127.0.0.1:$((port + $1 - 1))"; }
log() { echo "[$(date -u +%H:%M:%S)] $*"; }
down() { "$ROOT/scripts/cluster.sh" down --dir "$dir" > /dev/null 2>&1 || true; }

# load SECONDS OUT: wrk2 at the constant rate over nodes 1-3. With SECONDS "until-killed" it
# is meant to run in the background (`load until-killed OUT &`): the subshell becomes wrk2
# itself, so $! is wrk2's PID, and SIGINT stops it, after which it prints its figures.
load() {
  local duration="$1" out="$2" run=()
  [ "$duration" != until-killed ] || { duration=3600; run=(exec); }
  QKV_KEYS="$keys" QKV_REPLICAS=2/3 QKV_READ_RATIO=0.5 QKV_COUNT_STATUS=1 \
    QKV_TARGETS="127.0.0.1:$port,127.0.0.1:$((port + 1)),127.0.0.1:$((port + 2))" \
    "${run[@]}" "$wrk2" -t3 -c24 -d"${duration}s" -R"$rate" --latency -s "$ROOT/scripts/wrk2/mixed.lua" "$(url 1)" > "$out" 2>&1
}
summary() {
  grep '^SUMMARY' "$1" | sed 's/^SUMMARY //' | tr ' ' '\n' \
    | grep -E '^(rps|p50_ms|p99_ms|p999_ms|max_ms|non2xx|s503|s504|timeout|sock_errors)=' | tr '\n' ' '
}
# received N: what node N had received at the last progress table `qkv join --wait` printed
# (its polls are 3 s apart: keys, bytes, MB/s, keys/s, and the transfer's state then).
received() {
  awk '/^TARGET/ { getline; line = $3 " keys, " $4 " bytes at " $5 " MB/s, " $6 " keys/s (" $NF ")" } END { print line }' \
    "$dir/out/join-$1.txt"
}
# join N: adds node N (its JVM started and ready first) and times `qkv join --wait`.
join() {
  local started ended
  started=$(date +%s.%N)
  qkv join "$(url "$1")" --wait > "$dir/out/join-$1.txt"
  ended=$(date +%s.%N)
  awk -v a="$started" -v b="$ended" 'BEGIN { printf "%.1f", b - a }'
}
# sample: every 5 s, each node's CPU seconds so far (utime + stime) and `qkv status` (replica
# call latency, calls in flight, the change's progress), to D/out/samples-during-join.txt:
# where the time of a slow request goes during a change.
sample() {
  local i pid
  for ((i = 0; i < 720; i++)); do
    {
      echo "=== $(date -u +%H:%M:%S)"
      for pid in "$dir"/node*/node.pid; do
        echo "$(basename "$(dirname "$pid")") cpu_s $(awk -v hz="$(getconf CLK_TCK)" '{ printf "%.1f", ($14 + $15) / hz }' \
          "/proc/$(cat "$pid")/stat" 2> /dev/null)"
      done
      qkv --timeout 3 status 2>&1 || true
    } >> "$dir/out/samples-during-join.txt"
    sleep 5
  done
}
# probe SECONDS OUT: LatencyProbe over nodes 1-3 (meant for the background: the subshell
# becomes the JVM, so $! is its PID, and SIGTERM stops it after it printed what ended).
probe() {
  exec "${JAVA_HOME:+$JAVA_HOME/bin/}java" -XX:TieredStopAtLevel=1 "$ROOT/scripts/lib/LatencyProbe.java" \
    "$(url 1),$(url 2),$(url 3)" "$keys" 2/3 "$1" 10 > "$2"
}
# timeline: per second of the probe with a request over 50 ms, its requests, the slowest and
# how many took over 50 ms, then the nodes' log lines about ring epochs, all in time order.
timeline() {
  {
    awk -F'\t' '$2 >= 0 { s = int($1 / 1000); n[s]++; if ($2 > m[s]) m[s] = $2; if ($2 > 50) slow[s]++ }
      END { for (s in n) if (m[s] > 50) printf "%s.000 probe %d requests, slowest %.1f ms, %d over 50 ms\n", s, n[s], m[s], slow[s] }' \
      "$dir/out/probe-during-join.tsv" \
      | while read -r epoch rest; do echo "$(date -u -d "@$epoch" +%H:%M:%S.%3N) $rest"; done
    for log in "$dir"/node*/node.log; do
      grep -hE 'epoch|Change .*:|agreed' "$log" | grep -oE '[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}.*' \
        | sed -E 's/^([0-9:.]+)Z?/\1/' | sed "s/^/$(basename "$(dirname "$log")") /" | awk '{ t = $2; $2 = ""; print t, $0 }'
    done
  } | sort > "$dir/out/timeline.txt"
}
trap down EXIT

log "loading $keys keys into nodes 1-3's data folders (LsmLoader)"
preload_replicas "$dir" 3 "$keys" "${QKV_VALUE_SIZE:-100}"
mkdir -p "$dir/out"
QKV_NODE_ARGS="${stream_rate:+--quorumkv.cluster.membership.stream-rate=$stream_rate} ${stream_sources:+--quorumkv.cluster.membership.stream-sources=$stream_sources}" \
  "$ROOT/scripts/cluster.sh" up --nodes 3 --dir "$dir" --base-port "$port" > /dev/null
log "cluster of 3 up; node 4 starting"
"$ROOT/scripts/cluster.sh" add --dir "$dir" > /dev/null
log "1. 3 -> 4, no load: wall $(join 4) s; node 4 received $(received 4)"

qkv compact > /dev/null
# Four JVMs that have served nothing yet compile under the first load (the first 30 s of a
# run measured so held a third of the rate, p50 16 s): a warm-up the figures leave out.
log "2. compactions settled; warm-up, then $rate req/s for $seconds s, no change"
load "$seconds" "$dir/out/warm-up.txt"
load "$seconds" "$dir/out/no-change.txt"
log "2. no change: $(summary "$dir/out/no-change.txt")"

"$ROOT/scripts/cluster.sh" add --dir "$dir" > /dev/null
log "3. node 5 ready; $rate req/s, 4 -> 5 asked after 15 s"
load until-killed "$dir/out/during-join.txt" &
loader=$!
sample &
sampler=$!
probe 3600 "$dir/out/probe-during-join.tsv" &
prober=$!
sleep 15
wall=$(join 5)
sleep 5
kill -INT "$loader" 2> /dev/null || true
wait "$loader" || true
kill "$sampler" "$prober" 2> /dev/null || true
wait "$prober" || true
timeline
log "3. 4 -> 5 under load: wall $wall s; node 5 received $(received 5)"
log "3. during the join: $(summary "$dir/out/during-join.txt")"
log "3. probe: $(awk -F'\t' '$2 >= 0 { n++; if ($2 > 50) s++; if ($2 > m) m = $2 } END { printf "%d requests, %d over 50 ms, slowest %.1f ms", n, s, m }' \
  "$dir/out/probe-during-join.tsv"); seconds with one over 50 ms and the ring changes: $dir/out/timeline.txt"
