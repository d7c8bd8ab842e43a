#!/usr/bin/env python3
"""Where an idle node's CPU goes, from async-profiler's collapsed stacks with thread names.

    rest-profile.py SECONDS NAME=FILE.collapsed...

Each sample is one millisecond of CPU (event=cpu,interval=1ms,threads); SECONDS is how
long the profiler ran. The table gives each part's CPU as a percentage of one core, node
by node. A sample belongs to the first part whose marker its stack holds (thread names
included). At rest no request and no replica stream is under way (a stream closes after
quorumkv.cluster.stream.idle-close): what the event loops do then is the metadata log's
messages (Raft's heartbeats and the liveness reports, over the one transport), so that
part counts as the metadata layer's beside Ratis' own threads. Used by
scripts/metadata-speed.sh --profile (docs/membership.md, issue 51).
"""
import sys

PARTS = [
    ("JIT compiler threads", ["CompileBroker::", "C2Compiler::", "Compilation::", "[C1 CompilerThre",
                              "[C2 CompilerThre"]),
    ("GC threads", ["G1ConcurrentRefine", "G1YoungCollector", "GCTaskThread", "WorkerThread::run",
                    "G1ServiceThread", "ConcurrentGCThread", "[GC Thread", "[G1 "]),
    ("metadata layer: Ratis and the ring's state machine", ["org/apache/ratis/", "io/quorumkv/service/metadata/"]),
    ("membership drivers (change, clean-up and join polls)", ["io/quorumkv/service/membership/"]),
    ("stall watchdog (event-loop beats)", ["io/quorumkv/service/ops/StallWatchdog"]),
    ("metrics (Micrometer)", ["io/micrometer/"]),
    ("other QuorumKV code (hints, repair, clock, storage)", ["io/quorumkv/"]),
    ("metadata layer: its messages on the event loops (Reactor Netty, Netty, epoll, WebFlux)",
     ["reactor/netty/", "io/netty/", "org/springframework/web/"]),
    ("other JVM threads (VM thread, safepoints, timers)", ["[VM Thread", "VMThread::", "[VM Periodic",
                                                         "WatcherThread::", "SafepointSynchronize::"]),
]
METADATA = [PARTS[2][0], PARTS[7][0]]


def part(stack):
    for name, markers in PARTS:
        if any(marker in stack for marker in markers):
            return name
    return "other"


def load(path):
    totals = {name: 0 for name, _ in PARTS}
    totals["other"] = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if stack:
                totals[part(stack)] += int(count)
    return totals


def main(args):
    if len(args) < 2:
        sys.exit(__doc__)
    seconds = float(args[0])
    nodes = []
    for arg in args[1:]:
        name, _, path = arg.partition("=")
        nodes.append((name, load(path)))

    def pct(samples):
        return f"{100 * samples / 1000 / seconds:.2f}%"

    print("| part (% of one core) | " + " | ".join(n for n, _ in nodes) + " |")
    print("|---|" + "---|" * len(nodes))
    for name in [n for n, _ in PARTS] + ["other"]:
        print(f"| {name} | " + " | ".join(pct(t[name]) for _, t in nodes) + " |")
    print("| **the metadata layer (the two parts above so named)** | "
          + " | ".join("**" + pct(sum(t[m] for m in METADATA)) + "**" for _, t in nodes) + " |")
    print("| **all sampled CPU** | " + " | ".join("**" + pct(sum(t.values())) + "**" for _, t in nodes) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
