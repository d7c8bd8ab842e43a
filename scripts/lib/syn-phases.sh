#!/usr/bin/env bash
# How the connections of each load generator process lined up their schedules, from a capture
# of the SYNs sent to the nodes: a wrk2 connection sends at its connect time + k * C/R (C
# connections, R requests/s in the process), so the phase of its requests is its connect
# time modulo C/R, and connections connected in the same millisecond send together for the
# whole run.
#
#   tcpdump -i lo -tt -nn -l 'tcp[tcpflags] & (tcp-syn|tcp-ack) == tcp-syn and dst portrange 18181-18183' > syn.txt &
#   ... scripts/join-bench.sh ...
#   scripts/lib/syn-phases.sh syn.txt R C
#
# Per destination port, SYNs less than 1 s apart form a group (a process's connects, with
# whatever other client or peer connected then); for each group of at least 8 it prints the
# first SYN's time (UTC), the count, the time from the first to the last, and "sharing":
# the mean number of the group's connections whose phase falls in the same 1 ms as a given
# one's (about 1 when spread, C when all connected at once). Needs root for tcpdump.
set -euo pipefail
capture="${1:?usage: syn-phases.sh CAPTURE RATE CONNECTIONS}"
rate="${2:?usage: syn-phases.sh CAPTURE RATE CONNECTIONS}"
connections="${3:?usage: syn-phases.sh CAPTURE RATE CONNECTIONS}"
# The timestamps stay strings until the last awk: mawk prints numbers with 6 digits.
awk '/ > [0-9.]+: Flags \[S\]/ { n = split($5, d, "."); port = d[n]; sub(":", "", port); print port, $1 }' "$capture" \
  | sort -k1,1n -k2,2n \
  | awk -v rate="$rate" -v connections="$connections" '
      BEGIN { period = connections / rate * 1000 }
      function flush(   i, bin, share, b) {
        if (n >= 8) {
          delete count
          for (i = 1; i <= n; i++) { bin = int((ts[i] - ts[1]) * 1000 % period); count[bin]++ }
          share = 0
          for (b in count) share += count[b] * count[b]
          printf "%s port %s: %d connects over %.1f ms, sharing %.2f\n", strftime("%H:%M:%S", int(ts[1]), 1), port, n,
            (ts[n] - ts[1]) * 1000, share / n
        }
        n = 0
      }
      { if ($1 != port || $2 - last > 1) { flush(); port = $1 }
        ts[++n] = $2; last = $2 }
      END { flush() }'
