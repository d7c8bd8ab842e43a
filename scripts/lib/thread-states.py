#!/usr/bin/env python3
"""Where a local cluster's node threads wait (docs/performance.md, "Membership changes").

    scripts/lib/thread-states.py DIR SECONDS

For at most SECONDS, or until DIR/out/stop-thread-states exists: every 20 ms, each node
JVM's (DIR/node*/node.pid) event-loop, quorumkv-* and lsm-* threads that are in state D
(uninterruptible: blocked in the kernel, as on a file write) go to DIR/out/dstate.tsv with
their kernel wait channel (ms, node, tid, name, wchan); once a second every thread's CPU
ticks go to DIR/out/threadcpu.tsv (ms, node, tid, name, utime + stime). Meant to run at
nice 19 beside a benchmark: it reads /proc only.
"""
import glob
import os
import sys
import time


def stat(path):
    text = open(path).read()
    end = text.rindex(')')
    return text[text.index('(') + 1:end], text[end + 2:].split()


def main(folder, limit):
    out = os.path.join(folder, 'out')
    waits = open(os.path.join(out, 'dstate.tsv'), 'w')
    cpu = open(os.path.join(out, 'threadcpu.tsv'), 'w')
    stop = os.path.join(out, 'stop-thread-states')
    end = time.time() + limit
    last = 0.0
    watched = []
    while time.time() < end and not os.path.exists(stop):
        now = time.time()
        if now - last >= 1:
            last = now
            watched = []
            for pid_file in glob.glob(os.path.join(folder, 'node*', 'node.pid')):
                node = os.path.basename(os.path.dirname(pid_file))
                try:
                    pid = open(pid_file).read().strip()
                    tasks = os.listdir(f'/proc/{pid}/task')
                except OSError:
                    continue
                for tid in tasks:
                    task = f'/proc/{pid}/task/{tid}'
                    try:
                        name, fields = stat(task + '/stat')
                    except OSError:
                        continue
                    cpu.write(f'{int(now * 1000)}\t{node}\t{tid}\t{name}\t{int(fields[11]) + int(fields[12])}\n')
                    if name.startswith(('reactor-http', 'quorumkv', 'lsm')):
                        watched.append((node, tid, name, task))
            waits.flush()
            cpu.flush()
        for node, tid, name, task in watched:
            try:
                text = open(task + '/stat').read()
            except OSError:
                continue
            if text[text.rindex(')') + 2] == 'D':
                try:
                    channel = open(task + '/wchan').read()
                except OSError:
                    channel = '?'
                waits.write(f'{int(now * 1000)}\t{node}\t{tid}\t{name}\t{channel}\n')
        time.sleep(0.02)


if __name__ == '__main__':
    main(sys.argv[1], float(sys.argv[2]))
