#!/usr/bin/env python3
"""Where two servers' CPU goes per request, from async-profiler's collapsed stacks.

    profile-compare.py NAME=FILE.collapsed:REQUESTS NAME=FILE.collapsed:REQUESTS
    profile-compare.py --sum LABEL BASE=FILE.collapsed:REQUESTS NAME=FILE.collapsed:REQUESTS...
    profile-compare.py --storage NAME=FILE.collapsed:REQUESTS NAME=FILE.collapsed:REQUESTS

Each sample is one millisecond of CPU (event=cpu,interval=1ms), put in one part (ANYWHERE,
then NEAREST below); the table gives microseconds per request of each part for each
server, and the difference. With --sum, the servers after the first are the nodes of one
cluster that served the same requests: a column LABEL adds them up, and the difference is
LABEL's minus the first server's. With --storage, the LSM's work is split into its parts
(compaction, flush, WAL, memtable, the tables' filters, indexes, cache, decompression and
page faults) and the rest of the node is summed as "the node's transport". Used by
scripts/profile-one-node.sh, scripts/profile-cluster.sh and scripts/scale-probe.sh
(docs/performance.md).
"""
import sys

# (part, markers): a sample whose stack has a frame containing one of these markers
# anywhere belongs to the first such part.
ANYWHERE = [
    ("JIT compiler threads", ["CompileBroker::", "C2Compiler::", "Compilation::"]),
    ("GC threads", ["G1ConcurrentRefine", "G1YoungCollector", "GCTaskThread", "WorkerThread::run",
                    "G1ServiceThread", "ConcurrentGCThread"]),
    ("TLS: the engine's encryption and decryption (wrap and unwrap; OpenSSL's or the JDK's)",
     ["OpenSslEngine.wrap", "OpenSslEngine.unwrap", "SSLEngineImpl.wrap", "SSLEngineImpl.unwrap"]),
    ("per-request read and idle timeouts (Reactor Netty handlers added and removed)",
     ["IdleTimeoutHandler.addIdleTimeoutHandler", "IdleTimeoutHandler.removeIdleTimeoutHandler",
      "HttpServerOperations.startReadTimeout", "HttpServerOperations.stopReadTimeout"]),
    ("WAL append (write syscall included)", ["io/quorumkv/storage/lsm/wal/"]),
    ("memtable and the rest of the storage", ["io/quorumkv/storage/"]),
    ("socket send (the response; loopback delivery to the client included)", ["__x64_sys_sendto",
                                                                               "__x64_sys_writev"]),
    ("socket receive", ["__x64_sys_recvfrom", "__x64_sys_read_", "__x64_sys_readv"]),
    ("epoll", ["__x64_sys_epoll"]),
]

# Any other sample belongs to the part of the frame nearest its leaf that has one of these
# markers: the code that was running, whoever called it (the response's encoding, called
# from a QuorumKV callback, is Netty's).
NEAREST = [
    ("QuorumKV's handlers, filters and replication (Java)", ["io/quorumkv/"]),
    ("WebFlux (Java)", ["org/springframework/"]),
    ("Reactor Netty and Netty (Java)", ["reactor/netty/", "io/netty/"]),
    ("metrics (Micrometer)", ["io/micrometer/"]),
]

# --storage: where the storage's CPU goes (a node on a small and on a large key count). The
# background threads' parts first (a compaction reads tables too), then the frame nearest the
# leaf among the storage's classes (a GET's decompression is the codec's, called from a table).
STORAGE_ANYWHERE = ANYWHERE[:2] + [
    ("compaction (its reads, merge and table writing)", ["io/quorumkv/storage/lsm/compaction/",
                                                        "io/quorumkv/storage/lsm/CompactionRunner"]),
    ("flush (a memtable written as a table)", ["io/quorumkv/storage/lsm/sstable/SsTableBuilder"]),
    ("WAL append (write syscall included)", ["io/quorumkv/storage/lsm/wal/"]),
    ("page faults (a mapped table's page read from the page cache or the disk)", ["asm_exc_page_fault"]),
]
STORAGE_NEAREST = [
    ("memtable", ["io/quorumkv/storage/lsm/memtable/"]),
    ("bloom filters", ["io/quorumkv/storage/lsm/sstable/BloomFilter"]),
    ("block indexes", ["io/quorumkv/storage/lsm/sstable/BlockIndex"]),
    ("block cache", ["io/quorumkv/storage/lsm/sstable/BlockCache"]),
    ("block decompression", ["io/quorumkv/storage/lsm/sstable/BlockCodec"]),
    ("block search and the table's other reads", ["io/quorumkv/storage/lsm/sstable/"]),
    ("the engine's read path and the rest of the storage", ["io/quorumkv/storage/"]),
    ("the node's transport (QuorumKV's handlers, WebFlux, Netty, metrics)",
     ["io/quorumkv/", "org/springframework/", "reactor/netty/", "io/netty/", "io/micrometer/"]),
]

PARTS = ANYWHERE + NEAREST


def load(path):
    samples = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if stack:
                samples.append((stack, int(count)))
    return samples


def parts(samples):
    totals = {name: 0 for name, _ in PARTS}
    totals["other"] = 0
    for stack, count in samples:
        totals[part(stack)] += count
    return totals


def part(stack):
    for name, markers in ANYWHERE:
        if any(marker in stack for marker in markers):
            return name
    for frame in reversed(stack.split(";")):
        for name, markers in NEAREST:
            if any(frame.startswith(marker) for marker in markers):
                return name
    return "other"


def main(args):
    global ANYWHERE, NEAREST, PARTS
    total = None
    if args[:1] == ["--storage"]:
        ANYWHERE, NEAREST, args = STORAGE_ANYWHERE, STORAGE_NEAREST, args[1:]
        PARTS = ANYWHERE + NEAREST
    if args[:1] == ["--sum"]:
        if len(args) < 4:
            sys.exit(__doc__)
        total, args = args[1], args[2:]
    elif len(args) != 2:
        sys.exit(__doc__)
    servers = []
    for arg in args:
        name, _, rest = arg.partition("=")
        path, _, requests = rest.rpartition(":")
        samples = load(path)
        servers.append((name, parts(samples), sum(c for _, c in samples), int(requests)))
    if total is not None:
        summed(servers, total)
        return
    (a, pa, ta, ra), (b, pb, tb, rb) = servers
    print(f"| part | {a} (µs/request) | {b} (µs/request) | difference |")
    print("|---|---|---|---|")
    for name in [n for n, _ in PARTS] + ["other"]:
        x = pa[name] * 1000 / ra
        y = pb[name] * 1000 / rb
        print(f"| {name} | {x:.2f} | {y:.2f} | {x - y:+.2f} |")
    print(f"| **all sampled CPU** | **{ta * 1000 / ra:.2f}** | **{tb * 1000 / rb:.2f}** | "
          f"**{ta * 1000 / ra - tb * 1000 / rb:+.2f}** |")


def summed(servers, total):
    names = [n for n, _ in PARTS] + ["other"]
    print("| part | " + " | ".join(f"{s[0]} (µs/request)" for s in servers) + f" | {total} (µs/request) | difference |")
    print("|---|" + "---|" * (len(servers) + 2))

    def row(label, value, bold):
        cells = [value(s) for s in servers]
        added = sum(cells[1:])
        mark = "**" if bold else ""
        print(f"| {mark}{label}{mark} | " + " | ".join(f"{mark}{c:.2f}{mark}" for c in cells)
              + f" | {mark}{added:.2f}{mark} | {mark}{added - cells[0]:+.2f}{mark} |")

    for name in names:
        row(name, lambda s, name=name: s[1][name] * 1000 / s[3], False)
    row("all sampled CPU", lambda s: s[2] * 1000 / s[3], True)


if __name__ == "__main__":
    main(sys.argv[1:])
