# shellcheck shell=bash
# Young-collection pauses of a local cluster's nodes by window of a benchmark; sourced by
# join-bench.sh, which has every node log its collections (-Xlog:gc) to GCDIR/gc-PID.log.

# gc_windows DIR GCDIR LABEL:FILE...: for each node DIR/nodeN (its JVM's PID in
# DIR/nodeN/node.pid, or in its log's first line) and each window (FILE holds "FROM_MS TO_MS"), the young pauses that
# began in it: how many a minute, their mean and longest (ms), and the share of the window
# they took. One line per node.
gc_windows() {
  local dir="$1" gcdir="$2" node pid
  shift 2
  for node in "$dir"/node[0-9]*; do
    [ -d "$node" ] || continue
    # While it runs node.pid says; once it is stopped, its log's first line does.
    pid=$(cat "$node/node.pid" 2> /dev/null || grep -o -m1 'with PID [0-9]*' "$node/node.log" 2> /dev/null | awk '{ print $3 }' || true)
    [ -n "$pid" ] && [ -f "$gcdir/gc-$pid.log" ] || continue
    local line="$(basename "$node")" spec label file from to
    for spec in "$@"; do
      label="${spec%%:*}" file="${spec#*:}"
      [ -f "$file" ] || continue
      read -r from to < "$file"
      # [2026-11-27T15:26:56.001+0000][123.456s] GC(7) Pause Young (Normal) ... 9.947ms
      line+=" | $label $(TZ=UTC awk -v from="$from" -v to="$to" '
        /Pause Young/ && $NF ~ /ms$/ {
          t = substr($0, 2, 23); split(t, d, /[-T:.]/)
          ms = mktime(d[1] " " d[2] " " d[3] " " d[4] " " d[5] " " d[6]) * 1000 + d[7]
          if (ms >= from && ms < to) { p = $NF; sub(/ms$/, "", p); p += 0; n++; sum += p; if (p > max) max = p }
        }
        END { minutes = (to - from) / 60000
          printf "%.1f/min, mean %.1f ms, max %.1f ms, %.2f%% paused", n / minutes, (n ? sum / n : 0), max, sum / (to - from) * 100 }' \
        "$gcdir/gc-$pid.log")"
    done
    echo "$line"
  done
}
