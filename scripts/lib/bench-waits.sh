#!/usr/bin/env bash
# Records where the nodes of a scripts/join-bench.sh run wait during its change and clean-up
# (docs/performance.md, "Membership changes"): started beside the benchmark with the same
# --dir, it waits for the change's phase (D/out/samples-during-join.txt appears), then
#   - samples the nodes' threads (scripts/lib/thread-states.py, at nice 19): D/out/dstate.tsv,
#     the event-loop, quorumkv-* and lsm-* threads seen blocked in the kernel, and
#     D/out/threadcpu.tsv, every thread's CPU once a second;
#   - records each node's file I/O over 2 ms, parks and monitor waits over 3 ms and its
#     collections with JFR (scripts/lib/waits.jfc), dumped to D/out/waits-nodeN.jfr once the
#     clean-up has ended (D/out/cleanup-5.window appears).
#
#   scripts/join-bench.sh ... --dir D & scripts/lib/bench-waits.sh D
#
# Read with: jfr summary D/out/waits-node1.jfr; jfr print --events jdk.FileWrite,jdk.FileForce
# D/out/waits-node1.jfr (the threads and stacks of the slow writes); and, for instance,
# cut -f2,4,5 D/out/dstate.tsv | sort | uniq -c | sort -rn (who was blocked, on what).
set -euo pipefail
dir="${1:?usage: bench-waits.sh DIR}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
jcmd="${JAVA_HOME:+$JAVA_HOME/bin/}jcmd"
for ((i = 0; i < 3600; i++)); do [ -f "$dir/out/samples-during-join.txt" ] && break; sleep 1; done
[ -f "$dir/out/samples-during-join.txt" ] || { echo "bench-waits.sh: no change began in $dir" >&2; exit 1; }
nice -n 19 python3 "$here/thread-states.py" "$dir" 1800 &
sampler=$!
for pid in "$dir"/node*/node.pid; do
  "$jcmd" "$(cat "$pid")" JFR.start name=waits settings="$here/waits.jfc" > /dev/null
done
for ((i = 0; i < 3600; i++)); do [ -f "$dir/out/cleanup-5.window" ] && break; sleep 0.5; done
for pid in "$dir"/node*/node.pid; do
  "$jcmd" "$(cat "$pid")" JFR.dump name=waits filename="$dir/out/waits-$(basename "$(dirname "$pid")").jfr" > /dev/null || true
done
touch "$dir/out/stop-thread-states"
wait "$sampler" || true
