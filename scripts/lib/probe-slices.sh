#!/usr/bin/env bash
# The probe's requests of a join-bench run by slice of time, from 30 s before the change's
# request to the end of its clean-up: per slice, the requests, their median and p99 (ms from
# the time each was due) and how many took over a threshold.
#
#   scripts/lib/probe-slices.sh D [SLICE_SECONDS] [OVER_MS]
#
# D is the run's folder (join-bench.sh --dir D): D/out/probe.tsv, join-5.window and
# cleanup-5.window. SLICE_SECONDS defaults to 30, OVER_MS to 5. Slices are numbered by their
# start in seconds from the change's request; the change ends where the clean-up begins.
set -euo pipefail
dir="${1:?usage: probe-slices.sh D [SLICE_SECONDS] [OVER_MS]}"
slice="${2:-30}"
over="${3:-5}"
read -r from change_end < "$dir/out/join-5.window"
read -r _ to < "$dir/out/cleanup-5.window"
echo "slice_s phase requests p50_ms p99_ms over_${over}ms"
awk -F'\t' -v from="$from" -v to="$to" -v slice="$slice" '
  $2 >= 0 && $1 >= from - 30000 && $1 < to {
    s = ($1 >= from) ? int(($1 - from) / (slice * 1000)) : -int((from - $1 - 1) / (slice * 1000)) - 1
    print s, $2
  }' "$dir/out/probe.tsv" \
  | sort -k1,1n -k2,2g \
  | awk -v slice="$slice" -v from="$from" -v end="$change_end" -v over="$over" '
      function flush() {
        if (n == 0) return
        phase = (start < 0) ? "before" : ((from + start * 1000 < end) ? "change" : "clean-up")
        printf "%d %s %d %.2f %.2f %d\n", start, phase, n, v[int(n * 0.5) + 1], v[int(n * 0.99) + 1], slow
      }
      $1 != current { flush(); current = $1; start = $1 * slice; n = 0; slow = 0 }
      { v[++n] = $2; if ($2 > over) slow++ }
      END { flush() }'
