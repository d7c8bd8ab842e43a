#!/usr/bin/env bash
# Measures a membership change on a local LSM cluster (scripts/cluster.sh, RF 3) holding a large
# data set (issue 26's speed figures, docs/performance.md "Membership changes"):
#
#   1. the wall time of 3 -> 4 with no load (`qkv join --wait`, from the request to the end of
#      the change; each node's automatic clean-up starts 5 s later), and the new node's
#      streaming rate (keys/s, MB/s);
#   2. client latency at a constant rate (wrk2, mixed.lua: half GETs, half PUTs of random
#      loaded keys at 2/3; one wrk2 per node of 1-3, at a third of the rate each, so that each
#      coordinator's clients are measured apart too) for S seconds with no change, on four nodes
#      whose compactions settled (`qkv compact`), after as long a warm-up at that rate;
#   3. the same rate while 4 -> 5 runs: node 5's JVM is started and ready before the load, the
#      join is asked 15 s into it (after wrk2's calibration) and the load stops 5 s after
#      every node's automatic clean-up has finished (wrk2's figures cover the change and
#      the clean-up it leads to); the streaming rate under load; every 5 s each node's CPU
#      time and `qkv status` go to D/out/samples-during-join.txt;
#   4. the same rate for S seconds on the five nodes once every clean-up has finished, no
#      change (D/out/after.txt): a baseline of the cluster's new shape. With five nodes a
#      coordinator holds fewer of the keys it is asked for (3/5 against 3/4) and waits more
#      often for two peers, and node 5 is one more peer to wait for; 4. against 2. is what
#      that shape costs by itself, beside what 3. against 2. says of the change.
#
# Every node logs its collections (-Xlog:gc, added to QKV_JAVA_OPTS) to D/gc/gc-PID.log; the
# last lines give each node's young pauses in the windows of 2., 3. (the change, then the
# clean-up) and 4. (scripts/lib/gc-windows.sh), then the cores each node and wrk2 used in
# them and how busy the machine was (sampled each second, D/out/cpu.txt;
# scripts/lib/cpu-windows.sh). scripts/lib/bench-waits.sh, started beside it, records where
# the nodes' threads wait during 3.
#
# From the warm-up of 2. to the end of 3., a probe (scripts/lib/LatencyProbe.java) sends one
# request every 10 ms besides wrk2's, each on a connection of its own when the earlier ones
# are busy (wrk2's 24 connections each wait for their answer), and records when each was due
# and sent and how long it took from its due time (D/out/probe.tsv). Its figures are printed
# for 2.'s measured window, for the change (from the join request to its end) and for the
# clean-up (from the change's end until every node has cleaned up), and the
# seconds in which a probe request took over 50 ms go, with the nodes' ring changes, to
# D/out/timeline.txt: where in the change a slow request falls.
#
#   scripts/join-bench.sh [--keys N] [--rate R] [--seconds S] [--dir D] [--base-port P]
#                         [--stream-rate SIZE] [--stream-sources N] [--cleanup-rate N] [--connections C]
#                         [--joining-nice N | --joining-idle] [--first-join-under-load]
#
# Defaults: 1,000,000 keys of 100 bytes (QKV_VALUE_SIZE), 1,000 requests/s, 60 s,
# run/join-bench, port 18181, the nodes' default quorumkv.cluster.membership.stream-rate
# (--stream-rate 4MB sets it on every node: what a receiving node takes per second) and
# quorumkv.cluster.membership.stream-sources (--stream-sources N: how many sources a receiving
# node pulls from at once) and quorumkv.cluster.membership.cleanup-rate (--cleanup-rate N:
# entries a second each node's clean-up looks at; "unlimited" for no limit). The three wrk2s
# keep C connections (default 24) between them, a third each: each connection waits for its
# answer before its next request, and wrk2 lets a connection that fell
# behind its schedule catch up at twice its rate only, so at R requests/s a connection
# falls behind once its requests take more than C/R s on average and does not catch up
# while they take more than C/(2R): with 24 at 1,000/s, 24 ms and 12 ms. --joining-nice N
# runs node 5's JVM (every thread) at nice N once it is ready: a joining node has a
# machine of its own in production, here it shares the two cores with the nodes that serve
# the load, and its cold JVM (compiling its code while it ingests the stream) takes them
# from the requests; at nice 10 it gets what they leave (a stand-in for its own machine;
# nodes 1-4, the sources, stay at 0). --joining-idle runs it under SCHED_IDLE instead
# (chrt --idle): it runs only when a core has nothing else to run and gives way at once to a
# serving node's thread that wakes, the stricter stand-in. --first-join-under-load runs 1.
# under the same load (wrk2 alone, D/out/during-join-4.txt): the nodes then meet 4 -> 5
# having coordinated and served requests through a change before, as in a cluster that
# changed since its JVMs started, instead of seeing the code paths of a change for the
# first time. The keys
# are written into nodes 1-3's data folders before the cluster starts
# (scripts/lib/lsm-preload.sh; needs jmh/target/benchmarks.jar and service/target/quorumkv.jar),
# wrk2 as QKV_WRK2 or on PATH. Prints one line per measurement (wrk2's over all three, then
# by node) and keeps the raw outputs in D/out; the cluster is stopped at the end.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=scripts/lib/cluster-bench.sh
. "$ROOT/scripts/lib/cluster-bench.sh"
# shellcheck source=scripts/lib/gc-windows.sh
. "$ROOT/scripts/lib/gc-windows.sh"
# shellcheck source=scripts/lib/cpu-windows.sh
. "$ROOT/scripts/lib/cpu-windows.sh"
bench_defaults join-bench 18181
stream_rate=""
stream_sources=""
cleanup_rate=""
connections=24
# How node 5's threads are lowered once it is ready (a command taking a thread id last),
# and how the log says it.
joining=()
joining_priority=""
first_under_load=""
while [ $# -gt 0 ]; do
  if bench_option "$1" "${2:-}"; then
    shift 2
    continue
  fi
  case "$1" in
    --stream-rate) stream_rate="${2:?}"; shift 2 ;;
    --stream-sources) stream_sources="${2:?}"; shift 2 ;;
    --cleanup-rate) cleanup_rate="${2:?}"; [ "$cleanup_rate" != unlimited ] || cleanup_rate=9223372036854775807; shift 2 ;;
    --connections) connections="${2:?}"; shift 2 ;;
    --joining-nice) joining=(renice -n "${2:?}" -p); joining_priority=", at nice $2"; shift 2 ;;
    --joining-idle) joining=(chrt --idle -p 0); joining_priority=", under SCHED_IDLE"; shift ;;
    --first-join-under-load) first_under_load=1; shift ;;
    *) echo "join-bench.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
bench_wrk2
# The clients (wrk2 and the probe) share the two cores with the nodes; when the cores are
# full, a client thread waiting for one counts its wait as request latency. Where this user
# may, they run at a higher priority than the nodes (nice -10), in both measured windows.
client_nice=()
if nice -n -10 true 2> /dev/null; then
  client_nice=(nice -n -10)
fi
qkv() { "$ROOT/scripts/qkv" --cluster-dir "$dir" "$@"; }
url() { echo "http://127.0.0.1:$((port + $1 - 1))"; }
log() { echo "[$(date -u +%H:%M:%S)] $*"; }
cpu_recorder=""
down() {
  [ -z "$cpu_recorder" ] || kill "$cpu_recorder" 2> /dev/null || true
  [ ! -f "$dir/out/load.pids" ] || kill $(cat "$dir/out/load.pids") 2> /dev/null || true
  "$ROOT/scripts/cluster.sh" down --dir "$dir" > /dev/null 2>&1 || true
}

# The load: one wrk2 per node of 1-3 (mixed.lua: half GETs, half PUTs at 2/3), each at a
# third of the rate over a third of the connections, so that the clients of each
# coordinator are measured apart (OUT minus .txt plus .nodeN.txt) besides all together: OUT
# holds a SUMMARY line of every timed request's latency merged (QKV_LATENCY_OUT, .nodeN.lat;
# wrk2 times what follows its calibration, the first 10 s) and the three runs' counts added
# up, then one TARGET line per node with that node's SUMMARY.
loaders=()
# load_start SECONDS OUT: starts the three in the background; with SECONDS "until-killed" they
# run until load_stop. Their PIDs are in D/out/load.pids for `down`.
#
# wrk2 staggers its connects 5 ms apart, and each connection keeps the phase of its connect
# for the whole run (it sends at connect time + k * C/R). Its event loop (ae.c) computes the
# wait for a timer found overdue (by a millisecond or more) as a second minus the time it is
# overdue, so a process slowed for a moment at its start can connect all its connections at
# once, about a second late: the 32 then send together every 96 ms (at 333 requests/s), queue behind one
# another on their node, and that process measures a median twice its peers' over the
# whole window while its node spends less CPU. Seen in a SYN capture of a run
# (docs/performance.md). So 0.3 s after the start, each must have
# all its connections established (ss); one that has not is killed and started again (at
# most 5 times; each restart is logged to D/out/load-restarts.txt).
load_start() {
  local duration="$1" node round started pending=(1 2 3) connected
  [ "$duration" != until-killed ] || duration=3600
  loaders=()
  for ((round = 1; round <= 5 && ${#pending[@]} > 0; round++)); do
    for node in "${pending[@]}"; do
      start_loader "$node" "$duration" "${2%.txt}"
    done
    sleep 0.3
    started=("${pending[@]}")
    pending=()
    for node in "${started[@]}"; do
      connected=$(loader_connections "${loaders[node - 1]}")
      [ "$connected" -lt "$(share "$connections" "$node")" ] || continue
      echo "$(date -u +%H:%M:%S.%3N) $(basename "$2") node$node: $connected of $(share "$connections" "$node")" \
        "connections after 0.3 s; $( ((round < 5)) && echo "started again" || echo "kept, the fifth start")" >> "$dir/out/load-restarts.txt"
      if ((round < 5)); then
        kill -KILL "${loaders[node - 1]}" 2> /dev/null || true
        wait "${loaders[node - 1]}" 2> /dev/null || true
        pending+=("$node")
      fi
    done
  done
  echo "${loaders[*]}" > "$dir/out/load.pids"
}
# share TOTAL NODE: node NODE's third of TOTAL (the remainder goes to the first nodes).
share() { echo $(($1 / 3 + ($2 <= $1 % 3))); }
# start_loader NODE SECONDS BASE: node NODE's wrk2, its PID in loaders[NODE - 1]. A subshell
# that becomes wrk2 (so its PID is wrk2's, and SIGINT stops it, after which it prints its
# figures), with a seed of its own, or the three would send the same keys.
start_loader() {
  (
    export QKV_KEYS="$keys" QKV_REPLICAS=2/3 QKV_READ_RATIO=0.5 QKV_COUNT_STATUS=1 QKV_SEED=$((42 + $1)) \
      QKV_LATENCY_OUT="$3.node$1.lat"
    exec "${client_nice[@]}" "$wrk2" -t1 -c"$(share "$connections" "$1")" -d"$2s" -R"$(share "$rate" "$1")" --latency \
      -s "$ROOT/scripts/wrk2/mixed.lua" "$(url "$1")" > "$3.node$1.txt" 2>&1
  ) &
  loaders[$1 - 1]=$!
}
# loader_connections PID: the TCP connections process PID has established.
loader_connections() {
  ss -Htnp state established | grep -c "pid=$1," || true
}
# load_end OUT: waits for the three, then writes OUT.
load_end() {
  local pid base="${1%.txt}"
  for pid in "${loaders[@]}"; do wait "$pid" || true; done
  loaders=()
  rm -f "$dir/out/load.pids"
  {
    # The value of rank int(N * p + 0.5) of N, as wrk2 takes a percentile from its histogram.
    echo "SUMMARY $(sort -n -m "$base".node[1-3].lat | awk '{ us[NR] = $1 }
      function at(p, rank) { rank = int(NR * p + 0.5); return us[(rank < 1) ? 1 : rank] / 1000 }
      END { if (NR == 0) { printf "timed=0"; exit }
        printf "timed=%d p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f p999_ms=%.3f max_ms=%.3f", NR, at(0.5), at(0.9), at(0.99),
          at(0.999), us[NR] / 1000 }'
    ) $(awk '/^SUMMARY/ { for (f = 2; f <= NF; f++) { split($f, kv, "=")
        if (kv[1] ~ /_ms$/) continue
        if (!(kv[1] in sum)) name[++n] = kv[1]
        sum[kv[1]] = (kv[1] == "duration_s") ? ((kv[2] > sum[kv[1]]) ? kv[2] : sum[kv[1]]) : sum[kv[1]] + kv[2] } }
      END { for (i = 1; i <= n; i++) printf "%s=%s ", name[i], sum[name[i]] }' "$base".node[1-3].txt)"
    for node in 1 2 3; do
      echo "TARGET node$node $(grep '^SUMMARY' "$base.node$node.txt" | sed 's/^SUMMARY //')"
    done
  } > "$1"
}
# load_stop OUT: stops the three (SIGINT), then load_end.
load_stop() {
  kill -INT "${loaders[@]}" 2> /dev/null || true
  load_end "$1"
}
# load SECONDS OUT: the load for SECONDS.
load() {
  load_start "$1" "$2"
  load_end "$2"
}
summary() {
  grep '^SUMMARY' "$1" | sed 's/^SUMMARY //' | tr ' ' '\n' \
    | grep -E '^(rps|p50_ms|p99_ms|p999_ms|max_ms|non2xx|s503|s504|timeout|sock_errors)=' | tr '\n' ' '
}
# by_node OUT: each node's clients' requests/s, median and p99 (ms), from OUT's TARGET lines.
by_node() {
  awk '/^TARGET/ { for (f = 3; f <= NF; f++) { split($f, kv, "="); v[kv[1]] = kv[2] }
    printf "%s%s rps=%s p50_ms=%s p99_ms=%s", sep, $2, v["rps"], v["p50_ms"], v["p99_ms"]; sep = "; " }' "$1"
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
  started=$(now_ms)
  qkv join "$(url "$1")" --wait > "$dir/out/join-$1.txt"
  ended=$(now_ms)
  echo "$started $ended" > "$dir/out/join-$1.window"
  awk -v a="$started" -v b="$ended" 'BEGIN { printf "%.1f", (b - a) / 1000 }'
}
# cleaned_up N: waits (at most 20 min) until each of nodes 1-N has logged one more finished
# clean-up than it had when the change was asked (counts in D/out/cleanups), and records
# the window from the change's end to the last one in D/out/cleanup-N.window.
cleaned_up() {
  local i node done_at
  for ((i = 0; i < 2400; i++)); do
    done_at=1
    for ((node = 1; node <= $1; node++)); do
      [ "$(cleanups "$node")" -gt "$(sed -n "${node}p" "$dir/out/cleanups")" ] || { done_at=""; break; }
    done
    [ -z "$done_at" ] || break
    sleep 0.5
  done
  echo "$(cut -d' ' -f2 "$dir/out/join-$1.window") $(now_ms)" > "$dir/out/cleanup-$1.window"
}
# cleanups N: how many clean-ups node N has logged as finished.
cleanups() {
  local n
  n=$(grep -c 'Cleanup under epoch' "$dir/node$1/node.log" 2> /dev/null || true)
  echo "${n:-0}"
}
# join_under_load N OUT TAIL: node N joins under the constant rate (wrk2 to OUT, started 15
# s before the join is asked, after its calibration, and stopped TAIL s after every node's
# clean-up has finished); prints the join's wall time (s).
join_under_load() {
  local wall node
  load_start until-killed "$2"
  sleep 15
  for ((node = 1; node <= $1; node++)); do cleanups "$node"; done > "$dir/out/cleanups"
  wall=$(join "$1")
  cleaned_up "$1"
  sleep "$3"
  load_stop "$2"
  echo "$wall"
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
  exec "${client_nice[@]}" "${JAVA_HOME:+$JAVA_HOME/bin/}java" -XX:TieredStopAtLevel=1 "$ROOT/scripts/lib/LatencyProbe.java" \
    "$(url 1),$(url 2),$(url 3)" "$keys" 2/3 "$1" 10 > "$2"
}
now_ms() { date +%s%3N; }
# probe_summary FROM TO: the probe's requests due in [FROM, TO) (ms since the epoch).
probe_summary() {
  awk -F'\t' -v from="$1" -v to="$2" '$1 >= from && $1 < to && $2 >= 0 { print $2, $5, $7 }' "$dir/out/probe.tsv" \
    | sort -n | awk '{ ms[NR] = $1; if ($2 !~ /^2/) bad++; if ($3 > late) late = $3 }
      END { if (NR == 0) { print "no requests"; exit }
        printf "requests=%d p50_ms=%.2f p99_ms=%.2f p999_ms=%.2f max_ms=%.2f non2xx=%d probe_late_max_ms=%.1f", NR,
          ms[int(NR * 0.5) + 1], ms[int(NR * 0.99) + 1], ms[int(NR * 0.999) + 1], ms[NR], bad, late }'
}
# timeline: per second of the probe with a request over 50 ms, its requests, the slowest and
# how many took over 50 ms, then the nodes' log lines about ring epochs, all in time order.
timeline() {
  {
    awk -F'\t' '$2 >= 0 { s = int($1 / 1000); n[s]++; if ($2 > m[s]) m[s] = $2; if ($2 > 50) slow[s]++ }
      END { for (s in n) if (m[s] > 50) printf "%s.000 probe %d requests, slowest %.1f ms, %d over 50 ms\n", s, n[s], m[s], slow[s] }' \
      "$dir/out/probe.tsv" \
      | while read -r epoch rest; do echo "$(date -u -d "@$epoch" +%H:%M:%S.%3N) $rest"; done
    for log in "$dir"/node*/node.log; do
      grep -hE 'epoch|Change .*:|applied' "$log" | grep -oE '[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}.*' \
        | sed -E 's/^([0-9:.]+)Z?/\1/' | sed "s/^/$(basename "$(dirname "$log")") /" | awk '{ t = $2; $2 = ""; print t, $0 }'
    done
  } | sort > "$dir/out/timeline.txt"
}
trap down EXIT

log "loading $keys keys into nodes 1-3's data folders (LsmLoader)"
preload_replicas "$dir" 3 "$keys" "${QKV_VALUE_SIZE:-100}"
mkdir -p "$dir/out" "$dir/gc"
# scripts/cluster.sh's default JVM options, and each node's collections logged.
export QKV_JAVA_OPTS="${QKV_JAVA_OPTS:--Xms1g -Xmx1g -XX:+UseG1GC -XX:MaxTenuringThreshold=2 -XX:MaxGCPauseMillis=10} -Xlog:gc:file=$dir/gc/gc-%p.log:time"
QKV_NODE_ARGS="${stream_rate:+--quorumkv.cluster.membership.stream-rate=$stream_rate} ${stream_sources:+--quorumkv.cluster.membership.stream-sources=$stream_sources} ${cleanup_rate:+--quorumkv.cluster.membership.cleanup-rate=$cleanup_rate}" \
  "$ROOT/scripts/cluster.sh" up --insecure --nodes 3 --dir "$dir" --base-port "$port" > /dev/null
log "cluster of 3 up; node 4 starting"
"$ROOT/scripts/cluster.sh" add --dir "$dir" > /dev/null
if [ -z "$first_under_load" ]; then
  log "1. 3 -> 4, no load: wall $(join 4) s; node 4 received $(received 4)"
else
  wall=$(join_under_load 4 "$dir/out/during-join-4.txt" 0)
  log "1. 3 -> 4 under $rate req/s: wall $wall s; node 4 received $(received 4); wrk2: $(summary "$dir/out/during-join-4.txt")"
fi

qkv compact > /dev/null
# Four JVMs that have served nothing yet compile under the first load (the first 30 s of a
# run measured so held a third of the rate, p50 16 s): a warm-up the figures leave out.
log "2. compactions settled; warm-up, then $rate req/s for $seconds s, no change"
probe 7200 "$dir/out/probe.tsv" &
prober=$!
# Every node's CPU, wrk2's and the machine's, each second, for the windows' CPU lines.
cpu_sampler "$dir" "$dir/out/cpu.txt" 3600 "$(basename "$wrk2")" &
cpu_recorder=$!
load "$seconds" "$dir/out/warm-up.txt"
quiet_from=$(now_ms)
load "$seconds" "$dir/out/no-change.txt"
quiet_to=$(now_ms)
echo "$quiet_from $quiet_to" > "$dir/out/no-change.window"
log "2. no change: $(summary "$dir/out/no-change.txt")"
log "2. by node: $(by_node "$dir/out/no-change.txt")"
log "2. probe: $(probe_summary "$quiet_from" "$quiet_to")"

"$ROOT/scripts/cluster.sh" add --dir "$dir" > /dev/null
if [ ${#joining[@]} -gt 0 ]; then
  # Every thread: nice and the scheduling policy are per thread on Linux, and threads
  # started later take their creator's.
  for task in /proc/"$(cat "$dir/node5/node.pid")"/task/*; do
    "${joining[@]}" "${task##*/}" > /dev/null
  done
fi
log "3. node 5 ready$joining_priority; $rate req/s, 4 -> 5 asked after 15 s"
sample &
sampler=$!
wall=$(join_under_load 5 "$dir/out/during-join.txt" 5)
kill "$sampler" 2> /dev/null || true
after_from=$(now_ms)
load "$seconds" "$dir/out/after.txt"
after_to=$(now_ms)
echo "$after_from $after_to" > "$dir/out/after.window"
kill "$prober" 2> /dev/null || true
wait "$prober" || true
timeline
log "3. 4 -> 5 under load: wall $wall s; node 5 received $(received 5)"
log "3. during the join: $(summary "$dir/out/during-join.txt")"
log "3. by node: $(by_node "$dir/out/during-join.txt")"
read -r change_from change_to < "$dir/out/join-5.window"
log "3. probe during the join: $(probe_summary "$change_from" "$change_to"); the seconds with a request over 50 ms and the ring changes: $dir/out/timeline.txt"
read -r cleanup_from cleanup_to < "$dir/out/cleanup-5.window"
log "3. probe during the clean-up ($(awk -v a="$cleanup_from" -v b="$cleanup_to" 'BEGIN { printf "%.1f", (b - a) / 1000 }') s from the change's end): $(probe_summary "$cleanup_from" "$cleanup_to")"
log "4. five nodes, no change, after the clean-up: $(summary "$dir/out/after.txt")"
log "4. by node: $(by_node "$dir/out/after.txt")"
log "4. probe: $(probe_summary "$after_from" "$after_to")"
log "wrk2s started again for want of their connections after 0.3 s: $(cat "$dir/out/load-restarts.txt" 2> /dev/null | wc -l) (D/out/load-restarts.txt)"
gc_windows "$dir" "$dir/gc" "no change:$dir/out/no-change.window" "change:$dir/out/join-5.window" \
  "clean-up:$dir/out/cleanup-5.window" "after:$dir/out/after.window" | while read -r line; do log "GC young pauses, $line"; done
kill "$cpu_recorder" 2> /dev/null || true
cpu_windows "$dir/out/cpu.txt" "no change:$dir/out/no-change.window" "change:$dir/out/join-5.window" \
  "clean-up:$dir/out/cleanup-5.window" "after:$dir/out/after.window" | while read -r line; do log "CPU, $line"; done
