# shellcheck shell=bash
# The CPU time of a local cluster's node processes (started by scripts/cluster.sh); sourced by
# tls-cost.sh and nodes-cost.sh. CPU per request is the figure a busy shared machine disturbs
# least: throughput moves with whatever else runs, the work a request costs much less.

# cluster_cpu_ticks DIR: utime + stime of the node processes of the cluster in DIR (their
# DIR/node*/node.pid), in clock ticks (getconf CLK_TCK per second).
cluster_cpu_ticks() {
  local f total=0
  for f in "$1"/node*/node.pid; do
    # Fields 14 and 15 of /proc/PID/stat (the command name, field 2, is "(java)": no spaces).
    total=$((total + $(awk '{ print $14 + $15 }' "/proc/$(cat "$f")/stat")))
  done
  echo "$total"
}

# cpu_us_per_request TICKS REQUESTS: microseconds of CPU per request, or n/a without requests.
cpu_us_per_request() {
  awk -v ticks="$1" -v n="$2" -v hz="$(getconf CLK_TCK)" \
    'BEGIN { if (n > 0) printf "%.0f", ticks * 1000000 / hz / n; else printf "n/a" }'
}
